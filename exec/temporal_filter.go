package exec

import (
	"context"
	"encoding/binary"
	"math"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/streamsql/streamsql/barrier"
	"github.com/streamsql/streamsql/exec/eval"
	"github.com/streamsql/streamsql/ir"
	"github.com/streamsql/streamsql/planner"
	"github.com/streamsql/streamsql/state"
	"github.com/streamsql/streamsql/types"
)

// TemporalFilter keeps the rows for which every bound `col OP now() + delta`
// holds, now() being the time of the epoch's barrier: the view it feeds, as
// committed at epoch n, holds exactly the rows whose bounds hold at barrier
// n's time.
//
// A row's bounds make it visible for now() in [enter, leave): lower bounds
// on col (col > now() - 1 hour) end its visibility, upper bounds (col <
// now() + 1 minute) start it. The state table keeps the rows that are or
// will be visible: pending rows under (0, enter, stream key), visible ones
// under (1, leave, stream key), so that at each barrier the rows time makes
// visible, and those it retracts, are a prefix of their phase. Rows that can
// never be visible again are dropped from state. Within an epoch, changes
// are placed by the previous barrier's time; the barrier then moves every
// row time has passed.
//
// Values hold the row's other time (big-endian int64) and the row.
//
// State key layout: the runtime's partitioning prefixes a virtual node of
// the stream key; within it, phase, time, stream key.
type TemporalFilter struct {
	mem    memory.Allocator
	bounds []planner.TemporalBound
	table  *state.Table
	codec  *state.RowCodec
	types  []types.T
	key    []int
	keyTs  []types.T
	schema *arrow.Schema
	now    int64
	// saved is the time last written to the state, if savedOK.
	saved   int64
	savedOK bool
	// held are the watermarks of the epoch, one per column, forwarded at
	// its barrier after the rows time moves there: those rows belong to
	// the epoch, and a watermark ahead of them would make them late for a
	// windowed aggregation downstream.
	held heldWatermarks

	bs          []array.Builder
	ops         []Op
	keyBuf, val []byte
	// arena holds the keys and values of the rows advanceChunk moves;
	// moved, where each one's key ends and its value ends.
	arena []byte
	moved [][2]int
}

const (
	phasePending byte = 0
	phaseVisible byte = 1
	phaseMeta    byte = 0xFF // the time reached, under [phaseMeta]
)

// NewTemporalFilter returns the operator of n, with its state in table;
// startTime is now() until the first barrier unless the state holds a later
// time.
func NewTemporalFilter(mem memory.Allocator, n *planner.TemporalFilter, table *state.Table, startTime int64) (*TemporalFilter, error) {
	ts := planner.Types(n.Columns())
	f := &TemporalFilter{mem: mem, bounds: n.Bounds, table: table, codec: state.NewRowCodec(ts), types: ts,
		key: n.StreamKey(), schema: SchemaOf(ts), now: startTime}
	for _, k := range f.key {
		f.keyTs = append(f.keyTs, ts[k])
	}
	if err := loadVarint(table, []byte{phaseMeta}, &f.saved, &f.savedOK); err != nil {
		return nil, err
	}
	if f.savedOK {
		f.now = max(f.now, f.saved)
	}
	return f, nil
}

// window returns when row i becomes visible and when it stops being so;
// ok is false if it never is (a NULL bound column or an empty window).
func (f *TemporalFilter) window(rec arrow.RecordBatch, i int) (enter, leave int64, ok bool) {
	enter, leave = math.MinInt64, math.MaxInt64
	for _, bd := range f.bounds {
		col := rec.Column(bd.Col).(*array.Timestamp)
		if col.IsNull(i) {
			return 0, 0, false
		}
		t := satSub(int64(col.Value(i)), bd.Delta)
		switch bd.Op {
		case ir.FnGt:
			leave = min(leave, t)
		case ir.FnGe:
			leave = min(leave, satAdd(t, 1))
		case ir.FnLt:
			enter = max(enter, satAdd(t, 1))
		case ir.FnLe:
			enter = max(enter, t)
		}
	}
	return enter, leave, enter < leave
}

// satAdd returns a + b, saturating at the int64 range.
func satAdd(a, b int64) int64 {
	s := a + b
	if (b > 0 && s < a) || (b < 0 && s > a) {
		if b > 0 {
			return math.MaxInt64
		}
		return math.MinInt64
	}
	return s
}

// satSub returns a - b, saturating at the int64 range.
func satSub(a, b int64) int64 {
	if b == math.MinInt64 {
		return satAdd(satAdd(a, math.MaxInt64), 1)
	}
	return satAdd(a, -b)
}

// stateKey builds the key of row i in phase at time t.
func (f *TemporalFilter) stateKey(phase byte, t int64, rec arrow.RecordBatch, i int) []byte {
	f.keyBuf = appendPhaseTime(f.keyBuf[:0], phase, t)
	for k, c := range f.key {
		f.keyBuf = state.AppendKey(f.keyBuf, f.keyTs[k], rec.Column(c), i)
	}
	return f.keyBuf
}

// appendPhaseTime appends the key prefix of the rows of phase at time t:
// the phase, then t big-endian with its sign bit flipped, so that keys sort
// by time.
func appendPhaseTime(buf []byte, phase byte, t int64) []byte {
	return binary.BigEndian.AppendUint64(append(buf, phase), uint64(t)^(1<<63))
}

// OnBatch places each change by the current time: a visible row is emitted
// (or retracted) now, a pending one is kept for later.
func (f *TemporalFilter) OnBatch(ctx context.Context, b *Batch, out Output) error {
	defer b.Release()
	var keep []int32
	var ops []Op
	cols := b.Rec.Columns()
	for i := 0; i < b.Len(); i++ {
		enter, leave, ok := f.window(b.Rec, i)
		if !ok || leave <= f.now {
			continue
		}
		insert := b.Ops[i].IsInsert()
		phase, t, other := phasePending, enter, leave
		if enter <= f.now {
			phase, t, other = phaseVisible, leave, enter
			keep = append(keep, int32(i))
			ops = append(ops, Delete)
			if insert {
				ops[len(ops)-1] = Insert
			}
		}
		key := f.stateKey(phase, t, b.Rec, i)
		if !insert {
			f.table.Delete(key)
			continue
		}
		f.val = binary.BigEndian.AppendUint64(f.val[:0], uint64(other))
		f.val = f.codec.Append(f.val, cols, i)
		f.table.Put(key, f.val)
	}
	if len(keep) == 0 {
		return nil
	}
	rec, err := eval.TakeRecord(f.mem, b.Rec, keep)
	if err != nil {
		return err
	}
	return out.Emit(ctx, Message{Batch: NewBatch(rec, ops)})
}

// OnBarrier moves time to the barrier's: it retracts the visible rows whose
// window has ended and emits the pending rows whose window has begun. The
// time reached is kept in the state, also when it is still the start time:
// a restarted operator starts from time 0 otherwise, and would place rows
// by a time before the one their state was kept by.
func (f *TemporalFilter) OnBarrier(ctx context.Context, br *barrier.Barrier, out Output) error {
	if now := max(f.now, br.Time); now > f.now {
		f.now = now
		if err := f.advance(ctx, phaseVisible, out); err != nil {
			return err
		}
		if err := f.advance(ctx, phasePending, out); err != nil {
			return err
		}
	}
	if !f.savedOK || f.saved != f.now {
		f.table.Put([]byte{phaseMeta}, binary.AppendVarint(nil, f.now))
		f.saved, f.savedOK = f.now, true
	}
	f.table.Seal(br.Epoch)
	return f.held.flush(ctx, out)
}

// advance moves the rows of phase whose time has come: visible rows are
// retracted, pending rows become visible (or are dropped if their window
// has passed too).
func (f *TemporalFilter) advance(ctx context.Context, phase byte, out Output) error {
	upper := appendPhaseTime(nil, phase, f.now+1)
	if f.now == math.MaxInt64 {
		upper = []byte{phase + 1}
	}
	for {
		n, err := f.advanceChunk(ctx, phase, upper, out)
		if err != nil || n < BatchSize {
			return err
		}
	}
}

// advanceChunk moves up to BatchSize rows and emits them; it returns how
// many it moved.
func (f *TemporalFilter) advanceChunk(ctx context.Context, phase byte, upper []byte, out Output) (int, error) {
	it, err := f.table.NewIter([]byte{phase}, upper)
	if err != nil {
		return 0, err
	}
	// The rows are copied out before the state changes under the iterator.
	f.arena, f.moved = f.arena[:0], f.moved[:0]
	for ok := it.First(); ok && len(f.moved) < BatchSize; ok = it.Next() {
		f.arena = append(f.arena, it.Key()...)
		keyEnd := len(f.arena)
		f.arena = append(f.arena, it.Value()...)
		f.moved = append(f.moved, [2]int{keyEnd, len(f.arena)})
	}
	err = it.Error()
	it.Close()
	if err != nil || len(f.moved) == 0 {
		return 0, err
	}
	if f.bs == nil {
		f.bs = newBuilders(f.mem, f.types)
	}
	f.ops = f.ops[:0]
	start := 0
	for _, m := range f.moved {
		key, val := f.arena[start:m[0]], f.arena[m[0]:m[1]]
		start = m[1]
		f.table.Delete(key)
		if len(key) < 9 || len(val) < 8 {
			return 0, errCorruptState
		}
		row := val[8:]
		if phase == phasePending {
			leave := int64(binary.BigEndian.Uint64(val))
			if leave <= f.now {
				continue // its window passed between two barriers
			}
			enter := int64(binary.BigEndian.Uint64(key[1:9]) ^ (1 << 63))
			f.keyBuf = append(appendPhaseTime(f.keyBuf[:0], phaseVisible, leave), key[9:]...)
			f.val = append(binary.BigEndian.AppendUint64(f.val[:0], uint64(enter)), row...)
			f.table.Put(f.keyBuf, f.val)
			f.ops = append(f.ops, Insert)
		} else {
			f.ops = append(f.ops, Delete)
		}
		if err := f.codec.Decode(row, f.bs); err != nil {
			return 0, err
		}
	}
	if len(f.ops) > 0 {
		rec := buildRecord(f.schema, f.bs, len(f.ops))
		if err := out.Emit(ctx, Message{Batch: NewBatch(rec, append([]Op(nil), f.ops...))}); err != nil {
			return 0, err
		}
	}
	return len(f.moved), nil
}

// OnWatermark holds w until the barrier (see held): the filter keeps its
// columns, so it passes its watermarks on then.
func (f *TemporalFilter) OnWatermark(_ context.Context, w *barrier.Watermark, _ Output) error {
	f.held.hold(w)
	return nil
}

// Close releases the builders.
func (f *TemporalFilter) Close() {
	if f.bs != nil {
		releaseBuilders(f.bs)
	}
}
