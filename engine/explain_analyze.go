package engine

import (
	"context"
	"fmt"
	"time"

	"github.com/streamsql/streamsql/catalog"
	"github.com/streamsql/streamsql/exec"
	"github.com/streamsql/streamsql/ir"
	"github.com/streamsql/streamsql/planner"
	"github.com/streamsql/streamsql/sql"
	"github.com/streamsql/streamsql/sqlerr"
)

// explainStatement renders EXPLAIN [ANALYZE] [(FORMAT JSON)] of st.Stmt.
// ANALYZE runs a SELECT over the last committed epoch, discarding its rows,
// and reports every operator's rows and time.
func (e *Engine) explainStatement(ctx context.Context, st *ir.Explain, q batchQuery, parallelism int) ([]string, error) {
	opts := planner.ExplainOptions{JSON: st.Format == sql.ExplainJSON}
	switch inner := st.Stmt.(type) {
	case *ir.Select:
		if err := e.checkViews(inner.Query); err != nil {
			return nil, err
		}
		snap := e.store.Snapshot()
		defer snap.Release()
		root, _, err := planner.PlanBatchWith(inner.Query, planner.BatchOptions{Rows: rowCounts(snap)})
		if err != nil {
			return nil, err
		}
		if !st.Analyze {
			return planner.ExplainBatchWith(root, opts), nil
		}
		env, release := e.batchEnv(q)
		defer release()
		env.Stats = exec.NewStats(root)
		start := time.Now()
		var rows int64
		err = exec.RunBatch(ctx, env, snap, root, exec.OutputFunc(func(_ context.Context, m exec.Message) error {
			if m.Batch != nil {
				rows += m.Batch.Rec.NumRows()
				m.Batch.Release()
			}
			return nil
		}))
		if err != nil {
			return nil, err
		}
		elapsed := time.Since(start)
		opts.Counters = counters(env.Stats.Snapshot())
		lines := planner.ExplainBatchWith(root, opts)
		if !opts.JSON {
			lines = append(lines, fmt.Sprintf("Execution Time: %.3f ms (%d rows)", float64(elapsed.Nanoseconds())/1e6, rows))
		}
		return lines, nil
	case *ir.Insert, *ir.Update, *ir.Delete:
		if st.Analyze {
			return nil, sqlerr.Unsupported("EXPLAIN ANALYZE %s", st.Stmt.Tag())
		}
		snap := e.store.Snapshot()
		defer snap.Release()
		plan, err := planWrite(inner, snap)
		if err != nil {
			return nil, err
		}
		return planner.ExplainBatchWith(plan, opts), nil
	case *ir.CreateMaterializedView:
		if !opts.JSON {
			return e.explain(inner, parallelism)
		}
		plan, err := e.planView(inner, false)
		if err != nil {
			return nil, err
		}
		name := func(slot int) string { return fmt.Sprintf("#%d", slot+1) }
		return planner.ExplainStreamWith(plan, "#0", name, opts), nil
	}
	if opts.JSON {
		return nil, sqlerr.Unsupported("EXPLAIN (FORMAT JSON) %s", st.Stmt.Tag())
	}
	return e.explain(st.Stmt, parallelism)
}

// counters adapts operator counters to the planner's EXPLAIN.
func counters(snap []exec.NodeSnapshot) planner.Counters {
	return func(n planner.Node) (planner.NodeCounters, bool) {
		s := exec.Find(snap, n)
		if s == nil {
			return planner.NodeCounters{}, false
		}
		return planner.NodeCounters{RowsIn: s.RowsIn, RowsOut: s.RowsOut, Time: s.Time}, true
	}
}

// runningView returns the running dataflow of the view or sink name.
func (e *Engine) runningView(cat *catalog.Catalog, path []string, name ir.ObjectName) (*catalog.Relation, *view, error) {
	rel, err := e.resolve(cat, path, name)
	if err != nil {
		return nil, nil, err
	}
	if rel == nil || (rel.Kind != catalog.MaterializedView && rel.Kind != catalog.Sink) {
		return nil, nil, sqlerr.New(sqlerr.UndefinedTable, "materialized view \"%s\" does not exist", name.Name)
	}
	e.mu.Lock()
	v := e.views[rel.ID]
	e.mu.Unlock()
	if v == nil {
		return nil, nil, sqlerr.New(sqlerr.ObjectNotInPrerequisiteState, "materialized view \"%s\" is not running", rel.Name)
	}
	return rel, v, nil
}

// explainView renders EXPLAIN [ANALYZE] MATERIALIZED VIEW name: the running
// dataflow, with its live counters (since the server started) if Analyze.
func (e *Engine) explainView(cat *catalog.Catalog, st *sql.ExplainView) ([]string, error) {
	rel, v, err := e.runningView(cat, st.Path, st.Name)
	if err != nil {
		return nil, err
	}
	opts := planner.ExplainOptions{JSON: st.Format == sql.ExplainJSON}
	if st.Analyze {
		opts.Counters = counters(v.stats.Snapshot())
	}
	name := func(slot int) string { return fmt.Sprintf("#%d", rel.OperatorTables[slot]) }
	lines := planner.ExplainStreamWith(v.plan, fmt.Sprintf("#%d", rel.StateTable), name, opts)
	if len(v.parallel) > 0 && !opts.JSON {
		lines = explainParallel(lines, v.plan, viewParallelism(v.rel))
	}
	if st.Analyze && !opts.JSON {
		status := "running"
		if p := v.failed.Load(); p != nil {
			status = "failed: " + (*p).Error()
		}
		lines = append(lines, fmt.Sprintf("Status: %s, expression errors: %d, late rows: %d",
			status, v.exprErrors.Load(), v.lateRows.Load()))
		if done, total, ok := e.backfillProgress(rel.ID); ok {
			lines = append(lines, fmt.Sprintf("Backfill: %d of %s rows", done, total))
		}
	}
	return lines, nil
}

// backfillProgress reports the rows a view's backfill has done and the
// estimated total ("?" until counted); ok is false when none runs.
func (e *Engine) backfillProgress(id uint32) (done int64, total string, ok bool) {
	e.mu.Lock()
	j := e.jobs[id]
	e.mu.Unlock()
	if j == nil {
		return 0, "", false
	}
	total = "?"
	if n := j.total.Load(); n >= 0 {
		total = fmt.Sprint(n)
	}
	return j.rowsDone(), total, true
}
