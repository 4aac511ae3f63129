package eval

import (
	"flag"
	"math"
	"math/rand/v2"
	"sync/atomic"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/streamsql/streamsql/ir"
	"github.com/streamsql/streamsql/sqlerr"
	"github.com/streamsql/streamsql/types"
)

var (
	evalSeed  = flag.Uint64("eval-seed", 0, "seed for the differential test (0: time-based)")
	evalExprs = flag.Int("eval-exprs", 600, "expressions per differential test run")
)

// exprGen generates random well-typed expressions over a schema.
type exprGen struct {
	rng      *rand.Rand
	cols     []types.T
	byResult map[types.Kind][]*ir.Overload
}

var genTypes = []types.T{
	types.BoolT, types.Int16T, types.Int32T, types.Int64T, types.NumericT, types.Float32T,
	types.Float64T, types.TextT, types.DateT, types.TimestampT, types.TimestampTZT, types.IntervalT,
}

func newExprGen(rng *rand.Rand) *exprGen {
	g := &exprGen{rng: rng, byResult: map[types.Kind][]*ir.Overload{}}
	g.cols = append(g.cols, genTypes...)
	g.cols = append(g.cols, genTypes...)
	g.cols = append(g.cols, types.NumericOf(10, 2), types.T{Kind: types.Text, Width: 3})
	for _, o := range ir.Overloads() {
		if ir.Volatile(o.Fn) {
			continue // no two evaluations agree
		}
		g.byResult[o.Result.Kind] = append(g.byResult[o.Result.Kind], o)
	}
	return g
}

var (
	extractUnits = []string{"year", "month", "day", "hour", "minute", "second", "milliseconds", "microseconds",
		"dow", "isodow", "doy", "week", "quarter", "epoch", "decade", "century", "millennium", "isoyear",
		"julian", "timezone", "foo"}
	truncUnits = []string{"microseconds", "milliseconds", "second", "minute", "hour", "day", "week", "month",
		"quarter", "year", "decade", "century", "millennium", "dow", "foo"}
	likePatterns = []string{"%", "a%", "%b", "%a%", "_", "a_c", `%\%%`, `\`, "A%", "%l_o%", "", "h%o"}
	genTexts     = []string{"", "a", "abc", "hello world", "héllo", "%", "a,b,c", " x ", "12", "-7",
		"2020-01-01", "1 day", "true", "1.5", "NaN", "2020-02-30 10:00", "aXbXc", "abcdefgh"}
)

func (g *exprGen) randDatum(t types.T) types.Datum {
	r := g.rng
	if r.IntN(10) == 0 {
		return types.Null
	}
	pick := func(vs ...int64) int64 { return vs[r.IntN(len(vs))] }
	switch t.Kind {
	case types.Bool:
		return types.DBool(r.IntN(2) == 0)
	case types.Int16:
		if r.IntN(4) == 0 {
			return types.DInt(pick(math.MinInt16, math.MaxInt16, 0, -1))
		}
		return types.DInt(r.Int64N(41) - 20)
	case types.Int32:
		if r.IntN(4) == 0 {
			return types.DInt(pick(math.MinInt32, math.MaxInt32, 0, -1, 46341))
		}
		return types.DInt(r.Int64N(41) - 20)
	case types.Int64:
		if r.IntN(4) == 0 {
			return types.DInt(pick(math.MinInt64, math.MaxInt64, 0, -1, 3037000500))
		}
		return types.DInt(r.Int64N(2001) - 1000)
	case types.Float32, types.Float64:
		f := []float64{0, math.Copysign(0, -1), 1.5, -2.5, math.NaN(), math.Inf(1), math.Inf(-1), 1e308,
			1e-308, 3.4e38, 0.1, 1e20, 7, -3}[r.IntN(14)]
		if r.IntN(2) == 0 {
			f = float64(r.IntN(2001)-1000) / 8
		}
		if t.Kind == types.Float32 {
			f = float64(float32(f))
		}
		return types.DFloat(f)
	case types.Numeric:
		s := []string{"1.5", "-2.25", "0", "99999999999999999999999999", "0.000000000001", "3", "-7.125",
			"12345678.99", "0.5", "1.50", "2.000"}[r.IntN(11)]
		d, _ := types.ParseText(types.NumericT, s)
		v, _ := numConvert(types.NumericT, d.Dec, t)
		if !numFitsType(v, t) {
			return types.DNumeric(decimal0())
		}
		return types.DNumeric(v)
	case types.Text:
		s := genTexts[r.IntN(len(genTexts))]
		if t.Width > 0 {
			s = s[:runeOffset(s, int64(t.Width))]
		}
		return types.DText(s)
	case types.Date:
		if r.IntN(8) == 0 {
			return types.DInt(pick(minDay, dateEndDay-1, tsEndMicros/microsPerDay-1))
		}
		return types.DInt(r.Int64N(40000) - 20000)
	case types.Timestamp, types.TimestampTZ:
		if r.IntN(8) == 0 {
			return types.DInt(pick(tsMinMicros, tsEndMicros-1))
		}
		return types.DInt((r.Int64N(40000)-20000)*microsPerDay + r.Int64N(microsPerDay))
	case types.Interval:
		iv := types.IntervalValue{Months: int32(r.IntN(30) - 10), Days: int32(r.IntN(60) - 20),
			Micros: r.Int64N(4*microsPerDay) - 2*microsPerDay}
		if r.IntN(8) == 0 {
			iv = types.IntervalValue{Months: math.MaxInt32, Days: math.MinInt32, Micros: types.MaxIntervalMicros}
		}
		return types.DInterval(iv)
	}
	return types.Null
}

func decimal0() (z decimal128.Num) { return }

func (g *exprGen) leaf(t types.T) ir.Expr {
	if g.rng.IntN(3) > 0 {
		var cands []int
		for i, c := range g.cols {
			if c.Kind == t.Kind && (c.Kind != types.Numeric || g.rng.IntN(2) == 0 || types.Identical(c, t)) {
				cands = append(cands, i)
			}
		}
		if len(cands) > 0 {
			i := cands[g.rng.IntN(len(cands))]
			return &ir.InputRef{Index: i, T: g.cols[i]}
		}
	}
	return &ir.Const{T: t, Value: g.randDatum(t)}
}

func (g *exprGen) expr(t types.T, depth int) ir.Expr {
	r := g.rng
	if depth <= 0 || r.IntN(4) == 0 {
		return g.leaf(t)
	}
	switch k := r.IntN(10); {
	case k < 6:
		os := g.byResult[t.Kind]
		if len(os) == 0 {
			return g.leaf(t)
		}
		o := os[r.IntN(len(os))]
		n := len(o.Args)
		if o.Variadic {
			n += r.IntN(3)
		}
		args := make([]ir.Expr, n)
		for i := range args {
			at := o.Args[min(i, len(o.Args)-1)]
			switch {
			case i == 0 && (o.Fn == ir.FnExtract || o.Fn == ir.FnDatePart):
				args[i] = txt(extractUnits[r.IntN(len(extractUnits))])
			case i == 0 && o.Fn == ir.FnDateTrunc:
				args[i] = txt(truncUnits[r.IntN(len(truncUnits))])
			case i == 1 && (o.Fn == ir.FnLPad || o.Fn == ir.FnRPad || o.Fn == ir.FnRepeat):
				// Keep results small (PostgreSQL would build them too, but
				// slowly): short lengths, or one too large to build.
				args[i] = i4([]int64{-1, 0, 3, 7, 40, math.MaxInt32}[r.IntN(6)])
			case i == 1 && (o.Fn == ir.FnLike || o.Fn == ir.FnILike) && r.IntN(4) > 0:
				args[i] = txt(likePatterns[r.IntN(len(likePatterns))])
			default:
				args[i] = g.expr(at, depth-1)
			}
		}
		rt := o.Result
		return &ir.Call{Fn: o.Fn, Args: args, T: rt}
	case k < 7:
		var from types.T
		for {
			from = genTypes[r.IntN(len(genTypes))]
			if ir.CastAllowed(from, t) {
				break
			}
		}
		to := t
		if t.Kind == types.Text && r.IntN(3) == 0 {
			to = types.T{Kind: types.Text, Width: int32(1 + r.IntN(4))}
		}
		var e ir.Expr = &ir.Cast{Arg: g.expr(from, depth-1), T: to}
		if to != t {
			e = &ir.Cast{Arg: e, T: t}
		}
		return e
	case k < 9:
		n := 1 + r.IntN(3)
		c := &ir.Case{T: t}
		for i := 0; i < n; i++ {
			c.Whens = append(c.Whens, ir.When{Cond: g.expr(types.BoolT, depth-1), Then: g.expr(t, depth-1)})
		}
		c.Else = g.expr(t, depth-1)
		return c
	default:
		if t.Kind != types.Bool {
			return g.expr(t, depth)
		}
		at := genTypes[r.IntN(len(genTypes))]
		in := &ir.InList{Arg: g.expr(at, depth-1), Negate: r.IntN(2) == 0}
		for i, n := 0, 1+r.IntN(5); i < n; i++ {
			if r.IntN(4) == 0 {
				in.List = append(in.List, g.expr(at, depth-1))
			} else {
				in.List = append(in.List, &ir.Const{T: at, Value: g.randDatum(at)})
			}
		}
		return in
	}
}

// substitute replaces the InputRefs of e with row's values.
func substitute(e ir.Expr, row []types.Datum, cols []types.T) ir.Expr {
	return ir.Rewrite(e, func(x ir.Expr) ir.Expr {
		if r, ok := x.(*ir.InputRef); ok {
			return &ir.Const{T: cols[r.Index], Value: row[r.Index]}
		}
		return x
	})
}

// TestDifferential checks the vectorized evaluation of random expressions
// against the row-at-a-time scalar interpretation of the same (folded)
// expression on every row, in strict and in lenient mode.
func TestDifferential(t *testing.T) {
	seed := *evalSeed
	if seed == 0 {
		seed = uint64(time.Now().UnixNano())
	}
	t.Logf("seed %d (rerun with -eval-seed=%d)", seed, seed)
	rng := rand.New(rand.NewPCG(seed, 11))
	g := newExprGen(rng)
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)

	defer func() { t.Logf("rows: %d NULL, %d error, %d value", diffStats[0], diffStats[1], diffStats[2]) }()
	const nrows = 40
	for iter := 0; iter < *evalExprs; iter++ {
		rt := genTypes[rng.IntN(len(genTypes))]
		e := g.expr(rt, 1+rng.IntN(4))
		rows := make([][]types.Datum, nrows+7)
		for i := range rows {
			rows[i] = make([]types.Datum, len(g.cols))
			for j, c := range g.cols {
				rows[i][j] = g.randDatum(c)
			}
		}
		full := batch(mem, g.cols, rows, len(rows))
		// Evaluate over a slice so that column offsets are exercised.
		off := rng.IntN(8)
		rec := full.NewSlice(int64(off), int64(off+nrows))
		full.Release()
		rows = rows[off : off+nrows]

		start := time.Now()
		ev, err := Compile(e)
		if err != nil {
			t.Fatalf("compile %s: %v", e, err)
		}
		folded := foldExpr(normalize(e))
		want := make([]string, nrows)
		wantLenient := make([]string, nrows)
		codes := map[string]bool{}
		var wantErrs int64
		for i, row := range rows {
			d, kerr := evalScalar(&kctx{now: testNow}, substitute(folded, row, g.cols))
			if kerr != nil {
				if kerr.Code == sqlerr.InternalError {
					t.Fatalf("%s row %d: %v", e, i, kerr)
				}
				codes[kerr.Code] = true
				want[i] = "ERROR " + kerr.Code
				wantLenient[i] = "NULL"
				wantErrs++
				continue
			}
			want[i] = render(e.Type(), d, nil)
			wantLenient[i] = want[i]
		}
		for _, w := range want {
			switch {
			case w == "NULL":
				diffStats[0]++
			case len(w) > 5 && w[:5] == "ERROR":
				diffStats[1]++
			default:
				diffStats[2]++
			}
		}
		diffRun(t, mem, ev, e, rec, true, want, codes, 0)
		diffRun(t, mem, ev, e, rec, false, wantLenient, nil, wantErrs)
		rec.Release()
		if el := time.Since(start); el > time.Second && testing.Verbose() {
			t.Logf("slow (%v): %s", el, e)
		}
		if t.Failed() {
			t.Logf("row values: %v", rows[0])
			return
		}
	}
}

// diffStats counts the scalar outcomes (NULL, error, value) for -v.
var diffStats [3]int

func diffRun(t *testing.T, mem memory.Allocator, ev Evaluator, e ir.Expr, rec arrow.RecordBatch, strict bool,
	want []string, codes map[string]bool, wantErrs int64) {
	t.Helper()
	var errs atomic.Int64
	out, err := ev.Eval(&Context{Mem: mem, Strict: strict, Errors: &errs, Now: testNow}, rec)
	if strict && len(codes) > 0 {
		if err == nil {
			out.Release()
			t.Errorf("%s: strict evaluation succeeded, scalar failed rows: %v", e, want)
			return
		}
		if !codes[sqlerr.Code(err)] {
			t.Errorf("%s: strict error %v, scalar errors %v", e, err, codes)
		}
		return
	}
	if err != nil {
		t.Errorf("%s (strict=%v): %v; scalar: %v", e, strict, err, want)
		return
	}
	defer out.Release()
	for i := range want {
		got := render(e.Type(), types.DatumAt(e.Type(), out, i), nil)
		if got != want[i] {
			t.Errorf("%s (strict=%v) row %d: vector %s, scalar %s", e, strict, i, got, want[i])
			return
		}
	}
	if !strict && errs.Load() != wantErrs {
		t.Errorf("%s: lenient counted %d errors, scalar %d", e, errs.Load(), wantErrs)
	}
}
