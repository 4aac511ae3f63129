package exec

import (
	"encoding/binary"
	"errors"
	"math"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/streamsql/streamsql/barrier"
	"github.com/streamsql/streamsql/state"
	"github.com/streamsql/streamsql/types"
)

// State cleaning of inner and outer joins by watermark (which join types
// clean, and why that is sound for outer joins: planner.cleansState).
//
// Window joins (HashJoinSpec.CleanFirstKey): the first key column carries a
// watermark on both inputs (window_start of two windowed inputs). Once both
// watermarks have passed a key, no row with it can arrive on either side:
// at each barrier the stored rows below the smaller watermark (a prefix of
// each side's state, which is keyed by join key first) are deleted.
//
// Interval joins (HashJoinSpec.Intervals): a conjunct of the condition
// bounds one input's time by the other's, `l.ts >= r.ts - INTERVAL '1
// minute'`. A stored row of the bounded side whose time is below the other
// side's watermark plus the offset can match no row still to come; the
// side's rows are indexed by time (TimeIndex) and, at each barrier, those
// are deleted. The index is keyed by virtual node first, like the sides:
// the stored row's virtual node, the time, then the rest of the row's key;
// the rows below a time are a range of each virtual node the join owns.
//
// Either way, rows that arrive behind their own input's watermark on the
// column that cleaning relies on are late: dropped (they might need rows
// already deleted) and counted. The watermarks reached are kept in the
// Watermark table, so a restarted join drops the same rows.

// IntervalClean says that rows of input Side whose time column Cols[Side]
// is below the watermark of the other input's column Cols[1-Side] plus
// Offset (microseconds) can match no later row.
type IntervalClean struct {
	Side   int
	Cols   [2]int
	Offset int64
}

// Keys of the Watermark table.
var (
	cleanedKey  = []byte("wm")
	sideWMKeys  = [2][]byte{[]byte("t0"), []byte("t1")}
	lowestKey   = []byte{0x01} // the first non-NULL memcomparable key
	timeKeySize = 8
)

// initCleaning sets up the time columns and restores the watermarks.
func (j *HashJoin) initCleaning() error {
	for _, ic := range j.spec.Intervals {
		for s := 0; s < 2; s++ {
			if j.timeCol[s] < 0 {
				j.timeCol[s] = ic.Cols[s]
			}
		}
	}
	if j.spec.Watermark == nil {
		return nil
	}
	if err := loadVarint(j.spec.Watermark, cleanedKey, &j.cleaned, &j.cleanedValid); err != nil {
		return err
	}
	for s := 0; s < 2; s++ {
		if err := loadVarint(j.spec.Watermark, sideWMKeys[s], &j.timeWM[s], &j.timeWMValid[s]); err != nil {
			return err
		}
	}
	return nil
}

// observeWatermark records watermark w of input s on the columns cleaning
// relies on. A new time watermark drops the rows of the other input it has
// left behind at once: fast inputs send many watermarks between barriers,
// and the state then holds only the rows that can still match.
func (j *HashJoin) observeWatermark(s int, w *barrier.Watermark) error {
	if j.spec.CleanFirstKey && w.Column == j.spec.Keys[s][0] && (!j.keyWMValid[s] || w.Value > j.keyWM[s]) {
		j.keyWM[s], j.keyWMValid[s] = w.Value, true
	}
	if w.Column == j.timeCol[s] && (!j.timeWMValid[s] || w.Value > j.timeWM[s]) {
		j.timeWM[s], j.timeWMValid[s] = w.Value, true
		j.timeWMDirty = true
		return j.cleanIntervals()
	}
	return nil
}

// dropLateRows returns b without its late rows (b itself if there are
// none): rows whose first key is below the watermark the state was cleaned
// up to, and rows whose time is below their input's watermark in an
// interval join; also rows without a time there, which match nothing,
// unless their input is preserved (they still get a NULL-padded row).
func (j *HashJoin) dropLateRows(s int, b *Batch) (*Batch, error) {
	var keyCol, timeCol *array.Timestamp
	if j.cleanedValid {
		keyCol = b.Rec.Column(j.spec.Keys[s][0]).(*array.Timestamp)
	}
	if j.timeCol[s] >= 0 {
		timeCol = b.Rec.Column(j.timeCol[s]).(*array.Timestamp)
	}
	if keyCol == nil && timeCol == nil {
		return b, nil
	}
	var keep []int32
	late := 0
	keepNull := preserved(j.spec.Type, s)
	for i := 0; i < b.Len(); i++ {
		switch {
		case keyCol != nil && keyCol.IsValid(i) && int64(keyCol.Value(i)) < j.cleaned:
			late++
		case timeCol != nil && timeCol.IsNull(i) && !keepNull:
		case timeCol != nil && timeCol.IsValid(i) && j.timeWMValid[s] && int64(timeCol.Value(i)) < j.timeWM[s]:
			late++
		default:
			keep = append(keep, int32(i))
		}
	}
	if j.spec.LateRows != nil {
		j.spec.LateRows.Add(int64(late))
	}
	return keepRows(j.mem, b, keep)
}

// indexRow adds (or removes) row i of rec, stored under key, to input s's
// time index. A row without a time (of a preserved input) matches nothing:
// it is indexed first, to be dropped at the next cleaning.
func (j *HashJoin) indexRow(s int, rec arrow.RecordBatch, i int, key []byte, insert bool) {
	idx := j.spec.TimeIndex[s]
	if idx == nil {
		return
	}
	col := rec.Column(j.timeCol[s]).(*array.Timestamp)
	t := arrow.Timestamp(math.MinInt64)
	if col.IsValid(i) {
		t = col.Value(i)
	}
	j.idxBuf = append(j.idxBuf[:0], key[:state.VNodePrefixLen]...)
	j.idxBuf = binary.BigEndian.AppendUint64(j.idxBuf, uint64(t)^(1<<63))
	j.idxBuf = append(j.idxBuf, key[state.VNodePrefixLen:]...)
	if insert {
		idx.Put(j.idxBuf, nil)
	} else {
		idx.Delete(j.idxBuf)
	}
}

// cleanState deletes the stored rows no later row can match.
func (j *HashJoin) cleanState() error {
	if j.spec.CleanFirstKey && j.keyWMValid[0] && j.keyWMValid[1] {
		if w := min(j.keyWM[0], j.keyWM[1]); !j.cleanedValid || w > j.cleaned {
			upper := state.AppendKeyDatum(nil, j.spec.KeyTypes[0], types.DInt(w))
			for _, t := range j.spec.Tables {
				t.DeleteRangeVNodes(j.spec.VNodes, lowestKey, upper)
			}
			j.cleaned, j.cleanedValid = w, true
			j.spec.Watermark.Put(cleanedKey, binary.AppendVarint(nil, w))
		}
	}
	if err := j.cleanIntervals(); err != nil {
		return err
	}
	if j.timeWMDirty {
		j.timeWMDirty = false
		for s := 0; s < 2; s++ {
			if j.timeWMValid[s] {
				j.spec.Watermark.Put(sideWMKeys[s], binary.AppendVarint(nil, j.timeWM[s]))
			}
		}
	}
	return nil
}

// cleanIntervals deletes the rows the interval bounds make useless.
func (j *HashJoin) cleanIntervals() error {
	for _, ic := range j.spec.Intervals {
		other := 1 - ic.Side
		if ic.Cols[ic.Side] != j.timeCol[ic.Side] || ic.Cols[other] != j.timeCol[other] || !j.timeWMValid[other] {
			continue
		}
		if err := j.dropBefore(ic.Side, satAdd(j.timeWM[other], ic.Offset)); err != nil {
			return err
		}
	}
	return nil
}

// dropBefore deletes the rows of input s whose time is below t, in each
// virtual node the join owns, BatchSize index entries at a time.
func (j *HashJoin) dropBefore(s int, t int64) error {
	idx := j.spec.TimeIndex[s]
	tb := binary.BigEndian.AppendUint64(nil, uint64(t)^(1<<63))
	var lo, hi, rowKey []byte
	for v := j.spec.VNodes.Lo; v < j.spec.VNodes.Hi; {
		// A new iterator per round: it sees the last round's deletions.
		it, err := idx.NewIter(nil, nil)
		if err != nil {
			return err
		}
		var keys [][]byte
		for ; v < j.spec.VNodes.Hi; v++ {
			lo = state.AppendVNode(lo[:0], v)
			hi = append(state.AppendVNode(hi[:0], v), tb...)
			it.SetBounds(lo, hi)
			for ok := it.First(); ok && len(keys) < BatchSize; ok = it.Next() {
				keys = append(keys, append([]byte(nil), it.Key()...))
			}
			if len(keys) == BatchSize {
				break // v may hold more: the next round starts at it
			}
		}
		err = errors.Join(it.Error(), it.Close())
		if err != nil {
			return err
		}
		for _, k := range keys {
			idx.Delete(k)
			rowKey = append(append(rowKey[:0], k[:state.VNodePrefixLen]...), k[state.VNodePrefixLen+timeKeySize:]...)
			j.spec.Tables[s].Delete(rowKey)
		}
	}
	return nil
}
