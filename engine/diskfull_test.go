package engine_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/cockroachdb/pebble/v2/vfs/errorfs"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/streamsql/streamsql/internal/testserver"
)

// TestDiskFull fills the disk (every WAL write fails with ENOSPC) under a
// table and a view: the write in flight fails with SQLSTATE 53100 instead of
// hanging, the checkpoint is reported failed, the engine reports its failure,
// reads still answer from the last committed epoch, and a restart once space
// is back recovers every acknowledged write and a consistent view.
func TestDiskFull(t *testing.T) {
	mem := vfs.NewCrashableMem()
	var full atomic.Bool
	fs := errorfs.Wrap(mem, errorfs.InjectorFunc(func(op errorfs.Op) error {
		if !full.Load() || !strings.HasSuffix(op.Path, ".log") {
			return nil
		}
		switch op.Kind {
		case errorfs.OpFileWrite, errorfs.OpFileWriteAt, errorfs.OpFileSync, errorfs.OpFileSyncData:
			return fmt.Errorf("write %s: %w", op.Path, syscall.ENOSPC)
		}
		return nil
	}))
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	srv := testserver.Start(t, testserver.Options{DataDir: "/data", FS: fs})
	conn, err := srv.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	run := func(c *pgx.Conn, sql string) error {
		_, err := c.Exec(ctx, sql)
		return err
	}
	for _, sql := range []string{
		"CREATE TABLE t (k int PRIMARY KEY, v int)",
		"CREATE MATERIALIZED VIEW s AS SELECT count(*) AS n, sum(v) AS total FROM t",
		"INSERT INTO t SELECT g, g FROM generate_series(1, 100) AS g",
		"UPDATE t SET v = v * 2 WHERE k <= 10",
	} {
		if err := run(conn, sql); err != nil {
			t.Fatalf("%s: %v", sql, err)
		}
	}
	const wantN, wantTotal = 100, 5050 + 55

	full.Store(true)
	err = run(conn, "INSERT INTO t VALUES (1000, 1)")
	var pgErr *pgconn.PgError
	if !errors.As(err, &pgErr) || pgErr.Code != "53100" {
		t.Fatalf("INSERT on a full disk: %v, want SQLSTATE 53100", err)
	}
	select {
	case <-srv.Engine.Failed():
	case <-ctx.Done():
		t.Fatal("the engine did not report its failure")
	}
	// Later writes fail at once; reads answer from the committed epoch.
	if err := run(conn, "DELETE FROM t"); !errors.As(err, &pgErr) || pgErr.Code != "53100" {
		t.Fatalf("DELETE after the failure: %v", err)
	}
	checkView(ctx, t, conn, wantN, wantTotal)
	var failed int
	if err := conn.QueryRow(ctx, "SELECT count(*) FROM streamsql_checkpoints WHERE status = 'failed' AND error LIKE '%no space left%'").Scan(&failed); err != nil || failed == 0 {
		t.Fatalf("failed checkpoints reported: %d (%v)", failed, err)
	}
	conn.Close(ctx)

	// The process dies; space comes back; a new process recovers.
	image := mem.CrashClone(vfs.CrashCloneCfg{UnsyncedDataPercent: 50, RNG: rand.New(rand.NewPCG(1, 2))})
	full.Store(false)
	srv.Stop()
	srv = testserver.Start(t, testserver.Options{DataDir: "/data", FS: image})
	conn, err = srv.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	var n int
	if err := conn.QueryRow(ctx, "SELECT count(*) FROM t WHERE k = 1000").Scan(&n); err != nil || n > 1 {
		t.Fatalf("the failed write: %d rows (%v)", n, err)
	}
	if n == 1 {
		// The failed write reached the WAL before the failure: it was
		// never acknowledged, and the view must still agree with it.
		if err := run(conn, "DELETE FROM t WHERE k = 1000"); err != nil {
			t.Fatal(err)
		}
	}
	checkView(ctx, t, conn, wantN, wantTotal)
	if err := run(conn, "INSERT INTO t VALUES (101, 1)"); err != nil {
		t.Fatal(err)
	}
	checkView(ctx, t, conn, wantN+1, wantTotal+1)
}

// checkView checks view s and the table it summarizes.
func checkView(ctx context.Context, t *testing.T, conn *pgx.Conn, n, total int) {
	t.Helper()
	var vn, vt, tn, tt int
	if err := conn.QueryRow(ctx, "SELECT n, total FROM s").Scan(&vn, &vt); err != nil {
		t.Fatal(err)
	}
	if err := conn.QueryRow(ctx, "SELECT count(*), sum(v) FROM t").Scan(&tn, &tt); err != nil {
		t.Fatal(err)
	}
	if vn != n || vt != total || tn != n || tt != total {
		t.Fatalf("view (%d, %d), table (%d, %d), want (%d, %d)", vn, vt, tn, tt, n, total)
	}
}
