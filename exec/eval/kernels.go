package eval

import (
	"math"
	"unsafe"

	"github.com/streamsql/streamsql/ir"
	"github.com/streamsql/streamsql/sqlerr"
	"github.com/streamsql/streamsql/types"
)

// kctx is what scalar kernels need besides their arguments. One kctx serves
// one evaluation on one goroutine.
type kctx struct {
	now int64
	// rnd is the session's generator for random() and setseed(), or nil.
	rnd *Random
	// buf is scratch space for text results: a kernel may return a Datum
	// whose S aliases buf, valid until the next kernel call on this kctx.
	buf []byte
	// like caches the last compiled non-constant LIKE pattern.
	likePat  string
	likeFold bool
	like     *likeMatcher
	// format caches the last parsed to_char/to_timestamp template.
	format formatCache
	// re caches the last compiled regular expression.
	re regexCache
	// tz caches the last time zone looked up.
	tz zoneMemo
}

// textResult returns b (built in k.buf) as a text Datum aliasing k.buf.
func (k *kctx) textResult(b []byte) types.Datum {
	k.buf = b
	return types.DText(unsafe.String(unsafe.SliceData(b), len(b)))
}

// scalarFn computes one function on one row. Strict functions are never
// called with a NULL argument. Errors are row errors.
type scalarFn func(k *kctx, a []types.Datum) (types.Datum, *sqlerr.Error)

// kernelMaker builds the scalar kernel of one overload for the argument types
// of a call (which matter for variadic functions and numeric scales).
type kernelMaker func(args []types.T, result types.T) scalarFn

// kernels maps an overload key (ir.Overload.Key) to its kernel.
var kernels = map[string]kernelMaker{}

func reg(fn string, args []types.T, mk kernelMaker) {
	kernels[ir.OverloadKey(fn, args)] = mk
}

func ts(args ...types.T) []types.T { return args }

// resolve finds the overload of fn that a call with argument types args uses.
func resolve(fn string, args []types.T) *ir.Overload {
	for _, o := range ir.FunctionOverloads(fn) {
		if o.Variadic {
			if len(args) < len(o.Args) {
				continue
			}
		} else if len(args) != len(o.Args) {
			continue
		}
		ok := true
		for i, a := range args {
			want := o.Args[min(i, len(o.Args)-1)]
			if a.Kind != want.Kind && a.Kind != types.Unknown {
				ok = false
				break
			}
		}
		if ok {
			return o
		}
	}
	return nil
}

// Errors shared by kernels. *sqlerr.Error values are never mutated, so they
// can be shared between goroutines.
var (
	errInt2Range      = sqlerr.New(sqlerr.NumericValueOutOfRange, "smallint out of range")
	errInt4Range      = sqlerr.New(sqlerr.NumericValueOutOfRange, "integer out of range")
	errInt8Range      = sqlerr.New(sqlerr.NumericValueOutOfRange, "bigint out of range")
	errFloatOverflow  = sqlerr.New(sqlerr.NumericValueOutOfRange, "value out of range: overflow")
	errFloatUnderflow = sqlerr.New(sqlerr.NumericValueOutOfRange, "value out of range: underflow")
	errDateRange      = sqlerr.New(sqlerr.DatetimeFieldOverflow, "date out of range")
	errTimestampRange = sqlerr.New(sqlerr.DatetimeFieldOverflow, "timestamp out of range")
	errIntervalRange  = sqlerr.New(sqlerr.DatetimeFieldOverflow, "interval out of range")
	errSubqueryRows   = sqlerr.New(sqlerr.CardinalityViolation, "more than one row returned by a subquery used as an expression")
)

func intRangeErr(k types.Kind) *sqlerr.Error {
	switch k {
	case types.Int16:
		return errInt2Range
	case types.Int32:
		return errInt4Range
	}
	return errInt8Range
}

func intBounds(k types.Kind) (lo, hi int64) {
	switch k {
	case types.Int16:
		return math.MinInt16, math.MaxInt16
	case types.Int32:
		return math.MinInt32, math.MaxInt32
	}
	return math.MinInt64, math.MaxInt64
}

func init() {
	numberTypes := []types.T{types.Int16T, types.Int32T, types.Int64T, types.NumericT, types.Float32T, types.Float64T}
	for _, t := range numberTypes {
		for _, fn := range []string{ir.FnAdd, ir.FnSub, ir.FnMul, ir.FnDiv, ir.FnMod} {
			fn := fn
			reg(fn, ts(t, t), func(args []types.T, _ types.T) scalarFn { return arithKernel(fn, args[0]) })
		}
		if t.IsInteger() {
			for _, fn := range []string{ir.FnBitAnd, ir.FnBitOr, ir.FnBitXor} {
				fn := fn
				reg(fn, ts(t, t), func(args []types.T, _ types.T) scalarFn { return arithKernel(fn, args[0]) })
			}
		}
		reg(ir.FnNeg, ts(t), func(args []types.T, _ types.T) scalarFn { return negKernel(args[0]) })
		reg(ir.FnAbs, ts(t), func(args []types.T, _ types.T) scalarFn { return absKernel(args[0]) })
	}
	comparable := []types.T{
		types.BoolT, types.Int16T, types.Int32T, types.Int64T, types.NumericT, types.Float32T,
		types.Float64T, types.TextT, types.DateT, types.TimestampT, types.TimestampTZT, types.IntervalT,
		types.JSONBT,
	}
	comparable = append(comparable, types.ByteaT, types.UUIDT)
	for _, t := range comparable {
		for _, fn := range []string{ir.FnEq, ir.FnNe, ir.FnLt, ir.FnLe, ir.FnGt, ir.FnGe} {
			fn := fn
			reg(fn, ts(t, t), func(args []types.T, _ types.T) scalarFn {
				test := cmpTest(fn)
				cmp := comparer(args[0], args[1])
				return func(_ *kctx, a []types.Datum) (types.Datum, *sqlerr.Error) {
					return types.DBool(test(cmp(a[0], a[1]))), nil
				}
			})
		}
		reg(ir.FnIsDistinct, ts(t, t), func(args []types.T, _ types.T) scalarFn { return distinctKernel(args, true) })
		reg(ir.FnIsNotDistinct, ts(t, t), func(args []types.T, _ types.T) scalarFn { return distinctKernel(args, false) })
		reg(ir.FnIsNull, ts(t), func([]types.T, types.T) scalarFn {
			return func(_ *kctx, a []types.Datum) (types.Datum, *sqlerr.Error) { return types.DBool(a[0].Null), nil }
		})
		reg(ir.FnIsNotNull, ts(t), func([]types.T, types.T) scalarFn {
			return func(_ *kctx, a []types.Datum) (types.Datum, *sqlerr.Error) { return types.DBool(!a[0].Null), nil }
		})
		reg(ir.FnCoalesce, ts(t), func([]types.T, types.T) scalarFn {
			return func(_ *kctx, a []types.Datum) (types.Datum, *sqlerr.Error) {
				for _, d := range a {
					if !d.Null {
						return d, nil
					}
				}
				return types.Null, nil
			}
		})
		reg(ir.FnNullIf, ts(t, t), func(args []types.T, _ types.T) scalarFn {
			cmp := comparer(args[0], args[1])
			return func(_ *kctx, a []types.Datum) (types.Datum, *sqlerr.Error) {
				if !a[0].Null && !a[1].Null && cmp(a[0], a[1]) == 0 {
					return types.Null, nil
				}
				return a[0], nil
			}
		})
		reg(ir.FnSingleRow, ts(types.Int64T, t), func([]types.T, types.T) scalarFn {
			return func(_ *kctx, a []types.Datum) (types.Datum, *sqlerr.Error) {
				if !a[0].Null && a[0].I > 1 {
					return types.Null, errSubqueryRows
				}
				return a[1], nil
			}
		})
		reg(ir.FnGreatest, ts(t), func(args []types.T, _ types.T) scalarFn { return extremeKernel(args[0], 1) })
		reg(ir.FnLeast, ts(t), func(args []types.T, _ types.T) scalarFn { return extremeKernel(args[0], -1) })
	}
	b := types.BoolT
	reg(ir.FnAnd, ts(b), func([]types.T, types.T) scalarFn { return andOrKernel(false) })
	reg(ir.FnOr, ts(b), func([]types.T, types.T) scalarFn { return andOrKernel(true) })
	reg(ir.FnNot, ts(b), func([]types.T, types.T) scalarFn {
		return func(_ *kctx, a []types.Datum) (types.Datum, *sqlerr.Error) { return types.DBool(!a[0].Bool()), nil }
	})
	reg(ir.FnIsTrue, ts(b), func([]types.T, types.T) scalarFn {
		return func(_ *kctx, a []types.Datum) (types.Datum, *sqlerr.Error) {
			return types.DBool(!a[0].Null && a[0].Bool()), nil
		}
	})
	reg(ir.FnIsFalse, ts(b), func([]types.T, types.T) scalarFn {
		return func(_ *kctx, a []types.Datum) (types.Datum, *sqlerr.Error) {
			return types.DBool(!a[0].Null && !a[0].Bool()), nil
		}
	})
}

// --- arithmetic ---

func arithKernel(fn string, t types.T) scalarFn {
	switch t.Kind {
	case types.Int16, types.Int32, types.Int64:
		lo, hi := intBounds(t.Kind)
		rangeErr := intRangeErr(t.Kind)
		op := intOp(fn)
		return func(_ *kctx, a []types.Datum) (types.Datum, *sqlerr.Error) {
			r, err := op(a[0].I, a[1].I)
			if err != nil {
				return types.Null, err
			}
			if r.over || r.v < lo || r.v > hi {
				return types.Null, rangeErr
			}
			return types.DInt(r.v), nil
		}
	case types.Float32, types.Float64:
		f32 := t.Kind == types.Float32
		return func(_ *kctx, a []types.Datum) (types.Datum, *sqlerr.Error) {
			r, err := floatArith(fn, a[0].F, a[1].F, f32)
			return types.DFloat(r), err
		}
	case types.Numeric:
		return func(_ *kctx, a []types.Datum) (types.Datum, *sqlerr.Error) {
			return numArith(fn, a[0], a[1])
		}
	}
	return nil
}

type intResult struct {
	v    int64
	over bool
}

// intOp returns the int64 operation of fn with overflow detection; narrower
// types range-check the result afterwards.
func intOp(fn string) func(a, b int64) (intResult, *sqlerr.Error) {
	switch fn {
	case ir.FnAdd:
		return func(a, b int64) (intResult, *sqlerr.Error) {
			r := a + b
			return intResult{r, (a^r)&(b^r) < 0}, nil
		}
	case ir.FnSub:
		return func(a, b int64) (intResult, *sqlerr.Error) {
			r := a - b
			return intResult{r, (a^b)&(a^r) < 0}, nil
		}
	case ir.FnMul:
		return func(a, b int64) (intResult, *sqlerr.Error) {
			r, ok := mul64(a, b)
			return intResult{r, !ok}, nil
		}
	case ir.FnDiv:
		return func(a, b int64) (intResult, *sqlerr.Error) {
			switch {
			case b == 0:
				return intResult{}, errDivByZero
			case b == -1:
				return intResult{-a, a == math.MinInt64}, nil
			}
			return intResult{a / b, false}, nil
		}
	case ir.FnMod:
		return func(a, b int64) (intResult, *sqlerr.Error) {
			switch {
			case b == 0:
				return intResult{}, errDivByZero
			case b == -1:
				return intResult{}, nil
			}
			return intResult{a % b, false}, nil
		}
	case ir.FnBitAnd:
		return func(a, b int64) (intResult, *sqlerr.Error) { return intResult{a & b, false}, nil }
	case ir.FnBitOr:
		return func(a, b int64) (intResult, *sqlerr.Error) { return intResult{a | b, false}, nil }
	case ir.FnBitXor:
		return func(a, b int64) (intResult, *sqlerr.Error) { return intResult{a ^ b, false}, nil }
	}
	return nil
}

// mul64 multiplies with overflow detection.
func mul64(a, b int64) (int64, bool) {
	if a == 0 || b == 0 {
		return 0, true
	}
	r := a * b
	if (a == -1 && b == math.MinInt64) || (b == -1 && a == math.MinInt64) || r/b != a {
		return r, false
	}
	return r, true
}

// floatArith is PostgreSQL's float4/float8 arithmetic: IEEE, except that a
// finite result that overflows to infinity or underflows to zero is an error,
// and so is division by zero (but NaN / 0 is NaN).
func floatArith(fn string, a, b float64, f32 bool) (float64, *sqlerr.Error) {
	var r float64
	infOK, zeroOK := math.IsInf(a, 0) || math.IsInf(b, 0), true
	switch fn {
	case ir.FnAdd:
		r = a + b
	case ir.FnSub:
		r = a - b
	case ir.FnMul:
		r = a * b
		zeroOK = a == 0 || b == 0
	case ir.FnDiv:
		if b == 0 && !math.IsNaN(a) {
			return 0, errDivByZero
		}
		r = a / b
		infOK = math.IsInf(a, 0)
		zeroOK = a == 0 || math.IsInf(b, 0)
	}
	if f32 {
		// For + - * / of float32 values, rounding the exact float64 result
		// to float32 gives the float32 operation's result.
		r = float64(float32(r))
	}
	if math.IsInf(r, 0) && !infOK {
		return 0, errFloatOverflow
	}
	if r == 0 && !zeroOK {
		return 0, errFloatUnderflow
	}
	return r, nil
}

// numArith is + - * / % on unconstrained numerics (the arguments are
// brought to types.NumericT by normalize).
func numArith(fn string, a, b types.Datum) (types.Datum, *sqlerr.Error) {
	var r = a.Dec
	var ok bool
	switch fn {
	case ir.FnAdd:
		r, ok = dynAdd(a.Dec, b.Dec)
	case ir.FnSub:
		r, ok = dynSub(a.Dec, b.Dec)
	case ir.FnMul:
		r, ok = dynMul(a.Dec, b.Dec)
	case ir.FnDiv:
		if dynIsZero(b.Dec) {
			return types.Null, errDivByZero
		}
		r, ok = dynDiv(a.Dec, b.Dec)
	case ir.FnMod:
		if dynIsZero(b.Dec) {
			return types.Null, errDivByZero
		}
		r, ok = dynMod(a.Dec, b.Dec)
	}
	if !ok {
		return types.Null, errNumericOverflow
	}
	return types.DNumeric(r), nil
}

func negKernel(t types.T) scalarFn {
	switch t.Kind {
	case types.Int16, types.Int32, types.Int64:
		lo, _ := intBounds(t.Kind)
		err := intRangeErr(t.Kind)
		return func(_ *kctx, a []types.Datum) (types.Datum, *sqlerr.Error) {
			if a[0].I == lo {
				return types.Null, err
			}
			return types.DInt(-a[0].I), nil
		}
	case types.Float32, types.Float64:
		return func(_ *kctx, a []types.Datum) (types.Datum, *sqlerr.Error) { return types.DFloat(-a[0].F), nil }
	case types.Numeric:
		return func(_ *kctx, a []types.Datum) (types.Datum, *sqlerr.Error) {
			return types.DNumeric(dynNeg(a[0].Dec)), nil
		}
	case types.Interval:
		return func(_ *kctx, a []types.Datum) (types.Datum, *sqlerr.Error) {
			iv, ok := negInterval(a[0].Ivl)
			if !ok {
				return types.Null, errIntervalRange
			}
			return types.DInterval(iv), nil
		}
	}
	return nil
}

func absKernel(t types.T) scalarFn {
	switch t.Kind {
	case types.Int16, types.Int32, types.Int64:
		lo, _ := intBounds(t.Kind)
		err := intRangeErr(t.Kind)
		return func(_ *kctx, a []types.Datum) (types.Datum, *sqlerr.Error) {
			v := a[0].I
			if v == lo {
				return types.Null, err
			}
			if v < 0 {
				v = -v
			}
			return types.DInt(v), nil
		}
	case types.Float32, types.Float64:
		return func(_ *kctx, a []types.Datum) (types.Datum, *sqlerr.Error) {
			return types.DFloat(math.Abs(a[0].F)), nil
		}
	case types.Numeric:
		return func(_ *kctx, a []types.Datum) (types.Datum, *sqlerr.Error) {
			return types.DNumeric(dynAbs(a[0].Dec)), nil
		}
	}
	return nil
}

// --- comparisons ---

// comparer returns the three-way comparison of non-NULL values of types a and
// b (the same kind; numerics may differ in scale).
func comparer(a, b types.T) func(x, y types.Datum) int {
	if a.Kind == types.Numeric {
		return func(x, y types.Datum) int { return numCompareTypes(a, x.Dec, b, y.Dec) }
	}
	return func(x, y types.Datum) int { return types.Compare(a, x, y) }
}

func cmpTest(fn string) func(c int) bool {
	switch fn {
	case ir.FnEq:
		return func(c int) bool { return c == 0 }
	case ir.FnNe:
		return func(c int) bool { return c != 0 }
	case ir.FnLt:
		return func(c int) bool { return c < 0 }
	case ir.FnLe:
		return func(c int) bool { return c <= 0 }
	case ir.FnGt:
		return func(c int) bool { return c > 0 }
	case ir.FnGe:
		return func(c int) bool { return c >= 0 }
	}
	return nil
}

func distinctKernel(args []types.T, distinct bool) scalarFn {
	cmp := comparer(args[0], args[1])
	return func(_ *kctx, a []types.Datum) (types.Datum, *sqlerr.Error) {
		var same bool
		switch {
		case a[0].Null || a[1].Null:
			same = a[0].Null == a[1].Null
		default:
			same = cmp(a[0], a[1]) == 0
		}
		return types.DBool(same != distinct), nil
	}
}

// extremeKernel is greatest (sign 1) or least (-1): NULLs are ignored; the
// result is NULL only if every argument is.
func extremeKernel(t types.T, sign int) scalarFn {
	return func(_ *kctx, a []types.Datum) (types.Datum, *sqlerr.Error) {
		best := types.Null
		for _, d := range a {
			if d.Null {
				continue
			}
			if best.Null || types.Compare(t, d, best)*sign > 0 {
				best = d
			}
		}
		return best, nil
	}
}

// andOrKernel is three-valued AND (or OR when isOr) over any number of
// arguments.
func andOrKernel(isOr bool) scalarFn {
	return func(_ *kctx, a []types.Datum) (types.Datum, *sqlerr.Error) {
		sawNull := false
		for _, d := range a {
			switch {
			case d.Null:
				sawNull = true
			case d.Bool() == isOr:
				return types.DBool(isOr), nil
			}
		}
		if sawNull {
			return types.Null, nil
		}
		return types.DBool(!isOr), nil
	}
}
