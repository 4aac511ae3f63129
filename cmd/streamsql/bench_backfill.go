package main

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/spf13/cobra"
)

func newBenchBackfillCmd() *cobra.Command {
	var rows, idle int
	var interval time.Duration
	cmd := &cobra.Command{
		Use:   "backfill",
		Short: "Single-row INSERT latency into another table while a view over a large table is backfilled, against idle",
		Long: `backfill fills a table big (k bigint PRIMARY KEY, v bigint, pad text) with
--rows rows, then measures single-row INSERTs into an unrelated table
(each returns once committed): --idle of them with nothing else running,
then as many as fit while CREATE MATERIALIZED VIEW over big (a grouped
aggregate) backfills. It reports the latency percentiles of both phases and
the backfill's duration.`,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx := context.Background()
			s, err := startBenchServer(interval)
			if err != nil {
				return err
			}
			defer s.close()
			conn, err := connect(ctx, s.url)
			if err != nil {
				return err
			}
			defer conn.Close(ctx)
			if err := execAll(ctx, conn,
				"CREATE TABLE big (k bigint PRIMARY KEY, v bigint, pad text)",
				"CREATE TABLE other (i bigint)"); err != nil {
				return err
			}
			start := time.Now()
			const step = 200000
			for lo := 1; lo <= rows; lo += step {
				hi := min(lo+step-1, rows)
				if err := execAll(ctx, conn, fmt.Sprintf(
					"INSERT INTO big SELECT g, g %% 9973, 'row ' || g FROM generate_series(%d, %d) AS g", lo, hi)); err != nil {
					return err
				}
			}
			load := time.Since(start)
			writer, err := connect(ctx, s.url)
			if err != nil {
				return err
			}
			defer writer.Close(ctx)
			insert := func(i int) (time.Duration, error) {
				t := time.Now()
				_, err := writer.Exec(ctx, fmt.Sprintf("INSERT INTO other VALUES (%d)", i))
				return time.Since(t), err
			}
			var idleLat []time.Duration
			for i := 0; i < idle; i++ {
				d, err := insert(i)
				if err != nil {
					return err
				}
				idleLat = append(idleLat, d)
			}
			done := make(chan error, 1)
			start = time.Now()
			go func() {
				_, err := conn.Exec(ctx, "CREATE MATERIALIZED VIEW agg AS SELECT v, count(*) AS n, sum(k) AS s FROM big GROUP BY v")
				done <- err
			}()
			var busyLat []time.Duration
			var createErr error
		loop:
			for i := idle; ; i++ {
				select {
				case createErr = <-done:
					break loop
				default:
				}
				d, err := insert(i)
				if err != nil {
					return err
				}
				busyLat = append(busyLat, d)
			}
			backfill := time.Since(start)
			if createErr != nil {
				return createErr
			}
			fmt.Printf("%d rows loaded in %.1fs; barrier interval %s; backfill of the view took %.1fs (%.0f rows/s)\n\n",
				rows, load.Seconds(), interval, backfill.Seconds(), float64(rows)/backfill.Seconds())
			fmt.Println("| phase | inserts | p50 ms | p99 ms | max ms |")
			fmt.Println("|---|---|---|---|---|")
			for _, p := range []struct {
				name string
				lat  []time.Duration
			}{{"idle", idleLat}, {"during backfill", busyLat}} {
				slices.Sort(p.lat)
				if len(p.lat) == 0 {
					fmt.Printf("| %s | 0 | | | |\n", p.name)
					continue
				}
				q := func(f float64) float64 {
					return float64(p.lat[min(len(p.lat)-1, int(f*float64(len(p.lat))))].Microseconds()) / 1000
				}
				fmt.Printf("| %s | %d | %.1f | %.1f | %.1f |\n", p.name, len(p.lat), q(0.5), q(0.99), q(1))
			}
			return nil
		},
	}
	cmd.Flags().IntVar(&rows, "rows", 2000000, "rows of the backfilled table")
	cmd.Flags().IntVar(&idle, "idle", 200, "inserts measured with nothing else running")
	cmd.Flags().DurationVar(&interval, "barrier-interval", time.Second, "the server's barrier interval")
	return cmd
}
