package sidebyside

import (
	"context"
	"os"
	"reflect"
	"testing"
	"time"
)

// TestSideBySide runs the whole benchmark at 10,000 rows on the three
// systems and checks that their final views are equal (Run also checks each
// against the model after the load, after every delta and at the end).
func TestSideBySide(t *testing.T) {
	cfg := Config{Rows: 10_000, Deltas: 3, LoadBatch: 2_500, Systems: []string{StreamSQL, Postgres, DuckDB}}
	if testing.Verbose() {
		cfg.Progress = os.Stderr
	}
	res, err := Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range Workloads {
		views := res.Final[w.Name]
		want := views[StreamSQL]
		if len(want) == 0 {
			t.Fatalf("%s: streamsql's view is empty", w.Name)
		}
		for _, sys := range cfg.Systems {
			if got := views[sys]; !reflect.DeepEqual(got, want) {
				t.Errorf("%s: %s's view differs from streamsql's: %s", w.Name, sys, diffRows(got, want))
			}
		}
		var n int
		for _, m := range res.Measures {
			if m.Workload == w.Name {
				n++
			}
		}
		if want := 4 * len(cfg.Systems); n != want {
			t.Errorf("%s: %d measures, want %d", w.Name, n, want)
		}
	}
}

func TestPercentile(t *testing.T) {
	ds := durations(5, 1, 4, 2, 3, 10, 9, 8, 7, 6)
	if got := percentile(ds, 0.5); got != 5 {
		t.Errorf("median = %d, want 5", got)
	}
	if got := percentile(ds, 0.9); got != 9 {
		t.Errorf("p90 = %d, want 9", got)
	}
}

func durations(ns ...int) []time.Duration {
	out := make([]time.Duration, len(ns))
	for i, n := range ns {
		out[i] = time.Duration(n)
	}
	return out
}
