package eval

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/streamsql/streamsql/ir"
	"github.com/streamsql/streamsql/sqlerr"
	"github.com/streamsql/streamsql/types"
)

// countingHandler is a slog.Handler that counts records.
type countingHandler struct {
	mu    sync.Mutex
	lines []slog.Record
}

func (h *countingHandler) Enabled(context.Context, slog.Level) bool { return true }
func (h *countingHandler) Handle(_ context.Context, r slog.Record) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.lines = append(h.lines, r)
	return nil
}
func (h *countingHandler) WithAttrs([]slog.Attr) slog.Handler { return h }
func (h *countingHandler) WithGroup(string) slog.Handler      { return h }

// intBatch is a batch of two int64 columns a and b with n rows: a = i,
// b = i % 5 (so b is zero every fifth row) and every seventh a NULL.
func intBatch(mem memory.Allocator, n int) arrow.RecordBatch {
	rows := make([][]types.Datum, n)
	for i := range rows {
		a := types.DInt(int64(i))
		if i%7 == 6 {
			a = types.Null
		}
		rows[i] = []types.Datum{a, types.DInt(int64(i % 5))}
	}
	return batch(mem, []types.T{types.Int64T, types.Int64T}, rows, n)
}

func TestLenientErrorsAreCountedAndLoggedSparingly(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	rec := intBatch(mem, 100)
	defer rec.Release()
	a, b := col(0, types.Int64T), col(1, types.Int64T)
	// a / b IS NULL: the failing rows must be NULL as a whole, not true.
	e := call(ir.FnIsNull, call(ir.FnDiv, a, b))
	ev, err := Compile(e)
	if err != nil {
		t.Fatal(err)
	}
	h := &countingHandler{}
	var errs atomic.Int64
	ctx := &Context{Mem: mem, Errors: &errs, Log: slog.New(h)}
	start := time.Now()
	const runs = 50
	for r := 0; r < runs; r++ {
		out, err := ev.Eval(ctx, rec)
		if err != nil {
			t.Fatal(err)
		}
		res := out.(*array.Boolean)
		for i := 0; i < 100; i++ {
			divByZero := i%5 == 0 && i%7 != 6
			switch {
			case divByZero && !res.IsNull(i):
				t.Fatalf("row %d: %v, want NULL", i, res.Value(i))
			case !divByZero && (res.IsNull(i) || res.Value(i) != (i%7 == 6)):
				t.Fatalf("row %d: null=%v %v", i, res.IsNull(i), res.Value(i))
			}
		}
		out.Release()
	}
	// Rows 0, 5, ..., 95 divide by zero, except where a is NULL (35, 90... no:
	// a is NULL at i%7 == 6: 20, 55, 90).
	if got, want := errs.Load(), int64(runs*17); got != want {
		t.Errorf("counted %d errors, want %d", got, want)
	}
	elapsed := time.Since(start)
	h.mu.Lock()
	lines := len(h.lines)
	h.mu.Unlock()
	if lines < 1 || lines > 1+int(elapsed/time.Second) {
		t.Errorf("%d log lines in %v", lines, elapsed)
	}
	// Strict mode fails with the error.
	_, err = ev.Eval(&Context{Mem: mem, Strict: true}, rec)
	if sqlerr.Code(err) != sqlerr.DivisionByZero {
		t.Errorf("strict: %v", err)
	}
}

func TestRowError(t *testing.T) {
	var errs atomic.Int64
	lenient := &Context{Errors: &errs}
	d, err := lenient.RowError(sqlerr.New(sqlerr.NumericValueOutOfRange, "bigint out of range"))
	if err != nil || !d.Null || errs.Load() != 1 {
		t.Errorf("lenient: %v %v %d", d, err, errs.Load())
	}
	if _, err := lenient.RowError(fmt.Errorf("disk on fire")); err == nil {
		t.Error("lenient swallowed a non-SQL error")
	}
	strict := &Context{Strict: true}
	if _, err := strict.RowError(sqlerr.New(sqlerr.DivisionByZero, "division by zero")); err == nil {
		t.Error("strict swallowed the error")
	}
}

func TestConcurrentEvaluation(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	a, b := col(0, types.Int64T), col(1, types.Int64T)
	e := &ir.Case{
		Whens: []ir.When{{Cond: call(ir.FnNe, b, i8(0)), Then: call(ir.FnDiv, a, b)}},
		Else:  call(ir.FnMul, a, i8(-1)), T: types.Int64T,
	}
	ev, err := Compile(e)
	if err != nil {
		t.Fatal(err)
	}
	rec := intBatch(mem, 500)
	defer rec.Release()
	want, err := ev.Eval(&Context{Mem: mem, Strict: true}, rec)
	if err != nil {
		t.Fatal(err)
	}
	defer want.Release()
	var wg sync.WaitGroup
	for g := 0; g < 4; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ctx := &Context{Mem: mem, Strict: true}
			for r := 0; r < 20; r++ {
				got, err := ev.Eval(ctx, rec)
				if err != nil {
					t.Error(err)
					return
				}
				if !array.Equal(got, want) {
					t.Error("concurrent result differs")
				}
				got.Release()
			}
		}()
	}
	wg.Wait()
}

// hotExprs are the expressions whose evaluation must not allocate per row.
func hotExprs() map[string]ir.Expr {
	a, b := col(0, types.Int64T), col(1, types.Int64T)
	f, s := col(2, types.Float64T), col(3, types.TextT)
	n, ts := col(4, types.NumericT), col(5, types.TimestampT)
	return map[string]ir.Expr{
		"a+b":        call(ir.FnAdd, a, b),
		"a*2>100":    call(ir.FnGt, call(ir.FnMul, a, i8(2)), i8(100)),
		"a/b":        call(ir.FnDiv, a, call(ir.FnAdd, b, i8(1))),
		"case":       &ir.Case{Whens: []ir.When{{Cond: call(ir.FnGt, a, i8(10)), Then: a}}, Else: call(ir.FnNeg, a), T: types.Int64T},
		"like":       call(ir.FnLike, s, txt("%foo%")),
		"like_gen":   call(ir.FnLike, s, txt("a_%o")),
		"in":         inList(a, false, i8(1), i8(5), i8(9)),
		"in_text":    inList(s, false, txt("foo"), txt("xfooy")),
		"coalesce":   call(ir.FnCoalesce, a, b),
		"is_null":    call(ir.FnIsNull, a),
		"and_or":     call(ir.FnOr, call(ir.FnAnd, call(ir.FnGt, a, b), call(ir.FnLt, f, f8(3))), call(ir.FnNot, call(ir.FnIsNull, a))),
		"cast_f8":    castTo(a, types.Float64T),
		"cast_i4":    castTo(f, types.Int32T),
		"cast_num":   castTo(a, types.NumericT),
		"num_to_i8":  castTo(n, types.Int64T),
		"num_to_f8":  castTo(call(ir.FnMul, n, num("123456789.123")), types.Float64T),
		"num_to_f4":  castTo(n, types.Float32T),
		"f8_to_num":  castTo(call(ir.FnMul, f, f8(1e6)), types.NumericT),
		"float":      call(ir.FnMul, f, f),
		"numeric":    call(ir.FnAdd, call(ir.FnMul, n, num("1.5")), n),
		"text_eq":    call(ir.FnEq, s, txt("foo")),
		"ts+ivl":     call(ir.FnAdd, ts, ivl("10 seconds")),
		"distinct":   call(ir.FnIsDistinct, a, b),
		"substr":     call(ir.FnSubstr, s, i4(2), i4(3)),
		"split_part": call(ir.FnSplitPart, s, txt("o"), i4(2)),
	}
}

func hotBatch(mem memory.Allocator, n int) arrow.RecordBatch {
	rows := make([][]types.Datum, n)
	texts := []string{"foo", "xfooy", "bar", "", "afoo"}
	for i := range rows {
		a := types.DInt(int64(i))
		if i%9 == 3 {
			a = types.Null
		}
		nd := dynInt(int64(i % 1000))
		rows[i] = []types.Datum{a, types.DInt(int64(i % 13)), types.DFloat(float64(i) / 3),
			types.DText(texts[i%len(texts)]), types.DNumeric(nd), types.DInt(int64(i) * microsPerSecond)}
	}
	return batch(mem, []types.T{types.Int64T, types.Int64T, types.Float64T, types.TextT, types.NumericT, types.TimestampT}, rows, n)
}

// TestHotPathsDoNotAllocatePerRow checks that evaluating the hot operators
// allocates as much for 4096 rows as for 64: nothing per row.
func TestHotPathsDoNotAllocatePerRow(t *testing.T) {
	if testing.Short() {
		t.Skip("allocation counts")
	}
	mem := memory.NewGoAllocator()
	small, large := hotBatch(mem, 64), hotBatch(mem, 4096)
	defer small.Release()
	defer large.Release()
	for name, e := range hotExprs() {
		ev, err := Compile(e)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		ctx := &Context{Mem: mem, Strict: true}
		allocs := func(rec arrow.RecordBatch) float64 {
			return testing.AllocsPerRun(5, func() {
				out, err := ev.Eval(ctx, rec)
				if err != nil {
					t.Fatal(err)
				}
				out.Release()
			})
		}
		s, l := allocs(small), allocs(large)
		if l > s+16 {
			t.Errorf("%s: %.0f allocations for 64 rows, %.0f for 4096", name, s, l)
		}
	}
}

func TestEvalDatumLenient(t *testing.T) {
	var errs atomic.Int64
	d, err := EvalDatum(&Context{Errors: &errs}, call(ir.FnDiv, i4(1), i4(0)))
	if err != nil || !d.Null || errs.Load() != 1 {
		t.Errorf("lenient EvalDatum: %v %v %d", d, err, errs.Load())
	}
	d, err = EvalDatum(&Context{Strict: true}, call(ir.FnConcatOp, call(ir.FnUpper, txt("a")), call(ir.FnLower, txt("B"))))
	if err != nil || d.S != "Ab" {
		t.Errorf("text results must not alias scratch space: %q %v", d.S, err)
	}
}

func TestEmptyBatch(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	rec := hotBatch(mem, 0)
	defer rec.Release()
	for name, e := range hotExprs() {
		ev, err := Compile(e)
		if err != nil {
			t.Fatal(err)
		}
		out, err := ev.Eval(&Context{Mem: mem, Strict: true}, rec)
		if err != nil || out.Len() != 0 {
			t.Fatalf("%s: %v %v", name, out, err)
		}
		if b, ok := out.(*array.Boolean); ok {
			if sel := SelectTrue(b, nil); len(sel) != 0 {
				t.Fatalf("%s: selected %v", name, sel)
			}
		}
		out.Release()
	}
}
