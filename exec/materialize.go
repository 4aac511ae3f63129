package exec

import (
	"context"
	"fmt"
	"slices"

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
	mem   memory.Allocator
	view  uint32
	rows  *KeyedRows
	table *state.Table
	key   []int
	types []types.T
	shard *materializeShard // nil unless in a parallel fragment
}

// NewMaterialize returns a Materialize writing rows of the given types into
// table, keyed by the columns key, and the view's indexes (each with its
// state table).
func NewMaterialize(mem memory.Allocator, view uint32, table *state.Table, key []int, ts []types.T, indexes []*IndexWriter) *Materialize {
	return &Materialize{mem: mem, view: view, rows: NewKeyedRows(table, key, ts, indexes), table: table, key: key, types: ts}
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

// OnBatch applies b to the table and its indexes (KeyedRows.Apply) and
// forwards it.
func (m *Materialize) OnBatch(ctx context.Context, b *Batch, out Output) error {
	m.rows.Apply(b.Rec, b.Ops)
	return out.Emit(ctx, Message{Batch: b})
}

// OnBarrier seals the epoch's writes, then applies the barrier's index
// mutations for the view.
func (m *Materialize) OnBarrier(ctx context.Context, b *barrier.Barrier, _ Output) error {
	m.rows.Seal(b.Epoch)
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
			m.rows.Indexes = append(m.rows.Indexes, x)
		case *DropViewIndex:
			if mu.View != m.view {
				continue
			}
			m.rows.Indexes = slices.DeleteFunc(m.rows.Indexes, func(x *IndexWriter) bool { return x.Def.Name == mu.Name })
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
