package exec

import (
	"bytes"
	"context"
	"encoding/binary"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/streamsql/streamsql/barrier"
	"github.com/streamsql/streamsql/ir"
	"github.com/streamsql/streamsql/state"
	"github.com/streamsql/streamsql/types"
)

// AsofJoinSpec configures an AsofJoin. Index 0 is the left input, 1 the
// right.
type AsofJoinSpec struct {
	Types    [2][]types.T
	Keys     [2][]int
	KeyTypes []types.T
	// Time are the time columns, of type TimeType; Op (ir.FnGe, FnGt, FnLe,
	// FnLt) is the inequality left time Op right time.
	Time     [2]int
	TimeType types.T
	Op       string
	// Outer pads left rows without a match with NULLs (ASOF LEFT JOIN).
	Outer bool
	// StreamKeys identify the rows of each input; nil (batch queries): rows
	// are told apart by a sequence number.
	StreamKeys [2][]int
	// Tables hold each input's rows keyed by the virtual node of the join
	// key (state.SetVNode), join key, time, stream key; the value is the
	// row. Every access is within one join key.
	Tables [2]*state.Table
}

// AsofJoin joins each left row with the right row of equal keys whose time
// is the closest that satisfies the inequality (for >=, the latest right
// time at or before the left time; ties go to the largest right stream key
// for > and >=, the smallest for < and <=), maintained under changes on
// both sides: a left change looks its match up in the right state; a right
// change re-examines the left rows whose time lies between it and the next
// right row in the direction of the inequality, the only ones whose closest
// row it can change. Output rows (left columns, then right columns) are
// Inserts and Deletes, emitted as changes arrive. Rows whose keys or time
// are NULL match nothing.
type AsofJoin struct {
	mem      memory.Allocator
	spec     AsofJoinSpec
	codecs   [2]*state.RowCodec
	outTypes []types.T
	schema   *arrow.Schema
	nl       int
	seq      uint64

	keyBuf, rowBuf []byte
}

// NewAsofJoin returns an AsofJoin.
func NewAsofJoin(mem memory.Allocator, spec AsofJoinSpec) *AsofJoin {
	j := &AsofJoin{mem: mem, spec: spec, nl: len(spec.Types[0])}
	for s := 0; s < 2; s++ {
		j.codecs[s] = state.NewRowCodec(spec.Types[s])
	}
	j.outTypes = append(append([]types.T{}, spec.Types[0]...), spec.Types[1]...)
	j.schema = SchemaOf(j.outTypes)
	return j
}

// backward reports whether the closest right row is at or before the left
// time (>= and >).
func (j *AsofJoin) backward() bool { return j.spec.Op == ir.FnGe || j.spec.Op == ir.FnGt }

// rowKey encodes row i of input s's state key: virtual node, join key,
// time, stream key. It returns the key, the length of its virtual node and
// join key part and whether the row
// can match anything (no NULL key or time). The key is valid until the
// next call.
func (j *AsofJoin) rowKey(s int, rec arrow.RecordBatch, i int) ([]byte, int, bool) {
	j.keyBuf = state.AppendVNode(j.keyBuf[:0], 0)
	ok := true
	for k, c := range j.spec.Keys[s] {
		col := rec.Column(c)
		ok = ok && col.IsValid(i)
		j.keyBuf = state.AppendKey(j.keyBuf, j.spec.KeyTypes[k], col, i)
	}
	jk := len(j.keyBuf)
	j.keyBuf = setPartitionVNode(j.keyBuf, j.spec.KeyTypes, rec, j.spec.Keys[s], i)
	t := rec.Column(j.spec.Time[s])
	ok = ok && t.IsValid(i)
	j.keyBuf = state.AppendKey(j.keyBuf, j.spec.TimeType, t, i)
	if sk := j.spec.StreamKeys[s]; sk != nil {
		for _, c := range sk {
			j.keyBuf = state.AppendKey(j.keyBuf, j.spec.Types[s][c], rec.Column(c), i)
		}
	} else {
		j.seq++
		j.keyBuf = binary.BigEndian.AppendUint64(j.keyBuf, j.seq)
	}
	return j.keyBuf, jk, ok
}

// timeEnd returns the length of the join key and time part of a state key
// whose join key part has length jk.
func (j *AsofJoin) timeEnd(key []byte, jk int) int {
	_, rest, err := state.DecodeKeyDatum(key[jk:], j.spec.TimeType)
	if err != nil {
		return len(key)
	}
	return len(key) - len(rest)
}

// match is a right row: its state key and its encoded row.
type match struct {
	key, row []byte
}

// closest returns the right row closest to the left time tk (join key and
// time, as a prefix of a state key with join key length jk).
func (j *AsofJoin) closest(it *state.Iter, tk []byte, jk int) (match, bool) {
	var ok bool
	switch j.spec.Op {
	case ir.FnGe:
		ok = it.SeekLT(state.PrefixEnd(tk))
	case ir.FnGt:
		ok = it.SeekLT(tk)
	case ir.FnLe:
		ok = it.SeekGE(tk)
	default:
		ok = it.SeekGE(state.PrefixEnd(tk))
	}
	if !ok || !bytes.HasPrefix(it.Key(), tk[:jk]) {
		return match{}, false
	}
	return match{key: append([]byte(nil), it.Key()...), row: append([]byte(nil), it.Value()...)}, true
}

// OnBatch applies b's changes of input s and emits the output's.
func (j *AsofJoin) OnBatch(ctx context.Context, s int, b *Batch, out Output) error {
	defer b.Release()
	bs := newBuilders(j.mem, j.outTypes)
	defer releaseBuilders(bs)
	var ops []Op
	var err error
	if s == 0 {
		ops, err = j.leftChanges(b, bs)
	} else {
		ops, err = j.rightChanges(b, bs)
	}
	if err != nil || len(ops) == 0 {
		return err
	}
	return out.Emit(ctx, Message{Batch: NewBatch(buildRecord(j.schema, bs, len(ops)), ops)})
}

// leftChanges stores or removes each left row and emits it with its match.
func (j *AsofJoin) leftChanges(b *Batch, bs []array.Builder) ([]Op, error) {
	it, err := j.spec.Tables[1].NewIter(nil, nil)
	if err != nil {
		return nil, err
	}
	defer it.Close()
	var ops []Op
	cols := b.Rec.Columns()
	for i := 0; i < b.Len(); i++ {
		key, jk, ok := j.rowKey(0, b.Rec, i)
		j.rowBuf = j.codecs[0].Append(j.rowBuf[:0], cols, i)
		var m match
		found := false
		if ok {
			m, found = j.closest(it, key[:j.timeEnd(key, jk)], jk)
		}
		op := Delete
		if b.Ops[i].IsInsert() {
			op = Insert
			j.spec.Tables[0].Put(key, j.rowBuf)
		} else {
			j.spec.Tables[0].Delete(key)
		}
		if found || j.spec.Outer {
			if err := j.appendPair(bs, j.rowBuf, m.row, found); err != nil {
				return nil, err
			}
			ops = append(ops, op)
		}
	}
	return ops, it.Error()
}

// rightChanges stores or removes each right row, re-joining the left rows
// whose closest right row it may change.
func (j *AsofJoin) rightChanges(b *Batch, bs []array.Builder) ([]Op, error) {
	var ops []Op
	cols := b.Rec.Columns()
	for i := 0; i < b.Len(); i++ {
		key, jk, ok := j.rowKey(1, b.Rec, i)
		if !ok {
			continue // never matches: not stored
		}
		affected, err := j.affectedLeft(key, jk)
		if err != nil {
			return nil, err
		}
		before, err := j.closestOf(affected)
		if err != nil {
			return nil, err
		}
		if b.Ops[i].IsInsert() {
			j.spec.Tables[1].Put(key, j.codecs[1].Append(j.rowBuf[:0], cols, i))
		} else {
			j.spec.Tables[1].Delete(key)
		}
		after, err := j.closestOf(affected)
		if err != nil {
			return nil, err
		}
		for k, l := range affected {
			old, now := before[k], after[k]
			if bytes.Equal(old.key, now.key) {
				continue
			}
			if old.key != nil || j.spec.Outer {
				if err := j.appendPair(bs, l.row, old.row, old.key != nil); err != nil {
					return nil, err
				}
				ops = append(ops, Delete)
			}
			if now.key != nil || j.spec.Outer {
				if err := j.appendPair(bs, l.row, now.row, now.key != nil); err != nil {
					return nil, err
				}
				ops = append(ops, Insert)
			}
		}
	}
	return ops, nil
}

// affectedLeft returns the left rows whose closest right row a change of
// the right row with state key key may change: those of its join key whose
// time lies between its time and the next right row's in the direction of
// the inequality (both included).
func (j *AsofJoin) affectedLeft(key []byte, jk int) ([]match, error) {
	te := j.timeEnd(key, jk)
	it, err := j.spec.Tables[1].NewIter(key[:jk], state.PrefixEnd(key[:jk]))
	if err != nil {
		return nil, err
	}
	var lower, upper []byte
	if j.backward() {
		lower = key[:te]
		upper = state.PrefixEnd(key[:jk])
		if it.SeekGE(state.PrefixEnd(key[:te])) {
			next := it.Key()
			upper = state.PrefixEnd(append([]byte(nil), next[:j.timeEnd(next, jk)]...))
		}
	} else {
		lower = append(append([]byte(nil), key[:jk]...), 0x01) // non-NULL times
		upper = state.PrefixEnd(key[:te])
		if it.SeekLT(key[:te]) {
			prev := it.Key()
			lower = append([]byte(nil), prev[:j.timeEnd(prev, jk)]...)
		}
	}
	err = it.Error()
	it.Close()
	if err != nil {
		return nil, err
	}
	lit, err := j.spec.Tables[0].NewIter(lower, upper)
	if err != nil {
		return nil, err
	}
	defer lit.Close()
	var rows []match
	for ok := lit.First(); ok; ok = lit.Next() {
		rows = append(rows, match{key: append([]byte(nil), lit.Key()...), row: append([]byte(nil), lit.Value()...)})
	}
	return rows, lit.Error()
}

// closestOf returns the closest right row of each left row (a zero match
// for none).
func (j *AsofJoin) closestOf(left []match) ([]match, error) {
	if len(left) == 0 {
		return nil, nil
	}
	it, err := j.spec.Tables[1].NewIter(nil, nil)
	if err != nil {
		return nil, err
	}
	defer it.Close()
	jk := j.joinKeyLen(left[0].key)
	out := make([]match, len(left))
	for k, l := range left {
		out[k], _ = j.closest(it, l.key[:j.timeEnd(l.key, jk)], jk)
	}
	return out, it.Error()
}

// joinKeyLen returns the length of the virtual node and join key part of a
// state key.
func (j *AsofJoin) joinKeyLen(key []byte) int {
	if len(key) < state.VNodePrefixLen {
		return len(key)
	}
	rest := key[state.VNodePrefixLen:]
	for _, t := range j.spec.KeyTypes {
		var err error
		if _, rest, err = state.DecodeKeyDatum(rest, t); err != nil {
			return len(key)
		}
	}
	return len(key) - len(rest)
}

// appendPair appends a left row and its match (or NULLs) to bs.
func (j *AsofJoin) appendPair(bs []array.Builder, left, right []byte, found bool) error {
	if err := j.codecs[0].Decode(left, bs[:j.nl]); err != nil {
		return err
	}
	if found {
		return j.codecs[1].Decode(right, bs[j.nl:])
	}
	for _, b := range bs[j.nl:] {
		b.AppendNull()
	}
	return nil
}

// OnBarrier seals both inputs' state.
func (j *AsofJoin) OnBarrier(_ context.Context, b *barrier.Barrier, _ Output) error {
	j.spec.Tables[0].Seal(b.Epoch)
	j.spec.Tables[1].Seal(b.Epoch)
	return nil
}

// Close releases nothing: AsofJoin holds no Arrow memory between calls.
func (j *AsofJoin) Close() {}
