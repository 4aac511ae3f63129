package engine_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/streamsql/streamsql/internal/testserver"
)

// TestQueryMemoryLimit runs a cross join over a small query_memory_limit:
// it fails with 53200, every Arrow buffer it allocated is freed, and the
// next query on the same connection runs.
func TestQueryMemoryLimit(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	t.Cleanup(func() { mem.AssertSize(t, 0) }) // after the server stops
	srv := testserver.Start(t, testserver.Options{Mem: mem})
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	conn, err := srv.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	for _, s := range []string{
		"CREATE TABLE t (k int PRIMARY KEY, v text)",
		"INSERT INTO t SELECT x, repeat('v', 50) FROM generate_series(1, 2000) g(x)",
		"SET query_memory_limit = '8MB'",
	} {
		if _, err := conn.Exec(ctx, s); err != nil {
			t.Fatalf("%s: %v", s, err)
		}
	}
	before := mem.CurrentAlloc()
	// 4 million rows of about 60 bytes, sorted.
	_, err = conn.Exec(ctx, "SELECT a.k, b.v FROM t a, t b ORDER BY b.v, a.k LIMIT 3")
	var pgErr *pgconn.PgError
	if !errors.As(err, &pgErr) || pgErr.Code != "53200" {
		t.Fatalf("cross join over the limit: got %v, want SQLSTATE 53200", err)
	}
	if after := mem.CurrentAlloc(); after != before {
		t.Errorf("Arrow memory after the failed query: %d bytes, before it: %d", after, before)
	}
	var n int64
	if err := conn.QueryRow(ctx, "SELECT count(*) FROM t a, t b WHERE a.k = b.k").Scan(&n); err != nil || n != 2000 {
		t.Fatalf("next query: %d, %v; want 2000", n, err)
	}
	var limit string
	if err := conn.QueryRow(ctx, "SHOW query_memory_limit").Scan(&limit); err != nil || limit != "8MB" {
		t.Fatalf("SHOW query_memory_limit: %q, %v", limit, err)
	}
}
