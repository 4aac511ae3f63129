package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"runtime"
	"runtime/debug"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/schollz/progressbar/v3"
	"github.com/spf13/cobra"

	"github.com/streamsql/streamsql/connector/nexmark"
	"github.com/streamsql/streamsql/engine"
)

// nexmarkResult is one query's run of bench nexmark (one JSON line).
type nexmarkResult struct {
	Query       string `json:"query"`
	Sink        string `json:"sink"`
	Events      int64  `json:"events"`
	Parallelism int    `json:"parallelism"`
	// Splits is nexmark.split.num of each source.
	Splits              int     `json:"splits"`
	Seconds             float64 `json:"seconds"`
	CPUSeconds          float64 `json:"cpu_seconds"`
	EventsPerSec        float64 `json:"events_per_sec"`
	EventsPerSecPerCore float64 `json:"events_per_sec_per_core"`
	PeakRSSBytes        int64   `json:"peak_rss_bytes"`
	Checkpoints         int     `json:"checkpoints"`
	CheckpointP50Ms     float64 `json:"checkpoint_p50_ms"`
	CheckpointP99Ms     float64 `json:"checkpoint_p99_ms"`
	BarrierLatencyP50Ms float64 `json:"barrier_latency_p50_ms"`
	BarrierLatencyP99Ms float64 `json:"barrier_latency_p99_ms"`
	// Verified is true only if the view equalled the same query run in
	// batch over the same events (never for a blackhole sink, whose output
	// is gone).
	// MemoryLimitBytes is the server's memory budget; the RSS figures are
	// sampled every second of the run (before verification): the median,
	// the most, the medians of the second and of the last quarter of the
	// run (flat memory: the last no higher than the second), and every
	// sample in MB.
	MemoryLimitBytes      int64   `json:"memory_limit_bytes"`
	RSSP50MB              int64   `json:"rss_p50_mb"`
	RSSMaxMB              int64   `json:"rss_max_mb"`
	RSSSecondQuarterP50MB int64   `json:"rss_second_quarter_p50_mb"`
	RSSLastQuarterP50MB   int64   `json:"rss_last_quarter_p50_mb"`
	RSSSamplesMB          []int64 `json:"rss_samples_mb,omitempty"`
	OperatorCacheMaxBytes int64   `json:"operator_cache_max_bytes"`
	Verified              bool    `json:"verified"`
	Rows                  int     `json:"rows,omitempty"`
	Error                 string  `json:"error,omitempty"`
}

type nexmarkFlags struct {
	queries         string
	events          int64
	splits          int
	parallelism     int
	barrierInterval time.Duration
	sink            string
	json            bool
	verify          bool
	memoryLimit     string
	rssLog          string
}

func newBenchNexmarkCmd() *cobra.Command {
	var f nexmarkFlags
	cmd := &cobra.Command{
		Use:   "nexmark",
		Short: "Nexmark queries as materialized views or blackhole sinks over the in-process generator: events/s, per core, memory, checkpoints, barrier latency, verified against batch",
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runBenchNexmark(cmd.Context(), f)
		},
	}
	cmd.Flags().StringVar(&f.queries, "queries", "", "comma-separated queries (default: all)")
	cmd.Flags().Int64Var(&f.events, "events", 1_000_000, "events to push through each query")
	cmd.Flags().IntVar(&f.splits, "splits", 0, "nexmark.split.num of each source (0: the views' parallelism, so that every reader actor has splits); "+
		"the events are the same whatever the count (split i of K generates event ids i, i+K, ...), only their order changes")
	cmd.Flags().IntVar(&f.parallelism, "parallelism", 0, "SET streaming_parallelism before creating each view (0: the default)")
	cmd.Flags().DurationVar(&f.barrierInterval, "barrier-interval", time.Second, "barrier (checkpoint) interval")
	cmd.Flags().StringVar(&f.sink, "sink", "view", "view, blackhole, or both")
	cmd.Flags().BoolVar(&f.json, "json", false, "one JSON object per query per line instead of a table")
	cmd.Flags().BoolVar(&f.verify, "verify", true, "compare each view with the query run in batch over the same events")
	cmd.Flags().StringVar(&f.memoryLimit, "memory-limit", "", "the server's --memory-limit (e.g. 512MB; 0: none; default half the machine's memory)")
	cmd.Flags().StringVar(&f.rssLog, "rss-log", "", "append one line per second of each run to this file: seconds, rows generated, RSS MB, operator caches MB")
	return cmd
}

func runBenchNexmark(ctx context.Context, f nexmarkFlags) error {
	if ctx == nil {
		ctx = context.Background()
	}
	qs, err := nexmarkQueries(f.queries)
	if err != nil {
		return err
	}
	if f.splits <= 0 {
		f.splits = benchParallelism(f.parallelism)
	}
	var sinks []string
	switch f.sink {
	case "view", "blackhole":
		sinks = []string{f.sink}
	case "both":
		sinks = []string{"view", "blackhole"}
	default:
		return fmt.Errorf("--sink is view, blackhole or both, not %q", f.sink)
	}
	if !f.json {
		fmt.Printf("%d events per query, %d split(s), parallelism %d, barrier interval %v, one fresh in-process server per run.\n\n",
			f.events, f.splits, benchParallelism(f.parallelism), f.barrierInterval)
		fmt.Println("| query | sink | events/s | events/s per core | peak RSS MB | checkpoint p50/p99 ms | barrier latency p50/p99 ms | verified |")
		fmt.Println("|---|---|---|---|---|---|---|---|")
	}
	for _, q := range qs {
		for _, sink := range sinks {
			r := runNexmarkQuery(ctx, f, q, sink)
			if f.json {
				b, _ := json.Marshal(r)
				fmt.Println(string(b))
				continue
			}
			if r.Error != "" {
				fmt.Printf("| %s | %s | error: %s |||||\n", r.Query, r.Sink, r.Error)
				continue
			}
			verified := strconv.FormatBool(r.Verified)
			if sink == "blackhole" {
				verified = "n/a"
			}
			fmt.Printf("| %s | %s | %.0f | %.0f | %.0f | %.1f / %.1f | %.1f / %.1f | %s |\n", r.Query, r.Sink, r.EventsPerSec, r.EventsPerSecPerCore,
				float64(r.PeakRSSBytes)/(1<<20), r.CheckpointP50Ms, r.CheckpointP99Ms, r.BarrierLatencyP50Ms, r.BarrierLatencyP99Ms, verified)
		}
	}
	return nil
}

// benchParallelism is the number of actors a view gets with --parallelism
// p: p, or for 0 what streaming_parallelism = default gives a bench server
// (one per GOMAXPROCS; see engine.Options.StreamingParallelism).
func benchParallelism(p int) int {
	if p > 0 {
		return p
	}
	return runtime.GOMAXPROCS(0)
}

// nexmarkQueries returns the queries named in list (all if empty).
func nexmarkQueries(list string) ([]nexmark.Query, error) {
	if list == "" {
		return nexmark.Queries, nil
	}
	var qs []nexmark.Query
	for _, name := range strings.Split(list, ",") {
		q, ok := nexmark.QueryNamed(strings.TrimSpace(name))
		if !ok {
			return nil, fmt.Errorf("no Nexmark query %q", name)
		}
		qs = append(qs, q)
	}
	return qs, nil
}

// runNexmarkQuery runs one query on a fresh server: the sources, the view
// or sink, every event through it, then the verification.
func runNexmarkQuery(ctx context.Context, f nexmarkFlags, q nexmark.Query, sink string) nexmarkResult {
	r := nexmarkResult{Query: q.Name, Sink: sink, Events: f.events, Parallelism: f.parallelism, Splits: f.splits}
	if err := measureNexmark(ctx, f, q, &r); err != nil {
		r.Error = err.Error()
	}
	return r
}

func measureNexmark(ctx context.Context, f nexmarkFlags, q nexmark.Query, r *nexmarkResult) error {
	limit, err := memoryLimitFlag(f.memoryLimit)
	if err != nil {
		return err
	}
	s, err := startBenchServerWith(engine.Options{BarrierInterval: f.barrierInterval, MemoryLimit: limit})
	if err != nil {
		return err
	}
	defer s.close()
	r.MemoryLimitBytes = s.eng.MemoryLimit()
	defer debug.SetMemoryLimit(debug.SetMemoryLimit(-1))
	setGoMemoryLimit(s.eng.GoMemoryLimit())
	c, err := connect(ctx, s.url)
	if err != nil {
		return err
	}
	defer c.Close(ctx)
	if err := execAll(ctx, c, nexmark.SourceDDL(nexmark.SourceOptions{EventNum: f.events, Splits: f.splits})...); err != nil {
		return err
	}
	if f.parallelism > 0 {
		if err := execAll(ctx, c, fmt.Sprintf("SET streaming_parallelism = %d", f.parallelism)); err != nil {
			return err
		}
	}
	create := q.SQL
	if r.Sink == "blackhole" {
		create = fmt.Sprintf("CREATE SINK %s AS %s WITH (connector = 'blackhole')", q.View(), q.Select())
	}
	var log io.Writer
	if f.rssLog != "" {
		fh, err := os.OpenFile(f.rssLog, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
		if err != nil {
			return err
		}
		defer fh.Close()
		fmt.Fprintf(fh, "# %s %s, %d events, memory limit %d MB: seconds, rows, RSS MB, operator caches MB\n", q.Name, r.Sink, f.events, r.MemoryLimitBytes>>20)
		log = fh
	}
	resetPeakRSS()
	cpu0, start := cpuTime(), time.Now()
	sampler := startRSSSampler(s.eng, s.eng.SourceRowsRead, log)
	if err := execAll(ctx, c, create); err != nil {
		sampler.finish(r)
		return err
	}
	err = waitNexmarkConsumed(ctx, s)
	sampler.finish(r)
	if err != nil {
		return err
	}
	r.Seconds, r.CPUSeconds = time.Since(start).Seconds(), (cpuTime() - cpu0).Seconds()
	r.PeakRSSBytes = peakRSS()
	r.EventsPerSec = float64(f.events) / r.Seconds
	r.EventsPerSecPerCore = float64(f.events) / r.CPUSeconds
	if err := checkpointFigures(ctx, c, start, r); err != nil {
		return err
	}
	if r.Sink == "view" && f.verify {
		return verifyNexmark(ctx, s, c, q, r)
	}
	return nil
}

// waitNexmarkConsumed waits until every source reader has generated all of
// its events and a checkpoint after that has committed, showing progress on
// a terminal.
func waitNexmarkConsumed(ctx context.Context, s *benchServer) error {
	var bar *progressbar.ProgressBar
	if fi, err := os.Stderr.Stat(); err == nil && fi.Mode()&os.ModeCharDevice != 0 {
		bar = progressbar.NewOptions64(-1, progressbar.OptionSetWriter(os.Stderr), progressbar.OptionSetDescription("rows generated"),
			progressbar.OptionShowCount(), progressbar.OptionShowIts(), progressbar.OptionClearOnFinish())
		defer bar.Finish()
	}
	for !s.eng.SourcesExhausted() {
		if bar != nil {
			bar.Set64(s.eng.SourceRowsRead())
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(20 * time.Millisecond):
		}
	}
	return s.eng.Flush(ctx)
}

// checkpointFigures reads the checkpoints committed since start: the
// commit (the write of the epoch's state) and the barrier latency (from
// injection to commit).
func checkpointFigures(ctx context.Context, c *pgx.Conn, start time.Time, r *nexmarkResult) error {
	rows, err := c.Query(ctx, "SELECT commit_ms, duration_ms FROM streamsql_checkpoints WHERE status = 'completed' AND started_at >= $1", start)
	if err != nil {
		return err
	}
	var commit, latency []float64
	for rows.Next() {
		var cm, d float64
		if err := rows.Scan(&cm, &d); err != nil {
			return err
		}
		commit, latency = append(commit, cm), append(latency, d)
	}
	if err := rows.Err(); err != nil {
		return err
	}
	r.Checkpoints = len(commit)
	r.CheckpointP50Ms, r.CheckpointP99Ms = floatPercentile(commit, 0.5), floatPercentile(commit, 0.99)
	r.BarrierLatencyP50Ms, r.BarrierLatencyP99Ms = floatPercentile(latency, 0.5), floatPercentile(latency, 0.99)
	return nil
}

func floatPercentile(v []float64, p float64) float64 {
	if len(v) == 0 {
		return 0
	}
	sort.Float64s(v)
	return v[int(float64(len(v)-1)*p)]
}

// verifyNexmark copies the events into materialized views of their own
// (schema nb), runs the query in batch over them and compares its rows with
// the view's.
func verifyNexmark(ctx context.Context, s *benchServer, c *pgx.Conn, q nexmark.Query, r *nexmarkResult) error {
	stmts := []string{"CREATE SCHEMA nb"}
	for _, t := range []string{"person", "auction", "bid"} {
		stmts = append(stmts, fmt.Sprintf("CREATE MATERIALIZED VIEW nb.%s AS SELECT * FROM public.%s", t, t))
	}
	if err := execAll(ctx, c, stmts...); err != nil {
		return err
	}
	if err := waitNexmarkConsumed(ctx, s); err != nil {
		return err
	}
	cols := q.Columns()
	got, err := sortedRows(ctx, c, "SELECT "+cols+" FROM public."+q.View())
	if err != nil {
		return err
	}
	// The batch query is the reference, not what is measured: no limit.
	if err := execAll(ctx, c, "SET search_path = nb, public", "SET query_memory_limit = 0"); err != nil {
		return err
	}
	want, err := sortedRows(ctx, c, "SELECT "+cols+" FROM ("+q.Select()+") q")
	if err != nil {
		return err
	}
	r.Rows, r.Verified = len(got), slices.Equal(got, want)
	return nil
}

// sortedRows returns the text of every row of query, sorted.
func sortedRows(ctx context.Context, c *pgx.Conn, query string) ([]string, error) {
	rows, err := c.Query(ctx, query, pgx.QueryExecModeSimpleProtocol)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		vals := rows.RawValues()
		var b strings.Builder
		for i, v := range vals {
			if i > 0 {
				b.WriteByte('|')
			}
			if v == nil {
				b.WriteString("NULL")
			} else {
				b.Write(v)
			}
		}
		out = append(out, b.String())
	}
	sort.Strings(out)
	return out, rows.Err()
}

// resetPeakRSS returns the memory the Go runtime holds free to the system
// and resets the process's peak resident set size (Linux: writing 5 to
// /proc/self/clear_refs), so that peakRSS measures from here.
func resetPeakRSS() {
	debug.FreeOSMemory()
	_ = os.WriteFile("/proc/self/clear_refs", []byte("5"), 0)
}

// peakRSS is the process's peak resident set size (VmHWM), in bytes, or 0
// where /proc is not there.
func peakRSS() int64 { return procStatusBytes("VmHWM:") }
