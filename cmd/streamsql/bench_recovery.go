package main

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/signal"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/spf13/cobra"
	"github.com/streamsql/streamsql/internal/crashtest"
)

// The recovery and checkpoint benchmarks run the server as a child process
// (this executable, re-executed with the root command's serve flags) on a data
// directory that outlives it, so that it can be killed with SIGKILL and
// restarted. Both build the same state:
//
//	t (id bigint PRIMARY KEY, k bigint, c int, v bigint, s text)   rows 0..N-1, k = id/2, c = id%1000
//	d (c int PRIMARY KEY, name text)                               1000 rows
//	agg = SELECT k, count(*), sum(v) FROM t GROUP BY k             N/2 groups
//	j   = SELECT t.id, t.v, d.name FROM t JOIN d ON t.c = d.c      N rows
//
// so that the state holds the table's rows, the aggregate's groups and the
// join's rows (its input state and its output) in proportion to N.
var benchSchema = []string{
	"CREATE TABLE t (id bigint PRIMARY KEY, k bigint, c int, v bigint, s text)",
	"CREATE TABLE d (c int PRIMARY KEY, name text)",
	"INSERT INTO d SELECT g, 'name-' || g FROM generate_series(0, 999) AS g",
	"CREATE MATERIALIZED VIEW agg AS SELECT k, count(*) AS n, sum(v) AS total FROM t GROUP BY k",
	"CREATE MATERIALIZED VIEW j AS SELECT t.id, t.v, d.name FROM t JOIN d ON t.c = d.c",
}

// loadChunk is the number of rows one INSERT ... SELECT of loadBenchState
// writes: every statement is one epoch, whose changes the server holds in
// memory until it commits.
const loadChunk = 250_000

// loadBenchState creates benchSchema on an empty server and inserts rows
// 0..rows-1 into t, in statements of loadChunk rows.
func loadBenchState(ctx context.Context, c *pgx.Conn, rows int) error {
	if err := execAll(ctx, c, benchSchema...); err != nil {
		return err
	}
	for lo := 0; lo < rows; lo += loadChunk {
		hi := min(lo+loadChunk, rows) - 1
		q := fmt.Sprintf("INSERT INTO t SELECT g, g / 2, g %% 1000, g, 'row-' || g FROM generate_series(%d, %d) AS g", lo, hi)
		if err := execAll(ctx, c, q); err != nil {
			return err
		}
	}
	return execAll(ctx, c, "FLUSH")
}

// checkBenchState checks that the views equal their queries over t, which
// holds at least minRows rows: agg counts every row of t once and j has one
// row per row of t.
func checkBenchState(ctx context.Context, c *pgx.Conn, minRows int64) error {
	var rows, aggRows, joinRows int64
	if err := c.QueryRow(ctx, "SELECT count(*) FROM t").Scan(&rows); err != nil {
		return err
	}
	if err := c.QueryRow(ctx, "SELECT coalesce(sum(n), 0) FROM agg").Scan(&aggRows); err != nil {
		return err
	}
	if err := c.QueryRow(ctx, "SELECT count(*) FROM j").Scan(&joinRows); err != nil {
		return err
	}
	if rows < minRows || aggRows != rows || joinRows != rows {
		return fmt.Errorf("inconsistent state: t has %d rows (want at least %d), agg counts %d, j has %d",
			rows, minRows, aggRows, joinRows)
	}
	return nil
}

// benchDataDir is a data directory (and the log of the servers run on it)
// in a new temporary directory under parent.
type benchDataDir struct {
	root, data, log string
}

// keepBenchData keeps the data directories and server logs of the recovery
// and checkpoint benchmarks (--keep).
var keepBenchData bool

func newBenchDataDir(parent string) (*benchDataDir, error) {
	root, err := os.MkdirTemp(parent, "streamsql-bench-")
	if err != nil {
		return nil, err
	}
	return &benchDataDir{root: root, data: filepath.Join(root, "data"), log: filepath.Join(root, "server.log")}, nil
}

// remove removes d, or with --keep reports where it is.
func (d *benchDataDir) remove() {
	if keepBenchData {
		fmt.Fprintf(os.Stderr, "kept %s (data directory and server.log)\n", d.root)
		return
	}
	os.RemoveAll(d.root)
}

// serverOptions returns the options of a server process on d, running this
// executable.
func (d *benchDataDir) serverOptions(barrierInterval time.Duration, logLevel string) (crashtest.Options, error) {
	exe, err := os.Executable()
	if err != nil {
		return crashtest.Options{}, err
	}
	return crashtest.Options{
		Binary:          exe,
		DataDir:         d.data,
		BarrierInterval: barrierInterval,
		LogPath:         d.log,
		Args:            []string{"--log-level", logLevel},
	}, nil
}

// size returns the total size of the files in the data directory and the
// part of it in Pebble's write-ahead logs (*.log).
func (d *benchDataDir) size() (total, wal int64, err error) {
	err = filepath.WalkDir(d.data, func(path string, e fs.DirEntry, err error) error {
		if err != nil || e.IsDir() {
			return err
		}
		info, err := e.Info()
		if err != nil {
			return err
		}
		total += info.Size()
		if strings.HasSuffix(path, ".log") {
			wal += info.Size()
		}
		return nil
	})
	return total, wal, err
}

// benchContext returns the command's context, canceled on SIGINT so that
// an interrupted benchmark still kills its servers and removes its data
// directories.
func benchContext(cmd *cobra.Command) (context.Context, context.CancelFunc) {
	ctx := cmd.Context()
	if ctx == nil {
		ctx = context.Background()
	}
	return signal.NotifyContext(ctx, os.Interrupt)
}

func megabytes(n int64) float64 { return float64(n) / (1 << 20) }

// parseSizes parses a comma-separated list of positive integers.
func parseSizes(flag, s string) ([]int, error) {
	var out []int
	for _, f := range strings.Split(s, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(strings.ReplaceAll(f, "_", "")))
		if err != nil || n < 1 {
			return nil, fmt.Errorf("bad --%s %q", flag, s)
		}
		out = append(out, n)
	}
	return out, nil
}

// viewQuery is the query whose first answer after a restart marks the server
// as serving. Batch queries have no index lookups, so it scans agg.
const viewQuery = "SELECT n, total FROM agg WHERE k = 0"

func newBenchRecoveryCmd() *cobra.Command {
	var sizesFlag, parent string
	var runs int
	cmd := &cobra.Command{
		Use:   "recovery",
		Short: "Seconds from process start to serving after SIGKILL, for several state sizes (server run as a child process)",
		Long: `For each size N, recovery starts a server process on a new data directory and
loads N rows into a table feeding a grouped-aggregate view (N/2 groups) and a
join view (N rows). It then kills the server with SIGKILL 1 + --runs times,
each time while a client is inserting rows, and restarts it on the same
directory, timing it from process start until Pebble's last report of a
write-ahead log replayed, until the log says "database open" (the store is
open and every dataflow restored), until it accepts a connection (ready) and
until it has answered a query on the view (serving). The server runs at
--log-level debug, where Pebble's replay reports go. The first kill comes
right after the load, when Pebble may still hold the last load statement in
its write-ahead log or be compacting the load; the other runs are reported as
min / median. After each restart the views must equal their queries and no
acknowledged insert may be missing.`,
		RunE: func(cmd *cobra.Command, _ []string) error {
			sizes, err := parseSizes("sizes", sizesFlag)
			if err != nil {
				return err
			}
			if runs < 1 {
				return errors.New("--runs must be at least 1")
			}
			ctx, stop := benchContext(cmd)
			defer stop()
			fmt.Printf("| rows | kill | on-disk MB (of it WAL) | WAL replayed MB | WAL replayed at s | engine open s | ready s | serving s | view query, running server s |\n")
			fmt.Printf("|---|---|---|---|---|---|---|---|---|\n")
			for _, n := range sizes {
				warm, rs, err := measureRecovery(ctx, parent, n, runs)
				if err != nil {
					return fmt.Errorf("%d rows: %w", n, err)
				}
				first, later := rs[0], rs[1:]
				fmt.Printf("| %d | first, right after the load | %.0f (%.0f) | %.2f | %.2f | %.2f | %.2f | %.2f | %.2f |\n",
					n, megabytes(first.size), megabytes(first.wal), megabytes(first.replayed),
					first.replayDone.Seconds(), first.opened.Seconds(), first.ready.Seconds(), first.serving.Seconds(), warm.Seconds())
				// stat returns the minimum and the median of f over the later runs.
				stat := func(f func(restart) float64) (lo, mid float64) {
					vs := make([]float64, len(later))
					for i, r := range later {
						vs[i] = f(r)
					}
					sort.Float64s(vs)
					return vs[0], vs[len(vs)/2]
				}
				_, size := stat(func(r restart) float64 { return megabytes(r.size) })
				_, wal := stat(func(r restart) float64 { return megabytes(r.wal) })
				_, replayed := stat(func(r restart) float64 { return megabytes(r.replayed) })
				replayLo, replayMid := stat(func(r restart) float64 { return r.replayDone.Seconds() })
				openLo, openMid := stat(func(r restart) float64 { return r.opened.Seconds() })
				readyLo, readyMid := stat(func(r restart) float64 { return r.ready.Seconds() })
				servingLo, servingMid := stat(func(r restart) float64 { return r.serving.Seconds() })
				fmt.Printf("| %d | next %d: times min / median, sizes median | %.0f (%.0f) | %.2f | %.2f / %.2f | %.2f / %.2f | %.2f / %.2f | %.2f / %.2f | %.2f |\n",
					n, len(later), size, wal, replayed, replayLo, replayMid, openLo, openMid, readyLo, readyMid, servingLo, servingMid, warm.Seconds())
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&sizesFlag, "sizes", "100000,1000000", "comma-separated numbers of rows of the table")
	cmd.Flags().IntVar(&runs, "runs", 3, "kills and restarts per size after the first one")
	cmd.Flags().StringVar(&parent, "dir", "", "directory for the data directories (default: the system's temporary directory)")
	cmd.Flags().BoolVar(&keepBenchData, "keep", false, "keep the data directories and server logs")
	return cmd
}

// restart holds the measurements of one kill and restart.
type restart struct {
	// size and wal are the data directory's size at the kill and the part
	// of it in write-ahead logs; replayed is the part of the logs Pebble
	// replayed on the restart.
	size, wal, replayed int64
	// replayDone, opened, ready and serving are measured from the restarted
	// process's start until Pebble's last report of a replayed write-ahead
	// log, until the log says "database open", until a connection succeeds
	// and until viewQuery has been answered. Between the replay and "database
	// open", Pebble flushes the replayed writes and waits for the compactions
	// under way to finish (pebble.Open's scan for obsolete files), then the
	// engine loads the catalog and restores the dataflows.
	replayDone, opened, ready, serving time.Duration
}

// measureRecovery loads rows rows into a new data directory and kills and
// restarts its server 1+runs times. It returns the time viewQuery took before
// the first kill and the restarts.
func measureRecovery(ctx context.Context, parent string, rows, runs int) (time.Duration, []restart, error) {
	dir, err := newBenchDataDir(parent)
	if err != nil {
		return 0, nil, err
	}
	defer dir.remove()
	opts, err := dir.serverOptions(time.Second, "debug")
	if err != nil {
		return 0, nil, err
	}
	srv, err := crashtest.Start(ctx, opts)
	if err != nil {
		return 0, nil, err
	}
	defer func() { _ = srv.Kill() }() // the last server started
	c, err := connect(ctx, srv.URL)
	if err != nil {
		return 0, nil, err
	}
	if err := loadBenchState(ctx, c, rows); err != nil {
		return 0, nil, err
	}
	start := time.Now()
	if _, err := c.Exec(ctx, viewQuery); err != nil {
		return 0, nil, err
	}
	warm := time.Since(start)
	c.Close(ctx)

	var rs []restart
	nextID, acked := int64(rows), int64(rows)
	for run := 0; run <= runs; run++ {
		var r restart
		if err := killDuringInserts(ctx, srv, &nextID, &acked); err != nil {
			return 0, nil, err
		}
		if r.size, r.wal, err = dir.size(); err != nil {
			return 0, nil, err
		}
		launched := time.Now()
		next, err := crashtest.Launch(opts)
		if err != nil {
			return 0, nil, err
		}
		srv = next
		if r.ready, r.serving, err = waitServing(ctx, srv, launched); err != nil {
			return 0, nil, err
		}
		log := srv.Log()
		opened, err := logTime(log, `msg="database open"`)
		if err != nil {
			return 0, nil, err
		}
		r.opened = opened.Sub(launched)
		var replayedAt time.Time
		if r.replayed, replayedAt = walReplayed(log); !replayedAt.IsZero() {
			r.replayDone = replayedAt.Sub(launched)
		}
		rs = append(rs, r)

		c, err := connect(ctx, srv.URL)
		if err != nil {
			return 0, nil, err
		}
		err = checkBenchState(ctx, c, acked)
		c.Close(ctx)
		if err != nil {
			return 0, nil, fmt.Errorf("after restart %d: %w", run+1, err)
		}
		if p := srv.LogProblems(); len(p) > 0 {
			return 0, nil, fmt.Errorf("server logged errors:\n%s", strings.Join(p, "\n"))
		}
	}
	return warm, rs, nil
}

// killDuringInserts starts a client inserting single rows into t with ids
// from *nextID on, kills srv with SIGKILL once some of them have been
// acknowledged, and adds the acknowledged ones to *acked.
func killDuringInserts(ctx context.Context, srv *crashtest.Server, nextID, acked *int64) error {
	c, err := connect(ctx, srv.URL)
	if err != nil {
		return err
	}
	defer c.Close(context.Background())
	var n atomic.Int64
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for id := *nextID; ; id++ {
			q := fmt.Sprintf("INSERT INTO t VALUES (%d, %d, %d, %d, 'row-%d')", id, id/2, id%1000, id, id)
			if _, err := c.Exec(ctx, q); err != nil {
				return // the kill
			}
			n.Add(1)
		}
	}()
	for n.Load() < 20 && srv.Running() {
		time.Sleep(5 * time.Millisecond)
	}
	killErr := srv.Kill()
	wg.Wait()
	*acked += n.Load()
	// The insert in flight at the kill may or may not have committed: skip
	// its id.
	*nextID += n.Load() + 1
	return killErr
}

// waitServing polls srv, launched at launched, until a connection succeeds
// and then until it has answered viewQuery, and returns both times since
// launched.
func waitServing(ctx context.Context, srv *crashtest.Server, launched time.Time) (ready, serving time.Duration, err error) {
	for {
		cctx, cancel := context.WithTimeout(ctx, time.Second)
		c, err := connect(cctx, srv.URL)
		cancel()
		if err == nil {
			ready = time.Since(launched)
			_, err = c.Exec(ctx, viewQuery)
			serving = time.Since(launched)
			c.Close(ctx)
			return ready, serving, err
		}
		select {
		case <-srv.Exited():
			return 0, 0, fmt.Errorf("server exited during recovery; log:\n%s", srv.LogTail(4096))
		case <-ctx.Done():
			return 0, 0, ctx.Err()
		case <-time.After(2 * time.Millisecond):
		}
	}
}

// logTime returns the time of the first line of log, as written by slog's
// text handler, that contains attr (such as msg="database open").
func logTime(log, attr string) (time.Time, error) {
	for _, l := range strings.Split(log, "\n") {
		if !strings.HasPrefix(l, "time=") || !strings.Contains(l, attr) {
			continue
		}
		ts, _, _ := strings.Cut(strings.TrimPrefix(l, "time="), " ")
		return time.Parse(time.RFC3339Nano, ts)
	}
	return time.Time{}, fmt.Errorf("server log has no line with %s", attr)
}

// walReplayRE matches Pebble's report of one write-ahead log replayed on
// open: "WAL 000044: ... stopped reading at offset: (data/000044.log:
// 42073973); replayed 1000002 keys in 2 batches".
var walReplayRE = regexp.MustCompile(`stopped reading at offset: \(.*?: (\d+)\); replayed \d+ keys`)

// walReplayed returns the bytes of write-ahead log that Pebble reported
// replaying in log (at debug level) and the time of its last report (zero if
// none).
func walReplayed(log string) (bytes int64, last time.Time) {
	for _, l := range strings.Split(log, "\n") {
		m := walReplayRE.FindStringSubmatch(l)
		if m == nil {
			continue
		}
		b, _ := strconv.ParseInt(m[1], 10, 64)
		bytes += b
		if t, err := logTime(l, "replayed"); err == nil {
			last = t
		}
	}
	return bytes, last
}

func newBenchCheckpointCmd() *cobra.Command {
	var sizesFlag, parent string
	var changes, intervals int
	cmd := &cobra.Command{
		Use:   "checkpoint",
		Short: "Bytes and keys written per checkpoint against changed rows and state size (server run as a child process)",
		Long: `For each state size N, checkpoint starts a server process on a new data
directory with a barrier interval of an hour (so that only writes trigger
checkpoints), loads N rows into a table feeding a grouped-aggregate view (N/2
groups) and a join view (N rows), then runs --intervals statements that each
update exactly --changes rows spread over the table (UPDATE t SET v = v + 1
WHERE id % stride = r), and reads keys_written and bytes_written of the
checkpoints each statement caused from streamsql_checkpoints. At the largest
size it repeats the intervals with 10 times as many changes.`,
		RunE: func(cmd *cobra.Command, _ []string) error {
			sizes, err := parseSizes("state-rows", sizesFlag)
			if err != nil {
				return err
			}
			if changes < 1 || intervals < 1 {
				return errors.New("--changes and --intervals must be positive")
			}
			largest := slicesMax(sizes)
			for _, n := range sizes {
				// Rows changed together must fall in distinct groups of agg
				// (k = id/2): at most one row in two.
				if c := changesAt(n, largest, changes); 2*c[len(c)-1] > n {
					return fmt.Errorf("--state-rows %d is too small for %d changes: an interval changes at most one row in two", n, c[len(c)-1])
				}
			}
			ctx, stop := benchContext(cmd)
			defer stop()
			fmt.Printf("| state rows | on-disk MB (of it WAL) | changed rows per checkpoint | checkpoints | median keys written | median bytes written | bytes per changed row | median checkpoint ms | median UPDATE s |\n")
			fmt.Printf("|---|---|---|---|---|---|---|---|---|\n")
			for _, n := range sizes {
				if err := measureCheckpoints(ctx, parent, n, changesAt(n, largest, changes), intervals); err != nil {
					return fmt.Errorf("%d rows: %w", n, err)
				}
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&sizesFlag, "state-rows", "100000,1000000,5000000", "comma-separated numbers of rows of the table")
	cmd.Flags().IntVar(&changes, "changes", 1000, "rows each interval updates")
	cmd.Flags().IntVar(&intervals, "intervals", 20, "measured checkpoints per state size and number of changes")
	cmd.Flags().StringVar(&parent, "dir", "", "directory for the data directories (default: the system's temporary directory)")
	cmd.Flags().BoolVar(&keepBenchData, "keep", false, "keep the data directories and server logs")
	return cmd
}

// changesAt returns the numbers of changes measured at state size n: changes,
// and at the largest size also 10 times as many.
func changesAt(n, largest, changes int) []int {
	if n == largest {
		return []int{changes, 10 * changes}
	}
	return []int{changes}
}

func slicesMax(s []int) int {
	m := s[0]
	for _, v := range s[1:] {
		m = max(m, v)
	}
	return m
}

// measureCheckpoints loads rows rows and, for each number of changes, prints
// one table row measured over intervals checkpoints.
func measureCheckpoints(ctx context.Context, parent string, rows int, changes []int, intervals int) error {
	dir, err := newBenchDataDir(parent)
	if err != nil {
		return err
	}
	defer dir.remove()
	opts, err := dir.serverOptions(time.Hour, "info")
	if err != nil {
		return err
	}
	srv, err := crashtest.Start(ctx, opts)
	if err != nil {
		return err
	}
	defer func() { _ = srv.Kill() }()
	c, err := connect(ctx, srv.URL)
	if err != nil {
		return err
	}
	defer c.Close(context.Background())
	if err := loadBenchState(ctx, c, rows); err != nil {
		return err
	}
	for _, n := range changes {
		var keys, bytes []int64
		var durations, updates []float64
		checkpoints := 0
		stride := rows / n
		for i := 0; i < intervals; i++ {
			iv, err := updateInterval(ctx, c, n, stride, i%stride)
			if err != nil {
				return err
			}
			keys = append(keys, iv.keys)
			bytes = append(bytes, iv.bytes)
			durations = append(durations, iv.ms)
			updates = append(updates, iv.update.Seconds())
			checkpoints += iv.checkpoints
		}
		// Measured after the intervals: by then Pebble has flushed the load.
		size, wal, err := dir.size()
		if err != nil {
			return err
		}
		sort.Float64s(durations)
		sort.Float64s(updates)
		mb := medianInt(bytes)
		fmt.Printf("| %d | %.0f (%.0f) | %d | %d | %d | %d | %.0f | %.1f | %.2f |\n",
			rows, megabytes(size), megabytes(wal), n, checkpoints, medianInt(keys), mb,
			float64(mb)/float64(n), durations[len(durations)/2], updates[len(updates)/2])
	}
	if err := checkBenchState(ctx, c, int64(rows)); err != nil {
		return err
	}
	if p := srv.LogProblems(); len(p) > 0 {
		return fmt.Errorf("server logged errors:\n%s", strings.Join(p, "\n"))
	}
	return nil
}

// interval is what the checkpoints of one updateInterval wrote.
type interval struct {
	keys, bytes int64
	ms          float64 // duration_ms, summed
	checkpoints int
	// update is the UPDATE's latency: its scan of t, the checkpoint and
	// the wait for it.
	update time.Duration
}

// updateInterval updates the n rows of t whose id is r modulo stride (ids
// below n*stride) and sums keys_written, bytes_written and duration_ms of the
// checkpoints completed meanwhile. With no barriers but the ones writes
// trigger, that is the one checkpoint of the UPDATE.
func updateInterval(ctx context.Context, c *pgx.Conn, n, stride, r int) (interval, error) {
	var iv interval
	var before int64
	if err := c.QueryRow(ctx, "SELECT coalesce(max(epoch), 0) FROM streamsql_checkpoints").Scan(&before); err != nil {
		return iv, err
	}
	start := time.Now()
	tag, err := c.Exec(ctx, fmt.Sprintf("UPDATE t SET v = v + 1 WHERE id %% %d = %d AND id < %d", stride, r, n*stride))
	iv.update = time.Since(start)
	if err != nil {
		return iv, err
	}
	if tag.RowsAffected() != int64(n) {
		return iv, fmt.Errorf("UPDATE changed %d rows, want %d", tag.RowsAffected(), n)
	}
	rows, err := c.Query(ctx, fmt.Sprintf("SELECT keys_written, bytes_written, duration_ms FROM streamsql_checkpoints "+
		"WHERE epoch > %d AND status = 'completed'", before))
	if err != nil {
		return iv, err
	}
	defer rows.Close()
	for rows.Next() {
		var k, b int64
		var ms float64
		if err := rows.Scan(&k, &b, &ms); err != nil {
			return iv, err
		}
		iv.keys += k
		iv.bytes += b
		iv.ms += ms
		iv.checkpoints++
	}
	if err := rows.Err(); err != nil {
		return iv, err
	}
	if iv.checkpoints == 0 {
		return iv, errors.New("streamsql_checkpoints lists no completed checkpoint after the UPDATE")
	}
	return iv, nil
}

func medianInt(v []int64) int64 {
	s := append([]int64(nil), v...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	return s[len(s)/2]
}
