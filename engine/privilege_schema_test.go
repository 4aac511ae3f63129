package engine_test

import (
	"context"
	"errors"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/streamsql/streamsql/internal/testserver"
)

// wantDenied checks that sql fails with 42501 and message msg.
func wantDenied(t *testing.T, c *pgx.Conn, sql, msg string) {
	t.Helper()
	_, err := c.Exec(context.Background(), sql)
	var pe *pgconn.PgError
	if !errors.As(err, &pe) || pe.Code != "42501" || pe.Message != msg {
		t.Fatalf("%s: got %v, want 42501 %q", sql, err, msg)
	}
}

// TestSchemaPrivileges checks USAGE and CREATE on schemas: without USAGE
// a role cannot use what a schema holds, whatever its grants on the
// relations; without CREATE it cannot create there; public grants USAGE
// to PUBLIC until a REVOKE says otherwise, and all of it survives a
// restart.
func TestSchemaPrivileges(t *testing.T) {
	srv := testserver.Start(t, testserver.Options{SuperuserPassword: "pw"})
	f := &authFixture{t: t, srv: srv}
	root := f.connect("root", "pw")
	execOK(t, root,
		"CREATE SCHEMA s",
		"CREATE TABLE s.t (a int)",
		"INSERT INTO s.t VALUES (1)",
		"CREATE TABLE pt (a int)",
		"CREATE ROLE alice LOGIN PASSWORD 'a'",
		"GRANT SELECT, INSERT ON s.t, pt TO alice")
	alice := f.connect("alice", "a")
	// public: USAGE for PUBLIC by default, no CREATE (PostgreSQL 15).
	execOK(t, alice, "SELECT * FROM pt", "INSERT INTO pt VALUES (1)")
	wantDenied(t, alice, "CREATE TABLE mine (a int)", "permission denied for schema public")
	// s: nothing until granted.
	wantDenied(t, alice, "SELECT * FROM s.t", "permission denied for schema s")
	wantDenied(t, alice, "INSERT INTO s.t VALUES (2)", "permission denied for schema s")
	wantDenied(t, alice, "SELECT * FROM pt WHERE a IN (SELECT a FROM s.t)", "permission denied for schema s")
	execOK(t, root, "GRANT USAGE ON SCHEMA s TO alice")
	execOK(t, alice, "SELECT * FROM s.t", "INSERT INTO s.t VALUES (2)")
	wantDenied(t, alice, "CREATE TABLE s.mine (a int)", "permission denied for schema s")
	execOK(t, root, "GRANT CREATE ON SCHEMA s TO alice")
	execOK(t, alice, "CREATE TABLE s.mine (a int)", "INSERT INTO s.mine VALUES (1)")

	execOK(t, root, "REVOKE USAGE ON SCHEMA public FROM PUBLIC", "REVOKE ALL PRIVILEGES ON SCHEMA s FROM alice")
	wantDenied(t, alice, "SELECT * FROM pt", "permission denied for schema public")
	wantDenied(t, alice, "SELECT * FROM s.mine", "permission denied for schema s")
	if err := srv.Restart(); err != nil {
		t.Fatal(err)
	}
	alice, root = f.connect("alice", "a"), f.connect("root", "pw")
	wantDenied(t, alice, "SELECT * FROM pt", "permission denied for schema public")
	wantDenied(t, alice, "SELECT * FROM s.t", "permission denied for schema s")
	execOK(t, root, "GRANT ALL ON SCHEMA public TO alice", "GRANT USAGE ON SCHEMA s TO PUBLIC")
	execOK(t, alice, "SELECT * FROM pt", "SELECT * FROM s.t", "SELECT * FROM s.mine", "CREATE TABLE mine (a int)")
	_, err := root.Exec(context.Background(), "GRANT SELECT ON SCHEMA s TO alice")
	wantSQLState(t, err, "0LP01")
}

// TestGrantOption checks WITH GRANT OPTION: a role grants on what it holds
// with grant option only (nothing at all on the object: 42501); REVOKE takes back its grantor's grants only;
// losing a grant option takes back what was granted with it, with
// CASCADE, and fails without; all of it survives a restart.
func TestGrantOption(t *testing.T) {
	ctx := context.Background()
	srv := testserver.Start(t, testserver.Options{SuperuserPassword: "pw"})
	f := &authFixture{t: t, srv: srv}
	root := f.connect("root", "pw")
	execOK(t, root,
		"CREATE TABLE t (a int)",
		"INSERT INTO t VALUES (1)",
		"CREATE ROLE alice LOGIN PASSWORD 'a'",
		"CREATE ROLE bob LOGIN PASSWORD 'b'",
		"CREATE ROLE carol LOGIN PASSWORD 'c'")
	alice, bob, carol := f.connect("alice", "a"), f.connect("bob", "b"), f.connect("carol", "c")
	wantDenied(t, alice, "GRANT SELECT ON t TO bob", "permission denied for table t")
	execOK(t, root, "GRANT SELECT ON t TO alice WITH GRANT OPTION")
	execOK(t, alice, "SELECT * FROM t", "GRANT SELECT ON t TO bob WITH GRANT OPTION")
	// Privileges held without grant option are not granted (a warning,
	// as in PostgreSQL).
	execOK(t, alice, "GRANT INSERT ON t TO bob")
	wantDenied(t, bob, "INSERT INTO t VALUES (2)", "permission denied for table t")
	execOK(t, bob, "SELECT * FROM t", "GRANT SELECT ON t TO carol")
	execOK(t, carol, "SELECT * FROM t", "GRANT SELECT, INSERT ON t TO alice")
	wantDenied(t, alice, "INSERT INTO t VALUES (2)", "permission denied for table t")
	_, err := root.Exec(ctx, "GRANT SELECT ON t TO PUBLIC WITH GRANT OPTION")
	wantSQLState(t, err, "0LP01")

	// alice's grant option has dependents.
	_, err = root.Exec(ctx, "REVOKE SELECT ON t FROM alice")
	wantSQLState(t, err, "2BP01")
	_, err = root.Exec(ctx, "REVOKE GRANT OPTION FOR SELECT ON t FROM alice")
	wantSQLState(t, err, "2BP01")
	if err := srv.Restart(); err != nil {
		t.Fatal(err)
	}
	root, alice, bob, carol = f.connect("root", "pw"), f.connect("alice", "a"), f.connect("bob", "b"), f.connect("carol", "c")
	execOK(t, carol, "SELECT * FROM t")
	execOK(t, root, "REVOKE GRANT OPTION FOR SELECT ON t FROM alice CASCADE")
	execOK(t, alice, "SELECT * FROM t")
	wantDenied(t, bob, "SELECT * FROM t", "permission denied for table t")
	wantDenied(t, carol, "SELECT * FROM t", "permission denied for table t")
	execOK(t, alice, "GRANT SELECT ON t TO bob")
	wantDenied(t, bob, "SELECT * FROM t", "permission denied for table t")

	// A REVOKE takes back its grantor's grants only.
	execOK(t, root, "GRANT SELECT ON t TO alice WITH GRANT OPTION")
	execOK(t, alice, "GRANT SELECT ON t TO bob")
	execOK(t, root, "REVOKE SELECT ON t FROM bob")
	execOK(t, bob, "SELECT * FROM t")
	execOK(t, alice, "REVOKE SELECT ON t FROM bob")
	wantDenied(t, bob, "SELECT * FROM t", "permission denied for table t")
	execOK(t, root, "REVOKE SELECT ON t FROM alice")
	wantDenied(t, alice, "SELECT * FROM t", "permission denied for table t")
}
