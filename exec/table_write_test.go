package exec

import (
	"context"
	"errors"
	"slices"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/streamsql/streamsql/barrier"
	"github.com/streamsql/streamsql/catalog"
	"github.com/streamsql/streamsql/sqlerr"
	"github.com/streamsql/streamsql/state"
	"github.com/streamsql/streamsql/types"
)

// writeRel is t(id bigint primary key, u bigint unique, v bigint not null).
var writeRel = &catalog.Relation{ID: 1, Name: "t", Kind: catalog.Table, StateTable: 1, Key: []int{0}, PrimaryKey: true,
	Columns: []catalog.Column{{Name: "id", Type: types.Int64T}, {Name: "u", Type: types.Int64T}, {Name: "v", Type: types.Int64T, NotNull: true}},
	Indexes: []catalog.Index{{Name: "t_u_key", Columns: []int{1}, StateTable: 2, Unique: true}}}

// writeRows builds a record of writeRel's columns; a nil value is NULL.
func writeRows(mem memory.Allocator, rows ...[3]*int64) arrow.RecordBatch {
	bs := make([]array.Builder, 3)
	for i := range bs {
		bs[i] = array.NewInt64Builder(mem)
	}
	defer releaseBuilders(bs)
	for _, r := range rows {
		for c, v := range r {
			if v == nil {
				bs[c].AppendNull()
			} else {
				bs[c].(*array.Int64Builder).Append(*v)
			}
		}
	}
	return buildRecord(SchemaOf(writeRel.Types()), bs, len(rows))
}

func row3(id, u, v int64) [3]*int64 { return [3]*int64{i64(id), i64(u), i64(v)} }

// TestTableWrite runs statements through a TableWrite: the change stream
// each emits, the rows stored (read back through the state table), and the
// statements a constraint refuses, which must leave table and stream as
// they were.
func TestTableWrite(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	ctx := context.Background()
	store, err := state.Open(":memory:", state.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	table := store.Table(1)
	idx := NewIndexWriter(store.Table(2), writeRel.Indexes[0], writeRel.Types(), writeRel.Key)
	w := NewTableWrite(mem, writeRel, table, []*IndexWriter{idx}, nil)
	if !w.Serves(writeRel, table, []*IndexWriter{idx}) || w.Serves(writeRel, table, nil) {
		t.Fatal("Serves does not compare the indexes")
	}
	out := &collectRows{}
	stored := func() []string {
		t.Helper()
		rows := &collectRows{}
		if err := ScanTable(ctx, mem, table, writeRel.Types(), rows); err != nil {
			t.Fatal(err)
		}
		return rows.rows
	}
	stmt := func(name string, rows arrow.RecordBatch, run func([]arrow.RecordBatch) (int64, error)) error {
		t.Helper()
		defer rows.Release()
		_, err := run([]arrow.RecordBatch{rows})
		return err
	}
	insert := func(rows []arrow.RecordBatch) (int64, error) { return w.Insert(ctx, rows, out) }

	if err := stmt("insert", writeRows(mem, row3(3, 30, 300), row3(1, 10, 100), row3(2, 20, 200)), insert); err != nil {
		t.Fatal(err)
	}
	want := []string{"+ 1 10 100", "+ 2 20 200", "+ 3 30 300"}
	if got := stored(); !slices.Equal(got, want) {
		t.Fatalf("stored %v, want %v", got, want)
	}
	for _, tc := range []struct {
		name  string
		rows  arrow.RecordBatch
		state string
	}{
		{"stored key", writeRows(mem, row3(4, 40, 400), row3(2, 21, 201)), sqlerr.UniqueViolation},
		{"repeated key", writeRows(mem, row3(5, 50, 500), row3(5, 51, 501)), sqlerr.UniqueViolation},
		{"unique index", writeRows(mem, row3(6, 10, 600)), sqlerr.UniqueViolation},
		{"not null", writeRows(mem, [3]*int64{i64(7), i64(70), nil}), sqlerr.NotNullViolation},
	} {
		err := stmt(tc.name, tc.rows, insert)
		var se *sqlerr.Error
		if !errors.As(err, &se) || se.Code != tc.state {
			t.Fatalf("%s: %v, want SQLSTATE %s", tc.name, err, tc.state)
		}
	}
	if got := stored(); !slices.Equal(got, want) {
		t.Fatalf("after refused statements: stored %v, want %v", got, want)
	}

	// UPDATE: key 1 moves to 4, key 2 changes v; DELETE key 3.
	olds := []arrow.RecordBatch{writeRows(mem, row3(1, 10, 100), row3(2, 20, 200))}
	news := []arrow.RecordBatch{writeRows(mem, row3(4, 10, 100), row3(2, 20, 201))}
	if n, err := w.Update(ctx, olds, news, out); err != nil || n != 2 {
		t.Fatalf("update: %d rows, %v", n, err)
	}
	// Moving key 2 onto the stored key 4 is refused.
	clash := []arrow.RecordBatch{writeRows(mem, row3(4, 20, 201))}
	old2 := []arrow.RecordBatch{writeRows(mem, row3(2, 20, 201))}
	if _, err := w.Update(ctx, old2, clash, out); err == nil {
		t.Fatal("update onto a stored key succeeded")
	}
	dels := []arrow.RecordBatch{writeRows(mem, row3(3, 30, 300))}
	if n, err := w.Delete(ctx, dels, out); err != nil || n != 1 {
		t.Fatalf("delete: %d rows, %v", n, err)
	}
	for _, r := range slices.Concat(olds, news, clash, old2, dels) {
		r.Release()
	}
	want = []string{"+ 2 20 201", "+ 4 10 100"}
	if got := stored(); !slices.Equal(got, want) {
		t.Fatalf("stored %v, want %v", got, want)
	}
	stream := []string{"+ 3 30 300", "+ 1 10 100", "+ 2 20 200",
		"U- 1 10 100", "U+ 4 10 100", "U- 2 20 200", "U+ 2 20 201", "- 3 30 300"}
	if !slices.Equal(out.rows, stream) {
		t.Fatalf("change stream %v, want %v", out.rows, stream)
	}
	// The index follows the rows: u = 10 is free again only after its row
	// is gone, and a barrier seals both tables.
	if err := w.OnBarrier(ctx, &barrier.Barrier{Epoch: 1}, out); err != nil {
		t.Fatal(err)
	}
	if err := stmt("reuse u", writeRows(mem, row3(9, 30, 900)), insert); err != nil {
		t.Fatalf("u = 30 of the deleted row: %v", err)
	}
}

// TestTableWriteUpdateWritesChanges checks that an UPDATE writes only the
// rows and index entries it changes: a row set to its own values and the
// index entry of a row whose indexed column stays are not written again,
// while a changed indexed column and a moved key are, and rows and index
// read back right.
func TestTableWriteUpdateWritesChanges(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	ctx := context.Background()
	store, err := state.Open(":memory:", state.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	table := store.Table(1)
	idx := NewIndexWriter(store.Table(2), writeRel.Indexes[0], writeRel.Types(), writeRel.Key)
	w := NewTableWrite(mem, writeRel, table, []*IndexWriter{idx}, nil)
	out := &collectRows{}
	commit := func(epoch uint64) int {
		t.Helper()
		if err := w.OnBarrier(ctx, &barrier.Barrier{Epoch: epoch}, out); err != nil {
			t.Fatal(err)
		}
		stats, err := store.Commit(epoch)
		if err != nil {
			t.Fatal(err)
		}
		return stats.Keys
	}
	ins := writeRows(mem, row3(1, 10, 100), row3(2, 20, 200), row3(3, 30, 300), row3(4, 40, 400))
	defer ins.Release()
	if _, err := w.Insert(ctx, []arrow.RecordBatch{ins}, out); err != nil {
		t.Fatal(err)
	}
	commit(1)
	// 1: v changes (its row, not its entry); 2: unchanged (nothing); 3: u
	// changes (its row, the old entry's deletion and the new one); 4 moves
	// to 5 (both rows, both entries).
	olds := writeRows(mem, row3(1, 10, 100), row3(2, 20, 200), row3(3, 30, 300), row3(4, 40, 400))
	news := writeRows(mem, row3(1, 10, 101), row3(2, 20, 200), row3(3, 31, 300), row3(5, 40, 400))
	defer olds.Release()
	defer news.Release()
	if n, err := w.Update(ctx, []arrow.RecordBatch{olds}, []arrow.RecordBatch{news}, out); err != nil || n != 4 {
		t.Fatalf("update: %d rows, %v", n, err)
	}
	if keys := commit(2); keys != 1+0+3+4 {
		t.Errorf("the update wrote %d keys, want 8", keys)
	}
	rows := &collectRows{}
	if err := ScanTable(ctx, mem, table, writeRel.Types(), rows); err != nil {
		t.Fatal(err)
	}
	if want := []string{"+ 1 10 101", "+ 2 20 200", "+ 3 31 300", "+ 5 40 400"}; !slices.Equal(rows.rows, want) {
		t.Errorf("stored %v, want %v", rows.rows, want)
	}
	it, err := idx.Table.NewIter(nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer it.Close()
	var entries [][2]int64
	for ok := it.First(); ok; ok = it.Next() {
		u, rest, err := state.DecodeKeyDatum(it.Key(), types.Int64T)
		if err != nil {
			t.Fatal(err)
		}
		id, _, err := state.DecodeKeyDatum(rest, types.Int64T)
		if err != nil {
			t.Fatal(err)
		}
		entries = append(entries, [2]int64{u.I, id.I})
	}
	if want := [][2]int64{{10, 1}, {20, 2}, {31, 3}, {40, 5}}; !slices.Equal(entries, want) {
		t.Errorf("index entries %v, want %v", entries, want)
	}
}
