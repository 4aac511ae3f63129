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
	"github.com/streamsql/streamsql/exec/eval"
	"github.com/streamsql/streamsql/ir"
	"github.com/streamsql/streamsql/state"
	"github.com/streamsql/streamsql/types"
)

// joinRow is a row of either side: (k, id, v); k may be NULL.
type joinRow struct {
	k     *int64
	id, v int64
}

func (r joinRow) String() string {
	k := "NULL"
	if r.k != nil {
		k = fmt.Sprint(*r.k)
	}
	return fmt.Sprintf("%s %d %d", k, r.id, r.v)
}

const nullRow = "NULL NULL NULL"

// expectedJoin computes the join of the current rows by brute force.
func expectedJoin(typ ir.JoinType, left, right []joinRow, cond bool) []string {
	match := func(l, r joinRow) bool {
		return l.k != nil && r.k != nil && *l.k == *r.k && (!cond || l.v < r.v)
	}
	var out []string
	rightMatched := make([]bool, len(right))
	rightHasNull := false
	for _, r := range right {
		if r.k == nil {
			rightHasNull = true
		}
	}
	for _, l := range left {
		n := 0
		for ri, r := range right {
			if match(l, r) {
				n++
				rightMatched[ri] = true
				if typ.KeepsRight() {
					out = append(out, l.String()+" "+r.String())
				}
			}
		}
		switch typ {
		case ir.LeftJoin, ir.FullJoin:
			if n == 0 {
				out = append(out, l.String()+" "+nullRow)
			}
		case ir.SemiJoin:
			if n > 0 {
				out = append(out, l.String())
			}
		case ir.AntiJoin:
			if n == 0 {
				out = append(out, l.String())
			}
		case ir.NullAwareAntiJoin:
			if len(right) == 0 || (l.k != nil && !rightHasNull && n == 0) {
				out = append(out, l.String())
			}
		}
	}
	if typ == ir.RightJoin || typ == ir.FullJoin {
		for ri, r := range right {
			if !rightMatched[ri] {
				out = append(out, nullRow+" "+r.String())
			}
		}
	}
	sort.Strings(out)
	return out
}

// TestHashJoinRandomized applies random inserts and deletes (NULL and
// duplicate keys included) to both inputs of every join type, with and
// without a non-equi condition and with restarts, and checks after every
// batch that the accumulated output equals a brute-force join.
func TestHashJoinRandomized(t *testing.T) {
	for _, typ := range []ir.JoinType{ir.InnerJoin, ir.LeftJoin, ir.RightJoin, ir.FullJoin, ir.SemiJoin, ir.AntiJoin, ir.NullAwareAntiJoin} {
		for _, cond := range []bool{false, true} {
			if cond && typ == ir.NullAwareAntiJoin {
				continue
			}
			t.Run(fmt.Sprintf("%s/cond=%v", typ, cond), func(t *testing.T) {
				for seed := int64(1); seed <= 5; seed++ {
					runJoinModel(t, typ, cond, seed)
				}
			})
		}
	}
}

func runJoinModel(t *testing.T, typ ir.JoinType, cond bool, seed int64) {
	mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
	defer mem.AssertSize(t, 0)
	rng := rand.New(rand.NewSource(seed))
	store, err := state.Open(":memory:", state.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	ts := []types.T{types.Int64T, types.Int64T, types.Int64T}
	spec := HashJoinSpec{
		Type:       typ,
		Types:      [2][]types.T{ts, ts},
		Keys:       [2][]int{{0}, {0}},
		KeyTypes:   []types.T{types.Int64T},
		StreamKeys: [2][]int{{1}, {1}},
		Tables:     [2]*state.Table{store.Table(1), store.Table(2)},
	}
	if cond {
		ev, err := eval.Compile(&ir.Call{Fn: ir.FnLt, T: types.BoolT, Args: []ir.Expr{
			&ir.InputRef{Index: 2, T: types.Int64T}, &ir.InputRef{Index: 5, T: types.Int64T}}})
		if err != nil {
			t.Fatal(err)
		}
		spec.Cond = ev
	}
	ectx := &eval.Context{Mem: mem, Strict: true}
	j := NewHashJoin(mem, ectx, spec)
	outTypes := j.OutputTypes()
	output := map[string]int{}
	collect := OutputFunc(func(_ context.Context, m Message) error {
		if m.Batch == nil {
			return nil
		}
		defer m.Release()
		for i, row := range formatRows(m.Batch, outTypes, false) {
			if m.Batch.Ops[i].IsInsert() {
				output[row]++
			} else {
				output[row]--
				if output[row] == 0 {
					delete(output, row)
				}
			}
		}
		return nil
	})
	var sides [2][]joinRow
	nextID := int64(0)
	epoch := uint64(0)
	for step := 0; step < 40; step++ {
		s := rng.Intn(2)
		var ops []Op
		var rows []joinRow
		for n := 1 + rng.Intn(4); n > 0; n-- {
			if len(sides[s]) > 0 && rng.Intn(3) == 0 {
				i := rng.Intn(len(sides[s]))
				rows = append(rows, sides[s][i])
				ops = append(ops, Delete)
				sides[s] = append(sides[s][:i], sides[s][i+1:]...)
				continue
			}
			nextID++
			r := joinRow{id: nextID, v: rng.Int63n(10)}
			if rng.Intn(5) > 0 {
				k := rng.Int63n(4)
				r.k = &k
			}
			rows = append(rows, r)
			ops = append(ops, Insert)
			sides[s] = append(sides[s], r)
		}
		bs := newBuilders(mem, ts)
		for _, r := range rows {
			if r.k == nil {
				bs[0].AppendNull()
			} else {
				types.AppendDatum(bs[0], types.Int64T, types.DInt(*r.k))
			}
			types.AppendDatum(bs[1], types.Int64T, types.DInt(r.id))
			types.AppendDatum(bs[2], types.Int64T, types.DInt(r.v))
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
		want := expectedJoin(typ, sides[0], sides[1], cond)
		if strings.Join(got, "\n") != strings.Join(want, "\n") {
			t.Fatalf("seed %d step %d (side %d):\ngot:\n%s\nwant:\n%s", seed, step, s, strings.Join(got, "\n"), strings.Join(want, "\n"))
		}
		if rng.Intn(5) == 0 {
			epoch++
			if err := j.OnBarrier(context.Background(), &barrier.Barrier{Epoch: epoch}, collect); err != nil {
				t.Fatal(err)
			}
			if _, err := store.Commit(epoch); err != nil {
				t.Fatal(err)
			}
			if rng.Intn(2) == 0 {
				// Restart: a new operator over the committed state.
				j = NewHashJoin(mem, ectx, spec)
			}
		}
	}
}
