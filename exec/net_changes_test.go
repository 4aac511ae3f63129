//go:build cgo

package exec

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/streamsql/streamsql/barrier"
	"github.com/streamsql/streamsql/types"
)

// TestNetChangesOrderFree feeds NetChanges one epoch's changes of rows
// (key, value) in an order two actors can merge them in: the insert of a
// key's new row before the delete of its old one, and a row deleted by one
// actor and inserted again by another. What it emits at the barrier is the
// net change, deletes first, and the watermark after the rows.
func TestNetChangesOrderFree(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	ts := []types.T{types.Int64T, types.Int64T}
	batch := func(ops []Op, rows ...[2]int64) *Batch {
		var ks, vs []int64
		for _, r := range rows {
			ks, vs = append(ks, r[0]), append(vs, r[1])
		}
		k, v := int64Column(mem, ks), int64Column(mem, vs)
		defer k.Release()
		defer v.Release()
		return NewBatch(array2Record(ts, k, v), ops)
	}
	net := NewNetChanges(mem, ts)
	defer net.Close()
	var got []string
	out := OutputFunc(func(_ context.Context, m Message) error {
		switch {
		case m.Batch != nil:
			got = append(got, formatRows(m.Batch, ts, true)...)
			m.Batch.Release()
		case m.Watermark != nil:
			got = append(got, "watermark")
		}
		return nil
	})
	ctx := context.Background()
	in := &link{op: net, next: out}
	steps := []Message{
		// Actor b: key 1 moved to it with value 20.
		{Batch: batch([]Op{Insert}, [2]int64{1, 20})},
		{Watermark: &barrier.Watermark{Column: 1, Value: 5}},
		// Actor a: key 1 (value 10) left it; key 2 left a unchanged ...
		{Batch: batch([]Op{Delete, Delete}, [2]int64{1, 10}, [2]int64{2, 7})},
		// ... and arrived at b unchanged: no net change.
		{Batch: batch([]Op{Insert, Insert}, [2]int64{2, 7}, [2]int64{3, 1})},
		{Watermark: &barrier.Watermark{Column: 1, Value: 9}},
	}
	for _, m := range steps {
		if err := in.Emit(ctx, m); err != nil {
			t.Fatal(err)
		}
	}
	if len(got) != 0 {
		t.Fatalf("emitted before the barrier: %v", got)
	}
	if err := in.Emit(ctx, Message{Barrier: &barrier.Barrier{Epoch: 1}}); err != nil {
		t.Fatal(err)
	}
	want := []string{"- 1 10", "+ 1 20", "+ 3 1", "watermark"}
	if !slices.Equal(got, want) {
		t.Fatalf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// array2Record makes a record of columns of types ts.
func array2Record(ts []types.T, cols ...arrow.Array) arrow.RecordBatch {
	return array.NewRecordBatch(SchemaOf(ts), cols, int64(cols[0].Len()))
}
