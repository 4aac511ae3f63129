package engine_test

import (
	"context"
	"testing"

	"github.com/streamsql/streamsql/internal/testserver"
)

// TestColumnPrivileges checks column grants across connections: what a
// role may read and write follows the columns each statement uses,
// creating a materialized view checks the columns its query reads, and
// the grants survive a restart.
func TestColumnPrivileges(t *testing.T) {
	srv := testserver.Start(t, testserver.Options{SuperuserPassword: "pw"})
	f := &authFixture{t: t, srv: srv}
	root := f.connect("root", "pw")
	execOK(t, root,
		"CREATE TABLE t (a int PRIMARY KEY, b int, c int)",
		"INSERT INTO t VALUES (1, 2, 3)",
		"CREATE ROLE alice LOGIN PASSWORD 'a'",
		"GRANT CREATE ON SCHEMA public TO alice",
		"GRANT SELECT (a), UPDATE (b), INSERT (a, b) ON t TO alice")
	alice := f.connect("alice", "a")
	execOK(t, alice,
		"SELECT a FROM t WHERE a > 0 ORDER BY a",
		"SELECT count(*) FROM t",
		"UPDATE t SET b = a + 1 WHERE a = 1",
		"INSERT INTO t (a, b) VALUES (2, 2)",
		"CREATE MATERIALIZED VIEW va AS SELECT a, count(*) AS n FROM t GROUP BY a")
	for _, q := range []string{
		"SELECT b FROM t",
		"SELECT * FROM t",
		"SELECT a FROM t WHERE c = 3",
		"UPDATE t SET c = 1",
		"UPDATE t SET b = c",
		"INSERT INTO t (a, c) VALUES (3, 3)",
		"DELETE FROM t",
		"CREATE MATERIALIZED VIEW vb AS SELECT a, b FROM t",
	} {
		wantDenied(t, alice, q, "permission denied for table t")
	}
	execOK(t, root, "GRANT SELECT (c) ON t TO alice")
	execOK(t, alice, "SELECT a, c FROM t WHERE c = 3")

	if err := srv.Restart(); err != nil {
		t.Fatal(err)
	}
	root, alice = f.connect("root", "pw"), f.connect("alice", "a")
	execOK(t, alice, "SELECT a, c FROM t", "SELECT * FROM va")
	wantDenied(t, alice, "SELECT b FROM t", "permission denied for table t")
	var acl string
	if err := root.QueryRow(context.Background(),
		"SELECT array_to_string(attacl, ',') FROM pg_attribute WHERE attrelid = 't'::regclass AND attname = 'b'").Scan(&acl); err != nil {
		t.Fatal(err)
	}
	if acl != "alice=aw/root" {
		t.Errorf("attacl of b: %q, want alice=aw/root", acl)
	}
	execOK(t, root, "REVOKE SELECT ON t FROM alice")
	wantDenied(t, alice, "SELECT a FROM t", "permission denied for table t")
}

// TestSetRole checks SET ROLE: privileges and the ownership of created
// objects follow the current role, SET ROLE needs membership, and the
// memberships survive a restart.
func TestSetRole(t *testing.T) {
	ctx := context.Background()
	srv := testserver.Start(t, testserver.Options{SuperuserPassword: "pw"})
	f := &authFixture{t: t, srv: srv}
	root := f.connect("root", "pw")
	execOK(t, root,
		"CREATE TABLE t (a int, c int)",
		"CREATE ROLE grp NOLOGIN",
		"CREATE ROLE bob LOGIN PASSWORD 'b' NOINHERIT",
		"CREATE ROLE dave LOGIN PASSWORD 'd'",
		"CREATE ROLE alice LOGIN PASSWORD 'a'",
		"GRANT grp TO bob, dave",
		"GRANT SELECT (c) ON t TO grp",
		"GRANT CREATE ON SCHEMA public TO grp")
	if err := srv.Restart(); err != nil {
		t.Fatal(err)
	}
	bob, dave, alice := f.connect("bob", "b"), f.connect("dave", "d"), f.connect("alice", "a")
	// bob does not inherit grp's privileges; dave does.
	wantDenied(t, bob, "SELECT c FROM t", "permission denied for table t")
	execOK(t, dave, "SELECT c FROM t")
	wantDenied(t, alice, "SET ROLE grp", `permission denied to set role "grp"`)
	execOK(t, bob, "SET ROLE grp", "SELECT c FROM t", "CREATE TABLE owned (x int)")
	var cur, sess string
	if err := bob.QueryRow(ctx, "SELECT current_user, session_user").Scan(&cur, &sess); err != nil {
		t.Fatal(err)
	}
	if cur != "grp" || sess != "bob" {
		t.Errorf("current_user %q session_user %q, want grp bob", cur, sess)
	}
	// grp owns the table: its other member may drop it, alice may not.
	wantDenied(t, alice, "DROP TABLE owned", "must be owner of table owned")
	execOK(t, bob, "RESET ROLE")
	wantDenied(t, bob, "SELECT c FROM t", "permission denied for table t")
	execOK(t, dave, "DROP TABLE owned")
	wantDenied(t, bob, "SET SESSION AUTHORIZATION dave", "permission denied to set session authorization")
}
