package exec

import (
	"context"

	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/streamsql/streamsql/barrier"
	"github.com/streamsql/streamsql/state"
	"github.com/streamsql/streamsql/types"
)

// EowcGate emits its input on window close: it keeps each input row (its
// latest version; a delete removes it) in a state table keyed by its time
// column, then its stream key, until the watermark of that column passes
// it; at each barrier it emits the rows the watermark has passed, each once,
// as an Insert, and deletes them. Its input's rows must be final once the
// watermark has passed them (window functions whose frames end at the
// current row): changes that still arrive for them, and rows whose time is
// NULL, are late. The output is append-only.
//
// State key layout: the runtime's partitioning prefixes a virtual node of
// the stream key; within it, time then stream key. The watermark reached is
// kept in the same table under a key no row key can have (groupWatermark's
// key, which does not start with 0x00 or 0x01).
type EowcGate struct {
	mem   memory.Allocator
	table *state.Table
	col   int
	types []types.T
	key   []int
	codec *state.RowCodec
	wm    *groupWatermark
	late  func(int)

	keyBuf, valBuf []byte
}

// NewEowcGate returns the gate of rows of types ts, with stream key key and
// time column col, keeping its state in table; late counts late rows.
func NewEowcGate(mem memory.Allocator, ts []types.T, key []int, col int, table *state.Table, late func(int)) (*EowcGate, error) {
	wm, err := newGroupWatermark(table, col, ts[col])
	if err != nil {
		return nil, err
	}
	return &EowcGate{mem: mem, table: table, col: col, types: ts, key: key, codec: state.NewRowCodec(ts), wm: wm, late: late}, nil
}

// OnBatch keeps the changes of rows the watermark has not passed.
func (g *EowcGate) OnBatch(_ context.Context, b *Batch, _ Output) error {
	defer b.Release()
	times := b.Rec.Column(g.col).(*array.Timestamp)
	cols := b.Rec.Columns()
	late := 0
	for i, op := range b.Ops {
		if times.IsNull(i) || g.wm.valid && int64(times.Value(i)) < g.wm.value {
			late++
			continue
		}
		g.keyBuf = state.AppendKey(g.keyBuf[:0], g.types[g.col], times, i)
		for _, k := range g.key {
			g.keyBuf = state.AppendKey(g.keyBuf, g.types[k], cols[k], i)
		}
		if op.IsInsert() {
			g.valBuf = g.codec.Append(g.valBuf[:0], cols, i)
			g.table.Put(g.keyBuf, g.valBuf)
		} else {
			g.table.Delete(g.keyBuf)
		}
	}
	if late > 0 && g.late != nil {
		g.late(late)
	}
	return nil
}

// OnWatermark records the watermark of the time column.
func (g *EowcGate) OnWatermark(_ context.Context, w *barrier.Watermark, _ Output) error {
	g.wm.observe(w)
	return nil
}

// OnBarrier emits the rows the watermark has passed, as Inserts in time
// order, deletes them and forwards the watermark.
func (g *EowcGate) OnBarrier(ctx context.Context, br *barrier.Barrier, out Output) error {
	if lower, upper, ok := g.wm.finalRange(); ok {
		if err := scanRows(ctx, g.mem, g.table, g.types, []KeyRange{{lower, upper}}, out); err != nil {
			return err
		}
		g.table.DeleteRange(lower, upper)
		g.wm.dropped()
	}
	var err error
	if g.wm.valid {
		err = out.Emit(ctx, g.wm.message(g.col))
	}
	g.table.Seal(br.Epoch)
	return err
}

// Close releases nothing: the gate holds no Arrow memory between calls.
func (g *EowcGate) Close() {}
