package eval

import (
	"fmt"
	"math"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/streamsql/streamsql/ir"
	"github.com/streamsql/streamsql/sqlerr"
	"github.com/streamsql/streamsql/types"
)

// Expression builders for tests.

func lit(t types.T, s string) *ir.Const {
	d, err := types.ParseText(t, s)
	if err != nil {
		panic(fmt.Sprintf("lit %s %q: %v", t, s, err))
	}
	return &ir.Const{T: t, Value: d}
}

func null(t types.T) *ir.Const { return &ir.Const{T: t, Value: types.Null} }

func i2(v int64) *ir.Const { return &ir.Const{T: types.Int16T, Value: types.DInt(v)} }
func i4(v int64) *ir.Const { return &ir.Const{T: types.Int32T, Value: types.DInt(v)} }
func i8(v int64) *ir.Const { return &ir.Const{T: types.Int64T, Value: types.DInt(v)} }
func f4(v float64) *ir.Const {
	return &ir.Const{T: types.Float32T, Value: types.DFloat(float64(float32(v)))}
}
func f8(v float64) *ir.Const { return &ir.Const{T: types.Float64T, Value: types.DFloat(v)} }
func num(s string) *ir.Const { return lit(types.NumericT, s) }
func txt(s string) *ir.Const { return &ir.Const{T: types.TextT, Value: types.DText(s)} }
func boolc(v bool) *ir.Const { return &ir.Const{T: types.BoolT, Value: types.DBool(v)} }
func date(s string) *ir.Const {
	return lit(types.DateT, s)
}
func tsc(s string) *ir.Const   { return lit(types.TimestampT, s) }
func tstzc(s string) *ir.Const { return lit(types.TimestampTZT, s) }
func ivl(s string) *ir.Const   { return lit(types.IntervalT, s) }

func col(i int, t types.T) *ir.InputRef { return &ir.InputRef{Index: i, T: t} }

// call builds a call of fn, typed by the overload its arguments select.
func call(fn string, args ...ir.Expr) *ir.Call {
	ts := make([]types.T, len(args))
	for i, a := range args {
		ts[i] = a.Type()
	}
	o := resolve(fn, ts)
	if o == nil {
		panic("no overload " + ir.OverloadKey(fn, ts))
	}
	rt := o.Result
	if !numericScaled[fn] && len(o.Args) > 0 && o.Args[0] == o.Result && len(args) > 0 && args[0].Type().Kind == rt.Kind {
		rt = args[0].Type() // polymorphic: keep the argument's typmod
	}
	return &ir.Call{Fn: fn, Args: args, T: rt}
}

func castTo(e ir.Expr, t types.T) *ir.Cast { return &ir.Cast{Arg: e, T: t} }

// batch builds a record with one column per type, from rows of datums.
func batch(mem memory.Allocator, colTypes []types.T, rows [][]types.Datum, n int) arrow.RecordBatch {
	fields := make([]arrow.Field, len(colTypes))
	cols := make([]arrow.Array, len(colTypes))
	for j, t := range colTypes {
		fields[j] = arrow.Field{Name: fmt.Sprintf("c%d", j), Type: t.ArrowType(), Nullable: true}
		b := array.NewBuilder(mem, t.ArrowType())
		for _, r := range rows {
			types.AppendDatum(b, t, r[j])
		}
		cols[j] = b.NewArray()
		b.Release()
	}
	rec := array.NewRecordBatch(arrow.NewSchema(fields, nil), cols, int64(n))
	releaseAll(cols)
	return rec
}

// columnize replaces the constants selected by pick (by their order in a
// pre-order walk) with input columns, returning the new expression, the
// column types and the column values.
func columnize(e ir.Expr, pick func(i int) bool) (ir.Expr, []types.T, []types.Datum) {
	var colTypes []types.T
	var vals []types.Datum
	i := 0
	out := rewritePre(e, func(x ir.Expr) ir.Expr {
		k, ok := x.(*ir.Const)
		if !ok || k.T.Kind == types.Unknown {
			return x
		}
		i++
		if !pick(i - 1) {
			return x
		}
		colTypes = append(colTypes, k.T)
		vals = append(vals, k.Value)
		return &ir.InputRef{Index: len(colTypes) - 1, T: k.T}
	})
	return out, colTypes, vals
}

// rewritePre rewrites a tree visiting nodes in pre-order (so constants are
// numbered left to right).
func rewritePre(e ir.Expr, fn func(ir.Expr) ir.Expr) ir.Expr {
	e = fn(e)
	switch n := e.(type) {
	case *ir.Call:
		args := make([]ir.Expr, len(n.Args))
		for i, a := range n.Args {
			args[i] = rewritePre(a, fn)
		}
		return &ir.Call{Fn: n.Fn, Args: args, T: n.T}
	case *ir.Cast:
		return &ir.Cast{Arg: rewritePre(n.Arg, fn), T: n.T, Assignment: n.Assignment}
	case *ir.Case:
		whens := make([]ir.When, len(n.Whens))
		for i, w := range n.Whens {
			whens[i] = ir.When{Cond: rewritePre(w.Cond, fn), Then: rewritePre(w.Then, fn)}
		}
		return &ir.Case{Whens: whens, Else: rewritePre(n.Else, fn), T: n.T}
	case *ir.InList:
		list := make([]ir.Expr, len(n.List))
		for i, a := range n.List {
			list[i] = rewritePre(a, fn)
		}
		return &ir.InList{Arg: rewritePre(n.Arg, fn), List: list, Negate: n.Negate}
	}
	return e
}

func countConsts(e ir.Expr) int {
	n := 0
	ir.Walk(e, func(x ir.Expr) bool {
		if k, ok := x.(*ir.Const); ok && k.T.Kind != types.Unknown {
			n++
		}
		return true
	})
	return n
}

// render is the text a test compares: the value's text, NULL, or ERROR code.
func render(t types.T, d types.Datum, err error) string {
	if err != nil {
		return "ERROR " + sqlerr.Code(err)
	}
	if d.Null {
		return "NULL"
	}
	if (t.Kind == types.Float32 || t.Kind == types.Float64) && math.IsNaN(d.F) {
		return "NaN"
	}
	return d.Text(t)
}

// evalVector evaluates e over rec in strict mode and returns each row's
// rendering (or the error rendering for every row).
func evalVector(t *testing.T, mem memory.Allocator, e ir.Expr, rec arrow.RecordBatch, strict bool) ([]string, int64) {
	t.Helper()
	ev, err := Compile(e)
	if err != nil {
		t.Fatalf("compile %s: %v", e, err)
	}
	var errs atomic.Int64
	out, err := ev.Eval(&Context{Mem: mem, Strict: strict, Errors: &errs, Now: testNow}, rec)
	n := int(rec.NumRows())
	res := make([]string, n)
	if err != nil {
		for i := range res {
			res[i] = render(e.Type(), types.Null, err)
		}
		return res, errs.Load()
	}
	defer out.Release()
	if out.Len() != n {
		t.Fatalf("%s: %d rows out for %d in", e, out.Len(), n)
	}
	if !arrow.TypeEqual(out.DataType(), e.Type().ArrowType()) {
		t.Fatalf("%s: result type %s, want %s", e, out.DataType(), e.Type().ArrowType())
	}
	for i := 0; i < n; i++ {
		res[i] = render(e.Type(), types.DatumAt(e.Type(), out, i), nil)
	}
	return res, errs.Load()
}

// testNow is now() in tests: 2021-06-15 12:34:56.789 UTC.
var testNow = func() int64 {
	d, _ := types.ParseText(types.TimestampTZT, "2021-06-15 12:34:56.789")
	return d.I
}()

func evalScalarText(e ir.Expr, strict bool) (string, int64) {
	var errs atomic.Int64
	d, err := EvalDatum(&Context{Strict: strict, Errors: &errs, Now: testNow}, e)
	return render(e.Type(), d, err), errs.Load()
}

// check evaluates e (an expression of constants) every way there is and
// requires each to give want ("NULL", the value's text, or "ERROR <code>"):
// EvalDatum; Compile as is (folded); with every constant turned into a column
// of 3 identical rows; with only the first and only the last constant as a
// column. Errors are also checked in lenient mode (NULL, counted). With all
// constants as columns a 4th row of NULLs must agree with EvalDatum of the
// expression with NULL constants.
func check(t *testing.T, e ir.Expr, want string) {
	t.Helper()
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	if got, _ := evalScalarText(e, true); got != want {
		t.Errorf("%s: EvalDatum = %s, want %s", e, got, want)
		return
	}
	isErr := strings.HasPrefix(want, "ERROR")
	if isErr {
		if got, n := evalScalarText(e, false); got != "NULL" || n != 1 {
			t.Errorf("%s: lenient EvalDatum = %s (%d errors), want NULL (1)", e, got, n)
		}
	}
	nc := countConsts(e)
	variants := []struct {
		name string
		pick func(int) bool
	}{
		{"folded", func(int) bool { return false }},
		{"columns", func(int) bool { return true }},
		{"first-column", func(i int) bool { return i == 0 }},
		{"last-column", func(i int) bool { return i == nc-1 }},
	}
	for _, v := range variants {
		ce, colTypes, vals := columnize(e, v.pick)
		rows := [][]types.Datum{vals, vals, vals}
		rec := batch(mem, colTypes, rows, 3)
		got, _ := evalVector(t, mem, ce, rec, true)
		for i, g := range got {
			if g != want {
				t.Errorf("%s [%s row %d]: got %s, want %s", e, v.name, i, g, want)
				break
			}
		}
		if isErr {
			got, n := evalVector(t, mem, ce, rec, false)
			if got[0] != "NULL" || n != 3 {
				t.Errorf("%s [%s lenient]: got %s with %d errors, want NULL with 3", e, v.name, got[0], n)
			}
		}
		rec.Release()
		if v.name == "columns" && len(colTypes) > 0 && !isErr {
			nulls := make([]types.Datum, len(vals))
			for i := range nulls {
				nulls[i] = types.Null
			}
			rec := batch(mem, colTypes, [][]types.Datum{vals, nulls}, 2)
			got, _ := evalVector(t, mem, ce, rec, true)
			ne := rewritePre(e, func(x ir.Expr) ir.Expr {
				if k, ok := x.(*ir.Const); ok {
					return null(k.T)
				}
				return x
			})
			wantNull, _ := evalScalarText(ne, true)
			if got[1] != wantNull {
				t.Errorf("%s [NULL row]: got %s, want %s", e, got[1], wantNull)
			}
			rec.Release()
		}
	}
}
