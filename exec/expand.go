package exec

import (
	"context"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/streamsql/streamsql/barrier"
	"github.com/streamsql/streamsql/exec/eval"
)

// Expand repeats each input row as many times as the value of its bigint
// count column (no copy when NULL or not positive) and appends the copy's
// ordinal, 1..n, as a bigint column. Each copy has its row's operation,
// updates turned into plain deletes and inserts (an updated count changes
// the number of copies). Output batches hold at most BatchSize rows. It is
// stateless: (the input's stream key, ordinal) identifies a copy.
type Expand struct {
	mem   memory.Allocator
	count int
	rows  []int32
	ords  []int64
	ops   []Op
}

// NewExpand returns an Expand on the count column count.
func NewExpand(mem memory.Allocator, count int) *Expand {
	return &Expand{mem: mem, count: count}
}

// OnBatch emits the copies of b's rows.
func (x *Expand) OnBatch(ctx context.Context, b *Batch, out Output) error {
	defer b.Release()
	counts := b.Rec.Column(x.count).(*array.Int64)
	x.reset()
	for i := 0; i < b.Len(); i++ {
		if counts.IsNull(i) {
			continue
		}
		op := Insert
		if !b.Ops[i].IsInsert() {
			op = Delete
		}
		for k := int64(1); k <= counts.Value(i); k++ {
			x.rows = append(x.rows, int32(i))
			x.ords = append(x.ords, k)
			x.ops = append(x.ops, op)
			if len(x.rows) == BatchSize {
				if err := x.emit(ctx, b.Rec, out); err != nil {
					return err
				}
			}
		}
	}
	if len(x.rows) > 0 {
		return x.emit(ctx, b.Rec, out)
	}
	return nil
}

func (x *Expand) reset() {
	x.rows, x.ords, x.ops = x.rows[:0], x.ords[:0], nil
}

// emit sends the collected copies of rec's rows.
func (x *Expand) emit(ctx context.Context, rec arrow.RecordBatch, out Output) error {
	taken, err := eval.TakeRecord(x.mem, rec, x.rows)
	if err != nil {
		return err
	}
	ob := array.NewInt64Builder(x.mem)
	ob.AppendValues(x.ords, nil)
	ord := ob.NewArray()
	ob.Release()
	cols := append(append([]arrow.Array(nil), taken.Columns()...), ord)
	fields := append(append([]arrow.Field(nil), taken.Schema().Fields()...), arrow.Field{Name: "ordinal", Type: ord.DataType(), Nullable: true})
	outRec := array.NewRecordBatch(arrow.NewSchema(fields, nil), cols, int64(len(x.rows)))
	taken.Release()
	ord.Release()
	ops := x.ops
	x.reset()
	return out.Emit(ctx, Message{Batch: NewBatch(outRec, ops)})
}

// OnBarrier does nothing: Expand has no state.
func (x *Expand) OnBarrier(context.Context, *barrier.Barrier, Output) error { return nil }

// OnWatermark passes w on: Expand keeps the input's columns in place.
func (x *Expand) OnWatermark(ctx context.Context, w *barrier.Watermark, out Output) error {
	return out.Emit(ctx, Message{Watermark: w})
}

// Close does nothing.
func (x *Expand) Close() {}
