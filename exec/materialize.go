package exec

import (
	"context"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/streamsql/streamsql/barrier"
	"github.com/streamsql/streamsql/state"
	"github.com/streamsql/streamsql/types"
)

// Materialize stores the rows of its input stream in a state table keyed by
// the stream key, so that the relation can be read by queries and by the
// backfill of views built on it, and forwards the stream unchanged.
//
// Contract: within an epoch, for every key the input deletes only rows it
// inserted before, and at most one row per key exists at a time (the planner
// guarantees this by choosing the stream key).
type Materialize struct {
	table  *state.Table
	key    []int
	types  []types.T
	codec  *state.RowCodec
	keyBuf []byte
	valBuf []byte
	cols   []arrow.Array
}

// NewMaterialize returns a Materialize writing rows of the given types into
// table, keyed by the columns key.
func NewMaterialize(table *state.Table, key []int, ts []types.T) *Materialize {
	return &Materialize{table: table, key: key, types: ts, codec: state.NewRowCodec(ts)}
}

// OnBatch applies b to the table and forwards it.
func (m *Materialize) OnBatch(ctx context.Context, b *Batch, out Output) error {
	m.cols = m.cols[:0]
	for i := 0; i < int(b.Rec.NumCols()); i++ {
		m.cols = append(m.cols, b.Rec.Column(i))
	}
	for i, op := range b.Ops {
		m.keyBuf = m.keyBuf[:0]
		for _, k := range m.key {
			m.keyBuf = state.AppendKey(m.keyBuf, m.types[k], m.cols[k], i)
		}
		if op.IsInsert() {
			m.valBuf = m.codec.Append(m.valBuf[:0], m.cols, i)
			m.table.Put(m.keyBuf, m.valBuf)
		} else {
			m.table.Delete(m.keyBuf)
		}
	}
	return out.Emit(ctx, Message{Batch: b})
}

// OnBarrier seals the epoch's writes.
func (m *Materialize) OnBarrier(_ context.Context, b *barrier.Barrier, _ Output) error {
	m.table.Seal(b.Epoch)
	return nil
}

// Close does nothing.
func (m *Materialize) Close() {}

// OnWatermark passes w on to the view's readers: the view's columns are its
// input's.
func (m *Materialize) OnWatermark(ctx context.Context, w *barrier.Watermark, out Output) error {
	return out.Emit(ctx, Message{Watermark: w})
}
