//go:build cgo

package exec

import (
	"context"
	"fmt"
	"math/rand"
	"slices"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/streamsql/streamsql/barrier"
	"github.com/streamsql/streamsql/exec/eval"
	"github.com/streamsql/streamsql/ir"
	"github.com/streamsql/streamsql/memlimit"
	"github.com/streamsql/streamsql/state"
	"github.com/streamsql/streamsql/types"
)

// TestHashAggEviction runs the same random change stream (inserts and
// deletes over 30 groups; count, sum, min, max and count DISTINCT) through a
// HashAgg that may cache only 3 groups, one whose cache's share of the
// operator caches' pool holds about 3 groups, and one that caches them all, with
// commits and restarts at random barriers: both emit exactly the same
// changes at every barrier, and their accumulated output equals the
// aggregation of the current rows computed by brute force.
func TestHashAggEviction(t *testing.T) {
	for seed := int64(1); seed <= 10; seed++ {
		t.Run(fmt.Sprint(seed), func(t *testing.T) { runAggEviction(t, seed) })
	}
}

func runAggEviction(t *testing.T, seed int64) {
	mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
	defer mem.AssertSize(t, 0)
	rng := rand.New(rand.NewSource(seed))
	ts := []types.T{types.Int64T, types.Int64T, types.Int64T} // g, id, v
	calls := []ir.AggCall{
		{Func: ir.AggCountStar, T: types.Int64T},
		{Func: ir.AggSum, T: types.NumericT},
		{Func: ir.AggMin, T: types.Int64T},
		{Func: ir.AggMax, T: types.Int64T},
		{Func: ir.AggCount, Distinct: true, T: types.Int64T},
	}
	ectx := &eval.Context{Mem: mem, Strict: true}
	type instance struct {
		store *state.Store
		spec  HashAggSpec
		agg   *HashAgg
		out   map[string]int
		epoch []string
	}
	newInstance := func(cache int, pool *memlimit.Pool) *instance {
		store, err := state.Open(":memory:", state.Options{})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { store.Close() })
		in := &instance{store: store, out: map[string]int{}, spec: HashAggSpec{
			GroupCols: []int{0}, GroupTypes: []types.T{types.Int64T},
			Calls: calls, ArgCols: []int{-1, 2, 2, 2, 2}, ArgTypes: []types.T{{}, types.Int64T, types.Int64T, types.Int64T, types.Int64T},
			FilterCols: []int{-1, -1, -1, -1, -1},
			Result:     store.Table(1),
			ValueSets:  []*state.Table{nil, nil, store.Table(2), store.Table(3), store.Table(4)},
			InputKey:   []int{1}, InputKeyTypes: []types.T{types.Int64T},
			CacheGroups: cache,
			CachePool:   pool,
		}}
		return in
	}
	pool := memlimit.NewPool("operator_caches", int64(3*(groupOverhead+2*9+30+aggSlotBytes*len(calls))))
	instances := []*instance{newInstance(3, nil), newInstance(0, nil), newInstance(0, pool)}
	defer func() {
		for _, in := range instances {
			in.agg.Close()
		}
		if pool.Used() != 0 {
			t.Errorf("%d bytes left in the pool after Close", pool.Used())
		}
	}()
	start := func(in *instance) {
		if in.agg != nil {
			in.agg.Close()
		}
		a, err := NewHashAgg(mem, ectx, in.spec)
		if err != nil {
			t.Fatal(err)
		}
		in.agg = a
	}
	outTypes := append([]types.T{types.Int64T}, callTypes(calls)...)
	collect := func(in *instance) Output {
		return OutputFunc(func(_ context.Context, m Message) error {
			if m.Batch == nil {
				return nil
			}
			defer m.Release()
			for i, row := range formatRows(m.Batch, outTypes, false) {
				in.epoch = append(in.epoch, fmt.Sprintf("%v %s", m.Batch.Ops[i].IsInsert(), row))
				if m.Batch.Ops[i].IsInsert() {
					in.out[row]++
				} else if in.out[row]--; in.out[row] == 0 {
					delete(in.out, row)
				}
			}
			return nil
		})
	}
	for _, in := range instances {
		start(in)
	}
	type row struct{ g, id, v int64 }
	var rows []row
	nextID := int64(0)
	epoch := uint64(0)
	for step := 0; step < 300; step++ {
		var ops []Op
		var batch []row
		for n := 1 + rng.Intn(6); n > 0; n-- {
			if len(rows) > 0 && rng.Intn(3) == 0 {
				i := rng.Intn(len(rows))
				batch, ops = append(batch, rows[i]), append(ops, Delete)
				rows = append(rows[:i], rows[i+1:]...)
				continue
			}
			nextID++
			r := row{g: rng.Int63n(30), id: nextID, v: rng.Int63n(8)}
			batch, ops = append(batch, r), append(ops, Insert)
			rows = append(rows, r)
		}
		for _, in := range instances {
			bs := newBuilders(mem, ts)
			for _, r := range batch {
				types.AppendDatum(bs[0], types.Int64T, types.DInt(r.g))
				types.AppendDatum(bs[1], types.Int64T, types.DInt(r.id))
				types.AppendDatum(bs[2], types.Int64T, types.DInt(r.v))
			}
			b := NewBatch(buildRecord(SchemaOf(ts), bs, len(batch)), slices.Clone(ops))
			releaseBuilders(bs)
			if err := in.agg.OnBatch(context.Background(), b, collect(in)); err != nil {
				t.Fatal(err)
			}
		}
		if rng.Intn(3) > 0 {
			continue
		}
		epoch++
		commit, restart := rng.Intn(2) == 0, rng.Intn(4) == 0
		for _, in := range instances {
			in.epoch = in.epoch[:0]
			if err := in.agg.OnBarrier(context.Background(), &barrier.Barrier{Epoch: epoch}, collect(in)); err != nil {
				t.Fatal(err)
			}
			slices.Sort(in.epoch)
			if commit || restart {
				if _, err := in.store.Commit(epoch); err != nil {
					t.Fatal(err)
				}
			}
			if restart {
				start(in)
			}
		}
		if got, want := strings.Join(instances[0].epoch, "\n"), strings.Join(instances[1].epoch, "\n"); got != want {
			t.Fatalf("seed %d epoch %d: with eviction:\n%s\nwithout:\n%s", seed, epoch, got, want)
		}
		if got, want := strings.Join(instances[2].epoch, "\n"), strings.Join(instances[1].epoch, "\n"); got != want {
			t.Fatalf("seed %d epoch %d: with eviction by bytes:\n%s\nwithout:\n%s", seed, epoch, got, want)
		}
		if n := len(instances[0].agg.groups); n > 3 {
			t.Fatalf("seed %d epoch %d: %d groups cached, limit 3", seed, epoch, n)
		}
		if pool.Used() > pool.Share() {
			t.Fatalf("seed %d epoch %d: %d bytes cached, share %d", seed, epoch, pool.Used(), pool.Share())
		}
		if n := len(instances[2].agg.groups); n > 6 {
			t.Fatalf("seed %d epoch %d: %d groups cached in %d bytes", seed, epoch, n, pool.Share())
		}
		// The accumulated output is the aggregation of the current rows.
		var want []string
		byGroup := map[int64][]int64{}
		for _, r := range rows {
			byGroup[r.g] = append(byGroup[r.g], r.v)
		}
		for g, vs := range byGroup {
			sum := int64(0)
			for _, v := range vs {
				sum += v
			}
			distinct := slices.Compact(slices.Sorted(slices.Values(vs)))
			want = append(want, fmt.Sprintf("%d %d %d %d %d %d", g, len(vs), sum, slices.Min(vs), slices.Max(vs), len(distinct)))
		}
		var got []string
		for r, n := range instances[0].out {
			for ; n > 0; n-- {
				got = append(got, r)
			}
		}
		slices.Sort(want)
		slices.Sort(got)
		if strings.Join(got, "\n") != strings.Join(want, "\n") {
			t.Fatalf("seed %d epoch %d: output\n%s\nwant\n%s", seed, epoch, strings.Join(got, "\n"), strings.Join(want, "\n"))
		}
	}
	// max(v) reads min(v)'s value set: its own stays empty.
	for _, in := range instances {
		it, err := in.spec.ValueSets[3].NewIter(nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		if it.First() {
			t.Errorf("seed %d: max(v) wrote its own value set (key %x)", seed, it.Key())
		}
		it.Close()
	}
}
