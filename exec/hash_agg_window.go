package exec

import (
	"context"

	"github.com/streamsql/streamsql/barrier"
	"github.com/streamsql/streamsql/state"
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
//     of the final groups (in each virtual node the aggregation owns, a key
//     range of the Result table and of every value set, whose keys start
//     with the virtual node and then the group key) and forwards the
//     watermark on its first output column;
//   - emitting on window close, emits nothing for changing groups and, at
//     each barrier, each group that became final as one Insert of its final
//     row, just before deleting it: the output is append-only.
//
// The watermark reached is kept in the Watermark table (groupWatermark).

// OnWatermark records a watermark on the watermark group's input column;
// the aggregation acts on it at the next barrier.
func (a *HashAgg) OnWatermark(_ context.Context, w *barrier.Watermark, _ Output) error {
	if a.wm != nil {
		a.wm.observe(w)
	}
	return nil
}

// dropLate returns b without the rows the watermark has made late.
func (a *HashAgg) dropLate(b *Batch) (*Batch, error) {
	if a.wm == nil {
		return b, nil
	}
	return a.wm.dropLate(a.mem, b, a.spec.EmitOnWindowClose, a.spec.LateRows)
}

// closeWindows runs after the epoch's output: it emits the final groups
// (on window close), deletes their state and forwards the watermark (at
// every barrier, so that views created later over this one get it too).
func (a *HashAgg) closeWindows(ctx context.Context, out Output) error {
	if a.wm == nil || !a.wm.valid {
		return nil
	}
	if lower, upper, ok := a.wm.finalRange(); ok {
		if err := a.dropFinal(ctx, lower, upper, out); err != nil {
			return err
		}
	}
	return out.Emit(ctx, a.wm.message(0))
}

// dropFinal emits the final groups whose group key is in [lower, upper)
// (on window close) and deletes them, in each of the aggregation's virtual
// nodes.
func (a *HashAgg) dropFinal(ctx context.Context, lower, upper []byte, out Output) error {
	if a.spec.EmitOnWindowClose {
		if err := a.emitFinal(ctx, lower, upper, out); err != nil {
			return err
		}
	}
	a.spec.Result.DeleteRangeVNodes(a.spec.VNodes, lower, upper)
	for _, t := range a.spec.ValueSets {
		if t != nil {
			t.DeleteRangeVNodes(a.spec.VNodes, lower, upper)
		}
	}
	for key, slot := range a.groups {
		if gk := key[state.VNodePrefixLen:]; gk >= string(lower) && gk < string(upper) {
			a.drop(slot)
		}
	}
	a.wm.dropped()
	return nil
}

// emitFinal emits the final row of every group of Result whose group key
// is in [lower, upper) as an Insert, virtual node by virtual node.
func (a *HashAgg) emitFinal(ctx context.Context, lower, upper []byte, out Output) error {
	keys, err := vnodeKeys(a.spec.Result, a.spec.VNodes, lower, upper)
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

// vnodeKeys returns copies of the keys of vnode-keyed table t whose key
// after the virtual node prefix is in [lower, upper) (non-nil bounds), in
// each virtual node of vs, through one iterator.
func vnodeKeys(t *state.Table, vs state.VNodes, lower, upper []byte) ([][]byte, error) {
	it, err := t.NewIter(nil, nil)
	if err != nil {
		return nil, err
	}
	var keys [][]byte
	var lo, hi []byte
	for v := vs.Lo; v < vs.Hi; v++ {
		lo = append(state.AppendVNode(lo[:0], v), lower...)
		hi = append(state.AppendVNode(hi[:0], v), upper...)
		it.SetBounds(lo, hi)
		for ok := it.First(); ok; ok = it.Next() {
			keys = append(keys, append([]byte(nil), it.Key()...))
		}
	}
	if err := it.Error(); err != nil {
		it.Close()
		return nil, err
	}
	return keys, it.Close()
}
