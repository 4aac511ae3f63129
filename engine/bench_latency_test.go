package engine_test

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/jackc/pgx/v5"

	"github.com/streamsql/streamsql/internal/testserver"
)

// BenchmarkDeltaLatency times 1,000-row changes until a grouped aggregate
// view shows them: UPDATE and DELETE statements over 1,000 consecutive keys
// (WHERE id > a AND id <= b) of a table of STREAMSQL_BENCH_ROWS rows
// (default 1,000,000) feeding the view of BenchmarkLoadGroupAgg. A statement
// returns once its epoch is committed, which is when the view shows it, so
// its time is the delta's latency. Besides ns/op it reports the p50 and p99
// of that latency and of each stage of the statements' checkpoints as
// streamsql_checkpoints records them (inject, dataflow, flush, sync; see
// docs/sql.md), and of the keys and bytes each commit wrote. The last
// sub-benchmark updates with an index on k, a column the UPDATE leaves.
func BenchmarkDeltaLatency(b *testing.B) {
	rows := 1_000_000
	if s := os.Getenv("STREAMSQL_BENCH_ROWS"); s != "" {
		rows, _ = strconv.Atoi(s)
	}
	ctx := context.Background()
	// Barriers at the server's default interval, so that the checkpoints
	// measured are the statements' own (each asks for one at once).
	srv := testserver.Start(b, testserver.Options{Mem: memory.DefaultAllocator, BarrierInterval: time.Second})
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
	const batch = 100_000
	for lo := 1; lo <= rows; lo += batch {
		q := fmt.Sprintf("INSERT INTO t SELECT g, g * 7919 %% 1000003, g %% 10007 FROM generate_series(%d::bigint, %d::bigint) AS s(g)",
			lo, min(lo+batch-1, rows))
		if _, err := conn.Exec(ctx, q); err != nil {
			b.Fatalf("%s: %v", q, err)
		}
	}
	if _, err := conn.Exec(ctx, "CHECKPOINT"); err != nil {
		b.Fatal(err)
	}
	ranges := rows / 1000
	fresh := ranges // ranges below it have not been deleted
	run := func(b *testing.B, stmt string, deletes bool) {
		from := committedEpoch(b, conn)
		lat := make([]float64, 0, b.N)
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			r := i % ranges
			if deletes {
				if fresh == 0 {
					b.Fatal("every range is deleted")
				}
				fresh--
				r = fresh
			}
			start := time.Now()
			tag, err := conn.Exec(ctx, fmt.Sprintf(stmt, r*1000, r*1000+1000))
			if err != nil {
				b.Fatal(err)
			}
			lat = append(lat, float64(time.Since(start).Microseconds())/1000)
			if tag.RowsAffected() != 1000 {
				b.Fatalf("%s: %d rows, want 1000", stmt, tag.RowsAffected())
			}
		}
		b.StopTimer()
		reportQuantiles(b, "latency-ms", lat)
		reportStages(b, conn, from)
	}
	b.Run("update", func(b *testing.B) {
		run(b, "UPDATE t SET v = v + 1 WHERE id > %d AND id <= %d", false)
	})
	b.Run("delete", func(b *testing.B) {
		run(b, "DELETE FROM t WHERE id > %d AND id <= %d", true)
	})
	// With an index on a column the UPDATE does not set: its entries stay.
	if _, err := conn.Exec(ctx, "CREATE INDEX t_k ON t (k)"); err != nil {
		b.Fatal(err)
	}
	ranges = fresh // the ranges the deletes left
	b.Run("update-indexed", func(b *testing.B) {
		run(b, "UPDATE t SET v = v + 1 WHERE id > %d AND id <= %d", false)
	})
}

func committedEpoch(b *testing.B, conn *pgx.Conn) int64 {
	var e int64
	if err := conn.QueryRow(context.Background(),
		"SELECT coalesce(max(epoch), 0) FROM streamsql_checkpoints WHERE status = 'completed'").Scan(&e); err != nil {
		b.Fatal(err)
	}
	return e
}

// reportStages reports the quantiles of the stages, keys and bytes of the
// checkpoints completed after epoch from that wrote a statement's changes
// (more than 100 keys: the barriers of the interval in between write a few).
func reportStages(b *testing.B, conn *pgx.Conn, from int64) {
	// The history holds a checkpoint once a later barrier has passed.
	if _, err := conn.Exec(context.Background(), "CHECKPOINT"); err != nil {
		b.Fatal(err)
	}
	rs, err := conn.Query(context.Background(), `SELECT inject_ms, dataflow_ms, flush_ms, sync_ms, keys_written, bytes_written
		FROM streamsql_checkpoints WHERE status = 'completed' AND epoch > $1 AND keys_written > 100 AND sync_ms IS NOT NULL`, from)
	if err != nil {
		b.Fatal(err)
	}
	var inject, dataflow, flush, sync, keys, kib []float64
	for rs.Next() {
		var i, d, f, s float64
		var k, n int64
		if err := rs.Scan(&i, &d, &f, &s, &k, &n); err != nil {
			b.Fatal(err)
		}
		inject, dataflow, flush, sync = append(inject, i), append(dataflow, d), append(flush, f), append(sync, s)
		keys, kib = append(keys, float64(k)), append(kib, float64(n)/1024)
	}
	if err := rs.Err(); err != nil {
		b.Fatal(err)
	}
	reportQuantiles(b, "inject-ms", inject)
	reportQuantiles(b, "dataflow-ms", dataflow)
	reportQuantiles(b, "flush-ms", flush)
	reportQuantiles(b, "sync-ms", sync)
	reportQuantiles(b, "keys", keys)
	reportQuantiles(b, "KiB", kib)
}

// reportQuantiles reports the p50 and p99 of xs as name-p50 and name-p99.
func reportQuantiles(b *testing.B, name string, xs []float64) {
	if len(xs) == 0 {
		return
	}
	slices.Sort(xs)
	b.ReportMetric(xs[len(xs)/2], name+"-p50")
	b.ReportMetric(xs[min(len(xs)-1, len(xs)*99/100)], name+"-p99")
}
