package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"runtime"
	"runtime/pprof"
	"runtime/trace"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/spf13/cobra"
	"github.com/streamsql/streamsql/engine"
	"github.com/streamsql/streamsql/internal/pgtest"
	"github.com/streamsql/streamsql/pgwire"
)

var cpuProfile, blockProfile, traceFile string

// traceOut is the open --trace file while the trace runs.
var traceOut *os.File

func newBenchCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "bench",
		Short: "Measure streamsql end to end (results go to stdout as Markdown tables)",
	}
	cmd.AddCommand(newBenchInsertSelectCmd(), newBenchDMLCmd(), newBenchRecoveryCmd(), newBenchCheckpointCmd(), newBenchEventTimeCmd(), newBenchJoinsCmd(), newBenchMemoryCmd(), newBenchNexmarkCmd(), newBenchBackfillCmd())
	cmd.PersistentFlags().StringVar(&cpuProfile, "cpuprofile", "", "write a CPU profile of the measured runs to this file")
	cmd.PersistentFlags().StringVar(&blockProfile, "blockprofile", "", "write a profile of where the bench command's goroutines blocked (channels, locks) to this file")
	cmd.PersistentFlags().StringVar(&traceFile, "trace", "", "write an execution trace of the bench command to this file (go tool trace; -pprof=sched shows where goroutines waited for a CPU, -pprof=sync where they blocked)")
	cmd.PersistentPreRunE = func(*cobra.Command, []string) error {
		if traceFile != "" {
			f, err := os.Create(traceFile)
			if err != nil {
				return err
			}
			if err := trace.Start(f); err != nil {
				f.Close()
				return err
			}
			traceOut = f
		}
		if blockProfile != "" {
			runtime.SetBlockProfileRate(int(10 * time.Microsecond))
		}
		if cpuProfile == "" {
			return nil
		}
		f, err := os.Create(cpuProfile)
		if err != nil {
			return err
		}
		return pprof.StartCPUProfile(f)
	}
	cmd.PersistentPostRun = func(*cobra.Command, []string) {
		if cpuProfile != "" {
			pprof.StopCPUProfile()
		}
		if traceOut != nil {
			trace.Stop()
			traceOut.Close()
		}
		if blockProfile != "" {
			writeBlockProfile(blockProfile)
		}
	}
	return cmd
}

// benchServer is an in-process server on a fresh on-disk data directory.
type benchServer struct {
	eng *engine.Engine
	srv *pgwire.Server
	dir string
	url string
}

func startBenchServer(barrierInterval time.Duration) (*benchServer, error) {
	return startBenchServerWith(engine.Options{BarrierInterval: barrierInterval})
}

// startBenchServerWith starts a bench server with opts (its DataDir and
// Logger are the bench's).
func startBenchServerWith(opts engine.Options) (*benchServer, error) {
	dir, err := os.MkdirTemp("", "streamsql-bench-")
	if err != nil {
		return nil, err
	}
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	opts.DataDir, opts.Logger = dir, log
	eng, err := engine.Open(opts)
	if err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		eng.Close()
		os.RemoveAll(dir)
		return nil, err
	}
	srv := pgwire.NewServer(eng, pgwire.Options{Logger: log, ServerVersion: engine.ServerVersion})
	go srv.Serve(ln)
	return &benchServer{eng: eng, srv: srv, dir: dir, url: fmt.Sprintf("postgres://bench@%s/dev?sslmode=disable", ln.Addr())}, nil
}

func (b *benchServer) close() {
	b.srv.Close()
	b.eng.Close()
	os.RemoveAll(b.dir)
}

func connect(ctx context.Context, url string) (*pgx.Conn, error) {
	cfg, err := pgx.ParseConfig(url)
	if err != nil {
		return nil, err
	}
	cfg.DefaultQueryExecMode = pgx.QueryExecModeSimpleProtocol
	return pgx.ConnectConfig(ctx, cfg)
}

func execAll(ctx context.Context, c *pgx.Conn, stmts ...string) error {
	for _, s := range stmts {
		if _, err := c.Exec(ctx, s); err != nil {
			return fmt.Errorf("%s: %w", s, err)
		}
	}
	return nil
}

func newBenchInsertSelectCmd() *cobra.Command {
	var rows, groups, runs int
	cmd := &cobra.Command{
		Use:   "insert-select",
		Short: "Rows per second through INSERT ... SELECT into a table feeding a grouped-aggregate view, until FLUSH returns",
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx := context.Background()
			fmt.Printf("| run | rows | groups | seconds | rows/s |\n|---|---|---|---|---|\n")
			for run := 1; run <= runs; run++ {
				s, err := startBenchServer(time.Second)
				if err != nil {
					return err
				}
				c, err := connect(ctx, s.url)
				if err != nil {
					s.close()
					return err
				}
				err = execAll(ctx, c,
					"CREATE TABLE t (k int, v bigint, s text)",
					fmt.Sprintf("CREATE MATERIALIZED VIEW agg AS SELECT k %% %d AS g, count(*) AS n, sum(v) AS total, min(v) AS lo, max(v) AS hi FROM t GROUP BY k %% %d", groups, groups))
				if err != nil {
					s.close()
					return err
				}
				start := time.Now()
				err = execAll(ctx, c,
					fmt.Sprintf("INSERT INTO t SELECT g, g * 7, 'row' FROM generate_series(1, %d) AS g", rows),
					"FLUSH")
				elapsed := time.Since(start)
				if err == nil {
					var n int64
					err = c.QueryRow(ctx, "SELECT sum(n) FROM agg").Scan(&n)
					if err == nil && n != int64(rows) {
						err = fmt.Errorf("view counts %d rows, want %d", n, rows)
					}
				}
				c.Close(ctx)
				s.close()
				if err != nil {
					return err
				}
				fmt.Printf("| %d | %d | %d | %.2f | %.0f |\n", run, rows, groups, elapsed.Seconds(), float64(rows)/elapsed.Seconds())
			}
			return nil
		},
	}
	cmd.Flags().IntVar(&rows, "rows", 1_000_000, "rows to insert")
	cmd.Flags().IntVar(&groups, "groups", 1000, "groups of the aggregate view")
	cmd.Flags().IntVar(&runs, "runs", 3, "repetitions")
	return cmd
}

func newBenchDMLCmd() *cobra.Command {
	var clientsFlag string
	var duration time.Duration
	var postgres bool
	cmd := &cobra.Command{
		Use:   "dml",
		Short: "Single-row INSERT latency (p50/p99) and statements/s for 1, 4, 16 clients, beside PostgreSQL",
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx := context.Background()
			var clients []int
			for _, f := range strings.Split(clientsFlag, ",") {
				n, err := strconv.Atoi(strings.TrimSpace(f))
				if err != nil || n < 1 {
					return fmt.Errorf("bad --clients %q", clientsFlag)
				}
				clients = append(clients, n)
			}
			type target struct {
				name  string
				url   string
				setup []string
			}
			s, err := startBenchServer(time.Second)
			if err != nil {
				return err
			}
			defer s.close()
			targets := []target{{
				name: "streamsql",
				url:  s.url,
				setup: []string{
					"CREATE TABLE t (id bigint PRIMARY KEY, k int, v bigint)",
					"CREATE MATERIALIZED VIEW agg AS SELECT k, count(*) AS n, sum(v) AS total FROM t GROUP BY k",
				},
			}}
			if postgres {
				pg, err := pgtest.Start(pgtest.Options{SynchronousCommit: true})
				if err != nil {
					return err
				}
				defer pg.Stop()
				targets = append(targets, target{
					name:  "postgresql (fsync, synchronous_commit=on)",
					url:   pg.URL,
					setup: []string{"CREATE TABLE t (id bigint PRIMARY KEY, k int, v bigint)"},
				})
			}
			fmt.Printf("| system | clients | statements/s | p50 ms | p99 ms |\n|---|---|---|---|---|\n")
			for _, tg := range targets {
				c, err := connect(ctx, tg.url)
				if err != nil {
					return err
				}
				if err := execAll(ctx, c, tg.setup...); err != nil {
					return err
				}
				c.Close(ctx)
				var nextID int64
				for _, n := range clients {
					lat, rate, err := runInserts(ctx, tg.url, n, duration, &nextID)
					if err != nil {
						return fmt.Errorf("%s: %w", tg.name, err)
					}
					fmt.Printf("| %s | %d | %.0f | %.2f | %.2f |\n", tg.name, n, rate,
						percentile(lat, 0.50).Seconds()*1000, percentile(lat, 0.99).Seconds()*1000)
				}
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&clientsFlag, "clients", "1,4,16", "comma-separated numbers of concurrent clients")
	cmd.Flags().DurationVar(&duration, "duration", 10*time.Second, "measuring time per client count")
	cmd.Flags().BoolVar(&postgres, "postgres", true, "also measure a local PostgreSQL with synchronous commit")
	return cmd
}

// runInserts runs n clients inserting single rows for d and returns every
// statement's latency and the total statements per second.
func runInserts(ctx context.Context, url string, n int, d time.Duration, nextID *int64) ([]time.Duration, float64, error) {
	conns := make([]*pgx.Conn, n)
	for i := range conns {
		c, err := connect(ctx, url)
		if err != nil {
			return nil, 0, err
		}
		defer c.Close(ctx)
		conns[i] = c
	}
	var mu sync.Mutex
	var all []time.Duration
	var firstErr error
	var wg sync.WaitGroup
	start := time.Now()
	deadline := start.Add(d)
	for i, c := range conns {
		wg.Add(1)
		go func(i int, c *pgx.Conn) {
			defer wg.Done()
			var lat []time.Duration
			for time.Now().Before(deadline) {
				mu.Lock()
				*nextID++
				id := *nextID
				mu.Unlock()
				t0 := time.Now()
				_, err := c.Exec(ctx, fmt.Sprintf("INSERT INTO t VALUES (%d, %d, %d)", id, id%100, id))
				if err != nil {
					mu.Lock()
					if firstErr == nil {
						firstErr = err
					}
					mu.Unlock()
					return
				}
				lat = append(lat, time.Since(t0))
			}
			mu.Lock()
			all = append(all, lat...)
			mu.Unlock()
		}(i, c)
	}
	wg.Wait()
	elapsed := time.Since(start)
	if firstErr != nil {
		return nil, 0, firstErr
	}
	sort.Slice(all, func(i, j int) bool { return all[i] < all[j] })
	return all, float64(len(all)) / elapsed.Seconds(), nil
}

func percentile(sorted []time.Duration, p float64) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	i := int(float64(len(sorted)-1) * p)
	return sorted[i]
}

// writeBlockProfile writes the block profile gathered since the command
// started to path.
func writeBlockProfile(path string) {
	f, err := os.Create(path)
	if err != nil {
		fmt.Fprintln(os.Stderr, "blockprofile:", err)
		return
	}
	defer f.Close()
	if err := pprof.Lookup("block").WriteTo(f, 0); err != nil {
		fmt.Fprintln(os.Stderr, "blockprofile:", err)
	}
}
