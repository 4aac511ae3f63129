package engine

import (
	"context"
	"fmt"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/streamsql/streamsql/catalog"
	"github.com/streamsql/streamsql/exec"
	"github.com/streamsql/streamsql/exec/eval"
	"github.com/streamsql/streamsql/ir"
	"github.com/streamsql/streamsql/pgwire"
	"github.com/streamsql/streamsql/planner"
	"github.com/streamsql/streamsql/state"
	"github.com/streamsql/streamsql/types"
)

// batchQuery is what running one batch query needs besides its plan.
type batchQuery struct {
	now int64 // now(), microseconds since the Unix epoch
	// memoryLimit bounds the memory the query holds (bytes; 0: no limit).
	memoryLimit int64
	// cat is the session's database, whose relations system tables list.
	cat *catalog.Catalog
	// user is the session's user, the role pg_catalog shows.
	user string
	// random is the session's generator for random() and setseed().
	random *eval.Random
	// copyIn emits the rows of a COPY FROM STDIN (exec.Env.CopyInput).
	copyIn func(ctx context.Context, out exec.Output) error
	// tx is the session's transaction block, if it is in one: the query
	// reads its snapshot and writes (txn.go).
	tx *txn
	// pid and lockTimeout are the session's backend pid and lock_timeout,
	// for waits for row locks; owner holds the row locks a statement
	// outside a transaction block waited for (rowlock.go).
	pid         int32
	lockTimeout time.Duration
	owner       *lockOwner
}

// batchEnv returns the environment of one batch query: strict expression
// evaluation, scratch state tables and the query's memory budget (none
// without a limit), released by the returned func.
func (e *Engine) batchEnv(q batchQuery) (exec.Env, func()) {
	var ids []state.TableID
	tables := map[int]*state.Table{}
	mem := e.mem
	var budget *exec.Budget
	if q.memoryLimit > 0 {
		budget = exec.NewBudget(q.memoryLimit)
		mem = budget.Allocator(mem)
	}
	env := exec.Env{
		Mem:        mem,
		Eval:       &eval.Context{Mem: mem, Strict: true, Now: q.now, Random: q.random},
		Budget:     budget,
		SystemRows: func(rel *catalog.Relation) ([]arrow.RecordBatch, error) { return e.systemRowsAs(q.cat, q.user, rel) },
		CopyInput:  q.copyIn,
		Table: func(slot int) *state.Table {
			if t := tables[slot]; t != nil {
				return t
			}
			id := state.TableID(e.scratchID.Add(1))
			ids = append(ids, id)
			t := e.scratch.Table(id)
			tables[slot] = t
			if budget != nil {
				budget.Track(t)
			}
			return t
		},
	}
	return env, func() {
		for _, id := range ids {
			e.scratch.ReleaseTable(id)
		}
	}
}

// checkViews fails if the query reads a view whose dataflow has failed.
func (e *Engine) checkViews(rel ir.Rel) error {
	var err error
	walkScans(rel, func(r *catalog.Relation) {
		if err == nil && r.Kind == catalog.MaterializedView {
			err = e.viewError(r)
		}
	})
	return err
}

func walkScans(rel ir.Rel, fn func(*catalog.Relation)) {
	if r, ok := rel.(*ir.Scan); ok {
		fn(r.Relation)
	}
	for _, in := range ir.Inputs(rel) {
		walkScans(in, fn)
	}
}

// runQuery runs a batch query over the last committed epoch and sends each
// result batch to out.
func (e *Engine) runQuery(ctx context.Context, rel ir.Rel, q batchQuery, out exec.Output) error {
	if q.tx != nil {
		return q.tx.runQuery(ctx, rel, q, out)
	}
	if err := e.checkViews(rel); err != nil {
		return err
	}
	snap := e.store.Snapshot()
	defer snap.Release()
	root, _, err := planner.PlanBatchWith(rel, planner.BatchOptions{Rows: rowCounts(snap)})
	if err != nil {
		return err
	}
	env, release := e.batchEnv(q)
	defer release()
	return exec.RunBatch(ctx, env, snap, root, out)
}

// selectRows runs a SELECT and writes its visible columns to w.
func (e *Engine) selectRows(ctx context.Context, rel ir.Rel, q batchQuery, w pgwire.ResultWriter) error {
	return e.writeRows(ctx, rel, q, w, func(n int64) string { return fmt.Sprintf("SELECT %d", n) })
}

// writeRows runs a query, writes its visible columns to w and completes
// with the command tag of the rows written.
func (e *Engine) writeRows(ctx context.Context, rel ir.Rel, q batchQuery, w pgwire.ResultWriter, tag func(n int64) string) error {
	cols := rel.Columns()
	vis := ir.VisibleColumns(rel)
	desc := make([]pgwire.Column, len(vis))
	for i, c := range vis {
		desc[i] = pgwire.Column{Name: cols[c].Name, Type: cols[c].Type}
	}
	if err := w.BeginRows(desc); err != nil {
		return err
	}
	visTypes := make([]types.T, len(vis))
	for i, c := range vis {
		visTypes[i] = cols[c].Type
	}
	schema := exec.SchemaOf(visTypes)
	var n int64
	err := e.runQuery(ctx, rel, q, exec.OutputFunc(func(_ context.Context, m exec.Message) error {
		if m.Batch == nil {
			return nil
		}
		defer m.Batch.Release()
		rec := m.Batch.Rec
		n += rec.NumRows()
		if len(vis) == int(rec.NumCols()) {
			return w.WriteRows(rec)
		}
		arrs := make([]arrow.Array, len(vis))
		for i, c := range vis {
			arrs[i] = rec.Column(c)
		}
		sub := array.NewRecordBatch(schema, arrs, rec.NumRows())
		defer sub.Release()
		return w.WriteRows(sub)
	}))
	if err != nil {
		return err
	}
	return w.Complete(tag(n))
}

// explain renders a statement's plan.
// parallelism is the session's streaming_parallelism (see
// sessionParallelism), shown for views.
func (e *Engine) explain(st ir.Statement, parallelism int) ([]string, error) {
	switch st := st.(type) {
	case *ir.Select:
		snap := e.store.Snapshot()
		defer snap.Release()
		root, _, err := planner.PlanBatchWith(st.Query, planner.BatchOptions{Rows: rowCounts(snap)})
		if err != nil {
			return nil, err
		}
		return planner.ExplainBatch(root), nil
	case *ir.CreateMaterializedView:
		plan, err := e.planView(st, false)
		if err != nil {
			return nil, err
		}
		name := func(slot int) string { return fmt.Sprintf("#%d", slot+1) }
		return explainParallel(planner.ExplainStream(plan, "#0", name), plan, parallelism), nil
	case *ir.Insert, *ir.Update, *ir.Delete:
		snap := e.store.Snapshot()
		defer snap.Release()
		plan, err := planWrite(st, snap)
		if err != nil {
			return nil, err
		}
		return planner.ExplainBatch(plan), nil
	}
	return nil, fmt.Errorf("engine: cannot explain %s", st.Tag())
}
