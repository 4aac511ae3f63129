package eval

import (
	"math"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/bitutil"
	"github.com/streamsql/streamsql/ir"
	"github.com/streamsql/streamsql/sqlerr"
	"github.com/streamsql/streamsql/types"
)

// The double precision math functions follow PostgreSQL's float.c: the same
// domain checks and errors, and the degree variants computed so that they
// are exact at the angles where the result is rational (sind(30) = 0.5,
// tand(45) = 1). The transcendental functions themselves are Go's math
// package, which may differ from the C library PostgreSQL calls in the last
// binary digit.

var (
	errInputRange  = sqlerr.New(sqlerr.NumericValueOutOfRange, "input is out of range")
	errBucketCount = sqlerr.New(codeInvalidBucket, "count must be greater than zero")
	errBucketNaN   = sqlerr.New(codeInvalidBucket, "operand, lower bound, and upper bound cannot be NaN")
	errBucketInf   = sqlerr.New(codeInvalidBucket, "lower and upper bounds must be finite")
	errBucketEqual = sqlerr.New(codeInvalidBucket, "lower bound cannot equal upper bound")
)

// codeInvalidBucket is SQLSTATE 2201G (invalid_argument_for_width_bucket_function).
const codeInvalidBucket = "2201G"

// float1 is a function of one double precision value.
type float1 func(x float64) (float64, *sqlerr.Error)

// floatUnary holds the kernels of sql's one-argument double precision math
// functions; both the row kernels and the vectorized node use them.
var floatUnary = map[string]float1{
	ir.FnSin: periodic(math.Sin, false),
	ir.FnCos: periodic(math.Cos, false),
	ir.FnTan: periodic(math.Tan, true),
	ir.FnCot: func(x float64) (float64, *sqlerr.Error) {
		if math.IsNaN(x) {
			return x, nil
		}
		if math.IsInf(x, 0) {
			return 0, errInputRange
		}
		return 1 / math.Tan(x), nil // cot(0) is Infinity, not an error
	},
	ir.FnAsin:  inverseTrig(math.Asin),
	ir.FnAcos:  inverseTrig(math.Acos),
	ir.FnAtan:  func(x float64) (float64, *sqlerr.Error) { return math.Atan(x), nil },
	ir.FnSind:  degreeFn(sind),
	ir.FnCosd:  degreeFn(cosd),
	ir.FnTand:  degreeFn(tand),
	ir.FnCotd:  degreeFn(cotd),
	ir.FnAsind: inverseTrig(asind),
	ir.FnAcosd: inverseTrig(acosd),
	ir.FnAtand: func(x float64) (float64, *sqlerr.Error) {
		if math.IsNaN(x) {
			return x, nil
		}
		return math.Atan(x) / atan1 * 45, nil
	},
	ir.FnSinh: func(x float64) (float64, *sqlerr.Error) { return math.Sinh(x), nil },
	ir.FnCosh: func(x float64) (float64, *sqlerr.Error) { return math.Cosh(x), nil },
	ir.FnTanh: func(x float64) (float64, *sqlerr.Error) { return math.Tanh(x), nil },
	ir.FnAsinh: func(x float64) (float64, *sqlerr.Error) {
		return math.Asinh(x), nil
	},
	ir.FnAcosh: func(x float64) (float64, *sqlerr.Error) {
		if x < 1 {
			return 0, errInputRange
		}
		return math.Acosh(x), nil
	},
	ir.FnAtanh: func(x float64) (float64, *sqlerr.Error) {
		if x < -1 || x > 1 {
			return 0, errInputRange
		}
		return math.Atanh(x), nil // ±Infinity at ±1
	},
	ir.FnDegrees: func(x float64) (float64, *sqlerr.Error) { return checkFloat(x/radiansPerDegree, x) },
	ir.FnRadians: func(x float64) (float64, *sqlerr.Error) {
		r, err := checkFloat(x*radiansPerDegree, x)
		if err == nil && r == 0 && x != 0 {
			return 0, errFloatUnderflow
		}
		return r, err
	},
	ir.FnCbrt: func(x float64) (float64, *sqlerr.Error) { return math.Cbrt(x), nil },
}

// radiansPerDegree is PostgreSQL's RADIANS_PER_DEGREE. It is a variable so
// that products with it round as the C code's do (a Go constant expression
// such as 30 * radiansPerDegree would be computed exactly).
var radiansPerDegree = 0.0174532925199432957692

// checkFloat is PostgreSQL's overflow check: an infinite result from a finite
// argument is an error.
func checkFloat(r, x float64) (float64, *sqlerr.Error) {
	if math.IsInf(r, 0) && !math.IsInf(x, 0) {
		return 0, errFloatOverflow
	}
	return r, nil
}

// periodic wraps sin, cos or tan: NaN passes, an infinite argument is out of
// range, and (but for tan) an infinite result is an overflow.
func periodic(f func(float64) float64, infOK bool) float1 {
	return func(x float64) (float64, *sqlerr.Error) {
		if math.IsNaN(x) {
			return x, nil
		}
		if math.IsInf(x, 0) {
			return 0, errInputRange
		}
		r := f(x)
		if math.IsInf(r, 0) && !infOK {
			return 0, errFloatOverflow
		}
		return r, nil
	}
}

// inverseTrig wraps a function defined on [-1, 1].
func inverseTrig(f func(float64) float64) float1 {
	return func(x float64) (float64, *sqlerr.Error) {
		if math.IsNaN(x) {
			return x, nil
		}
		if x < -1 || x > 1 {
			return 0, errInputRange
		}
		return f(x), nil
	}
}

// degreeFn wraps a function of an angle in degrees.
func degreeFn(f func(float64) float64) float1 {
	return func(x float64) (float64, *sqlerr.Error) {
		if math.IsNaN(x) {
			return x, nil
		}
		if math.IsInf(x, 0) {
			return 0, errInputRange
		}
		return f(x), nil
	}
}

// Constants of the degree functions, computed as PostgreSQL computes them so
// that the scaled results are exact at 30, 45, 60 and 90 degrees.
var (
	sin30         = math.Sin(30 * radiansPerDegree)
	oneMinusCos60 = 1 - math.Cos(60*radiansPerDegree)
	asin05        = math.Asin(0.5)
	acos05        = math.Acos(0.5)
	atan1         = math.Atan(1)
	tan45         = sindQ1(45) / cosdQ1(45)
	cot45         = cosdQ1(45) / sindQ1(45)
)

func sind0To30(x float64) float64 { return math.Sin(x*radiansPerDegree) / sin30 / 2 }

func cosd0To60(x float64) float64 {
	return 1 - ((1-math.Cos(x*radiansPerDegree))/oneMinusCos60)/2
}

// sindQ1 is the sine of x in [0, 90] degrees.
func sindQ1(x float64) float64 {
	if x <= 30 {
		return sind0To30(x)
	}
	return cosd0To60(90 - x)
}

// cosdQ1 is the cosine of x in [0, 90] degrees.
func cosdQ1(x float64) float64 {
	if x <= 60 {
		return cosd0To60(x)
	}
	return sind0To30(90 - x)
}

func sind(x float64) float64 {
	sign := 1.0
	x = math.Mod(x, 360)
	if x < 0 {
		x, sign = -x, -sign
	}
	if x > 180 {
		x, sign = x-180, -sign
	}
	if x > 90 {
		x = 180 - x
	}
	return sign * sindQ1(x)
}

func cosd(x float64) float64 {
	sign := 1.0
	x = math.Mod(x, 360)
	if x < 0 {
		x = -x
	}
	if x > 180 {
		x = 360 - x
	}
	if x > 90 {
		x, sign = 180-x, -sign
	}
	return sign * cosdQ1(x)
}

// quadrant1 folds an angle in degrees into [0, 90] for tan and cot and
// returns the sign of the result.
func quadrant1(x float64) (float64, float64) {
	sign := 1.0
	x = math.Mod(x, 360)
	if x < 0 {
		x, sign = -x, -sign
	}
	if x > 180 {
		x, sign = 360-x, -sign
	}
	if x > 90 {
		x, sign = 180-x, -sign
	}
	return x, sign
}

func tand(x float64) float64 {
	x, sign := quadrant1(x)
	r := sign * (sindQ1(x) / cosdQ1(x) / tan45)
	if r == 0 {
		r = 0 // no minus zero
	}
	return r
}

func cotd(x float64) float64 {
	x, sign := quadrant1(x)
	r := sign * (cosdQ1(x) / sindQ1(x) / cot45)
	if r == 0 {
		r = 0
	}
	return r
}

// asindQ1 and acosdQ1 are asind and acosd of x in [0, 1].
func asindQ1(x float64) float64 {
	if x <= 0.5 {
		return math.Asin(x) / asin05 * 30
	}
	return 90 - math.Acos(x)/acos05*60
}

func acosdQ1(x float64) float64 {
	if x <= 0.5 {
		return 90 - math.Asin(x)/asin05*30
	}
	return math.Acos(x) / acos05 * 60
}

func asind(x float64) float64 {
	if x >= 0 {
		return asindQ1(x)
	}
	return -asindQ1(-x)
}

func acosd(x float64) float64 {
	if x >= 0 {
		return acosdQ1(x)
	}
	return 90 + asindQ1(-x)
}

func atan2Kernel(degrees bool) scalarFn {
	return func(_ *kctx, a []types.Datum) (types.Datum, *sqlerr.Error) {
		y, x := a[0].F, a[1].F
		if math.IsNaN(y) || math.IsNaN(x) {
			return types.DFloat(math.NaN()), nil
		}
		r := math.Atan2(y, x)
		if degrees {
			r = r / atan1 * 45
		}
		return types.DFloat(r), nil
	}
}

// widthBucketFloat is PostgreSQL's width_bucket_float8.
func widthBucketFloat(op, b1, b2 float64, count int64) (int64, *sqlerr.Error) {
	switch {
	case count <= 0:
		return 0, errBucketCount
	case math.IsNaN(op) || math.IsNaN(b1) || math.IsNaN(b2):
		return 0, errBucketNaN
	case math.IsInf(b1, 0) || math.IsInf(b2, 0):
		return 0, errBucketInf
	case b1 == b2:
		return 0, errBucketEqual
	}
	lo, hi, x := b1, b2, op
	if b1 > b2 {
		// Reversed bounds count from b1 down.
		lo, hi, x = -b1, -b2, -op
	}
	switch {
	case x < lo:
		return 0, nil
	case x >= hi:
		if count == math.MaxInt32 {
			return 0, errInt4Range
		}
		return count + 1, nil
	}
	var q float64
	if !math.IsInf(hi-lo, 0) {
		q = float64(count) * ((x - lo) / (hi - lo))
	} else {
		q = float64(count) * ((x/2 - lo/2) / (hi/2 - lo/2))
	}
	r := int64(q)
	if r >= count {
		r = count - 1 // the quotient rounded up to 1
	}
	return r + 1, nil
}

// gcdU64 is Euclid's algorithm.
func gcdU64(a, b uint64) uint64 {
	for b != 0 {
		a, b = b, a%b
	}
	return a
}

func absU64(v int64) uint64 {
	if v < 0 {
		return uint64(-(v + 1)) + 1
	}
	return uint64(v)
}

// gcdKernel and lcmKernel are gcd and lcm of integers of kind k: the result
// is never negative, and one that does not fit (gcd(min, 0)) is out of range.
func gcdKernel(k types.Kind) scalarFn {
	_, hi := intBounds(k)
	rangeErr := intRangeErr(k)
	return func(_ *kctx, a []types.Datum) (types.Datum, *sqlerr.Error) {
		g := gcdU64(absU64(a[0].I), absU64(a[1].I))
		if g > uint64(hi) {
			return types.Null, rangeErr
		}
		return types.DInt(int64(g)), nil
	}
}

func lcmKernel(k types.Kind) scalarFn {
	_, hi := intBounds(k)
	rangeErr := intRangeErr(k)
	return func(_ *kctx, a []types.Datum) (types.Datum, *sqlerr.Error) {
		x, y := absU64(a[0].I), absU64(a[1].I)
		if x == 0 || y == 0 {
			return types.DInt(0), nil
		}
		x /= gcdU64(x, y)
		if x > uint64(hi)/y {
			return types.Null, rangeErr
		}
		return types.DInt(int64(x * y)), nil
	}
}

func init() {
	f8, i4, i8 := types.Float64T, types.Int32T, types.Int64T
	for fn, f := range floatUnary {
		f := f
		reg(fn, ts(f8), fixed(func(_ *kctx, a []types.Datum) (types.Datum, *sqlerr.Error) {
			r, err := f(a[0].F)
			return types.DFloat(r), err
		}))
	}
	reg(ir.FnAtan2, ts(f8, f8), fixed(atan2Kernel(false)))
	reg(ir.FnAtan2d, ts(f8, f8), fixed(atan2Kernel(true)))
	reg(ir.FnPi, nil, fixed(func(*kctx, []types.Datum) (types.Datum, *sqlerr.Error) {
		return types.DFloat(math.Pi), nil
	}))
	reg(ir.FnRandom, nil, fixed(random))
	reg(ir.FnSetseed, ts(f8), fixed(setseed))
	for _, t := range []types.T{i4, i8} {
		reg(ir.FnGcd, ts(t, t), func(args []types.T, _ types.T) scalarFn { return gcdKernel(args[0].Kind) })
		reg(ir.FnLcm, ts(t, t), func(args []types.T, _ types.T) scalarFn { return lcmKernel(args[0].Kind) })
	}
	reg(ir.FnWidthBucket, ts(f8, f8, f8, i4), fixed(func(_ *kctx, a []types.Datum) (types.Datum, *sqlerr.Error) {
		r, err := widthBucketFloat(a[0].F, a[1].F, a[2].F, a[3].I)
		return types.DInt(r), err
	}))
}

// floatMapNode applies a double precision function to a whole column.
type floatMapNode struct {
	arg node
	f   float1
}

func (n *floatMapNode) typ() types.T { return types.Float64T }

func (n *floatMapNode) eval(c *ectx, rec arrow.RecordBatch) (arrow.Array, error) {
	col, err := n.arg.eval(c, rec)
	if err != nil {
		return nil, err
	}
	defer col.Release()
	in := fixedVals[float64](col)
	valid := andValidity(c.mem, c.n, col)
	out, vals := allocFixed[float64](c.mem, c.n)
	for i := range vals {
		if valid != nil && !bitutil.BitIsSet(valid.Bytes(), i) {
			vals[i] = 0
			continue
		}
		r, kerr := n.f(in[i])
		if kerr != nil {
			if err := c.rowErr(i, kerr); err != nil {
				out.Release()
				if valid != nil {
					valid.Release()
				}
				return nil, err
			}
			if valid == nil {
				valid = allocBits(c.mem, c.n, true)
			}
			bitutil.ClearBit(valid.Bytes(), i)
			r = 0
		}
		vals[i] = r
	}
	return makeArray(arrow.PrimitiveTypes.Float64, c.n, valid, out), nil
}

// compileMathFast returns a vectorized node for the one-argument double
// precision functions, or nil.
func compileMathFast(fnName string, args []node, argTypes []types.T) node {
	f, ok := floatUnary[fnName]
	if !ok || len(args) != 1 || argTypes[0].Kind != types.Float64 {
		return nil
	}
	return &floatMapNode{arg: args[0], f: f}
}
