package engine_test

import (
	"context"
	"fmt"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/streamsql/streamsql/internal/testserver"
)

// BenchmarkCDCLag measures how long an upstream commit takes to be visible
// in a streamsql table fed by a CDC source (and so in its views), while the
// upstream takes a steady write rate: each op commits a marker row upstream
// and waits until a SELECT on streamsql returns it. Reports the lag in bytes
// of WAL (streamsql_cdc.lag_bytes) seen at its largest.
//
//	go test ./engine -run '^$' -bench BenchmarkCDCLag -benchtime 200x
func BenchmarkCDCLag(b *testing.B) {
	for _, rate := range []int{1000, 10000} {
		b.Run(fmt.Sprintf("rows_per_sec=%d", rate), func(b *testing.B) { benchCDCLag(b, rate) })
	}
}

func benchCDCLag(b *testing.B, rate int) {
	up, upc := cdcUpstream(b)
	ss := testserver.Start(b, testserver.Options{})
	ssc := cdcConnect(b, ss.URL)
	cdcExec(b, ssc, fmt.Sprintf(`CREATE SOURCE pg WITH (connector = 'postgres-cdc', hostname = '127.0.0.1', port = '%d',
		username = 'postgres', database.name = 'postgres', slot.name = 'ss', publication.name = 'pub')`, up.Port),
		`CREATE TABLE t (id int PRIMARY KEY, name text, v int) FROM pg TABLE 'public.t'`,
		`CREATE MATERIALIZED VIEW mv AS SELECT name, count(*) AS n FROM t GROUP BY name`)
	// The steady writer: 10-row transactions at the rate.
	wc := cdcConnect(b, up.URL)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	var next atomic.Int64
	next.Store(1_000_000)
	go func() {
		defer close(done)
		tick := time.NewTicker(time.Second / time.Duration(rate/10))
		defer tick.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
			}
			id := next.Add(10)
			if _, err := wc.Exec(ctx, fmt.Sprintf(`INSERT INTO t SELECT i, 'w', i FROM generate_series(%d, %d) i`, id-9, id)); err != nil && ctx.Err() == nil {
				b.Error(err)
				return
			}
		}
	}()
	defer func() { cancel(); <-done }()
	time.Sleep(time.Second)
	var maxLag int64
	lat := make([]time.Duration, 0, b.N)
	written0, start := next.Load(), time.Now()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		t0 := time.Now()
		cdcExec(b, upc, fmt.Sprintf(`INSERT INTO t VALUES (%d, 'marker', %d)`, 500_000+i, i))
		for {
			var n int64
			if err := ssc.QueryRow(context.Background(), fmt.Sprintf(`SELECT count(*) FROM t WHERE id = %d`, 500_000+i)).Scan(&n); err != nil {
				b.Fatal(err)
			}
			if n == 1 {
				lat = append(lat, time.Since(t0))
				break
			}
			time.Sleep(time.Millisecond)
		}
		if i%20 == 0 {
			var lag int64
			if err := ssc.QueryRow(context.Background(), `SELECT lag_bytes FROM streamsql_cdc`).Scan(&lag); err != nil {
				b.Fatal(err)
			}
			maxLag = max(maxLag, lag)
		}
	}
	b.StopTimer()
	b.ReportMetric(float64(maxLag), "max_lag_bytes")
	b.ReportMetric(float64(next.Load()-written0)/time.Since(start).Seconds(), "upstream_rows/s")
	slices.Sort(lat)
	b.ReportMetric(float64(lat[len(lat)/2].Microseconds())/1000, "p50_ms")
	b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds())/1000, "p99_ms")
}
