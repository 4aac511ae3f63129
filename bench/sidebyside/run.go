// Package sidebyside measures streamsql beside PostgreSQL and DuckDB on the
// same rows and the same views: how fast each loads a table with a view over
// it, and how long a 1,000-row INSERT, UPDATE or DELETE takes until the view
// shows it. streamsql maintains its materialized views; PostgreSQL refreshes
// its materialized view after each statement (REFRESH MATERIALIZED VIEW);
// DuckDB computes the view's query again into a table (CREATE OR REPLACE
// TABLE ... AS). At the end every system's view must equal what a model of
// the rows in Go computes.
package sidebyside

import (
	"context"
	"fmt"
	"io"
	"reflect"
	"sort"
	"time"
)

// Config says what to run.
type Config struct {
	// Rows is the number of fact rows loaded before the deltas.
	Rows int
	// Deltas is how many times each kind of delta runs. Rows must be at
	// least 2,000 * Deltas, so that the update and delete ranges are
	// disjoint 1,000-row ranges of loaded rows.
	Deltas int
	// Systems are the systems to run (StreamSQL, Postgres, DuckDB), one
	// after the other, each alone on the machine, and each workload on a
	// fresh instance of the system.
	Systems []string
	// LoadBatch is the number of rows per INSERT ... SELECT while loading
	// (default 100,000).
	LoadBatch int
	// Progress, if set, receives a line per step.
	Progress io.Writer
}

// DeltaRows is the number of rows each delta statement changes.
const DeltaRows = 1000

// Kinds of measure, in report order.
const (
	KindLoad   = "load"
	KindInsert = "insert"
	KindUpdate = "update"
	KindDelete = "delete"
)

// Result is one run of every workload on every system.
type Result struct {
	Rows     int       `json:"rows"`
	Deltas   int       `json:"deltas"`
	Systems  []string  `json:"systems"`
	Measures []Measure `json:"measures"`
	// ViewRows is the number of rows of each workload's final view, which
	// was the same on every system and equal to the model's (Run fails
	// otherwise).
	ViewRows map[string]int `json:"view_rows"`
	// Final holds each workload's final view contents on each system:
	// Final[workload][system] is the rows of the workload's Read query.
	Final map[string]map[string][][]int64 `json:"-"`
}

// Measure is one workload's measure of one kind on one system.
type Measure struct {
	Workload string `json:"workload"`
	Kind     string `json:"kind"`
	System   string `json:"system"`
	// Load: the whole load, from the first INSERT until the view shows
	// every row.
	Seconds    float64 `json:"seconds,omitempty"`
	RowsPerSec float64 `json:"rows_per_s,omitempty"`
	// Deltas: from sending the statement until the view shows it, in ms.
	MedianMS float64 `json:"median_ms,omitempty"`
	P90MS    float64 `json:"p90_ms,omitempty"`
	// StmtMedianMS is the median of the statement alone, without the
	// view's refresh (the same as MedianMS where views are maintained).
	StmtMedianMS float64 `json:"stmt_median_ms,omitempty"`
	Samples      int     `json:"samples,omitempty"`
}

// Run runs every workload on every system of cfg and checks that the views
// agree.
func Run(ctx context.Context, cfg Config) (*Result, error) {
	if cfg.LoadBatch <= 0 {
		cfg.LoadBatch = 100_000
	}
	if cfg.Deltas < 1 || cfg.Rows < 2*DeltaRows*cfg.Deltas {
		return nil, fmt.Errorf("--rows %d must be at least %d * --deltas (%d)", cfg.Rows, 2*DeltaRows, cfg.Deltas)
	}
	res := &Result{Rows: cfg.Rows, Deltas: cfg.Deltas, Systems: cfg.Systems, ViewRows: map[string]int{}, Final: map[string]map[string][][]int64{}}
	for _, name := range cfg.Systems {
		for _, w := range Workloads {
			final, err := runFresh(ctx, name, w, cfg, res)
			if err != nil {
				return nil, fmt.Errorf("%s on %s: %w", w.Name, name, err)
			}
			res.ViewRows[w.Name] = len(final)
			if res.Final[w.Name] == nil {
				res.Final[w.Name] = map[string][][]int64{}
			}
			res.Final[w.Name][name] = final
		}
	}
	return res, nil
}

// runFresh runs w on a new instance of the named system, adds the measures
// to res, and returns the final view.
func runFresh(ctx context.Context, name string, w *Workload, cfg Config, res *Result) ([][]int64, error) {
	sys, err := Open(ctx, name)
	if err != nil {
		return nil, fmt.Errorf("starting %s: %w", name, err)
	}
	ms, final, err := runWorkload(ctx, sys, w, cfg)
	if closeErr := sys.Close(); err == nil && closeErr != nil {
		err = fmt.Errorf("stopping %s: %w", name, closeErr)
	}
	res.Measures = append(res.Measures, ms...)
	return final, err
}

func (cfg *Config) progress(format string, args ...any) {
	if cfg.Progress != nil {
		fmt.Fprintf(cfg.Progress, time.Now().Format("15:04:05 ")+format+"\n", args...)
	}
}

// runWorkload creates w's tables and view on sys, loads them, runs the
// deltas, and checks the final view against the model. It returns the
// measures and the final view.
func runWorkload(ctx context.Context, sys System, w *Workload, cfg Config) ([]Measure, [][]int64, error) {
	m := newModel(w, cfg.Rows)
	for _, stmt := range w.Setup(cfg.Rows) {
		if _, err := sys.Exec(ctx, stmt); err != nil {
			return nil, nil, err
		}
	}
	if err := sys.CreateView(ctx, w.View, w.ViewQuery); err != nil {
		return nil, nil, err
	}
	// verify checks that the view shows every statement run so far.
	verify := func(after string) error {
		got, err := sys.Query(ctx, w.Check)
		if err != nil {
			return err
		}
		if want := m.check(); !reflect.DeepEqual(got, want) {
			return fmt.Errorf("after %s the view shows (rows, sum) = %v, want %v", after, got, want)
		}
		return nil
	}

	cfg.progress("%s %s: loading %d rows", sys.Name(), w.Name, cfg.Rows)
	start := time.Now()
	lastReport := start
	for first := int64(1); first <= int64(cfg.Rows); first += int64(cfg.LoadBatch) {
		last := min(first+int64(cfg.LoadBatch)-1, int64(cfg.Rows))
		n, err := sys.Exec(ctx, w.InsertRows(cfg.Rows, first, last))
		if err != nil {
			return nil, nil, err
		}
		if n != last-first+1 {
			return nil, nil, fmt.Errorf("loading rows %d..%d inserted %d rows", first, last, n)
		}
		m.insert(first, last)
		if time.Since(lastReport) > 10*time.Second {
			lastReport = time.Now()
			cfg.progress("%s %s: %d rows loaded in %.0fs", sys.Name(), w.Name, last, time.Since(start).Seconds())
		}
	}
	if err := sys.RefreshView(ctx, w.View, w.ViewQuery); err != nil {
		return nil, nil, err
	}
	elapsed := time.Since(start)
	if err := verify("the load"); err != nil {
		return nil, nil, err
	}
	measures := []Measure{{Workload: w.Name, Kind: KindLoad, System: sys.Name(),
		Seconds: elapsed.Seconds(), RowsPerSec: float64(cfg.Rows) / elapsed.Seconds()}}
	cfg.progress("%s %s: loaded in %.1fs (%.0f rows/s)", sys.Name(), w.Name, elapsed.Seconds(), measures[0].RowsPerSec)

	next := int64(cfg.Rows) + 1
	half := int64(cfg.Rows / 2)
	step := half / int64(cfg.Deltas)
	for _, kind := range []string{KindInsert, KindUpdate, KindDelete} {
		var total, stmt []time.Duration
		for i := range int64(cfg.Deltas) {
			var text string
			var apply func() int64
			switch kind {
			case KindInsert:
				first, last := next, next+DeltaRows-1
				next += DeltaRows
				text = w.InsertRows(cfg.Rows, first, last)
				apply = func() int64 { m.insert(first, last); return DeltaRows }
			case KindUpdate: // in the first half of the loaded ids
				lo := i * step
				text = w.UpdateRange(lo, lo+DeltaRows)
				apply = func() int64 { return m.update(lo, lo+DeltaRows) }
			case KindDelete: // in the second half
				lo := half + i*step
				text = w.DeleteRange(lo, lo+DeltaRows)
				apply = func() int64 { return m.delete(lo, lo+DeltaRows) }
			}
			t0 := time.Now()
			n, err := sys.Exec(ctx, text)
			if err != nil {
				return nil, nil, err
			}
			t1 := time.Now()
			if err := sys.RefreshView(ctx, w.View, w.ViewQuery); err != nil {
				return nil, nil, err
			}
			t2 := time.Now()
			if want := apply(); n != want {
				return nil, nil, fmt.Errorf("%s changed %d rows, want %d", text, n, want)
			}
			if err := verify(text); err != nil {
				return nil, nil, err
			}
			stmt = append(stmt, t1.Sub(t0))
			total = append(total, t2.Sub(t0))
		}
		ms := Measure{Workload: w.Name, Kind: kind, System: sys.Name(), Samples: len(total),
			MedianMS: ms(percentile(total, 0.5)), P90MS: ms(percentile(total, 0.9)),
			StmtMedianMS: ms(percentile(stmt, 0.5))}
		measures = append(measures, ms)
		cfg.progress("%s %s: %d x %d-row %s: median %.1f ms, p90 %.1f ms", sys.Name(), w.Name,
			cfg.Deltas, DeltaRows, kind, ms.MedianMS, ms.P90MS)
	}

	got, err := sys.Query(ctx, w.Read)
	if err != nil {
		return nil, nil, err
	}
	want := m.view()
	if !reflect.DeepEqual(got, want) {
		return nil, nil, fmt.Errorf("final view %s differs from the model: %s", w.View, diffRows(got, want))
	}
	return measures, got, nil
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// percentile is the nearest-rank percentile p (0.5 for the median) of ds,
// which it sorts.
func percentile(ds []time.Duration, p float64) time.Duration {
	sort.Slice(ds, func(i, j int) bool { return ds[i] < ds[j] })
	i := int(p*float64(len(ds))+0.999999) - 1
	return ds[max(0, min(i, len(ds)-1))]
}

// diffRows describes the first difference between two results.
func diffRows(got, want [][]int64) string {
	for i := range min(len(got), len(want)) {
		if !reflect.DeepEqual(got[i], want[i]) {
			return fmt.Sprintf("row %d is %v, want %v", i, got[i], want[i])
		}
	}
	return fmt.Sprintf("%d rows, want %d", len(got), len(want))
}
