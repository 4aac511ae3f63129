package engine_test

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/streamsql/streamsql/internal/testserver"
)

// BenchmarkKeyRangeDML times UPDATE and DELETE statements that each change
// 1,000 consecutive keys (WHERE id > a AND id <= b) of a table of
// STREAMSQL_BENCH_ROWS rows (default 1,000,000) with a primary key. Each
// DELETE removes a fresh range; each UPDATE rewrites one. A statement's
// time includes waiting for its epoch to commit.
func BenchmarkKeyRangeDML(b *testing.B) {
	rows := 1_000_000
	if s := os.Getenv("STREAMSQL_BENCH_ROWS"); s != "" {
		rows, _ = strconv.Atoi(s)
	}
	ctx := context.Background()
	srv := testserver.Start(b, testserver.Options{})
	conn, err := srv.Conn(ctx)
	if err != nil {
		b.Fatal(err)
	}
	for _, q := range []string{
		"CREATE TABLE t (id bigint PRIMARY KEY, k int, v bigint)",
		fmt.Sprintf("INSERT INTO t SELECT g, g %% 1000, g FROM generate_series(1, %d) AS g", rows),
		// Commit the load before timing: its flush would land on the first
		// statements.
		"CHECKPOINT",
	} {
		if _, err := conn.Exec(ctx, q); err != nil {
			b.Fatalf("%s: %v", q, err)
		}
	}
	ranges := rows / 1000
	fresh := ranges // ranges below it have not been deleted
	run := func(b *testing.B, stmt string, deletes bool) {
		for i := 0; i < b.N; i++ {
			r := i % ranges
			if deletes {
				if fresh == 0 {
					b.Fatal("every range is deleted")
				}
				fresh--
				r = fresh
			}
			tag, err := conn.Exec(ctx, fmt.Sprintf(stmt, r*1000, r*1000+1000))
			if err != nil {
				b.Fatal(err)
			}
			if tag.RowsAffected() != 1000 {
				b.Fatalf("%s: %d rows, want 1000", stmt, tag.RowsAffected())
			}
		}
	}
	b.Run("update", func(b *testing.B) {
		run(b, "UPDATE t SET v = v + 1 WHERE id > %d AND id <= %d", false)
	})
	b.Run("delete", func(b *testing.B) {
		run(b, "DELETE FROM t WHERE id > %d AND id <= %d", true)
	})
}

// BenchmarkLoadGroupAgg loads STREAMSQL_BENCH_ROWS rows (default 1,000,000)
// into a table feeding a grouped aggregate view, as the side-by-side
// benchmark's group-agg workload does: INSERT ... SELECT from
// generate_series in statements of 100,000 rows, each waiting for its
// commit. It reports rows/s. STREAMSQL_BENCH_MEMORY_LIMIT (bytes) sets the
// server's --memory-limit, which sizes Pebble's cache and memtables (default:
// half the machine's memory).
func BenchmarkLoadGroupAgg(b *testing.B) {
	rows := 1_000_000
	if s := os.Getenv("STREAMSQL_BENCH_ROWS"); s != "" {
		rows, _ = strconv.Atoi(s)
	}
	var memoryLimit int64
	if s := os.Getenv("STREAMSQL_BENCH_MEMORY_LIMIT"); s != "" {
		memoryLimit, _ = strconv.ParseInt(s, 10, 64)
	}
	const batch = 100_000
	ctx := context.Background()
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		// The engine's own allocator, as the server runs (the checked
		// allocator of tests would be measured too).
		srv := testserver.Start(b, testserver.Options{Mem: memory.DefaultAllocator, MemoryLimit: memoryLimit})
		conn, err := srv.Conn(ctx)
		if err != nil {
			b.Fatal(err)
		}
		for _, q := range []string{
			"CREATE TABLE t (id bigint PRIMARY KEY, k bigint, v bigint)",
			"CREATE MATERIALIZED VIEW agg AS SELECT k % 1000 AS g, count(*) AS n, sum(v) AS total, min(v) AS lo, max(v) AS hi FROM t GROUP BY k % 1000",
		} {
			if _, err := conn.Exec(ctx, q); err != nil {
				b.Fatalf("%s: %v", q, err)
			}
		}
		b.StartTimer()
		for lo := 1; lo <= rows; lo += batch {
			hi := min(lo+batch-1, rows)
			q := fmt.Sprintf("INSERT INTO t SELECT g, g * 7919 %% 1000003, g %% 10007 FROM generate_series(%d::bigint, %d::bigint) AS s(g)", lo, hi)
			if _, err := conn.Exec(ctx, q); err != nil {
				b.Fatalf("%s: %v", q, err)
			}
		}
		b.StopTimer()
		var n int64
		if err := conn.QueryRow(ctx, "SELECT sum(n)::bigint FROM agg").Scan(&n); err != nil || n != int64(rows) {
			b.Fatalf("view counts %d rows (%v), want %d", n, err, rows)
		}
		conn.Close(ctx)
		srv.Stop()
		b.StartTimer()
	}
	b.ReportMetric(float64(rows)*float64(b.N)/b.Elapsed().Seconds(), "rows/s")
}
