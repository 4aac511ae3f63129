package exec

import (
	"context"
	"fmt"
	"slices"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/streamsql/streamsql/barrier"
	"github.com/streamsql/streamsql/catalog"
	"github.com/streamsql/streamsql/state"
	"github.com/streamsql/streamsql/types"
)

// Materialize stores the rows of its input stream in a state table keyed by
// the stream key, so that the relation can be read by queries and by the
// backfill of views built on it, and forwards the stream unchanged.
//
// It also writes the view's secondary indexes (CREATE INDEX on a
// materialized view) in the same epochs as its rows. An index is added or
// dropped by a barrier mutation (AddViewIndex, DropViewIndex): the index is
// built from the rows the view holds when the barrier arrives, and its
// entries, like the changes after the barrier, belong to the next epoch.
//
// Contract: within an epoch, for every key the input deletes only rows it
// inserted before, and at most one row per key exists at a time (the planner
// guarantees this by choosing the stream key).
type Materialize struct {
	mem     memory.Allocator
	view    uint32
	table   *state.Table
	key     []int
	types   []types.T
	codec   *state.RowCodec
	indexes []*IndexWriter
	keyBuf  []byte
	valBuf  []byte
	cols    []arrow.Array
	shard   *materializeShard // nil unless in a parallel fragment
}

// NewMaterialize returns a Materialize writing rows of the given types into
// table, keyed by the columns key, and the view's indexes (each with its
// state table).
func NewMaterialize(mem memory.Allocator, view uint32, table *state.Table, key []int, ts []types.T, indexes []*IndexWriter) *Materialize {
	return &Materialize{mem: mem, view: view, table: table, key: key, types: ts, codec: state.NewRowCodec(ts), indexes: indexes}
}

// AddViewIndex is a barrier mutation: the Materialize of view View builds
// index Index into Table when the barrier passes, and maintains it after.
type AddViewIndex struct {
	View  uint32
	Index catalog.Index
	Table *state.Table
}

// DropViewIndex is a barrier mutation: the Materialize of view View stops
// writing the index named Name when the barrier passes.
type DropViewIndex struct {
	View uint32
	Name string
}

func (m *AddViewIndex) String() string {
	return fmt.Sprintf("add index %s (view %d)", m.Index.Name, m.View)
}
func (m *DropViewIndex) String() string {
	return fmt.Sprintf("drop index %s (view %d)", m.Name, m.View)
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
		for _, x := range m.indexes {
			if op.IsInsert() {
				x.Put(b.Rec, i)
			} else {
				x.Delete(b.Rec, i)
			}
		}
	}
	return out.Emit(ctx, Message{Batch: b})
}

// OnBarrier seals the epoch's writes, then applies the barrier's index
// mutations for the view.
func (m *Materialize) OnBarrier(ctx context.Context, b *barrier.Barrier, _ Output) error {
	m.table.Seal(b.Epoch)
	for _, x := range m.indexes {
		x.Table.Seal(b.Epoch)
	}
	for _, mu := range b.Mutations {
		switch mu := mu.(type) {
		case *AddViewIndex:
			if mu.View != m.view {
				continue
			}
			x, err := m.newIndex(ctx, mu)
			if err != nil {
				return err
			}
			m.indexes = append(m.indexes, x)
		case *DropViewIndex:
			if mu.View != m.view {
				continue
			}
			m.indexes = slices.DeleteFunc(m.indexes, func(x *IndexWriter) bool { return x.Def.Name == mu.Name })
		}
	}
	return nil
}

// Close does nothing.
func (m *Materialize) Close() {}

// OnWatermark passes w on to the view's readers: the view's columns are its
// input's.
func (m *Materialize) OnWatermark(ctx context.Context, w *barrier.Watermark, out Output) error {
	return out.Emit(ctx, Message{Watermark: w})
}
