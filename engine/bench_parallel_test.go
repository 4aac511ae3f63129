package engine_test

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/streamsql/streamsql/internal/testserver"
)

// BenchmarkParallelView measures the throughput of a grouped aggregation,
// a join and a join feeding an aggregation over a datagen source, each at parallelism 1 and 2: the time
// from CREATE MATERIALIZED VIEW until the view has taken every row
// (STREAMSQL_BENCH_ROWS, default 2M). Run with
//
//	go test ./engine -run '^$' -bench BenchmarkParallelView -benchtime 1x
func BenchmarkParallelView(b *testing.B) {
	rows := 2_000_000
	if s := os.Getenv("STREAMSQL_BENCH_ROWS"); s != "" {
		rows, _ = strconv.Atoi(s)
	}
	ctx := context.Background()
	srv := testserver.Start(b, testserver.Options{BarrierInterval: 100 * time.Millisecond})
	conn, err := srv.Conn(ctx)
	if err != nil {
		b.Fatal(err)
	}
	exec := func(q string) {
		if _, err := conn.Exec(ctx, q); err != nil {
			b.Fatalf("%s: %v", q, err)
		}
	}
	exec("CREATE TABLE dim (k int PRIMARY KEY, name text)")
	exec("INSERT INTO dim SELECT g, 'name ' || g FROM generate_series(0, 9999) AS g")
	views := []struct{ name, def, count string }{
		{"agg", "SELECT k, count(*) AS n, sum(v) AS s, min(v) AS lo, max(v) AS hi FROM %[2]s GROUP BY k", "SELECT coalesce(sum(n), 0) FROM %s"},
		{"join", "SELECT %[2]s.id, %[2]s.v, dim.k, dim.name FROM %[2]s JOIN dim ON %[2]s.k = dim.k", "SELECT count(*) FROM %s"},
		// A join, then an aggregation on another key (two partitioned
		// fragments).
		{"joinagg", "SELECT dim.name, count(*) AS n, sum(%[2]s.v) AS s FROM %[2]s JOIN dim ON %[2]s.k = dim.k GROUP BY dim.name", "SELECT coalesce(sum(n), 0) FROM %s"},
	}
	n := 0
	for _, v := range views {
		for _, p := range []int{1, 2} {
			b.Run(fmt.Sprintf("%s/parallelism=%d", v.name, p), func(b *testing.B) {
				for i := 0; i < b.N; i++ {
					n++
					src, view := fmt.Sprintf("gen%d", n), fmt.Sprintf("v%d", n)
					exec(fmt.Sprintf("CREATE SOURCE %s (id bigint, k int, v bigint) WITH (connector = 'datagen', "+
						"datagen.rows.per.second = '0', datagen.total.rows = '%d', fields.id.kind = 'sequence', "+
						"fields.k.min = '0', fields.k.max = '9999', fields.v.max = '1000000')", src, rows))
					exec(fmt.Sprintf("SET streaming_parallelism = %d", p))
					start := time.Now()
					exec(fmt.Sprintf("CREATE MATERIALIZED VIEW %[1]s AS "+v.def, view, src))
					for {
						var got int64
						if err := conn.QueryRow(ctx, fmt.Sprintf(v.count, view)).Scan(&got); err != nil {
							b.Fatal(err)
						}
						if got == int64(rows) {
							break
						}
						time.Sleep(20 * time.Millisecond)
					}
					b.ReportMetric(float64(rows)/time.Since(start).Seconds(), "rows/s")
					exec("DROP SOURCE " + src + " CASCADE")
				}
			})
		}
	}
}
