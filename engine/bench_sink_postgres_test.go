package engine_test

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/streamsql/streamsql/internal/pgtest"
	"github.com/streamsql/streamsql/internal/testserver"
)

// BenchmarkPostgresSink measures a PostgreSQL sink over a table (the
// target a private PostgreSQL with synchronous commit): Throughput inserts
// rows in statements of 10,000 and counts until the target table has them
// all, for an upsert and an append-only sink; Latency inserts one row at a
// time and times each from the INSERT to its row being readable in the
// target (the barrier interval, the checkpoint commit and the PostgreSQL
// transaction).
func BenchmarkPostgresSink(b *testing.B) {
	for _, interval := range []time.Duration{10 * time.Millisecond, 100 * time.Millisecond} {
		for _, typ := range []string{"upsert", "append-only"} {
			b.Run(fmt.Sprintf("Throughput/type=%s/barrier=%v", typ, interval), func(b *testing.B) { benchPostgresSink(b, interval, typ, 10000) })
		}
		b.Run(fmt.Sprintf("Latency/type=upsert/barrier=%v", interval), func(b *testing.B) { benchPostgresSink(b, interval, "upsert", 1) })
	}
}

func benchPostgresSink(b *testing.B, interval time.Duration, typ string, rowsPerInsert int) {
	ctx := context.Background()
	pg := pgtest.StartT(b, pgtest.Options{SynchronousCommit: true})
	target := cdcConnect(b, pg.URL)
	cdcExec(b, target, "CREATE TABLE t (k bigint PRIMARY KEY, name text, price numeric(10, 2), ts timestamp)")
	srv := testserver.Start(b, testserver.Options{BarrierInterval: interval})
	conn, err := srv.Conn(ctx)
	if err != nil {
		b.Fatal(err)
	}
	defer conn.Close(ctx)
	for _, s := range []string{
		"CREATE TABLE t (k bigint PRIMARY KEY, name text, price numeric(10, 2), ts timestamp)",
		fmt.Sprintf("CREATE SINK s FROM t WITH (connector = 'postgres', host = '127.0.0.1', port = '%d', user = 'postgres', table = 't', type = '%s', force_append_only = '%v')",
			pg.Port, typ, typ == "append-only"),
	} {
		if _, err := conn.Exec(ctx, s); err != nil {
			b.Fatal(err)
		}
	}
	// wait polls the target until it has key n-1 (keys arrive in order:
	// each INSERT is acknowledged, so committed, before the next).
	wait := func(n int) {
		for {
			var ok bool
			if err := target.QueryRow(ctx, "SELECT EXISTS (SELECT 1 FROM t WHERE k = $1)", n-1).Scan(&ok); err != nil {
				b.Fatal(err)
			}
			if ok {
				return
			}
		}
	}
	next := 0
	insert := func() {
		q := fmt.Sprintf("INSERT INTO t SELECT g, 'item ' || g, g %% 1000 + 0.5, TIMESTAMP '2024-01-01' + g * INTERVAL '1 second' FROM generate_series(%d, %d) g", next, next+rowsPerInsert-1)
		if _, err := conn.Exec(ctx, q); err != nil {
			b.Fatal(err)
		}
		next += rowsPerInsert
	}
	insert() // warm up: the sink's first connection
	wait(next)
	var lat []time.Duration
	b.ResetTimer()
	start := time.Now()
	for b.Loop() {
		t0 := time.Now()
		insert()
		if rowsPerInsert == 1 {
			wait(next)
			lat = append(lat, time.Since(t0))
		}
	}
	wait(next)
	elapsed := time.Since(start)
	b.StopTimer()
	if rowsPerInsert > 1 {
		b.ReportMetric(float64(b.N*rowsPerInsert)/elapsed.Seconds(), "rows/s")
		return
	}
	slices.Sort(lat)
	b.ReportMetric(float64(lat[len(lat)/2].Microseconds())/1000, "p50-ms")
	b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds())/1000, "p99-ms")
}
