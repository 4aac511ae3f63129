// Command sidebyside measures streamsql beside PostgreSQL and DuckDB: loading
// a table under a view, and 1,000-row INSERTs, UPDATEs and DELETEs until the
// view shows them. See bench/README.md.
//
//	go run ./cmd/sidebyside --rows 1000000 --deltas 20 --systems streamsql,postgres,duckdb [--json]
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"runtime"
	"runtime/pprof"
	"strconv"
	"strings"

	"github.com/streamsql/streamsql/bench/sidebyside"
)

func main() {
	var rows []int
	flag.Func("rows", "fact rows to load (repeat the flag, or separate by commas, for several runs; default 1000000)", func(v string) error {
		for _, f := range strings.Split(v, ",") {
			n, err := strconv.Atoi(strings.TrimSpace(f))
			if err != nil || n < 1 {
				return fmt.Errorf("bad row count %q", f)
			}
			rows = append(rows, n)
		}
		return nil
	})
	deltas := flag.Int("deltas", 20, "times each kind of delta (1,000-row INSERT, UPDATE, DELETE) runs")
	systems := flag.String("systems", "streamsql,postgres,duckdb", "systems to run, comma-separated")
	batch := flag.Int("load-batch", 100_000, "rows per INSERT ... SELECT while loading")
	asJSON := flag.Bool("json", false, "print the results as JSON instead of Markdown tables")
	quiet := flag.Bool("quiet", false, "no progress lines on stderr")
	cpuProfile := flag.String("cpuprofile", "", "write a CPU profile of the whole run to this file (streamsql runs in this process; use with --systems streamsql)")
	render := flag.String("render", "", "print the tables of a file written by --json, and run nothing")
	flag.Parse()
	if *render != "" {
		if err := renderJSON(*render); err != nil {
			fmt.Fprintln(os.Stderr, "sidebyside:", err)
			os.Exit(1)
		}
		return
	}
	if len(rows) == 0 {
		rows = []int{1_000_000}
	}
	if *cpuProfile != "" {
		f, err := os.Create(*cpuProfile)
		if err == nil {
			err = pprof.StartCPUProfile(f)
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, "sidebyside:", err)
			os.Exit(1)
		}
		defer pprof.StopCPUProfile()
	}
	cfg := sidebyside.Config{Deltas: *deltas, LoadBatch: *batch}
	for _, s := range strings.Split(*systems, ",") {
		cfg.Systems = append(cfg.Systems, strings.TrimSpace(s))
	}
	if !*quiet {
		cfg.Progress = os.Stderr
	}
	machine := fmt.Sprintf("%s/%s, %d CPUs, %s", runtime.GOOS, runtime.GOARCH, runtime.NumCPU(), cpuModel())
	var results []*sidebyside.Result
	for _, n := range rows {
		cfg.Rows = n
		r, err := sidebyside.Run(context.Background(), cfg)
		if err != nil {
			fmt.Fprintln(os.Stderr, "sidebyside:", err)
			pprof.StopCPUProfile()
			os.Exit(1)
		}
		results = append(results, r)
		if !*asJSON {
			sidebyside.WriteTable(os.Stdout, r)
			fmt.Println()
		}
	}
	if *asJSON {
		enc := json.NewEncoder(os.Stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(report{Machine: machine, Results: results}); err != nil {
			fmt.Fprintln(os.Stderr, "sidebyside:", err)
			os.Exit(1)
		}
		return
	}
	fmt.Printf("Machine: %s. Every view agreed with the model on every system.\n", machine)
}

// cpuModel is the first "model name" of /proc/cpuinfo, if any.
func cpuModel() string {
	b, err := os.ReadFile("/proc/cpuinfo")
	if err != nil {
		return "unknown CPU"
	}
	for _, line := range strings.Split(string(b), "\n") {
		if k, v, ok := strings.Cut(line, ":"); ok && strings.TrimSpace(k) == "model name" {
			return strings.TrimSpace(v)
		}
	}
	return "unknown CPU"
}

// report is what --json prints.
type report struct {
	Machine string               `json:"machine"`
	Results []*sidebyside.Result `json:"results"`
}

func renderJSON(path string) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	var r report
	if err := json.Unmarshal(b, &r); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	for _, res := range r.Results {
		sidebyside.WriteTable(os.Stdout, res)
		fmt.Println()
	}
	fmt.Printf("Machine: %s.\n", r.Machine)
	return nil
}
