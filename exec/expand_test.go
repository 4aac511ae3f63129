//go:build cgo

package exec

import (
	"context"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/streamsql/streamsql/types"
)

// TestExpand checks the copies Expand emits: count copies per row with
// ordinals 1..count, none for NULL or non-positive counts, the row's
// operation on each (updates as plain deletes and inserts), and output
// batches of at most BatchSize rows.
func TestExpand(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
	defer mem.AssertSize(t, 0)
	ts := []types.T{types.TextT, types.Int64T}
	bs := newBuilders(mem, ts)
	rows := []struct {
		v     string
		count types.Datum
		op    Op
	}{
		{"a", types.DInt(2), Insert},
		{"b", types.Null, Insert},
		{"c", types.DInt(0), Insert},
		{"d", types.DInt(-3), Insert},
		{"e", types.DInt(1), UpdateDelete},
		{"e", types.DInt(BatchSize + 1), UpdateInsert},
	}
	var ops []Op
	for _, r := range rows {
		types.AppendDatum(bs[0], types.TextT, types.DText(r.v))
		types.AppendDatum(bs[1], types.Int64T, r.count)
		ops = append(ops, r.op)
	}
	in := NewBatch(buildRecord(SchemaOf(ts), bs, len(rows)), ops)
	releaseBuilders(bs)

	var got []string
	var sizes []int
	out := OutputFunc(func(_ context.Context, m Message) error {
		defer m.Release()
		b := m.Batch
		sizes = append(sizes, b.Len())
		vals := b.Rec.Column(0).(*array.String)
		ords := b.Rec.Column(2).(*array.Int64)
		for i := 0; i < b.Len(); i++ {
			if ords.Value(i) <= 2 || ords.Value(i) > BatchSize {
				got = append(got, b.Ops[i].String()+vals.Value(i)+formatValue(types.Int64T, ords, i))
			}
		}
		return nil
	})
	x := NewExpand(mem, 1)
	defer x.Close()
	if err := x.OnBatch(context.Background(), in, out); err != nil {
		t.Fatal(err)
	}
	want := []string{"+a1", "+a2", "-e1", "+e1", "+e2", "+e1025"}
	if len(got) != len(want) {
		t.Fatalf("got %v, want %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("got %v, want %v", got, want)
		}
	}
	if len(sizes) != 2 || sizes[0] != BatchSize || sizes[1] != 4 {
		t.Fatalf("batch sizes %v, want [%d 4]", sizes, BatchSize)
	}
}
