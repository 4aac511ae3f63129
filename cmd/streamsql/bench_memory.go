package main

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/spf13/cobra"
)

// memoryQuery is a batch query whose memory grows with its input.
type memoryQuery struct {
	name, sql string
}

var memoryQueries = []memoryQuery{
	{"sort", "SELECT k, v FROM t ORDER BY v DESC, k"},
	{"hash join", "SELECT a.k, b.v FROM t a JOIN t b ON a.k = b.k + 1"},
	{"hash aggregation", "SELECT v, count(*) FROM t GROUP BY v"},
}

func newBenchMemoryCmd() *cobra.Command {
	var rows int
	cmd := &cobra.Command{
		Use:   "memory",
		Short: "The least query_memory_limit under which a large sort, hash join and aggregation run, and the heap after one fails",
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx := context.Background()
			s, err := startBenchServer(time.Second)
			if err != nil {
				return err
			}
			defer s.close()
			c, err := connect(ctx, s.url)
			if err != nil {
				return err
			}
			defer c.Close(ctx)
			if err := execAll(ctx, c,
				"CREATE TABLE t (k bigint PRIMARY KEY, v text)",
				fmt.Sprintf("INSERT INTO t SELECT g, 'value ' || (g %% %d) || ' of the benchmark' FROM generate_series(1, %d) AS g", rows/2, rows),
			); err != nil {
				return err
			}
			const rowBytes = 8 + 30 // k, and v's bytes
			fmt.Printf("%d rows, about %.0f MB of column data.\n\n", rows, float64(rows*rowBytes)/(1<<20))
			fmt.Printf("| query | seconds (no limit) | least limit MB | least limit / data | heap MB before / after a failure |\n|---|---|---|---|---|\n")
			for _, q := range memoryQueries {
				if err := execAll(ctx, c, "SET query_memory_limit = 0"); err != nil {
					return err
				}
				start := time.Now()
				if err := drainQuery(ctx, c.PgConn(), q.sql); err != nil {
					return err
				}
				secs := time.Since(start).Seconds()
				least, err := leastLimit(ctx, c.PgConn(), q.sql)
				if err != nil {
					return err
				}
				before := heapMB()
				if err := execAll(ctx, c, fmt.Sprintf("SET query_memory_limit = '%dMB'", max(1, least/2))); err != nil {
					return err
				}
				if err := drainQuery(ctx, c.PgConn(), q.sql); !isOutOfMemory(err) {
					return fmt.Errorf("%s under half its least limit: got %v, want 53200", q.name, err)
				}
				after := heapMB()
				fmt.Printf("| %s | %.2f | %d | %.1f | %.0f / %.0f |\n", q.name, secs, least,
					float64(least)/(float64(rows*rowBytes)/(1<<20)), before, after)
			}
			return nil
		},
	}
	cmd.Flags().IntVar(&rows, "rows", 1_000_000, "rows in the table")
	return cmd
}

// leastLimit finds, by bisection to a megabyte, the least query_memory_limit
// (in MB) under which sql runs.
func leastLimit(ctx context.Context, c *pgconn.PgConn, sql string) (int, error) {
	lo, hi := 0, 1
	for {
		ok, err := runsUnder(ctx, c, sql, hi)
		if err != nil {
			return 0, err
		}
		if ok {
			break
		}
		lo, hi = hi, hi*2
		if hi > 1<<16 {
			return 0, fmt.Errorf("%s does not run under 64 GB", sql)
		}
	}
	for hi-lo > 1 {
		mid := (lo + hi) / 2
		ok, err := runsUnder(ctx, c, sql, mid)
		if err != nil {
			return 0, err
		}
		if ok {
			hi = mid
		} else {
			lo = mid
		}
	}
	return hi, nil
}

func runsUnder(ctx context.Context, c *pgconn.PgConn, sql string, mb int) (bool, error) {
	if _, err := c.Exec(ctx, fmt.Sprintf("SET query_memory_limit = '%dMB'", mb)).ReadAll(); err != nil {
		return false, err
	}
	err := drainQuery(ctx, c, sql)
	if isOutOfMemory(err) {
		return false, nil
	}
	return err == nil, err
}

func drainQuery(ctx context.Context, c *pgconn.PgConn, sql string) error {
	rr := c.ExecParams(ctx, sql, nil, nil, nil, nil)
	for rr.NextRow() {
	}
	_, err := rr.Close()
	return err
}

func isOutOfMemory(err error) bool {
	var pe *pgconn.PgError
	return errors.As(err, &pe) && pe.Code == "53200"
}

// heapMB is the live Go heap after a collection, in MB.
func heapMB() float64 {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return float64(ms.HeapAlloc) / (1 << 20)
}
