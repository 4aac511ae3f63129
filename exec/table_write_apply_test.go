package exec

import (
	"context"
	"slices"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/streamsql/streamsql/state"
	"github.com/streamsql/streamsql/types"
)

// TestTableWriteApply writes resolved changes through ApplyBatch and
// Truncate: the rows stored, the index entries kept with them, and the
// change stream, in the order of the changes.
func TestTableWriteApply(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	ctx := context.Background()
	store, err := state.Open(":memory:", state.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	table, idxTable := store.Table(1), store.Table(2)
	idx := NewIndexWriter(idxTable, writeRel.Indexes[0], writeRel.Types(), writeRel.Key)
	w := NewTableWrite(mem, writeRel, table, []*IndexWriter{idx}, nil)
	out := &collectRows{}
	stored := func() []string {
		t.Helper()
		rows := &collectRows{}
		if err := ScanTable(ctx, mem, table, writeRel.Types(), rows); err != nil {
			t.Fatal(err)
		}
		return rows.rows
	}
	entries := func() int {
		t.Helper()
		it, err := idxTable.NewIter(nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		defer it.Close()
		n := 0
		for ok := it.First(); ok; ok = it.Next() {
			n++
		}
		return n
	}
	datums := func(id, u, v int64) []types.Datum { return []types.Datum{types.DInt(id), types.DInt(u), types.DInt(v)} }

	rec := writeRows(mem, row3(1, 10, 100), row3(2, 20, 200), row3(3, 30, 300))
	if err := w.ApplyBatch(ctx, NewBatch(rec, nil), out); err != nil {
		t.Fatal(err)
	}

	// One batch: update 1 (from its stored value), delete 2, insert 4, and
	// 4 again, replaced in the same batch.
	c := w.NewChanges()
	defer c.Release()
	v1, _, err := table.Get(state.AppendKeyDatum(nil, types.Int64T, types.DInt(1)))
	if err != nil {
		t.Fatal(err)
	}
	if err := c.AppendValue(v1, UpdateDelete); err != nil {
		t.Fatal(err)
	}
	c.AppendDatums(datums(1, 11, 101), UpdateInsert)
	c.AppendDatums(datums(2, 20, 200), Delete)
	c.AppendDatums(datums(4, 40, 400), Insert)
	c.AppendDatums(datums(4, 40, 400), UpdateDelete)
	c.AppendDatums(datums(4, 41, 401), UpdateInsert)
	if c.Len() != 6 {
		t.Fatalf("Len %d, want 6", c.Len())
	}
	if err := w.ApplyBatch(ctx, c.Batch(), out); err != nil {
		t.Fatal(err)
	}
	want := []string{"+ 1 11 101", "+ 3 30 300", "+ 4 41 401"}
	if got := stored(); !slices.Equal(got, want) {
		t.Fatalf("stored %v, want %v", got, want)
	}
	if n := entries(); n != 3 {
		t.Fatalf("%d index entries, want 3", n)
	}
	// An empty batch writes and emits nothing.
	if err := w.ApplyBatch(ctx, c.Batch(), out); err != nil {
		t.Fatal(err)
	}
	if err := w.Truncate(ctx, out); err != nil {
		t.Fatal(err)
	}
	if got := stored(); len(got) != 0 {
		t.Fatalf("stored %v after Truncate", got)
	}
	if n := entries(); n != 0 {
		t.Fatalf("%d index entries after Truncate", n)
	}
	if err := w.Truncate(ctx, out); err != nil {
		t.Fatal(err)
	}
	stream := []string{"+ 1 10 100", "+ 2 20 200", "+ 3 30 300",
		"U- 1 10 100", "U+ 1 11 101", "- 2 20 200", "+ 4 40 400", "U- 4 40 400", "U+ 4 41 401",
		"- 1 11 101", "- 3 30 300", "- 4 41 401"}
	if !slices.Equal(out.rows, stream) {
		t.Fatalf("change stream %v, want %v", out.rows, stream)
	}
}
