package exec

import (
	"encoding/binary"

	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/streamsql/streamsql/barrier"
	"github.com/streamsql/streamsql/exec/eval"
	"github.com/streamsql/streamsql/state"
	"github.com/streamsql/streamsql/types"
)

// Window joins.
//
// An inner join whose first key column carries a watermark on both inputs
// (HashJoinSpec.Watermark set: a join on window_start of two windowed
// inputs) knows that no row with a smaller first key will arrive on either
// side once both watermarks have passed it. At each barrier it deletes the
// stored rows below the smaller of the two watermarks (a prefix of each
// side's state, which is keyed by join key first) and drops, counting them
// as late, the rows that still arrive for them. The watermark it cleaned up
// to is kept in the Watermark table.

// loadCleaned restores the watermark the join had cleaned up to.
func (j *HashJoin) loadCleaned() error {
	if j.spec.Watermark == nil {
		return nil
	}
	v, ok, err := j.spec.Watermark.Get(watermarkKey)
	if err != nil || !ok {
		return err
	}
	w, n := binary.Varint(v)
	if n <= 0 {
		return errCorruptState
	}
	j.cleaned, j.cleanedValid = w, true
	return nil
}

// observeKeyWatermark records watermark w of input s if it is on the first
// key column.
func (j *HashJoin) observeKeyWatermark(s int, w *barrier.Watermark) {
	if j.spec.Watermark == nil || w.Column != j.spec.Keys[s][0] {
		return
	}
	if !j.keyWMValid[s] || w.Value > j.keyWM[s] {
		j.keyWM[s], j.keyWMValid[s] = w.Value, true
	}
}

// dropLateRows returns b without the rows whose first key is below the
// watermark the join has cleaned up to (b itself if there are none).
func (j *HashJoin) dropLateRows(s int, b *Batch) (*Batch, error) {
	if !j.cleanedValid {
		return b, nil
	}
	col := b.Rec.Column(j.spec.Keys[s][0]).(*array.Timestamp)
	var keep []int32
	for i := 0; i < b.Len(); i++ {
		if col.IsValid(i) && int64(col.Value(i)) < j.cleaned {
			continue
		}
		keep = append(keep, int32(i))
	}
	if len(keep) == b.Len() {
		return b, nil
	}
	if j.spec.LateRows != nil {
		j.spec.LateRows.Add(int64(b.Len() - len(keep)))
	}
	defer b.Release()
	ops := make([]Op, len(keep))
	for k, i := range keep {
		ops[k] = b.Ops[i]
	}
	rec, err := eval.TakeRecord(j.mem, b.Rec, keep)
	if err != nil {
		return nil, err
	}
	return NewBatch(rec, ops), nil
}

// cleanState deletes the stored rows of both sides below the smaller
// watermark, if it has advanced.
func (j *HashJoin) cleanState() {
	if j.spec.Watermark == nil || !j.keyWMValid[0] || !j.keyWMValid[1] {
		return
	}
	w := min(j.keyWM[0], j.keyWM[1])
	if j.cleanedValid && w <= j.cleaned {
		return
	}
	upper := state.AppendKeyDatum(nil, j.spec.KeyTypes[0], types.DInt(w))
	for _, t := range j.spec.Tables {
		t.DeleteRange([]byte{0x01}, upper)
	}
	j.cleaned, j.cleanedValid = w, true
	j.spec.Watermark.Put(watermarkKey, binary.AppendVarint(nil, w))
}
