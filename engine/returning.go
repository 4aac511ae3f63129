package engine

import (
	"context"
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/streamsql/streamsql/exec"
	"github.com/streamsql/streamsql/ir"
	"github.com/streamsql/streamsql/pgwire"
	"github.com/streamsql/streamsql/sql"
)

// executeReturning runs INSERT, UPDATE and DELETE with RETURNING, and
// INSERT ... ON CONFLICT; ok is false for any other statement. The rows
// RETURNING computes are those the statement wrote (for DELETE, deleted),
// once its epoch is committed.
func (e *Engine) executeReturning(ctx context.Context, st ir.Statement, q batchQuery, w pgwire.ResultWriter) (ok bool, err error) {
	ret := sql.ReturningOf(st)
	ins, _ := st.(*ir.Insert)
	if ret == nil && (ins == nil || ins.OnConflict == nil) {
		return false, nil
	}
	var recs []arrow.RecordBatch
	defer func() {
		for _, r := range recs {
			r.Release()
		}
	}()
	var written func(arrow.RecordBatch)
	if ret != nil {
		written = func(r arrow.RecordBatch) {
			r.Retain()
			recs = append(recs, r)
		}
	}
	var n int64
	var tag func(int64) string
	switch st := st.(type) {
	case *ir.Insert:
		tag = insertTag
		n, err = e.insertRows(ctx, st, q, written)
	case *ir.Update:
		tag = func(n int64) string { return fmt.Sprintf("UPDATE %d", n) }
		n, err = e.modifyRows(ctx, st, q, written)
	case *ir.Delete:
		tag = func(n int64) string { return fmt.Sprintf("DELETE %d", n) }
		n, err = e.modifyRows(ctx, st, q, written)
	}
	if err != nil {
		return true, err
	}
	if ret == nil {
		return true, w.Complete(tag(n))
	}
	q.copyIn = func(ctx context.Context, out exec.Output) error {
		for _, r := range recs {
			r.Retain()
			if err := out.Emit(ctx, exec.Message{Batch: exec.NewBatch(r, nil)}); err != nil {
				return err
			}
		}
		return nil
	}
	return true, e.writeRows(ctx, ret, q, w, tag)
}
