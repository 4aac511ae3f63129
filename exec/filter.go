package exec

import (
	"context"

	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/streamsql/streamsql/barrier"
	"github.com/streamsql/streamsql/exec/eval"
)

// Filter keeps the rows for which its predicate is true. When only one half
// of an UpdateDelete/UpdateInsert pair passes, that half becomes a plain
// Delete or Insert. It is stateless.
type Filter struct {
	mem  memory.Allocator
	ectx *eval.Context
	pred eval.Evaluator
	sel  []int32
}

// NewFilter returns a Filter on pred, a boolean expression.
func NewFilter(mem memory.Allocator, ectx *eval.Context, pred eval.Evaluator) *Filter {
	return &Filter{mem: mem, ectx: ectx, pred: pred}
}

// OnBatch forwards the rows of b that pass.
func (f *Filter) OnBatch(ctx context.Context, b *Batch, out Output) error {
	defer b.Release()
	res, err := f.pred.Eval(f.ectx, b.Rec)
	if err != nil {
		return err
	}
	defer res.Release()
	f.sel = eval.SelectTrue(res.(*array.Boolean), f.sel[:0])
	if len(f.sel) == 0 {
		return nil
	}
	ops := make([]Op, len(f.sel))
	for i, r := range f.sel {
		ops[i] = b.Ops[r]
	}
	fixUpdatePairs(ops, f.sel)
	if len(f.sel) == b.Len() {
		b.Rec.Retain()
		return out.Emit(ctx, Message{Batch: NewBatch(b.Rec, ops)})
	}
	rec, err := eval.TakeRecord(f.mem, b.Rec, f.sel)
	if err != nil {
		return err
	}
	return out.Emit(ctx, Message{Batch: NewBatch(rec, ops)})
}

// fixUpdatePairs turns the halves of update pairs whose partner was dropped
// into plain deletes and inserts. rows are the original row numbers of ops;
// a pair is an UpdateDelete at row r followed by an UpdateInsert at r+1.
func fixUpdatePairs(ops []Op, rows []int32) {
	for i, op := range ops {
		switch op {
		case UpdateDelete:
			if i+1 >= len(ops) || ops[i+1] != UpdateInsert || rows[i+1] != rows[i]+1 {
				ops[i] = Delete
			}
		case UpdateInsert:
			if i == 0 || ops[i-1] != UpdateDelete || rows[i-1] != rows[i]-1 {
				ops[i] = Insert
			}
		}
	}
}

// OnBarrier does nothing: Filter has no state.
func (f *Filter) OnBarrier(context.Context, *barrier.Barrier, Output) error { return nil }

// OnWatermark passes w on: a filter keeps its columns.
func (f *Filter) OnWatermark(ctx context.Context, w *barrier.Watermark, out Output) error {
	return out.Emit(ctx, Message{Watermark: w})
}

// Close does nothing.
func (f *Filter) Close() {}
