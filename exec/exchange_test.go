package exec

import (
	"context"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/streamsql/streamsql/barrier"
	"github.com/streamsql/streamsql/state"
	"github.com/streamsql/streamsql/types"
)

// An exchange sends each row to the owner of its key's virtual node, keeps
// the rows' order per output, splits update pairs whose halves part, and
// sends barriers to every output once.
func TestExchangeRoutesByVirtualNode(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
	defer mem.AssertSize(t, 0)
	ctx := context.Background()
	const n = 3
	outs := make([]chan Message, n)
	for i := range outs {
		outs[i] = make(chan Message, 8)
	}
	x := NewExchange(mem, []int{0}, []types.T{types.Int64T}, outs)
	var rows [][3]*int64
	var ops []Op
	for k := int64(0); k < 40; k++ {
		rows = append(rows, [3]*int64{i64(k % 10), i64(k), nil})
		ops = append(ops, Insert)
	}
	// An update pair moving row 40 from key 1 to key 2.
	rows = append(rows, [3]*int64{i64(1), i64(40), nil}, [3]*int64{i64(2), i64(40), nil})
	ops = append(ops, UpdateDelete, UpdateInsert)
	if err := x.Emit(ctx, Message{Batch: NewBatch(int64Record(mem, rows), ops)}); err != nil {
		t.Fatal(err)
	}
	b := &barrier.Barrier{Epoch: 5}
	if err := x.Emit(ctx, Message{Barrier: b}); err != nil {
		t.Fatal(err)
	}
	if err := x.ForwardBarrier(ctx, b); err != nil { // already sent: no-op
		t.Fatal(err)
	}
	owner := func(k int64) int {
		bs := newBuilders(mem, []types.T{types.Int64T})
		defer releaseBuilders(bs)
		bs[0].(*array.Int64Builder).Append(k)
		col := bs[0].NewArray()
		defer col.Release()
		return state.VNodeOwner(state.VNode(state.AppendKey(nil, types.Int64T, col, 0)), n)
	}
	pairs := owner(1) == owner(2)
	total := 0
	for i, ch := range outs {
		last := int64(-1)
		for got := false; !got; {
			m := <-ch
			switch {
			case m.Barrier != nil:
				if m.Barrier.Epoch != 5 {
					t.Fatalf("output %d: barrier %d", i, m.Barrier.Epoch)
				}
				got = true
			case m.Batch != nil:
				keys := m.Batch.Rec.Column(0).(*array.Int64)
				ids := m.Batch.Rec.Column(1).(*array.Int64)
				for r := 0; r < m.Batch.Len(); r++ {
					if o := owner(keys.Value(r)); o != i {
						t.Fatalf("key %d went to %d, owned by %d", keys.Value(r), i, o)
					}
					if ids.Value(r) < last {
						t.Fatalf("output %d: row %d after %d", i, ids.Value(r), last)
					}
					last = ids.Value(r)
					if op := m.Batch.Ops[r]; ids.Value(r) == 40 {
						if want := map[bool]bool{true: op == UpdateDelete || op == UpdateInsert, false: op == Delete || op == Insert}; !want[pairs] {
							t.Fatalf("update half as %v (pair kept together: %v)", op, pairs)
						}
					}
				}
				total += m.Batch.Len()
				m.Batch.Release()
			}
		}
		select {
		case m := <-ch:
			t.Fatalf("output %d: extra message %+v", i, m)
		default:
		}
	}
	if total != len(rows) {
		t.Fatalf("%d rows out of %d", total, len(rows))
	}
	x.Close()
}

// An exchange by no columns (the view of an ungrouped aggregate, at most one
// row) sends every row to the owner of the empty key's virtual node.
func TestExchangeEmptyKey(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
	defer mem.AssertSize(t, 0)
	const n = 4
	p := newPartitioner(nil, nil, n)
	rows := [][3]*int64{{i64(1), nil, nil}, {i64(2), nil, nil}, {nil, nil, nil}}
	rec := int64Record(mem, rows)
	defer rec.Release()
	want := int32(state.VNodeOwner(state.VNode(nil), n))
	owners := p.owners(rec)
	if len(owners) != len(rows) {
		t.Fatalf("%d owners for %d rows", len(owners), len(rows))
	}
	for r, o := range owners {
		if o != want {
			t.Fatalf("row %d to actor %d, want %d", r, o, want)
		}
	}
}
