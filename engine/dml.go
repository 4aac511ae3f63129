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
)

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

// awaitWrite waits until the epoch holding a write is committed, asking for
// its barrier now so that concurrent writers share it. Once a write has
// reached its table it commits whatever the client does, so the wait ignores
// the statement's cancellation: reporting failure for a write that then
// commits would make a retrying client apply it twice.
func (e *Engine) awaitWrite(epoch uint64) error {
	return e.awaitCommit(e.ctx, epoch)
}

// insert runs INSERT: the source query is evaluated first (over the last
// committed epoch), then its rows are written as one statement.
func (e *Engine) insert(ctx context.Context, st *ir.Insert, q batchQuery) (int64, error) {
	return e.insertRows(ctx, st, q, nil)
}

// insertRows is insert, handing written the rows as stored (see
// tableWriter.insert). In a transaction block the rows go to its overlay;
// written is not supported there.
func (e *Engine) insertRows(ctx context.Context, st *ir.Insert, q batchQuery, written func(arrow.RecordBatch)) (int64, error) {
	if q.tx != nil {
		if written != nil {
			return 0, errReturningInTx
		}
		return q.tx.insert(ctx, st, q)
	}
	w, err := e.writer(st.Table)
	if err != nil {
		return 0, err
	}
	var recs []arrow.RecordBatch
	defer func() {
		for _, r := range recs {
			r.Release()
		}
	}()
	err = e.runQuery(ctx, st.Source, q, exec.OutputFunc(func(_ context.Context, m exec.Message) error {
		if m.Batch != nil {
			recs = append(recs, m.Batch.Rec)
			m.Batch.Rec = nil
		}
		return nil
	}))
	if err != nil {
		return 0, err
	}
	var epoch uint64
	var n int64
	err = e.retryLocked(ctx, &q, func() (err error) {
		epoch, n, err = w.insert(recs, written, q.owner)
		return err
	})
	if err != nil {
		return 0, err
	}
	return n, e.awaitWrite(epoch)
}

// modify runs UPDATE (update set) or DELETE: rows is the statement's row
// selection (ir.Update.Rows, ir.Delete.Rows), planned as a batch query.
func (e *Engine) modify(ctx context.Context, table *catalog.Relation, rows ir.Rel, update bool, q batchQuery) (int64, error) {
	return e.modifyRows(ctx, table, rows, update, q, nil)
}

// modifyRows is modify, handing written the rows changed (see
// tableWriter.modify). In a transaction block the change goes to its
// overlay; written is not supported there.
func (e *Engine) modifyRows(ctx context.Context, table *catalog.Relation, rows ir.Rel, update bool, q batchQuery, written func(arrow.RecordBatch)) (int64, error) {
	if q.tx != nil {
		if written != nil {
			return 0, errReturningInTx
		}
		return q.tx.modify(ctx, table, rows, update, q)
	}
	w, err := e.writer(table)
	if err != nil {
		return 0, err
	}
	if err := e.checkViews(rows); err != nil {
		return 0, err
	}
	snap := e.store.Snapshot()
	root, _, err := planner.PlanBatchWith(rows, planner.BatchOptions{Rows: rowCounts(snap)})
	snap.Release()
	if err != nil {
		return 0, err
	}
	var epoch uint64
	var n int64
	err = e.retryLocked(ctx, &q, func() (err error) {
		epoch, n, err = w.modify(ctx, root, update, q, written)
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

func insertTag(n int64) string { return fmt.Sprintf("INSERT 0 %d", n) }

// errReturningInTx refuses the statements that need the rows a write
// stored (RETURNING, ON CONFLICT) inside a transaction block, whose writes
// wait in its overlay until COMMIT.
var errReturningInTx = sqlerr.Unsupported("RETURNING and ON CONFLICT inside a transaction block")
