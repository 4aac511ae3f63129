package engine_test

import (
	"context"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/streamsql/streamsql/internal/testserver"
)

// TestBackendPIDActivity: a session's pg_backend_pid is the process id its
// BackendKeyData sent, and it finds its own row of pg_stat_activity by it.
func TestBackendPIDActivity(t *testing.T) {
	srv := testserver.Start(t, testserver.Options{})
	ctx := context.Background()
	c := connect(ctx, t, srv)
	connect(ctx, t, srv)
	var pid int
	if err := c.QueryRow(ctx, "SELECT pg_backend_pid()").Scan(&pid); err != nil {
		t.Fatal(err)
	}
	if uint32(pid) != c.PgConn().PID() {
		t.Errorf("pg_backend_pid() = %d, BackendKeyData sent %d", pid, c.PgConn().PID())
	}
	var query string
	if err := c.QueryRow(ctx, "SELECT query FROM pg_stat_activity WHERE pid = pg_backend_pid()").Scan(&query); err != nil {
		t.Fatalf("own row of pg_stat_activity: %v", err)
	}
	if query != "SELECT query FROM pg_stat_activity WHERE pid = pg_backend_pid()" {
		t.Errorf("own row shows query %q", query)
	}
}

// TestCancelBackendRowLock: pg_cancel_backend(pid) from another session
// ends an UPDATE waiting for a row lock with 57014, as a CancelRequest
// does; pg_terminate_backend(pid) ends the session with 57P01; a pid of no
// session gets false and a WARNING.
func TestCancelBackendRowLock(t *testing.T) {
	srv := testserver.Start(t, testserver.Options{})
	ctx := context.Background()
	c0 := connect(ctx, t, srv)
	mustExec(ctx, t, c0, "CREATE TABLE t (k int PRIMARY KEY, v int)", "INSERT INTO t VALUES (1, 0)")
	c1, c2 := connect(ctx, t, srv), connect(ctx, t, srv)
	mustExec(ctx, t, c1, "BEGIN", "UPDATE t SET v = 1 WHERE k = 1")
	const update = "UPDATE t SET v = 2 WHERE k = 1"
	wait := func(c *pgx.Conn) chan error {
		done := make(chan error, 1)
		go func() {
			_, err := c.Exec(ctx, update)
			done <- err
		}()
		awaitActive(ctx, t, c0, update)
		return done
	}
	for _, mode := range []pgx.QueryExecMode{pgx.QueryExecModeCacheStatement, pgx.QueryExecModeSimpleProtocol} {
		done := wait(c2)
		var pid int
		if err := c0.QueryRow(ctx, "SELECT pid FROM pg_stat_activity WHERE state = 'active' AND query = $1", update).Scan(&pid); err != nil {
			t.Fatal(err)
		}
		var ok bool
		if err := c0.QueryRow(ctx, "SELECT pg_cancel_backend($1)", mode, pid).Scan(&ok); err != nil || !ok {
			t.Fatalf("pg_cancel_backend(%d): %v, %v; want true", pid, ok, err)
		}
		if err := <-done; pgCode(err) != "57014" {
			t.Fatalf("cancelled UPDATE: %v, want 57014", err)
		}
	}

	var notices []string
	cfg, err := pgx.ParseConfig(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	cfg.OnNotice = func(_ *pgconn.PgConn, n *pgconn.Notice) { notices = append(notices, n.Severity+" "+n.Message) }
	c3, err := pgx.ConnectConfig(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer c3.Close(ctx)
	var ok bool
	if err := c3.QueryRow(ctx, "SELECT pg_cancel_backend(999999)").Scan(&ok); err != nil || ok {
		t.Fatalf("pg_cancel_backend of no session: %v, %v; want false", ok, err)
	}
	if len(notices) != 1 || notices[0] != "WARNING PID 999999 is not a PostgreSQL backend process" {
		t.Errorf("notices %q, want the one WARNING", notices)
	}

	// The signal is sent when the statement is bound: a pid of each row is
	// refused.
	_, err = c3.Exec(ctx, "SELECT pg_cancel_backend(pid) FROM pg_stat_activity")
	wantSQLState(t, err, "0A000")

	done := wait(c2)
	if err := c0.QueryRow(ctx, "SELECT pg_terminate_backend($1)", int(c2.PgConn().PID())).Scan(&ok); err != nil || !ok {
		t.Fatalf("pg_terminate_backend: %v, %v; want true", ok, err)
	}
	if err := <-done; pgCode(err) != "57P01" {
		t.Fatalf("terminated UPDATE: %v, want 57P01", err)
	}
	mustExec(ctx, t, c1, "COMMIT")
	var v int
	if err := c0.QueryRow(ctx, "SELECT v FROM t WHERE k = 1").Scan(&v); err != nil || v != 1 {
		t.Fatalf("v = %d %v, want 1 (no signalled UPDATE took effect)", v, err)
	}
}

// TestCancelBackendPrivilege: a role may signal its own sessions, not
// another role's nor a superuser's.
func TestCancelBackendPrivilege(t *testing.T) {
	srv := testserver.Start(t, testserver.Options{SuperuserPassword: "pw"})
	f := &authFixture{t: t, srv: srv}
	root := f.connect("root", "pw")
	execOK(t, root, "CREATE ROLE alice LOGIN PASSWORD 'a'", "CREATE ROLE bob LOGIN PASSWORD 'b'")
	alice, alice2, bob := f.connect("alice", "a"), f.connect("alice", "a"), f.connect("bob", "b")
	ctx := context.Background()
	for _, tc := range []struct {
		c    *pgx.Conn
		pid  uint32
		code string
	}{
		{alice, root.PgConn().PID(), "42501"},
		{alice, bob.PgConn().PID(), "42501"},
		{alice, alice2.PgConn().PID(), ""},
		{root, bob.PgConn().PID(), ""},
	} {
		var ok bool
		err := tc.c.QueryRow(ctx, "SELECT pg_cancel_backend($1)", int(tc.pid)).Scan(&ok)
		if tc.code != "" {
			wantSQLState(t, err, tc.code)
		} else if err != nil || !ok {
			t.Errorf("pg_cancel_backend(%d): %v, %v; want true", tc.pid, ok, err)
		}
	}
}
