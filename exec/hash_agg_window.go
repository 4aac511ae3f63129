package exec

import (
	"context"
	"encoding/binary"

	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/streamsql/streamsql/barrier"
	"github.com/streamsql/streamsql/state"
	"github.com/streamsql/streamsql/types"
)

// Windowed aggregation.
//
// When the first group column carries a watermark (HashAggSpec.Watermark
// set: window_start of TUMBLE or HOP, say), the groups below the watermark
// are final: no row can change them any more. The aggregation then
//   - drops, and counts as late, the rows of such groups (and, emitting on
//     window close, the rows whose group column is NULL: their window never
//     closes);
//   - at each barrier, after emitting the epoch's changes, deletes the state
//     of the final groups (a prefix of the Result table and of every value
//     set, whose keys start with the group key) and forwards the watermark
//     on its first output column;
//   - emitting on window close, emits nothing for changing groups and, at
//     each barrier, each group that became final as one Insert of its final
//     row, just before deleting it: the output is append-only.
//
// The watermark reached is kept in the Watermark table, so a restarted
// operator goes on dropping the same rows.

var watermarkKey = []byte("wm")

// loadWatermark restores the watermark the operator had reached.
func (a *HashAgg) loadWatermark() error {
	if a.spec.Watermark == nil {
		return nil
	}
	v, ok, err := a.spec.Watermark.Get(watermarkKey)
	if err != nil || !ok {
		return err
	}
	w, n := binary.Varint(v)
	if n <= 0 {
		return errCorruptState
	}
	a.wm, a.wmValid = w, true
	a.wmDone, a.wmActed = w, true
	return nil
}

// OnWatermark records a watermark on the watermark group's input column;
// the aggregation acts on it at the next barrier.
func (a *HashAgg) OnWatermark(_ context.Context, w *barrier.Watermark, _ Output) error {
	if a.spec.Watermark == nil || w.Column != a.spec.GroupCols[0] {
		return nil
	}
	if !a.wmValid || w.Value > a.wm {
		a.wm, a.wmValid = w.Value, true
	}
	return nil
}

// dropLate returns b without the rows the watermark has made late (b itself
// if there are none), counting them.
func (a *HashAgg) dropLate(b *Batch) (*Batch, error) {
	if a.spec.Watermark == nil || (!a.wmValid && !a.spec.EmitOnWindowClose) {
		return b, nil
	}
	col := b.Rec.Column(a.spec.GroupCols[0]).(*array.Timestamp)
	vals := col.Values()
	var keep []int32
	late := 0
	for i := 0; i < b.Len(); i++ {
		switch {
		case col.IsNull(i):
			if a.spec.EmitOnWindowClose {
				late++
				continue
			}
		case a.wmValid && int64(vals[i]) < a.wm:
			late++
			continue
		}
		keep = append(keep, int32(i))
	}
	if late == 0 {
		return b, nil
	}
	if a.spec.LateRows != nil {
		a.spec.LateRows.Add(int64(late))
	}
	return keepRows(a.mem, b, keep)
}

// finalRange is the range of Result keys of the groups the watermark has
// made final: a non-NULL first group column below it.
func (a *HashAgg) finalRange() (lower, upper []byte) {
	upper = state.AppendKeyDatum(nil, a.spec.GroupTypes[0], types.DInt(a.wm))
	return []byte{0x01}, upper
}

// closeWindows runs after the epoch's output: it emits the final groups
// (on window close), deletes their state and forwards the watermark (at
// every barrier, so that views created later over this one get it too).
func (a *HashAgg) closeWindows(ctx context.Context, out Output) error {
	if a.spec.Watermark == nil || !a.wmValid {
		return nil
	}
	if !a.wmActed || a.wm > a.wmDone {
		if err := a.dropFinal(ctx, out); err != nil {
			return err
		}
	}
	return out.Emit(ctx, Message{Watermark: &barrier.Watermark{Column: 0, Value: a.wm}})
}

// dropFinal emits the final groups (on window close) and deletes them.
func (a *HashAgg) dropFinal(ctx context.Context, out Output) error {
	lower, upper := a.finalRange()
	if a.spec.EmitOnWindowClose {
		if err := a.emitFinal(ctx, lower, upper, out); err != nil {
			return err
		}
	}
	a.spec.Result.DeleteRange(lower, upper)
	for _, t := range a.spec.ValueSets {
		if t != nil {
			t.DeleteRange(lower, upper)
		}
	}
	for key, slot := range a.groups {
		if key >= string(lower) && key < string(upper) {
			a.drop(slot)
		}
	}
	a.wmDone, a.wmActed = a.wm, true
	a.spec.Watermark.Put(watermarkKey, binary.AppendVarint(nil, a.wm))
	return nil
}

// emitFinal emits the final row of every group in [lower, upper) of Result
// as an Insert.
func (a *HashAgg) emitFinal(ctx context.Context, lower, upper []byte, out Output) error {
	it, err := a.spec.Result.NewIter(lower, upper)
	if err != nil {
		return err
	}
	var keys [][]byte
	for ok := it.First(); ok; ok = it.Next() {
		keys = append(keys, append([]byte(nil), it.Key()...))
	}
	err = it.Error()
	it.Close()
	if err != nil || len(keys) == 0 {
		return err
	}
	bs := newBuilders(a.mem, a.outTypes)
	defer releaseBuilders(bs)
	for start := 0; start < len(keys); start += BatchSize {
		chunk := keys[start:min(start+BatchSize, len(keys))]
		slots := make([]int32, len(chunk))
		for i, k := range chunk {
			if slots[i], err = a.slotFor(k); err != nil {
				return err
			}
		}
		for _, agg := range a.aggs {
			if err := agg.prepare(slots); err != nil {
				return err
			}
		}
		for _, slot := range slots {
			row, err := a.outputRow(slot)
			if err != nil {
				return err
			}
			if err := a.outCodec.Decode(row, bs); err != nil {
				return err
			}
		}
		rec := buildRecord(SchemaOf(a.outTypes), bs, len(chunk))
		if err := out.Emit(ctx, Message{Batch: NewBatch(rec, nil)}); err != nil {
			return err
		}
	}
	return nil
}
