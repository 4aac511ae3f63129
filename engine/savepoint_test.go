package engine_test

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/streamsql/streamsql/internal/testserver"
	"github.com/streamsql/streamsql/state"
)

// TestSavepointRestore takes a savepoint of a database with a table, a view
// over it and a view over a generator source, changes everything after it,
// restores the savepoint into a new data directory and checks that a server
// on it starts exactly from the savepoint: the table and view as they were,
// and the source view resuming from the savepoint's position, so that it
// ends with every generated row once.
func TestSavepointRestore(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	srv := testserver.Start(t, testserver.Options{})
	conn, err := srv.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	exec := func(c *pgx.Conn, sql string) {
		t.Helper()
		if _, err := c.Exec(ctx, sql); err != nil {
			t.Fatalf("%s: %v", sql, err)
		}
	}
	exec(conn, "CREATE TABLE t (k int PRIMARY KEY, v int)")
	exec(conn, "CREATE MATERIALIZED VIEW s AS SELECT count(*) AS n, sum(v) AS total FROM t")
	exec(conn, "CREATE SOURCE gen (id bigint) WITH (connector = 'datagen', fields.id.kind = 'sequence', "+
		"datagen.rows.per.second = '2000', datagen.total.rows = '3000')")
	exec(conn, "CREATE MATERIALIZED VIEW g AS SELECT count(*) AS n, sum(id) AS total, count(DISTINCT id) AS ids FROM gen")
	exec(conn, "INSERT INTO t SELECT x, x FROM generate_series(1, 50) AS x")

	var path string
	if err := conn.QueryRow(ctx, "SELECT create_savepoint('before')").Scan(&path); err != nil {
		t.Fatal(err)
	}
	if want := filepath.Join(srv.DataDir, "savepoints", "before"); path != want {
		t.Fatalf("savepoint path %q, want %q", path, want)
	}
	info, err := state.ReadSavepoint(path)
	if err != nil {
		t.Fatal(err)
	}
	var listed int
	if err := conn.QueryRow(ctx, "SELECT count(*) FROM streamsql_savepoints WHERE name = 'before' AND epoch = $1", int64(info.Epoch)).Scan(&listed); err != nil || listed != 1 {
		t.Fatalf("streamsql_savepoints lists it %d times (%v)", listed, err)
	}
	// Changes after the savepoint are not in it.
	exec(conn, "DELETE FROM t WHERE k <= 10")
	exec(conn, "INSERT INTO t VALUES (100, 100)")
	exec(conn, "CREATE TABLE later (x int)")

	restored := filepath.Join(t.TempDir(), "restored")
	if _, err := state.RestoreSavepoint(path, restored); err != nil {
		t.Fatal(err)
	}
	if _, err := state.RestoreSavepoint(path, restored); err == nil {
		t.Fatal("restoring into a non-empty directory succeeded")
	}
	var s2 *testserver.Server
	func() {
		// The copy must not depend on the original: stop it first.
		srv.Stop()
		s2 = testserver.Start(t, testserver.Options{DataDir: restored})
	}()
	c2, err := s2.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer c2.Close(ctx)
	var n, total int64
	if err := c2.QueryRow(ctx, "SELECT n, total FROM s").Scan(&n, &total); err != nil || n != 50 || total != 1275 {
		t.Fatalf("view s after restore: %d, %d (%v)", n, total, err)
	}
	if err := c2.QueryRow(ctx, "SELECT count(*), sum(v) FROM t").Scan(&n, &total); err != nil || n != 50 || total != 1275 {
		t.Fatalf("table t after restore: %d, %d (%v)", n, total, err)
	}
	if _, err := c2.Exec(ctx, "SELECT * FROM later"); err == nil {
		t.Fatal("a table created after the savepoint exists after restore")
	}
	// The source view resumes from the savepoint's position: in the end
	// every row (ids 0..2999) is counted exactly once.
	var ids int64
	for {
		if err := c2.QueryRow(ctx, "SELECT n, total, ids FROM g").Scan(&n, &total, &ids); err != nil {
			t.Fatal(err)
		}
		if n >= 3000 {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	if n != 3000 || ids != 3000 || total != 2999*3000/2 {
		t.Fatalf("source view after restore: n %d, distinct ids %d, sum %d", n, ids, total)
	}
	exec(c2, "INSERT INTO t VALUES (51, 1)")
	if err := c2.QueryRow(ctx, "SELECT n, total FROM s").Scan(&n, &total); err != nil || n != 51 || total != 1276 {
		t.Fatalf("view s after a write on the restored database: %d, %d (%v)", n, total, err)
	}
	var dropped string
	if err := c2.QueryRow(ctx, "SELECT drop_savepoint('before')").Scan(&dropped); err == nil {
		t.Fatal("dropping a savepoint of another data directory succeeded")
	}
}
