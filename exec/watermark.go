package exec

import (
	"context"
	"encoding/binary"
	"fmt"
	"sync/atomic"

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

// Watermarks.
//
// A watermark on column c of a stream promises that no row after it has a
// value of c below the watermark's value (event time, in microseconds).
// Rows that break the promise are late: the operators that rely on
// watermarks (windowed aggregations cleaning their state, EMIT ON WINDOW
// CLOSE) drop them and count them; every other operator treats them as any
// row.
//
// Tables and sources with a WATERMARK FOR clause generate watermarks
// (WatermarkGen): the largest value of the watermark expression over the
// rows inserted so far, sent down the change stream just before each
// barrier. An operator that keeps its columns in place passes watermarks
// on; one that moves or computes columns maps them to its output columns
// (planner.WatermarkMap); a multi-input operator forwards, per column, the
// minimum over its inputs. An operator that does neither (implements no
// OnWatermark) drops them: its output carries none.

// WatermarkOperator is implemented by single-input operators that pass
// watermarks on or act on them. OnWatermark is called in stream order,
// between OnBatch and OnBarrier calls; the operator emits into out the
// watermarks its output carries (possibly later, for example after the
// rows it owes at a barrier).
type WatermarkOperator interface {
	OnWatermark(ctx context.Context, w *barrier.Watermark, out Output) error
}

// MultiWatermarkOperator is WatermarkOperator for multi-input operators:
// input says which input the watermark arrived on.
type MultiWatermarkOperator interface {
	OnWatermark(ctx context.Context, input int, w *barrier.Watermark, out Output) error
}

// WatermarkGen derives a relation's watermark from the rows it inserts: the
// largest non-NULL value of the watermark expression so far. It never goes
// back: deletes do not lower it. Not safe for concurrent use.
type WatermarkGen struct {
	// Column is the column the watermark is on.
	Column int
	expr   eval.Evaluator
	value  int64
	valid  bool
}

// NewWatermarkGen compiles the watermark expression expr (over the
// relation's columns) of column col.
func NewWatermarkGen(col int, expr ir.Expr) (*WatermarkGen, error) {
	ev, err := eval.Compile(expr)
	if err != nil {
		return nil, err
	}
	return &WatermarkGen{Column: col, expr: ev}, nil
}

// Observe advances the watermark over the inserted rows of b. Rows whose
// expression fails (an overflow at the edge of the timestamp range) count
// as NULL.
func (g *WatermarkGen) Observe(mem memory.Allocator, b *Batch) error {
	ectx := &eval.Context{Mem: mem}
	res, err := g.expr.Eval(ectx, b.Rec)
	if err != nil {
		return err
	}
	defer res.Release()
	ts, ok := res.(*array.Timestamp)
	if !ok {
		return fmt.Errorf("exec: watermark expression gave %T, want timestamps", res)
	}
	vals := ts.Values()
	for i, op := range b.Ops {
		if op.IsInsert() && ts.IsValid(i) {
			if v := int64(vals[i]); !g.valid || v > g.value {
				g.value, g.valid = v, true
			}
		}
	}
	return nil
}

// Current returns the watermark message, if any row has set it.
func (g *WatermarkGen) Current() (*barrier.Watermark, bool) {
	if !g.valid {
		return nil, false
	}
	return &barrier.Watermark{Column: g.Column, Value: g.value}, true
}

// AppendState appends the generator's position to buf; LoadState restores
// it.
func (g *WatermarkGen) AppendState(buf []byte) []byte {
	if !g.valid {
		return buf
	}
	return binary.AppendVarint(buf, g.value)
}

// LoadState restores a position written by AppendState.
func (g *WatermarkGen) LoadState(buf []byte) error {
	if len(buf) == 0 {
		g.valid = false
		return nil
	}
	v, n := binary.Varint(buf)
	if n <= 0 {
		return errCorruptState
	}
	g.value, g.valid = v, true
	return nil
}

// watermarkMapper computes the watermarks of an operator's output columns
// from those of its input, following planner.WatermarkMaps.
type watermarkMapper struct {
	mem   memory.Allocator
	maps  []planner.WatermarkMap
	exprs []eval.Evaluator // nil for identity maps
}

func newWatermarkMapper(mem memory.Allocator, maps []planner.WatermarkMap) (*watermarkMapper, error) {
	m := &watermarkMapper{mem: mem, maps: maps, exprs: make([]eval.Evaluator, len(maps))}
	for i, wm := range maps {
		if wm.Expr == nil {
			continue
		}
		ev, err := eval.Compile(wm.Expr)
		if err != nil {
			return nil, err
		}
		m.exprs[i] = ev
	}
	return m, nil
}

// emit sends the output watermarks that input watermark w gives.
func (m *watermarkMapper) emit(ctx context.Context, w *barrier.Watermark, out Output) error {
	for i, wm := range m.maps {
		if wm.In != w.Column {
			continue
		}
		v := w.Value
		if ev := m.exprs[i]; ev != nil {
			var ok bool
			var err error
			if v, ok, err = evalWatermark(m.mem, ev, wm.InType, v); err != nil || !ok {
				return err
			}
		}
		if err := out.Emit(ctx, Message{Watermark: &barrier.Watermark{Column: wm.Out, Value: v}}); err != nil {
			return err
		}
	}
	return nil
}

// evalWatermark evaluates ev, an expression over one timestamp column, at
// value v; ok is false if the result is NULL (or failed).
func evalWatermark(mem memory.Allocator, ev eval.Evaluator, t types.T, v int64) (int64, bool, error) {
	b := array.NewTimestampBuilder(mem, t.ArrowType().(*arrow.TimestampType))
	b.Append(arrow.Timestamp(v))
	col := b.NewArray()
	b.Release()
	rec := array.NewRecordBatch(SchemaOf([]types.T{t}), []arrow.Array{col}, 1)
	col.Release()
	defer rec.Release()
	res, err := ev.Eval(&eval.Context{Mem: mem}, rec)
	if err != nil {
		return 0, false, err
	}
	defer res.Release()
	ts, isTS := res.(*array.Timestamp)
	if !isTS || ts.IsNull(0) {
		return 0, false, nil
	}
	return int64(ts.Value(0)), true, nil
}

// watermarkMin forwards, for groups of columns of a multi-input operator's
// inputs, the minimum of the watermarks every input of the group has
// reached, on the group's output columns.
type watermarkMin struct {
	groups []watermarkGroup
}

// watermarkGroup is one column per input (in[i] of input i) whose minimum
// watermark goes to the output columns out.
type watermarkGroup struct {
	in     []int
	out    []int
	vals   []int64
	have   []bool
	sent   int64
	sentOK bool
}

func (m *watermarkMin) add(in, out []int) {
	m.groups = append(m.groups, watermarkGroup{in: in, out: out, vals: make([]int64, len(in)), have: make([]bool, len(in))})
}

// onWatermark records w of input and emits the groups' advanced minimums.
func (m *watermarkMin) onWatermark(ctx context.Context, input int, w *barrier.Watermark, out Output) error {
	for gi := range m.groups {
		g := &m.groups[gi]
		if g.in[input] != w.Column || (g.have[input] && w.Value <= g.vals[input]) {
			continue
		}
		g.vals[input], g.have[input] = w.Value, true
		low, all := w.Value, true
		for i, v := range g.vals {
			all = all && g.have[i]
			low = min(low, v)
		}
		if !all || (g.sentOK && low <= g.sent) {
			continue
		}
		g.sent, g.sentOK = low, true
		for _, c := range g.out {
			if err := out.Emit(ctx, Message{Watermark: &barrier.Watermark{Column: c, Value: low}}); err != nil {
				return err
			}
		}
	}
	return nil
}

// keepRows returns the rows keep (in order) of b, which it releases, as a
// new batch; b itself if keep is every row. An update pair cut in two by
// the selection becomes a lone Delete or Insert, so downstream operators
// never see half a pair.
func keepRows(mem memory.Allocator, b *Batch, keep []int32) (*Batch, error) {
	if len(keep) == b.Len() {
		return b, nil
	}
	defer b.Release()
	kept := make([]bool, b.Len())
	for _, i := range keep {
		kept[i] = true
	}
	ops := make([]Op, len(keep))
	for k, i := range keep {
		op := b.Ops[i]
		switch {
		case op == UpdateDelete && (int(i)+1 >= len(kept) || !kept[i+1]):
			op = Delete
		case op == UpdateInsert && (i == 0 || !kept[i-1]):
			op = Insert
		}
		ops[k] = op
	}
	rec, err := eval.TakeRecord(mem, b.Rec, keep)
	if err != nil {
		return nil, err
	}
	return NewBatch(rec, ops), nil
}

// groupWatermark is the watermark of an operator whose first group column
// carries one (windowed aggregations and TopNs): the groups below it are
// final. It remembers the watermark reached and the one whose final groups
// the operator last dropped, and keeps the latter in a state table so that
// a restarted operator goes on dropping the same late rows. Owned by the
// operator's goroutine.
type groupWatermark struct {
	table *state.Table
	// col is the input column the watermark is on; t its type.
	col          int
	t            types.T
	value, done  int64
	valid, acted bool
}

var watermarkKey = []byte("wm")

// loadVarint reads the varint under key of t into v, setting valid, if the
// key is there.
func loadVarint(t *state.Table, key []byte, v *int64, valid *bool) error {
	b, ok, err := t.Get(key)
	if err != nil || !ok {
		return err
	}
	x, n := binary.Varint(b)
	if n <= 0 {
		return errCorruptState
	}
	*v, *valid = x, true
	return nil
}

// newGroupWatermark restores the watermark of input column col (of type t)
// kept in table.
func newGroupWatermark(table *state.Table, col int, t types.T) (*groupWatermark, error) {
	g := &groupWatermark{table: table, col: col, t: t}
	if err := loadVarint(table, watermarkKey, &g.value, &g.valid); err != nil {
		return nil, err
	}
	g.done, g.acted = g.value, g.valid
	return g, nil
}

// observe records w if it is on the group column and ahead.
func (g *groupWatermark) observe(w *barrier.Watermark) {
	if w.Column == g.col && (!g.valid || w.Value > g.value) {
		g.value, g.valid = w.Value, true
	}
}

// dropLate returns b without the rows of final groups (b itself if there
// are none), counting them in late; with nullsLate, rows whose group
// column is NULL are late too (their window never closes).
func (g *groupWatermark) dropLate(mem memory.Allocator, b *Batch, nullsLate bool, late *atomic.Int64) (*Batch, error) {
	if !g.valid && !nullsLate {
		return b, nil
	}
	col := b.Rec.Column(g.col).(*array.Timestamp)
	isLate := func(i int) bool {
		return col.IsNull(i) && nullsLate || col.IsValid(i) && g.valid && int64(col.Value(i)) < g.value
	}
	first := 0
	for first < b.Len() && !isLate(first) {
		first++
	}
	if first == b.Len() {
		return b, nil // the usual case: nothing is late
	}
	keep := make([]int32, 0, b.Len())
	for i := 0; i < b.Len(); i++ {
		if !isLate(i) {
			keep = append(keep, int32(i))
		}
	}
	if n := b.Len() - len(keep); n > 0 && late != nil {
		late.Add(int64(n))
	}
	return keepRows(mem, b, keep)
}

// finalRange returns, when the watermark has moved since the final groups
// were last dropped, the key range of the groups it has made final (those
// whose state key starts with a non-NULL group column below it).
func (g *groupWatermark) finalRange() (lower, upper []byte, ok bool) {
	if !g.valid || g.acted && g.value <= g.done {
		return nil, nil, false
	}
	return []byte{0x01}, state.AppendKeyDatum(nil, g.t, types.DInt(g.value)), true
}

// dropped records that the groups below the watermark are gone.
func (g *groupWatermark) dropped() {
	g.done, g.acted = g.value, true
	g.table.Put(watermarkKey, binary.AppendVarint(nil, g.value))
}

// message is the watermark to forward on output column col.
func (g *groupWatermark) message(col int) Message {
	return Message{Watermark: &barrier.Watermark{Column: col, Value: g.value}}
}

// heldWatermarks keeps the watermarks an operator receives during an epoch,
// the latest per column, until it has emitted the epoch's rows at the
// barrier: operators that emit at barriers would otherwise send rows behind
// a watermark they had already passed on, making them late downstream.
type heldWatermarks []barrier.Watermark

// hold keeps w.
func (h *heldWatermarks) hold(w *barrier.Watermark) {
	for i := range *h {
		if (*h)[i].Column == w.Column {
			(*h)[i].Value = max((*h)[i].Value, w.Value)
			return
		}
	}
	*h = append(*h, *w)
}

// flush emits the held watermarks and forgets them.
func (h *heldWatermarks) flush(ctx context.Context, out Output) error {
	for _, w := range *h {
		// A copy: receivers may keep the message.
		if err := out.Emit(ctx, Message{Watermark: &w}); err != nil {
			return err
		}
	}
	*h = (*h)[:0]
	return nil
}
