package exec

import (
	"context"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/streamsql/streamsql/barrier"
	"github.com/streamsql/streamsql/exec/eval"
	"github.com/streamsql/streamsql/types"
)

// Unnest emits, for each input row, one row per element of the longest of
// its array (List) columns: the input columns before, the k-th element of
// each array (NULL where an array is NULL or shorter), the ordinal k as a
// bigint, then the input columns after (planner.Unnest). A row whose
// arrays are all NULL or empty emits nothing, or with outer one row whose
// elements and ordinal are NULL. Each output row has its input row's
// operation, updates turned into plain deletes and inserts (an update may
// change the number of elements). Output batches hold at most BatchSize
// rows; the columns are gathered with whole-column takes.
//
// It is stateless: an output row is a function of its input row, and
// (the input's stream key, ordinal) identifies it, so a retraction emits
// exactly the rows its insertion did.
type Unnest struct {
	mem           memory.Allocator
	before, after []int
	arrays        []int
	outer         bool
	schema        *arrow.Schema

	rows  []int32
	elems [][]int32 // per array: the element's index in the list's values, -1 for NULL
	ords  []int64
	valid []bool // per output row: its ordinal is not NULL
	ops   []Op
}

// NewUnnest returns an Unnest over rows of inTypes; arrays are the list
// columns, before and after the columns copied around the elements.
func NewUnnest(mem memory.Allocator, inTypes []types.T, before, arrays, after []int, outer bool) *Unnest {
	var outTypes []types.T
	for _, c := range before {
		outTypes = append(outTypes, inTypes[c])
	}
	for _, c := range arrays {
		outTypes = append(outTypes, inTypes[c].ElemT())
	}
	outTypes = append(outTypes, types.Int64T)
	for _, c := range after {
		outTypes = append(outTypes, inTypes[c])
	}
	return &Unnest{mem: mem, before: before, after: after, arrays: arrays, outer: outer,
		schema: SchemaOf(outTypes), elems: make([][]int32, len(arrays))}
}

// OnBatch emits the element rows of b's rows.
func (u *Unnest) OnBatch(ctx context.Context, b *Batch, out Output) error {
	defer b.Release()
	lists := make([]*array.List, len(u.arrays))
	for j, c := range u.arrays {
		lists[j] = b.Rec.Column(c).(*array.List)
	}
	starts := make([]int64, len(lists))
	lens := make([]int64, len(lists))
	u.reset()
	for i := 0; i < b.Len(); i++ {
		longest := int64(0)
		for j, l := range lists {
			lens[j] = 0
			if l.IsValid(i) {
				s, e := l.ValueOffsets(i)
				starts[j], lens[j] = s, e-s
				longest = max(longest, lens[j])
			}
		}
		op := Insert
		if !b.Ops[i].IsInsert() {
			op = Delete
		}
		if longest == 0 && u.outer {
			u.rows = append(u.rows, int32(i))
			for j := range lists {
				u.elems[j] = append(u.elems[j], -1)
			}
			u.ords, u.valid, u.ops = append(u.ords, 0), append(u.valid, false), append(u.ops, op)
		}
		for k := int64(0); k < longest; k++ {
			u.rows = append(u.rows, int32(i))
			for j := range lists {
				idx := int32(-1)
				if k < lens[j] {
					idx = int32(starts[j] + k)
				}
				u.elems[j] = append(u.elems[j], idx)
			}
			u.ords, u.valid, u.ops = append(u.ords, k+1), append(u.valid, true), append(u.ops, op)
			if len(u.rows) == BatchSize {
				if err := u.emit(ctx, b.Rec, lists, out); err != nil {
					return err
				}
			}
		}
	}
	if len(u.rows) > 0 {
		return u.emit(ctx, b.Rec, lists, out)
	}
	return nil
}

func (u *Unnest) reset() {
	u.rows, u.ords, u.valid, u.ops = u.rows[:0], u.ords[:0], u.valid[:0], nil
	for j := range u.elems {
		u.elems[j] = u.elems[j][:0]
	}
}

// emit sends the collected rows.
func (u *Unnest) emit(ctx context.Context, rec arrow.RecordBatch, lists []*array.List, out Output) error {
	cols := make([]arrow.Array, 0, u.schema.NumFields())
	defer func() {
		for _, c := range cols {
			c.Release()
		}
	}()
	take := func(arr arrow.Array, rows []int32, orNull bool) error {
		var c arrow.Array
		var err error
		if orNull {
			c, err = eval.TakeArrayOrNull(u.mem, arr, rows)
		} else {
			c, err = eval.TakeArray(u.mem, arr, rows)
		}
		if err != nil {
			return err
		}
		cols = append(cols, c)
		return nil
	}
	for _, c := range u.before {
		if err := take(rec.Column(c), u.rows, false); err != nil {
			return err
		}
	}
	for j, l := range lists {
		if err := take(l.ListValues(), u.elems[j], true); err != nil {
			return err
		}
	}
	ob := array.NewInt64Builder(u.mem)
	ob.AppendValues(u.ords, u.valid)
	cols = append(cols, ob.NewArray())
	ob.Release()
	for _, c := range u.after {
		if err := take(rec.Column(c), u.rows, false); err != nil {
			return err
		}
	}
	outRec := array.NewRecordBatch(u.schema, cols, int64(len(u.rows)))
	ops := u.ops
	u.reset()
	return out.Emit(ctx, Message{Batch: NewBatch(outRec, ops)})
}

// OnBarrier does nothing: Unnest has no state.
func (u *Unnest) OnBarrier(context.Context, *barrier.Barrier, Output) error { return nil }

// OnWatermark passes on the watermarks of the columns before the elements,
// which keep their places; the others are dropped.
func (u *Unnest) OnWatermark(ctx context.Context, w *barrier.Watermark, out Output) error {
	if w.Column >= len(u.before) {
		return nil
	}
	return out.Emit(ctx, Message{Watermark: w})
}

// Close does nothing.
func (u *Unnest) Close() {}
