//go:build cgo

package exec

import (
	"context"
	"fmt"
	"math"
	"math/big"
	"math/rand"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/cespare/xxhash/v2"
	"github.com/streamsql/streamsql/barrier"
	"github.com/streamsql/streamsql/exec/eval"
	"github.com/streamsql/streamsql/ir"
	"github.com/streamsql/streamsql/state"
	"github.com/streamsql/streamsql/types"
)

// retractRow is an input row of TestAggRetraction: group g, stream key id,
// and one column per aggregate input. Pointers are NULL when nil.
type retractRow struct {
	g, id int64
	v     *int64
	cents *int64 // numeric(10,2)
	f     *float64
	b     *bool
	s     *string
	o     int64
}

// retractTypes are the input columns: the row's columns g, id, v, n, f, b,
// s, o, then the constant delimiters ',' and '|' and the filter b IS TRUE.
var retractTypes = []types.T{
	types.Int64T, types.Int64T, types.Int64T, types.NumericOf(10, 2),
	types.Float64T, types.BoolT, types.TextT, types.Int64T,
	types.TextT, types.TextT, types.BoolT,
}

func ref(col int) *ir.InputRef {
	return &ir.InputRef{Index: col, T: retractTypes[col]}
}

// retractCalls are the aggregates under test, over columns g, id, v, n, f,
// b, s, o (0..7), with their argument and FILTER columns.
func retractCalls() ([]ir.AggCall, []int, []int) {
	sep := func(col int) []ir.Expr { return []ir.Expr{ref(col)} }
	calls := []ir.AggCall{
		{Func: ir.AggCountStar, T: types.Int64T},
		{Func: ir.AggBoolAnd, T: types.BoolT},
		{Func: ir.AggBoolOr, T: types.BoolT},
		{Func: ir.AggVarSamp, T: types.NumericT},
		{Func: ir.AggStddevPop, T: types.NumericT},
		{Func: ir.AggVarSamp, T: types.Float64T},
		{Func: ir.AggStringAgg, T: types.TextT, ExtraArgs: sep(8), OrderBy: []ir.AggOrder{{Expr: ref(7), Desc: true, NullsFirst: true}}},
		{Func: ir.AggFirstValue, T: types.TextT, OrderBy: []ir.AggOrder{{Expr: ref(7)}}},
		{Func: ir.AggLastValue, T: types.Int64T, OrderBy: []ir.AggOrder{{Expr: ref(7)}}},
		{Func: ir.AggApproxCountDistinct, T: types.Int64T},
		{Func: ir.AggStringAgg, T: types.TextT, Distinct: true, ExtraArgs: sep(9), OrderBy: []ir.AggOrder{{Expr: ref(6)}}},
		{Func: ir.AggCount, T: types.Int64T, Distinct: true},
		{Func: ir.AggStddevSamp, T: types.NumericT, Distinct: true},
		{Func: ir.AggArrayAgg, T: types.ArrayOf(types.Int64T), OrderBy: []ir.AggOrder{{Expr: ref(7)}}},
		{Func: ir.AggArrayAgg, T: types.ArrayOf(types.TextT), Distinct: true},
		{Func: ir.AggJSONBAgg, T: types.JSONBT, OrderBy: []ir.AggOrder{{Expr: ref(7)}}},
	}
	args := []int{-1, 5, 5, 2, 3, 4, 6, 6, 2, 2, 6, 2, 2, 2, 6, 2}
	// string_agg(DISTINCT s) FILTER (WHERE b), count(DISTINCT v) FILTER
	// (WHERE b), stddev_samp(DISTINCT v) FILTER (WHERE b), array_agg(v
	// ORDER BY o), array_agg(DISTINCT s) FILTER (WHERE b), jsonb_agg(v ORDER
	// BY o).
	filters := []int{-1, -1, -1, -1, -1, -1, -1, -1, -1, -1, 10, 10, 10, -1, 10, -1}
	return calls, args, filters
}

// TestAggRetraction runs random inserts and deletes over 12 groups through
// a streaming HashAgg that caches 2 groups (so groups are evicted and
// reloaded from state all the time) and restarts from its committed state
// at random barriers. After every barrier its accumulated output must equal
// the aggregates recomputed from the current rows (exactly; floats to 1e-9
// relative), and at the end a batch HashAgg (insert-only paths, no value
// sets but DISTINCT's) over the final rows must agree with it.
func TestAggRetraction(t *testing.T) {
	for seed := int64(1); seed <= 8; seed++ {
		t.Run(fmt.Sprint(seed), func(t *testing.T) { runAggRetraction(t, seed) })
	}
}

func runAggRetraction(t *testing.T, seed int64) {
	mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
	defer mem.AssertSize(t, 0)
	rng := rand.New(rand.NewSource(seed))
	calls, args, filters := retractCalls()
	inTypes := retractTypes
	argTypes := make([]types.T, len(calls))
	for i, c := range args {
		if c >= 0 {
			argTypes[i] = inTypes[c]
		}
	}
	ectx := &eval.Context{Mem: mem, Strict: true}
	store, err := state.Open(":memory:", state.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	spec := HashAggSpec{
		GroupCols: []int{0}, GroupTypes: []types.T{types.Int64T},
		Calls: calls, ArgCols: args, ArgTypes: argTypes, FilterCols: filters,
		Result:   store.Table(1),
		InputKey: []int{1}, InputKeyTypes: []types.T{types.Int64T},
		CacheGroups: 2,
	}
	for i, c := range calls {
		var tbl *state.Table
		if c.Distinct || c.Func == ir.AggApproxCountDistinct || ir.OrderSensitive(c.Func) {
			tbl = store.Table(state.TableID(10 + i))
		}
		spec.ValueSets = append(spec.ValueSets, tbl)
	}
	outTypes := append([]types.T{types.Int64T}, callTypes(calls)...)
	newAgg := func(spec HashAggSpec) *HashAgg {
		a, err := NewHashAgg(mem, ectx, spec)
		if err != nil {
			t.Fatal(err)
		}
		return a
	}
	agg := newAgg(spec)
	out := map[int64]string{}
	collect := func(out map[int64]string) Output {
		return OutputFunc(func(_ context.Context, m Message) error {
			if m.Batch == nil {
				return nil
			}
			defer m.Release()
			for i, row := range formatRows(m.Batch, outTypes, false) {
				g, _ := strconv.ParseInt(strings.Fields(row)[0], 10, 64)
				if m.Batch.Ops[i].IsInsert() {
					if old, ok := out[g]; ok {
						return fmt.Errorf("insert of group %d over %q", g, old)
					}
					out[g] = row
				} else {
					if out[g] != row {
						return fmt.Errorf("retraction of %q, but %q was emitted", row, out[g])
					}
					delete(out, g)
				}
			}
			return nil
		})
	}
	var rows []retractRow
	nextID := int64(0)
	epoch := uint64(0)
	for step := 0; step <= 250; step++ {
		var ops []Op
		var batch []retractRow
		for n := 1 + rng.Intn(6); n > 0; n-- {
			if len(rows) > 0 && rng.Intn(5) < 2 {
				i := rng.Intn(len(rows))
				batch, ops = append(batch, rows[i]), append(ops, Delete)
				rows = append(rows[:i], rows[i+1:]...)
				continue
			}
			nextID++
			r := randomRetractRow(rng, nextID)
			batch, ops = append(batch, r), append(ops, Insert)
			rows = append(rows, r)
		}
		if err := agg.OnBatch(context.Background(), retractBatch(mem, inTypes, batch, ops), nil); err != nil {
			t.Fatal(err)
		}
		if rng.Intn(3) > 0 && step < 250 {
			continue
		}
		epoch++
		if err := agg.OnBarrier(context.Background(), &barrier.Barrier{Epoch: epoch}, collect(out)); err != nil {
			t.Fatalf("seed %d epoch %d: %v", seed, epoch, err)
		}
		if rng.Intn(2) == 0 {
			if _, err := store.Commit(epoch); err != nil {
				t.Fatal(err)
			}
			if rng.Intn(3) == 0 {
				agg = newAgg(spec) // restart from the committed state
			}
		}
		want := recomputeRetract(rows)
		for g, w := range want {
			if err := sameAggRow(out[g], w); err != nil {
				t.Fatalf("seed %d epoch %d group %d: %v\n got: %s\nwant: %s", seed, epoch, g, err, out[g], w)
			}
		}
		for g, row := range out {
			if _, ok := want[g]; !ok {
				t.Fatalf("seed %d epoch %d: group %d emitted but empty: %s", seed, epoch, g, row)
			}
		}
	}

	// The batch paths over the final rows agree with the streaming result.
	bstore, err := state.Open(":memory:", state.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer bstore.Close()
	bspec := spec
	bspec.Result, bspec.InputKey, bspec.InputKeyTypes, bspec.CacheGroups = bstore.Table(1), nil, nil, 0
	bspec.ValueSets = nil
	for i, c := range calls {
		var tbl *state.Table
		if c.Distinct {
			tbl = bstore.Table(state.TableID(10 + i))
		}
		bspec.ValueSets = append(bspec.ValueSets, tbl)
	}
	bagg := newAgg(bspec)
	ops := make([]Op, len(rows))
	if err := bagg.OnBatch(context.Background(), retractBatch(mem, inTypes, rows, ops), nil); err != nil {
		t.Fatal(err)
	}
	bout := map[int64]string{}
	if err := bagg.OnBarrier(context.Background(), &barrier.Barrier{Epoch: 1}, collect(bout)); err != nil {
		t.Fatal(err)
	}
	if len(bout) != len(out) {
		t.Fatalf("seed %d: batch has %d groups, stream %d", seed, len(bout), len(out))
	}
	for g, row := range out {
		if err := sameAggRow(bout[g], row); err != nil {
			t.Fatalf("seed %d group %d: batch and stream differ: %v\nbatch:  %s\nstream: %s", seed, g, err, bout[g], row)
		}
	}
}

func randomRetractRow(rng *rand.Rand, id int64) retractRow {
	r := retractRow{g: rng.Int63n(12), id: id, o: (id * 7919) % 100003}
	maybe := func() bool { return rng.Intn(6) > 0 }
	if maybe() {
		// Large values too: their squares overflow 64 bits.
		v := rng.Int63n(40) - 10
		if rng.Intn(4) == 0 {
			v *= 1 << 30
		}
		r.v = &v
	}
	if maybe() {
		c := rng.Int63n(100000) - 20000
		r.cents = &c
	}
	if maybe() {
		f := float64(rng.Intn(2000))/8 - 50
		r.f = &f
	}
	if maybe() {
		b := rng.Intn(3) > 0
		r.b = &b
	}
	if maybe() {
		s := string(rune('a' + rng.Intn(6)))
		r.s = &s
	}
	return r
}

func retractBatch(mem memory.Allocator, ts []types.T, rows []retractRow, ops []Op) *Batch {
	bs := newBuilders(mem, ts)
	defer releaseBuilders(bs)
	for _, r := range rows {
		types.AppendDatum(bs[0], ts[0], types.DInt(r.g))
		types.AppendDatum(bs[1], ts[1], types.DInt(r.id))
		d := types.Null
		if r.v != nil {
			d = types.DInt(*r.v)
		}
		types.AppendDatum(bs[2], ts[2], d)
		d = types.Null
		if r.cents != nil {
			d = types.DNumeric(decimal128.FromI64(*r.cents))
		}
		types.AppendDatum(bs[3], ts[3], d)
		d = types.Null
		if r.f != nil {
			d = types.DFloat(*r.f)
		}
		types.AppendDatum(bs[4], ts[4], d)
		d = types.Null
		if r.b != nil {
			d = types.DBool(*r.b)
		}
		types.AppendDatum(bs[5], ts[5], d)
		d = types.Null
		if r.s != nil {
			d = types.DText(*r.s)
		}
		types.AppendDatum(bs[6], ts[6], d)
		types.AppendDatum(bs[7], ts[7], types.DInt(r.o))
		types.AppendDatum(bs[8], ts[8], types.DText(","))
		types.AppendDatum(bs[9], ts[9], types.DText("|"))
		types.AppendDatum(bs[10], ts[10], types.DBool(r.b != nil && *r.b))
	}
	return NewBatch(buildRecord(SchemaOf(ts), bs, len(rows)), slices.Clone(ops))
}

// recomputeRetract computes each group's output row from the rows, as
// retractCalls defines the aggregates.
func recomputeRetract(rows []retractRow) map[int64]string {
	byGroup := map[int64][]retractRow{}
	for _, r := range rows {
		byGroup[r.g] = append(byGroup[r.g], r)
	}
	out := map[int64]string{}
	for g, rs := range byGroup {
		slices.SortFunc(rs, func(a, b retractRow) int { return int(a.o - b.o) })
		var vs, cents, distinctV []*big.Rat
		var fs []float64
		var trues, falses int
		var strs, distinctS, allV []string
		first, last := "NULL", "NULL"
		filtered, filteredNullS := false, false
		seenV, seenS, hashes := map[int64]bool{}, map[string]bool{}, map[int64]bool{}
		for _, r := range rs {
			if r.v != nil {
				vs = append(vs, new(big.Rat).SetInt64(*r.v))
				hashes[*r.v] = true
			}
			if r.cents != nil {
				cents = append(cents, big.NewRat(*r.cents, 100))
			}
			if r.f != nil {
				fs = append(fs, *r.f)
			}
			if r.b != nil {
				if *r.b {
					trues++
				} else {
					falses++
				}
			}
			if r.s != nil {
				strs = append(strs, *r.s)
			}
			if r.v != nil {
				allV = append(allV, fmt.Sprint(*r.v))
			} else {
				allV = append(allV, "NULL")
			}
			if r.b != nil && *r.b {
				filtered = true
				filteredNullS = filteredNullS || r.s == nil
				if r.s != nil && !seenS[*r.s] {
					seenS[*r.s] = true
					distinctS = append(distinctS, *r.s)
				}
				if r.v != nil && !seenV[*r.v] {
					seenV[*r.v] = true
					distinctV = append(distinctV, new(big.Rat).SetInt64(*r.v))
				}
			}
		}
		if rs[0].s != nil {
			first = *rs[0].s
		}
		if l := rs[len(rs)-1]; l.v != nil {
			last = fmt.Sprint(*l.v)
		}
		slices.Reverse(strs) // ORDER BY o DESC
		slices.Sort(distinctS)
		boolText := func(b bool) string { return map[bool]string{true: "t", false: "f"}[b] }
		cols := []string{fmt.Sprint(g), fmt.Sprint(len(rs))}
		if trues+falses == 0 {
			cols = append(cols, "NULL", "NULL")
		} else {
			cols = append(cols, boolText(falses == 0), boolText(trues > 0))
		}
		cols = append(cols, exactVariance(vs, true, false), exactVariance(cents, false, true), floatVarSamp(fs))
		cols = append(cols, joinOrNull(strs, ","), first, last, fmt.Sprint(hllOf(hashes)))
		cols = append(cols, joinOrNull(distinctS, "|"), fmt.Sprint(len(distinctV)), exactVariance(distinctV, true, true))
		// array_agg keeps NULLs: DISTINCT sorts them last.
		cols = append(cols, "{"+strings.Join(allV, ",")+"}")
		if !filtered {
			cols = append(cols, "NULL")
		} else {
			if filteredNullS {
				distinctS = append(distinctS, "NULL")
			}
			cols = append(cols, "{"+strings.Join(distinctS, ",")+"}")
		}
		// jsonb_agg: JSON null for NULL.
		cols = append(cols, "["+strings.ReplaceAll(strings.Join(allV, ", "), "NULL", "null")+"]")
		out[g] = strings.Join(cols, " ")
	}
	return out
}

func joinOrNull(ss []string, sep string) string {
	if len(ss) == 0 {
		return "NULL"
	}
	return strings.Join(ss, sep)
}

// exactVariance is the variance (sample or population) of xs, rounded to 12
// digits, or its square root to 15 significant digits (compared with a
// tolerance), as text.
func exactVariance(xs []*big.Rat, sample, stddev bool) string {
	n := int64(len(xs))
	if n == 0 || (sample && n == 1) {
		return "NULL"
	}
	mean := new(big.Rat)
	for _, x := range xs {
		mean.Add(mean, x)
	}
	mean.Quo(mean, big.NewRat(n, 1))
	ss := new(big.Rat)
	for _, x := range xs {
		d := new(big.Rat).Sub(x, mean)
		ss.Add(ss, d.Mul(d, d))
	}
	den := n
	if sample {
		den--
	}
	v := ss.Quo(ss, big.NewRat(den, 1))
	if stddev {
		f, _ := v.Float64()
		return strconv.FormatFloat(math.Sqrt(f), 'g', 15, 64)
	}
	s := v.FloatString(12)
	s = strings.TrimRight(strings.TrimRight(s, "0"), ".")
	return s
}

// floatVarSamp is var_samp over floats (two-pass; compared with a tolerance).
func floatVarSamp(fs []float64) string {
	if len(fs) < 2 {
		return "NULL"
	}
	mean := 0.0
	for _, f := range fs {
		mean += f
	}
	mean /= float64(len(fs))
	ss := 0.0
	for _, f := range fs {
		ss += (f - mean) * (f - mean)
	}
	return strconv.FormatFloat(ss/float64(len(fs)-1), 'g', -1, 64)
}

// hllOf is the estimate of a sketch built from scratch over the values.
func hllOf(vals map[int64]bool) int64 {
	var r hllRegisters
	for v := range vals {
		buf := state.AppendKeyDatum(nil, types.Int64T, types.DInt(v))
		idx, rho := hllPosition(xxhash.Sum64(buf))
		if rho > r.get(idx) {
			r.set(idx, rho)
		}
	}
	return r.estimate()
}

// sameAggRow compares two output rows column by column: equal text, or
// numbers within 1e-9 relative.
func sameAggRow(got, want string) error {
	g, w := strings.Fields(got), strings.Fields(want)
	if len(g) != len(w) {
		return fmt.Errorf("%d columns, want %d", len(g), len(w))
	}
	for i := range g {
		if g[i] == w[i] {
			continue
		}
		a, err1 := strconv.ParseFloat(g[i], 64)
		b, err2 := strconv.ParseFloat(w[i], 64)
		if err1 != nil || err2 != nil || math.Abs(a-b) > 1e-9*math.Max(1, math.Abs(b)) {
			return fmt.Errorf("column %d: %s, want %s", i, g[i], w[i])
		}
	}
	return nil
}
