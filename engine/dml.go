package engine

import (
	"context"
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/streamsql/streamsql/catalog"
	"github.com/streamsql/streamsql/exec"
	"github.com/streamsql/streamsql/ir"
	"github.com/streamsql/streamsql/planner"
	"github.com/streamsql/streamsql/sqlerr"
	"github.com/streamsql/streamsql/state"
)

// INSERT, UPDATE and DELETE run as batch plans rooted at a planner.Write
// (planWrite: the plan EXPLAIN shows). The plan's write operator hands the
// statement's rows to a writeFunc of the table's writer, which checks and
// writes them through the table's exec.TableWrite and emits the rows
// written: the Write's output, which RETURNING reads.

func (e *Engine) writer(rel *catalog.Relation) (*tableWriter, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	w := e.tables[rel.ID]
	if w == nil {
		return nil, sqlerr.New(sqlerr.UndefinedTable, "relation \"%s\" does not exist", rel.Name)
	}
	if err := refuseCDCWrite(rel); err != nil {
		return nil, err
	}
	return w, nil
}

// planWrite plans st, an INSERT, UPDATE or DELETE, as it runs, with the
// sizes of the relations in snap.
func planWrite(st ir.Statement, snap *state.Snapshot) (*planner.Write, error) {
	return planner.PlanWrite(st, planner.BatchOptions{Rows: rowCounts(snap)})
}

// writeRows returns the rows a statement selects (ir.Insert.Source,
// ir.Update.Rows, ir.Delete.Rows).
func writeRows(st ir.Statement) ir.Rel {
	switch st := st.(type) {
	case *ir.Insert:
		return st.Source
	case *ir.Update:
		return st.Rows
	case *ir.Delete:
		return st.Rows
	}
	return nil
}

// writeTable returns the table a statement writes.
func writeTable(st ir.Statement) *catalog.Relation {
	switch st := st.(type) {
	case *ir.Insert:
		return st.Table
	case *ir.Update:
		return st.Table
	case *ir.Delete:
		return st.Table
	}
	return nil
}

// awaitWrite waits until the epoch holding a write is committed, asking for
// its barrier now so that concurrent writers share it. Once a write has
// reached its table it commits whatever the client does, so the wait ignores
// the statement's cancellation: reporting failure for a write that then
// commits would make a retrying client apply it twice.
func (e *Engine) awaitWrite(epoch uint64) error {
	return e.awaitCommit(e.ctx, epoch)
}

// writtenRows is the output of a plan's Write: it counts the rows written
// and hands them to written, if set, which must retain a record to keep it.
func writtenRows(n *int64, written func(arrow.RecordBatch)) exec.Output {
	return exec.OutputFunc(func(_ context.Context, m exec.Message) error {
		if m.Batch == nil {
			return nil
		}
		defer m.Batch.Release()
		*n += m.Batch.Rec.NumRows()
		if written != nil {
			written(m.Batch.Rec)
		}
		return nil
	})
}

// emitWritten emits recs, the rows a write wrote, to out, releasing them.
func emitWritten(ctx context.Context, recs []arrow.RecordBatch, out exec.Output) error {
	for i, r := range recs {
		if err := out.Emit(ctx, exec.Message{Batch: exec.NewBatch(r, nil)}); err != nil {
			releaseAll(recs[i+1:])
			return err
		}
	}
	return nil
}

// insert runs INSERT: the source query is evaluated first (over the last
// committed epoch), then its rows are written as one statement.
func (e *Engine) insert(ctx context.Context, st *ir.Insert, q batchQuery) (int64, error) {
	return e.insertRows(ctx, st, q, nil)
}

// insertRows is insert (with or without ON CONFLICT), handing written the
// rows as stored (see tableWriter.insert). In a transaction block the rows
// go to its overlay; written and ON CONFLICT are not supported there.
func (e *Engine) insertRows(ctx context.Context, st *ir.Insert, q batchQuery, written func(arrow.RecordBatch)) (int64, error) {
	if q.tx != nil {
		if written != nil || st.OnConflict != nil {
			return 0, errReturningInTx
		}
		return q.tx.insert(ctx, st, q)
	}
	w, err := e.writer(st.Table)
	if err != nil {
		return 0, err
	}
	if err := e.checkViews(st.Source); err != nil {
		return 0, err
	}
	snap := e.store.Snapshot()
	defer snap.Release()
	plan, err := planWrite(st, snap)
	if err != nil {
		return 0, err
	}
	var epoch uint64
	env, release := e.batchEnv(q)
	defer release()
	env.Write = func(ctx context.Context, p *planner.Write, rows []arrow.RecordBatch, out exec.Output) error {
		var wrote []arrow.RecordBatch
		keep := func(r arrow.RecordBatch) { r.Retain(); wrote = append(wrote, r) }
		err := e.retryLocked(ctx, &q, func() (err error) {
			if p.Conflict != nil {
				epoch, _, err = w.upsert(ctx, rows, p.Conflict.Set, q, keep)
			} else {
				epoch, _, err = w.insert(rows, keep, q.owner)
			}
			return err
		})
		if err != nil {
			releaseAll(wrote)
			return err
		}
		return emitWritten(ctx, wrote, out)
	}
	var n int64
	if err := exec.RunBatch(ctx, env, snap, plan, writtenRows(&n, written)); err != nil {
		return 0, err
	}
	if n == 0 && st.OnConflict != nil {
		return 0, nil
	}
	return n, e.awaitWrite(epoch)
}

// modify runs UPDATE or DELETE (st).
func (e *Engine) modify(ctx context.Context, st ir.Statement, q batchQuery) (int64, error) {
	return e.modifyRows(ctx, st, q, nil)
}

// modifyRows is modify, handing written the rows changed (see
// tableWriter.modify). In a transaction block the change goes to its
// overlay; written is not supported there.
func (e *Engine) modifyRows(ctx context.Context, st ir.Statement, q batchQuery, written func(arrow.RecordBatch)) (int64, error) {
	if q.tx != nil {
		if written != nil {
			return 0, errReturningInTx
		}
		return q.tx.modify(ctx, st, q)
	}
	plan, w, err := e.planModify(st)
	if err != nil {
		return 0, err
	}
	var epoch uint64
	var n int64
	err = e.retryLocked(ctx, &q, func() (err error) {
		epoch, n, err = w.modify(ctx, plan, q, written)
		return err
	})
	if err != nil {
		return 0, err
	}
	if n == 0 {
		return 0, nil
	}
	return n, e.awaitWrite(epoch)
}

// planModify plans UPDATE or DELETE st over the last committed epoch's
// sizes, and returns the target table's writer.
func (e *Engine) planModify(st ir.Statement) (*planner.Write, *tableWriter, error) {
	rows := writeRows(st)
	plan, err := func() (*planner.Write, error) {
		snap := e.store.Snapshot()
		defer snap.Release()
		return planWrite(st, snap)
	}()
	if err != nil {
		return nil, nil, err
	}
	w, err := e.writer(plan.Table)
	if err != nil {
		return nil, nil, err
	}
	if err := e.checkViews(rows); err != nil {
		return nil, nil, err
	}
	return plan, w, nil
}

func insertTag(n int64) string { return fmt.Sprintf("INSERT 0 %d", n) }

// errReturningInTx refuses the statements that need the rows a write
// stored (RETURNING, ON CONFLICT) inside a transaction block, whose writes
// wait in its overlay until COMMIT.
var errReturningInTx = sqlerr.Unsupported("RETURNING and ON CONFLICT inside a transaction block")
