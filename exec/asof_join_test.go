//go:build cgo

package exec

import (
	"context"
	"fmt"
	"math/rand"
	"sort"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/streamsql/streamsql/barrier"
	"github.com/streamsql/streamsql/ir"
	"github.com/streamsql/streamsql/state"
	"github.com/streamsql/streamsql/types"
)

// asofRow is a row of either side: (k, t, id); k and t may be NULL.
type asofRow struct {
	k, t *int64
	id   int64
}

func (r asofRow) String() string {
	f := func(p *int64) string {
		if p == nil {
			return "NULL"
		}
		return fmt.Sprint(*p)
	}
	return fmt.Sprintf("%s %s %d", f(r.k), f(r.t), r.id)
}

// expectedAsof computes the ASOF join of the current rows by brute force.
func expectedAsof(op string, outer bool, left, right []asofRow) []string {
	var out []string
	for _, l := range left {
		var best *asofRow
		for i := range right {
			r := &right[i]
			if l.k == nil || r.k == nil || l.t == nil || r.t == nil || *l.k != *r.k {
				continue
			}
			lt, rt := *l.t, *r.t
			var ok, better bool
			switch op {
			case ir.FnGe:
				ok = lt >= rt
				better = best == nil || rt > *best.t || (rt == *best.t && r.id > best.id)
			case ir.FnGt:
				ok = lt > rt
				better = best == nil || rt > *best.t || (rt == *best.t && r.id > best.id)
			case ir.FnLe:
				ok = lt <= rt
				better = best == nil || rt < *best.t || (rt == *best.t && r.id < best.id)
			case ir.FnLt:
				ok = lt < rt
				better = best == nil || rt < *best.t || (rt == *best.t && r.id < best.id)
			}
			if ok && better {
				best = r
			}
		}
		switch {
		case best != nil:
			out = append(out, l.String()+" "+best.String())
		case outer:
			out = append(out, l.String()+" NULL NULL NULL")
		}
	}
	sort.Strings(out)
	return out
}

// TestAsofJoinRandomized feeds random changes of both sides through an
// AsofJoin, restarting it from committed state now and then, and compares
// the net output with a brute-force ASOF join after every batch.
func TestAsofJoinRandomized(t *testing.T) {
	for _, op := range []string{ir.FnGe, ir.FnGt, ir.FnLe, ir.FnLt} {
		for _, outer := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/outer=%v", op, outer), func(t *testing.T) {
				for seed := int64(1); seed <= 8; seed++ {
					runAsofModel(t, op, outer, seed)
				}
			})
		}
	}
}

func runAsofModel(t *testing.T, op string, outer bool, seed int64) {
	mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
	defer mem.AssertSize(t, 0)
	rng := rand.New(rand.NewSource(seed))
	store, err := state.Open(":memory:", state.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	ts := []types.T{types.Int64T, types.Int64T, types.Int64T}
	spec := AsofJoinSpec{
		Types:      [2][]types.T{ts, ts},
		Keys:       [2][]int{{0}, {0}},
		KeyTypes:   []types.T{types.Int64T},
		Time:       [2]int{1, 1},
		TimeType:   types.Int64T,
		Op:         op,
		Outer:      outer,
		StreamKeys: [2][]int{{2}, {2}},
		Tables:     [2]*state.Table{store.Table(1), store.Table(2)},
	}
	j := NewAsofJoin(mem, spec)
	outTypes := append(append([]types.T{}, ts...), ts...)
	output := map[string]int{}
	collect := OutputFunc(func(_ context.Context, m Message) error {
		if m.Batch == nil {
			return nil
		}
		defer m.Release()
		for i, row := range formatRows(m.Batch, outTypes, false) {
			if m.Batch.Ops[i].IsInsert() {
				output[row]++
			} else if output[row]--; output[row] == 0 {
				delete(output, row)
			}
		}
		return nil
	})
	maybe := func(n int64) *int64 {
		if rng.Intn(8) == 0 {
			return nil
		}
		v := rng.Int63n(n)
		return &v
	}
	var sides [2][]asofRow
	nextID, epoch := int64(0), uint64(0)
	for step := 0; step < 60; step++ {
		s := rng.Intn(2)
		var ops []Op
		var rows []asofRow
		for n := 1 + rng.Intn(4); n > 0; n-- {
			if len(sides[s]) > 0 && rng.Intn(3) == 0 {
				i := rng.Intn(len(sides[s]))
				rows, ops = append(rows, sides[s][i]), append(ops, Delete)
				sides[s] = append(sides[s][:i], sides[s][i+1:]...)
				continue
			}
			nextID++
			r := asofRow{k: maybe(3), t: maybe(8), id: nextID}
			rows, ops = append(rows, r), append(ops, Insert)
			sides[s] = append(sides[s], r)
		}
		bs := newBuilders(mem, ts)
		for _, r := range rows {
			for c, p := range []*int64{r.k, r.t, &r.id} {
				if p == nil {
					bs[c].AppendNull()
				} else {
					types.AppendDatum(bs[c], types.Int64T, types.DInt(*p))
				}
			}
		}
		b := NewBatch(buildRecord(SchemaOf(ts), bs, len(rows)), ops)
		releaseBuilders(bs)
		if err := j.OnBatch(context.Background(), s, b, collect); err != nil {
			t.Fatal(err)
		}
		var got []string
		for row, n := range output {
			if n < 0 {
				t.Fatalf("seed %d step %d: row %q has multiplicity %d", seed, step, row, n)
			}
			for ; n > 0; n-- {
				got = append(got, row)
			}
		}
		sort.Strings(got)
		if want := expectedAsof(op, outer, sides[0], sides[1]); strings.Join(got, "\n") != strings.Join(want, "\n") {
			t.Fatalf("seed %d step %d: got\n%s\nwant\n%s", seed, step, strings.Join(got, "\n"), strings.Join(want, "\n"))
		}
		if rng.Intn(5) == 0 {
			epoch++
			if err := j.OnBarrier(context.Background(), &barrier.Barrier{Epoch: epoch}, collect); err != nil {
				t.Fatal(err)
			}
			if _, err := store.Commit(epoch); err != nil {
				t.Fatal(err)
			}
			// A new operator over the committed state goes on where this one
			// stopped.
			j.Close()
			j = NewAsofJoin(mem, spec)
		}
	}
	j.Close()
}
