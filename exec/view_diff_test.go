package exec

import (
	"context"
	"fmt"
	"maps"
	"math/rand/v2"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/streamsql/streamsql/state"
	"github.com/streamsql/streamsql/types"
)

// TestEmitViewDiff stores two random versions of a view's rows (k, v) keyed
// by k and checks that the difference EmitViewDiff emits turns the first
// into the second, changes only what differs, pairs the two versions of a
// changed row, and releases its memory.
func TestEmitViewDiff(t *testing.T) {
	for _, seed := range []uint64{1, 2, 3} {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(seed, 0))
			mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
			store, err := state.Open(":memory:", state.Options{})
			if err != nil {
				t.Fatal(err)
			}
			defer store.Close()
			ts := []types.T{types.Int64T, types.Int64T}
			codec := state.NewRowCodec(ts)
			from, to := map[int64]int64{}, map[int64]int64{}
			for k := int64(0); k < 5000; k++ {
				switch rng.IntN(4) {
				case 0:
					from[k] = k % 10
				case 1:
					to[k] = k % 10
				case 2:
					from[k], to[k] = k%10, k%10
				default:
					from[k], to[k] = k%10, k%10+1
				}
			}
			put := func(id state.TableID, rows map[int64]int64) {
				tab := store.Table(id)
				for k, v := range rows {
					key := state.AppendKeyDatum(nil, types.Int64T, types.DInt(k))
					tab.Put(key, codec.AppendDatums(nil, []types.Datum{types.DInt(k), types.DInt(v)}))
				}
				tab.Seal(1)
			}
			put(1, from)
			put(2, to)
			if _, err := store.Commit(1); err != nil {
				t.Fatal(err)
			}
			snap := store.Snapshot()
			defer snap.Release()
			var got diffRows
			if err := EmitViewDiff(context.Background(), mem, snap, 1, 2, ts, &got); err != nil {
				t.Fatal(err)
			}
			rows := maps.Clone(from)
			changes := 0
			for i, c := range got {
				changes++
				switch c.op {
				case Delete:
					if rows[c.k] != c.v {
						t.Fatalf("delete of %d %d, which holds %d", c.k, c.v, rows[c.k])
					}
					delete(rows, c.k)
				case Insert:
					rows[c.k] = c.v
				case UpdateDelete:
					if i+1 == len(got) || got[i+1].op != UpdateInsert || got[i+1].k != c.k || got[i+1].batch != c.batch {
						t.Fatalf("update of %d without its new version in the same batch", c.k)
					}
				case UpdateInsert:
					rows[c.k] = c.v
				}
			}
			if !maps.Equal(rows, to) {
				t.Fatal("the difference does not turn the old rows into the new")
			}
			want := 0
			for k, v := range from {
				if w, ok := to[k]; !ok {
					want++
				} else if w != v {
					want += 2
				}
			}
			for k := range to {
				if _, ok := from[k]; !ok {
					want++
				}
			}
			if changes != want {
				t.Fatalf("%d changes, want %d", changes, want)
			}
			mem.AssertSize(t, 0)
		})
	}
}

type diffRow struct {
	op    Op
	k, v  int64
	batch int
}

// diffRows collects the changes of (k, v) batches, numbering the batches.
type diffRows []diffRow

func (d *diffRows) Emit(_ context.Context, m Message) error {
	if m.Batch == nil {
		return nil
	}
	defer m.Batch.Release()
	n := 0
	if len(*d) > 0 {
		n = (*d)[len(*d)-1].batch + 1
	}
	k, v := m.Batch.Rec.Column(0).(*array.Int64), m.Batch.Rec.Column(1).(*array.Int64)
	for i, op := range m.Batch.Ops {
		*d = append(*d, diffRow{op: op, k: k.Value(i), v: v.Value(i), batch: n})
	}
	return nil
}
