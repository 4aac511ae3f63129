package exec

import (
	"fmt"
	"math"
	"math/rand"
	"slices"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/streamsql/streamsql/ir"
	"github.com/streamsql/streamsql/state"
	"github.com/streamsql/streamsql/types"
)

// moreAggCase is one aggregate under TestMoreAggRetraction and its result
// recomputed from a group's current values.
type moreAggCase struct {
	call ir.AggCall
	want func(vs []int64) types.Datum
}

func bitsOf(vs []int64, fn func(acc, v int64) int64) types.Datum {
	if len(vs) == 0 {
		return types.Null
	}
	acc := vs[0]
	for _, v := range vs[1:] {
		acc = fn(acc, v)
	}
	return types.DInt(acc)
}

func moreAggCases() []moreAggCase {
	order := func(desc bool) []ir.AggOrder { return []ir.AggOrder{{Desc: desc}} }
	return []moreAggCase{
		{ir.AggCall{Func: ir.AggBitAnd, T: types.Int64T}, func(vs []int64) types.Datum {
			return bitsOf(vs, func(a, v int64) int64 { return a & v })
		}},
		{ir.AggCall{Func: ir.AggBitOr, T: types.Int64T}, func(vs []int64) types.Datum {
			return bitsOf(vs, func(a, v int64) int64 { return a | v })
		}},
		{ir.AggCall{Func: ir.AggBitXor, T: types.Int64T}, func(vs []int64) types.Datum {
			return bitsOf(vs, func(a, v int64) int64 { return a ^ v })
		}},
		{ir.AggCall{Func: ir.AggMode, T: types.Int64T, OrderBy: order(true)}, func(vs []int64) types.Datum {
			if len(vs) == 0 {
				return types.Null
			}
			counts := map[int64]int{}
			best := int64(math.MinInt64)
			for _, v := range vs {
				counts[v]++
			}
			for v, n := range counts {
				// The most frequent, the largest among equals (DESC).
				if n > counts[best] || n == counts[best] && v > best {
					best = v
				}
			}
			return types.DInt(best)
		}},
		{ir.AggCall{Func: ir.AggPercentileDisc, T: types.ArrayOf(types.Int64T), Direct: []float64{0, 0.3, 1, -1}, OrderBy: order(false)}, func(vs []int64) types.Datum {
			if len(vs) == 0 {
				return types.Null
			}
			s := slices.Sorted(slices.Values(vs))
			at := func(f float64) types.Datum {
				return types.DInt(s[max(int(math.Ceil(f*float64(len(s)))), 1)-1])
			}
			return types.Datum{Arr: []types.Datum{at(0), at(0.3), at(1), types.Null}}
		}},
	}
}

// TestMoreAggRetraction applies random inserts and deletes of integers to
// bit_and, bit_or, bit_xor, mode and percentile_disc over a few groups,
// reloading each aggregator from its appended state now and then, and
// checks every group's result against one recomputed from its values.
func TestMoreAggRetraction(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
	defer mem.AssertSize(t, 0)
	store, err := state.Open(":memory:", state.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	const groups = 4
	groupKey := func(slot int32) []byte { return state.AppendKeyDatum(nil, types.Int32T, types.DInt(int64(slot))) }
	cases := moreAggCases()
	for ci, c := range cases {
		t.Run(c.call.Func, func(t *testing.T) {
			set := store.Table(state.TableID(100 + ci))
			build := func() aggregator {
				a, err := newAggregator(c.call, types.Int64T, set, groupKey, nil)
				if err != nil {
					t.Fatal(err)
				}
				a.grow(groups)
				return a
			}
			agg := build()
			rng := rand.New(rand.NewSource(int64(ci + 1)))
			vals := make([][]int64, groups)
			for step := 0; step < 300; step++ {
				var batch []int64
				var slots []int32
				var signs []int8
				for n := 1 + rng.Intn(5); n > 0; n-- {
					g := int32(rng.Intn(groups))
					if len(vals[g]) > 0 && rng.Intn(3) == 0 {
						i := rng.Intn(len(vals[g]))
						batch, slots, signs = append(batch, vals[g][i]), append(slots, g), append(signs, -1)
						vals[g] = append(vals[g][:i], vals[g][i+1:]...)
						continue
					}
					v := rng.Int63n(64) - 16
					if rng.Intn(5) == 0 {
						v <<= 40
					}
					batch, slots, signs = append(batch, v), append(slots, g), append(signs, 1)
					vals[g] = append(vals[g], v)
				}
				col := int64Column(mem, batch)
				if err := agg.update(col, slots, signs); err != nil {
					t.Fatal(err)
				}
				col.Release()
				if rng.Intn(4) == 0 {
					// Reload every group from its state.
					fresh := build()
					for g := int32(0); g < groups; g++ {
						buf := agg.appendState(nil, g)
						if rest, err := fresh.loadState(buf, g); err != nil || len(rest) != 0 {
							t.Fatalf("loadState: %v, %d bytes left", err, len(rest))
						}
					}
					agg = fresh
				}
				for g := int32(0); g < groups; g++ {
					got, err := agg.result(g)
					if err != nil {
						t.Fatal(err)
					}
					want := c.want(vals[g])
					if fmt.Sprint(got) != fmt.Sprint(want) {
						t.Fatalf("step %d group %d over %v: got %v, want %v", step, g, vals[g], got, want)
					}
				}
			}
		})
	}
}

func int64Column(mem memory.Allocator, vs []int64) arrow.Array {
	b := array.NewInt64Builder(mem)
	defer b.Release()
	b.AppendValues(vs, nil)
	return b.NewArray()
}

// TestRegrRetraction checks that retracting pairs, a NaN among them, brings
// the regression sums back to those of the remaining pairs.
func TestRegrRetraction(t *testing.T) {
	rng := rand.New(rand.NewSource(7))
	for _, fn := range []string{ir.AggCorr, ir.AggRegrSlope, ir.AggRegrIntercept, ir.AggRegrSxx, ir.AggRegrAvgY, ir.AggCovarSamp, ir.AggRegrCount} {
		a := &regrAgg{fn: fn}
		a.grow(1)
		type pair struct{ y, x float64 }
		var live []pair
		for step := 0; step < 200; step++ {
			if len(live) > 0 && rng.Intn(3) == 0 {
				i := rng.Intn(len(live))
				a.add(0, -1, live[i].y, live[i].x)
				live = append(live[:i], live[i+1:]...)
			} else {
				p := pair{float64(rng.Intn(200))/4 - 10, float64(rng.Intn(100)) / 2}
				if rng.Intn(20) == 0 {
					p.y = math.NaN()
				}
				a.add(0, 1, p.y, p.x)
				live = append(live, p)
			}
			fresh := &regrAgg{fn: fn}
			fresh.grow(1)
			for _, p := range live {
				fresh.add(0, 1, p.y, p.x)
			}
			got, _ := a.result(0)
			want, _ := fresh.result(0)
			if !closeDatum(got, want) {
				t.Fatalf("%s step %d over %v: got %v, want %v", fn, step, live, got, want)
			}
		}
	}
}

func closeDatum(a, b types.Datum) bool {
	if a.Null || b.Null {
		return a.Null == b.Null
	}
	if a.I != b.I {
		return false
	}
	if math.IsNaN(a.F) || math.IsNaN(b.F) {
		return math.IsNaN(a.F) && math.IsNaN(b.F)
	}
	return math.Abs(a.F-b.F) <= 1e-6*math.Max(1, math.Abs(b.F))
}
