package engine_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/streamsql/streamsql/internal/testserver"
)

// BenchmarkRetainHistory measures what the retained history costs writes:
// each iteration is one statement on a table t (id bigint PRIMARY KEY, k
// int, v text) with a materialized view grouping it by k, on a server
// whose default retention is none ("off") or one hour ("1h").
// docs/benchmarks.md has the figures. "bulk"
// inserts 10,000 rows per statement (reported as rows/s), "update"
// rewrites 1,000 of them, "row" inserts one (the statement's latency,
// mostly its commit).
func BenchmarkRetainHistory(b *testing.B) {
	for _, mode := range []struct {
		name   string
		retain time.Duration
	}{{"off", -1}, {"1h", time.Hour}} {
		for _, shape := range []struct {
			name string
			rows int
			stmt func(i int) string
		}{
			{"bulk", 10_000, func(i int) string {
				from := 10_000_000 + i*10_000
				return fmt.Sprintf("INSERT INTO t SELECT g, g %% 100, 'value ' || g FROM generate_series(%d, %d) AS g", from, from+9_999)
			}},
			{"update", 1_000, func(i int) string {
				return fmt.Sprintf("UPDATE t SET v = v || 'x' WHERE id >= %d AND id < %d", (i%100)*1_000, (i%100)*1_000+1_000)
			}},
			{"row", 1, func(i int) string {
				return fmt.Sprintf("INSERT INTO t VALUES (%d, %d, 'row')", 1_000_000_000+i, i%100)
			}},
		} {
			b.Run(mode.name+"/"+shape.name, func(b *testing.B) {
				ctx := context.Background()
				srv := testserver.Start(b, testserver.Options{RetainHistory: mode.retain})
				conn, err := srv.Conn(ctx)
				if err != nil {
					b.Fatal(err)
				}
				defer conn.Close(ctx)
				for _, q := range []string{
					"CREATE TABLE t (id bigint PRIMARY KEY, k int, v text)",
					"CREATE MATERIALIZED VIEW byk AS SELECT k, count(*) AS n, max(v) AS top FROM t GROUP BY k",
					"INSERT INTO t SELECT g, g % 100, 'value ' || g FROM generate_series(0, 99999) AS g",
					"CHECKPOINT",
				} {
					if _, err := conn.Exec(ctx, q); err != nil {
						b.Fatalf("%s: %v", q, err)
					}
				}
				b.ResetTimer()
				for i := 0; i < b.N; i++ {
					if _, err := conn.Exec(ctx, shape.stmt(i)); err != nil {
						b.Fatal(err)
					}
				}
				b.ReportMetric(float64(shape.rows*b.N)/b.Elapsed().Seconds(), "rows/s")
			})
		}
	}
}
