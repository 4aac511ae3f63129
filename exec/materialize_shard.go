package exec

import (
	"context"

	"github.com/streamsql/streamsql/state"
)

// materializeShard is what the Materialize of one actor of a parallel
// fragment knows of its shard of the view: which rows it owns (those whose
// partition key columns hash to its virtual nodes) and its handles of the
// view's tables.
type materializeShard struct {
	part  partitioner
	index int32
	table func(id state.TableID) *state.Table
}

// newIndex returns the writer of the index an AddViewIndex adds, built from
// the view's rows (for a shard: the rows it owns, into its own handle of
// the index table).
func (m *Materialize) newIndex(ctx context.Context, mu *AddViewIndex) (*IndexWriter, error) {
	if m.shard == nil {
		x := NewIndexWriter(mu.Table, mu.Index, m.types, m.key)
		return x, x.Build(ctx, m.mem, m.table)
	}
	x := NewIndexWriter(m.shard.table(mu.Table.ID()), mu.Index, m.types, m.key)
	// The shard's handle of the view's table reads the other shards'
	// committed rows and none of their epoch's writes: keep only its own.
	build := OutputFunc(func(_ context.Context, msg Message) error {
		if msg.Batch == nil {
			return nil
		}
		defer msg.Batch.Release()
		rec := msg.Batch.Rec
		for r, o := range m.shard.part.owners(rec) {
			if o == m.shard.index {
				x.Put(rec, r)
			}
		}
		return nil
	})
	if err := ScanTable(ctx, m.mem, m.table, m.types, build); err != nil {
		x.Table.Clear()
		return nil, err
	}
	return x, nil
}
