package engine

import (
	"embed"
	"encoding/json"
	"fmt"
	"io/fs"
	"net/http"
	"sort"
	"strconv"
	"time"

	"github.com/streamsql/streamsql/barrier"
	"github.com/streamsql/streamsql/catalog"
	"github.com/streamsql/streamsql/exec"
	"github.com/streamsql/streamsql/planner"
)

//go:embed dashboard
var dashboardFiles embed.FS

// HTTPHandler serves the metrics address: /metrics (Prometheus), the
// dashboard (/, its static files embedded in the binary) and the JSON
// endpoints behind it:
//
//	/api/relations    tables, sources, views and sinks of every database
//	/api/dataflows    each running view's operators with their counters
//	/api/checkpoints  the checkpoint history (?limit=n, the latest n)
//	/api/queries      the statements running
func (e *Engine) HTTPHandler() http.Handler {
	mux := http.NewServeMux()
	mux.Handle("/metrics", e.MetricsHandler())
	static, err := fs.Sub(dashboardFiles, "dashboard")
	if err != nil {
		panic(err) // the directory is embedded
	}
	mux.Handle("/", http.FileServer(http.FS(static)))
	mux.HandleFunc("/api/relations", func(w http.ResponseWriter, r *http.Request) { writeJSON(w, e.apiRelations()) })
	mux.HandleFunc("/api/dataflows", func(w http.ResponseWriter, r *http.Request) { writeJSON(w, e.apiDataflows()) })
	mux.HandleFunc("/api/queries", func(w http.ResponseWriter, r *http.Request) { writeJSON(w, e.RunningQueries()) })
	mux.HandleFunc("/api/checkpoints", func(w http.ResponseWriter, r *http.Request) {
		limit, _ := strconv.Atoi(r.URL.Query().Get("limit"))
		cps, err := e.apiCheckpoints(limit)
		if err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		writeJSON(w, cps)
	})
	return mux
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	if err := json.NewEncoder(w).Encode(v); err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
	}
}

// apiRelation is a relation as the dashboard lists it.
type apiRelation struct {
	ID       uint32 `json:"id"`
	Database string `json:"database"`
	Schema   string `json:"schema"`
	Name     string `json:"name"`
	Kind     string `json:"kind"`
	SQL      string `json:"sql,omitempty"`
	Status   string `json:"status,omitempty"`
}

func (e *Engine) apiRelations() []apiRelation {
	out := []apiRelation{}
	for _, r := range e.cat.All() {
		switch r.Kind {
		case catalog.Table, catalog.Source, catalog.MaterializedView, catalog.Sink:
		default:
			continue
		}
		a := apiRelation{ID: r.ID, Database: r.Database, Schema: r.Schema, Name: r.Name, Kind: r.Kind.String(), SQL: r.SQL}
		if r.Kind == catalog.MaterializedView || r.Kind == catalog.Sink {
			a.Status = "running"
			if err := e.viewError(r); err != nil {
				a.Status = err.Error()
			}
		}
		out = append(out, a)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out
}

// apiOperator is one line of a dataflow's plan with its node's counters.
type apiOperator struct {
	ID      int     `json:"id"` // -1: a further line of the node above
	Depth   int     `json:"depth"`
	Op      string  `json:"op"`
	Detail  string  `json:"detail"`
	RowsIn  int64   `json:"rows_in"`
	RowsOut int64   `json:"rows_out"`
	Seconds float64 `json:"seconds"`
}

type apiDataflow struct {
	ID         uint32        `json:"id"`
	Name       string        `json:"name"`
	Kind       string        `json:"kind"`
	Time       float64       `json:"time"` // Unix seconds of the reading
	Operators  []apiOperator `json:"operators"`
	Backfill   *apiBackfill  `json:"backfill,omitempty"`
	ExprErrors int64         `json:"expression_errors"`
	LateRows   int64         `json:"late_rows"`
	Failed     string        `json:"failed,omitempty"`
}

type apiBackfill struct {
	Rows  int64 `json:"rows"`
	Total int64 `json:"total"` // -1 until counted
}

func (e *Engine) apiDataflows() []apiDataflow {
	out := []apiDataflow{}
	for _, v := range e.runningViews() {
		rel := v.rel
		snap := v.stats.Snapshot()
		name := func(slot int) string { return fmt.Sprintf("#%d", rel.OperatorTables[slot]) }
		df := apiDataflow{ID: rel.ID, Name: rel.Name, Kind: rel.Kind.String(),
			Time:       float64(time.Now().UnixMicro()) / 1e6,
			ExprErrors: v.exprErrors.Load(), LateRows: v.lateRows.Load()}
		if p := v.failed.Load(); p != nil {
			df.Failed = (*p).Error()
		}
		for _, l := range planner.ExplainStreamLines(v.plan, fmt.Sprintf("#%d", rel.StateTable), name) {
			op := apiOperator{ID: -1, Depth: l.Depth, Op: l.Op, Detail: l.Detail}
			if l.Node != nil {
				if s := exec.Find(snap, l.Node); s != nil {
					op.ID, op.RowsIn, op.RowsOut, op.Seconds = s.ID, s.RowsIn, s.RowsOut, s.Time.Seconds()
				}
			}
			df.Operators = append(df.Operators, op)
		}
		if done, total, ok := e.backfillCounts(rel.ID); ok {
			df.Backfill = &apiBackfill{Rows: done, Total: total}
		}
		out = append(out, df)
	}
	return out
}

// apiCheckpoint is one checkpoint of the history.
type apiCheckpoint struct {
	Epoch      uint64  `json:"epoch"`
	Started    float64 `json:"started"` // Unix seconds
	DurationMs float64 `json:"duration_ms"`
	CommitMs   float64 `json:"commit_ms"`
	Bytes      int64   `json:"bytes"`
	Status     string  `json:"status"`
}

func (e *Engine) apiCheckpoints(limit int) ([]apiCheckpoint, error) {
	if limit <= 0 {
		limit = 200
	}
	persisted, recent, err := e.checkpointHistory(limit)
	if err != nil {
		return nil, err
	}
	for _, r := range recent {
		if r.Status != barrier.StatusInProgress {
			persisted = append(persisted, e.checkpointEntry(r))
		}
	}
	if len(persisted) > limit {
		persisted = persisted[len(persisted)-limit:]
	}
	out := make([]apiCheckpoint, 0, len(persisted))
	for _, c := range persisted {
		out = append(out, apiCheckpoint{Epoch: c.Epoch, Started: float64(c.Started) / 1e6,
			DurationMs: float64(c.Duration) / 1000, CommitMs: float64(c.Commit) / 1000, Bytes: c.Bytes, Status: c.Status})
	}
	return out, nil
}
