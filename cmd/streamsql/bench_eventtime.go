package main

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/spf13/cobra"
	"github.com/streamsql/streamsql/internal/pgtest"
)

// eventTimeWorkload is one event-time view measured by bench eventtime:
// its query over the generated events in streamsql and the same query in
// PostgreSQL (the oracle and baseline), and a check query whose result
// both must agree on.
type eventTimeWorkload struct {
	name     string
	view     string // streamsql, over source ev (and ev2)
	postgres string // PostgreSQL, over table ev (and ev2)
	check    string // over the view, named v in both
	sources  int    // 1 or 2
}

var eventTimeWorkloads = []eventTimeWorkload{
	{
		name:     "tumble",
		view:     "SELECT id % 100 AS k, window_start, count(*) AS n, sum(id) AS total, max(id) AS top FROM TUMBLE(ev, ts, INTERVAL '1 second') GROUP BY 1, 2",
		postgres: "SELECT id % 100 AS k, date_bin('1 second', ts, '1970-01-01') AS window_start, count(*) AS n, sum(id) AS total, max(id) AS top FROM ev GROUP BY 1, 2",
		check:    "SELECT count(*), sum(n), sum(total), sum(top) FROM v",
	},
	{
		name: "tumble, emit on window close",
		view: "SELECT id % 100 AS k, window_start, count(*) AS n, sum(id) AS total FROM TUMBLE(ev, ts, INTERVAL '1 second') GROUP BY 1, 2 EMIT ON WINDOW CLOSE",
		postgres: "SELECT id % 100 AS k, date_bin('1 second', ts, '1970-01-01') AS window_start, count(*) AS n, sum(id) AS total FROM ev " +
			"WHERE date_bin('1 second', ts, '1970-01-01') + interval '1 second' <= (SELECT max(ts) - interval '1 second' FROM ev) GROUP BY 1, 2",
		check: "SELECT count(*), sum(n), sum(total) FROM v",
	},
	{
		name: "hop (1 s slide, 5 s size)",
		view: "SELECT window_start, count(*) AS n, min(id) AS low FROM HOP(ev, ts, INTERVAL '1 second', INTERVAL '5 seconds') GROUP BY window_start",
		postgres: "SELECT ws AS window_start, count(*) AS n, min(id) AS low FROM ev, generate_series(date_bin('1 second', ts, '1970-01-01') - interval '4 seconds', " +
			"date_bin('1 second', ts, '1970-01-01'), interval '1 second') AS ws GROUP BY ws",
		check: "SELECT count(*), sum(n), sum(low) FROM v",
	},
	{
		name:     "dedup (latest per key, DISTINCT ON)",
		view:     "SELECT DISTINCT ON (id % 10000) id % 10000 AS k, id, ts FROM ev ORDER BY id % 10000, ts DESC",
		postgres: "SELECT DISTINCT ON (id % 10000) id % 10000 AS k, id, ts FROM ev ORDER BY id % 10000, ts DESC",
		check:    "SELECT count(*), sum(id) FROM v",
	},
	{
		name:     "group TopN (top 3 per key, row_number)",
		view:     "SELECT * FROM (SELECT id, ts, id % 1000 AS k, row_number() OVER (PARTITION BY id % 1000 ORDER BY id DESC) AS rn FROM ev) t WHERE rn <= 3",
		postgres: "SELECT * FROM (SELECT id, ts, id % 1000 AS k, row_number() OVER (PARTITION BY id % 1000 ORDER BY id DESC) AS rn FROM ev) t WHERE rn <= 3",
		check:    "SELECT count(*), sum(id), sum(rn) FROM v",
	},
	{
		name:     "OVER window (sum over 10 preceding rows per key)",
		view:     "SELECT id, id % 100 AS k, sum(id) OVER (PARTITION BY id % 100 ORDER BY ts ROWS 10 PRECEDING) AS s FROM ev",
		postgres: "SELECT id, id % 100 AS k, sum(id) OVER (PARTITION BY id % 100 ORDER BY ts ROWS 10 PRECEDING) AS s FROM ev",
		check:    "SELECT count(*), sum(s) FROM v",
	},
	{
		name:     "interval join",
		view:     "SELECT count(*) AS n, sum(b.id) AS total FROM ev a JOIN ev2 b ON a.id % 1000 = b.id % 1000 AND b.ts BETWEEN a.ts AND a.ts + INTERVAL '2 seconds'",
		postgres: "SELECT count(*) AS n, sum(b.id) AS total FROM ev a JOIN ev2 b ON a.id % 1000 = b.id % 1000 AND b.ts BETWEEN a.ts AND a.ts + INTERVAL '2 seconds'",
		check:    "SELECT n, total FROM v",
		sources:  2,
	},
}

func newBenchEventTimeCmd() *cobra.Command {
	var events int
	var only string
	cmd := &cobra.Command{
		Use:   "eventtime",
		Short: "Throughput of windowed views over a generated stream with a watermark, beside PostgreSQL computing the same query over the same rows",
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx := context.Background()
			pg, err := pgtest.Start(pgtest.Options{SynchronousCommit: true})
			if err != nil {
				return err
			}
			defer pg.Stop()
			pc, err := connect(ctx, pg.URL)
			if err != nil {
				return err
			}
			defer pc.Close(ctx)
			if err := loadPostgresEvents(ctx, pc, events); err != nil {
				return err
			}
			fmt.Printf("%d events, one per millisecond of event time, watermark 1 s behind.\n\n", events)
			fmt.Printf("| workload | streamsql s | streamsql events/s | events per CPU-second | PostgreSQL s (REFRESH) | ratio | verified |\n|---|---|---|---|---|---|---|\n")
			for _, w := range eventTimeWorkloads {
				if only != "" && !strings.Contains(w.name, only) {
					continue
				}
				r, err := runEventTimeWorkload(ctx, pc, w, events)
				if err != nil {
					return fmt.Errorf("%s: %w", w.name, err)
				}
				fmt.Printf("| %s | %.2f | %.0f | %.0f | %.2f | %.1fx | %v |\n", w.name, r.seconds, float64(events)/r.seconds,
					float64(events)/r.cpuSeconds, r.pgSeconds, r.pgSeconds/r.seconds, r.verified)
			}
			lat, err := eowcLatency(ctx, 200)
			if err != nil {
				return err
			}
			fmt.Printf("\nEMIT ON WINDOW CLOSE latency, INSERT of the row whose watermark closes a window until the window's row is read: p50 %.2f ms, p99 %.2f ms (%d windows).\n",
				percentile(lat, 0.5).Seconds()*1000, percentile(lat, 0.99).Seconds()*1000, len(lat))
			return nil
		},
	}
	cmd.Flags().IntVar(&events, "events", 2_000_000, "events per source")
	cmd.Flags().StringVar(&only, "only", "", "run only the workloads whose name contains this")
	return cmd
}

type eventTimeResult struct {
	seconds, cpuSeconds, pgSeconds float64
	verified                       bool
}

// loadPostgresEvents fills PostgreSQL's tables ev and ev2 with the rows the
// datagen sources produce.
func loadPostgresEvents(ctx context.Context, c *pgx.Conn, n int) error {
	return execAll(ctx, c,
		"CREATE TABLE ev (id bigint, ts timestamp)",
		fmt.Sprintf("INSERT INTO ev SELECT g, timestamp '2024-01-01 00:00:00' + g * interval '1 millisecond' FROM generate_series(0, %d) AS g", n-1),
		"CREATE TABLE ev2 AS SELECT * FROM ev",
		"ANALYZE ev", "ANALYZE ev2")
}

func eventSource(name string, n int) string {
	return fmt.Sprintf(`CREATE SOURCE %s (id bigint, ts timestamp, WATERMARK FOR ts AS ts - INTERVAL '1 second') WITH (
		connector = 'datagen', fields.id.kind = 'sequence', fields.ts.kind = 'sequence',
		fields.ts.start = '2024-01-01 00:00:00', fields.ts.step = '1 millisecond',
		datagen.rows.per.second = '0', datagen.total.rows = '%d')`, name, n)
}

// runEventTimeWorkload times the view over the whole stream in a fresh
// server (until every source reader has read every event and the view
// committed them), and PostgreSQL's REFRESH of the same query.
func runEventTimeWorkload(ctx context.Context, pc *pgx.Conn, w eventTimeWorkload, n int) (eventTimeResult, error) {
	var r eventTimeResult
	s, err := startBenchServer(time.Second)
	if err != nil {
		return r, err
	}
	defer s.close()
	c, err := connect(ctx, s.url)
	if err != nil {
		return r, err
	}
	defer c.Close(ctx)
	stmts := []string{eventSource("ev", n)}
	if w.sources == 2 {
		stmts = append(stmts, eventSource("ev2", n))
	}
	if err := execAll(ctx, c, stmts...); err != nil {
		return r, err
	}
	cpu0, start := cpuTime(), time.Now()
	if err := execAll(ctx, c, "CREATE MATERIALIZED VIEW v AS "+w.view); err != nil {
		return r, err
	}
	if err := waitSourcesRead(ctx, s, n*max(1, w.sources)); err != nil {
		return r, err
	}
	r.seconds, r.cpuSeconds = time.Since(start).Seconds(), (cpuTime() - cpu0).Seconds()
	got, err := queryText(ctx, c, w.check)
	if err != nil {
		return r, err
	}
	if err := execAll(ctx, pc, "DROP MATERIALIZED VIEW IF EXISTS v", "CREATE MATERIALIZED VIEW v AS "+w.postgres+" WITH NO DATA"); err != nil {
		return r, err
	}
	pgStart := time.Now()
	if err := execAll(ctx, pc, "REFRESH MATERIALIZED VIEW v"); err != nil {
		return r, err
	}
	r.pgSeconds = time.Since(pgStart).Seconds()
	want, err := queryText(ctx, pc, w.check)
	if err != nil {
		return r, err
	}
	r.verified = got == want
	if !r.verified {
		fmt.Printf("<!-- %s: streamsql %s, PostgreSQL %s -->\n", w.name, got, want)
	}
	return r, nil
}

// waitSourcesRead waits until the server's source readers have generated
// total events and a checkpoint after that has committed.
func waitSourcesRead(ctx context.Context, s *benchServer, total int) error {
	for {
		if s.eng.SourceRowsRead() >= int64(total) {
			break
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(10 * time.Millisecond):
		}
	}
	return s.eng.Flush(ctx)
}

// queryText runs q and returns its rows as text, sorted.
func queryText(ctx context.Context, c *pgx.Conn, q string) (string, error) {
	rows, err := c.Query(ctx, q, pgx.QueryExecModeSimpleProtocol)
	if err != nil {
		return "", err
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		vals, err := rows.Values()
		if err != nil {
			return "", err
		}
		out = append(out, fmt.Sprint(vals...))
	}
	sort.Strings(out)
	return strings.Join(out, "; "), rows.Err()
}

// eowcLatency inserts rows one at a time into a table whose watermark each
// row moves past a window's end, and measures how long each window's row
// takes to be readable.
func eowcLatency(ctx context.Context, windows int) ([]time.Duration, error) {
	s, err := startBenchServer(time.Second)
	if err != nil {
		return nil, err
	}
	defer s.close()
	c, err := connect(ctx, s.url)
	if err != nil {
		return nil, err
	}
	defer c.Close(ctx)
	if err := execAll(ctx, c,
		"CREATE TABLE ev (id bigint, ts timestamp, WATERMARK FOR ts AS ts) APPEND ONLY",
		"CREATE MATERIALIZED VIEW closed AS SELECT window_start, count(*) AS n FROM TUMBLE(ev, ts, INTERVAL '1 second') GROUP BY window_start EMIT ON WINDOW CLOSE",
	); err != nil {
		return nil, err
	}
	// Row i (at i seconds) moves the watermark past the end of the window
	// of row i-1.
	var lat []time.Duration
	for i := 1; i <= windows+1; i++ {
		start := time.Now()
		if _, err := c.Exec(ctx, fmt.Sprintf("INSERT INTO ev VALUES (%d, timestamp '2024-01-01 00:00:00' + interval '%d seconds')", i, i)); err != nil {
			return nil, err
		}
		for {
			var n int64
			if err := c.QueryRow(ctx, "SELECT count(*) FROM closed").Scan(&n); err != nil {
				return nil, err
			}
			if n >= int64(i-1) {
				break
			}
		}
		if i > 1 {
			lat = append(lat, time.Since(start))
		}
	}
	sort.Slice(lat, func(a, b int) bool { return lat[a] < lat[b] })
	return lat, nil
}

// cpuTime returns the CPU time this process has used.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
