//go:build cgo

package exec

import (
	"context"
	"hash/maphash"
	"slices"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/streamsql/streamsql/barrier"
	"github.com/streamsql/streamsql/types"
)

// TestRowNetNoAllocPerRow adds a large batch of distinct rows, half of them
// deleted again, to Consolidate and NetChanges, a fresh epoch each run: once
// the netting core has grown to the batch, adding it allocates nothing per
// row.
func TestRowNetNoAllocPerRow(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	ts := []types.T{types.Int64T, types.Int64T}
	const rows = 1 << 14
	ks, vs := make([]int64, rows), make([]int64, rows)
	ops := make([]Op, rows)
	for i := range ks {
		ks[i], vs[i] = int64(i/2), int64(i%7)
		if i%2 == 1 {
			ks[i], vs[i], ops[i] = ks[i-1], vs[i-1], Delete
		}
	}
	k, v := int64Column(mem, ks), int64Column(mem, vs)
	rec := array2Record(ts, k, v)
	k.Release()
	v.Release()
	defer rec.Release()

	ctx := context.Background()
	for _, tc := range []struct {
		name string
		op   Operator
		net  *rowNet
	}{
		{"Consolidate", NewConsolidate(mem, ts), nil},
		{"NetChanges", NewNetChanges(mem, ts), nil},
	} {
		switch op := tc.op.(type) {
		case *Consolidate:
			tc.net = &op.net
		case *NetChanges:
			tc.net = &op.net
		}
		allocs := testing.AllocsPerRun(10, func() {
			tc.net.reset()
			rec.Retain()
			if err := tc.op.OnBatch(ctx, &Batch{Rec: rec, Ops: ops}, nil); err != nil {
				t.Fatal(err)
			}
		})
		if got := tc.net.len(); got != rows/2 {
			t.Fatalf("%s: %d distinct rows, want %d", tc.name, got, rows/2)
		}
		if allocs > 4 {
			t.Errorf("%s: %.0f allocations to net %d rows, want none per row", tc.name, allocs, rows)
		}
		tc.op.Close()
	}
}

// TestConsolidateNets feeds Consolidate inserts and deletes of the same rows
// across batches: at the barrier it emits each row as many times as it is
// present, in order of first appearance.
func TestConsolidateNets(t *testing.T) {
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
	c := NewConsolidate(mem, ts)
	defer c.Close()
	var got []string
	out := OutputFunc(func(_ context.Context, m Message) error {
		if m.Batch != nil {
			got = append(got, formatRows(m.Batch, ts, true)...)
			m.Batch.Release()
		}
		return nil
	})
	ctx := context.Background()
	in := &link{op: c, next: out}
	steps := []Message{
		{Batch: batch([]Op{Insert, Insert, Insert}, [2]int64{1, 1}, [2]int64{2, 2}, [2]int64{1, 1})},
		{Batch: batch([]Op{Delete, Insert, Delete}, [2]int64{2, 2}, [2]int64{3, 3}, [2]int64{4, 4})},
		{Batch: batch([]Op{Insert}, [2]int64{4, 4})},
		{Barrier: &barrier.Barrier{Epoch: 1}},
	}
	for _, m := range steps {
		if err := in.Emit(ctx, m); err != nil {
			t.Fatal(err)
		}
	}
	want := []string{"+ 1 1", "+ 1 1", "+ 3 3"}
	if !slices.Equal(got, want) {
		t.Fatalf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// TestRowNetHashChain makes two rows share a hash chain, as colliding
// hashes would: each is still found as itself.
func TestRowNetHashChain(t *testing.T) {
	r := newRowNet([]types.T{types.Int64T})
	a, b := []byte("row a"), []byte("row b")
	if j, fresh := r.find(a); j != 0 || !fresh {
		t.Fatalf("find(a) = %d, %v", j, fresh)
	}
	// b's hash leads to a's row, which heads the chain b must walk.
	r.heads[maphash.Bytes(r.seed, b)] = 0
	if j, fresh := r.find(b); j != 1 || !fresh {
		t.Fatalf("find(b) = %d, %v; want a new row 1", j, fresh)
	}
	// a's hash now leads to b's row first: a is the chain's second row.
	r.heads[maphash.Bytes(r.seed, a)] = 1
	for _, c := range []struct {
		k    []byte
		want int32
	}{{a, 0}, {b, 1}} {
		if j, fresh := r.find(c.k); j != c.want || fresh {
			t.Errorf("find(%s) = %d, %v; want %d, seen", c.k, j, fresh, c.want)
		}
		if got := r.row(int(c.want)); string(got) != string(c.k) {
			t.Errorf("row %d = %q, want %q", c.want, got, c.k)
		}
	}
	r.reset()
	if j, fresh := r.find(b); j != 0 || !fresh || r.len() != 1 {
		t.Fatalf("after reset: find(b) = %d, %v, %d rows", j, fresh, r.len())
	}
}
