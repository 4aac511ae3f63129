package ir

import "github.com/streamsql/streamsql/types"

// Math functions beyond the arithmetic operators, with PostgreSQL's
// signatures: the trigonometric and hyperbolic functions take and return
// double precision; sqrt, exp, ln, log and power exist for numeric too (an
// integer argument takes the double precision one, as in PostgreSQL).
const (
	FnSin    = "sin"
	FnCos    = "cos"
	FnTan    = "tan"
	FnCot    = "cot"
	FnAsin   = "asin"
	FnAcos   = "acos"
	FnAtan   = "atan"
	FnAtan2  = "atan2"
	FnSind   = "sind" // the d variants work in degrees, exact at multiples of 30 and 45
	FnCosd   = "cosd"
	FnTand   = "tand"
	FnCotd   = "cotd"
	FnAsind  = "asind"
	FnAcosd  = "acosd"
	FnAtand  = "atand"
	FnAtan2d = "atan2d"
	FnSinh   = "sinh"
	FnCosh   = "cosh"
	FnTanh   = "tanh"
	FnAsinh  = "asinh"
	FnAcosh  = "acosh"
	FnAtanh  = "atanh"

	FnDegrees = "degrees"
	FnRadians = "radians"
	FnPi      = "pi"
	FnCbrt    = "cbrt"
	// FnIntDiv is div(numeric, numeric): the quotient truncated toward zero
	// (the name div is the / operator's).
	FnIntDiv = "$div"
	FnGcd    = "gcd"
	FnLcm    = "lcm"
	// FnWidthBucket is width_bucket(operand, low, high, count): the bucket
	// (1..count, 0 below, count+1 at or above) of operand in count equal
	// buckets from low to high (or high to low when low > high).
	FnWidthBucket = "width_bucket"
	FnFactorial   = "factorial" // factorial(bigint) -> numeric
	// FnRandom is random(): volatile, refused in materialized views.
	FnRandom = "random"
)

// floatMathFns are the functions of one double precision argument.
var floatMathFns = []string{
	FnSin, FnCos, FnTan, FnCot, FnAsin, FnAcos, FnAtan,
	FnSind, FnCosd, FnTand, FnCotd, FnAsind, FnAcosd, FnAtand,
	FnSinh, FnCosh, FnTanh, FnAsinh, FnAcosh, FnAtanh,
	FnDegrees, FnRadians, FnCbrt,
}

func init() {
	i4, i8, f8, num := types.Int32T, types.Int64T, types.Float64T, types.NumericT
	for _, fn := range floatMathFns {
		def(fn, f8, f8)
	}
	def(FnAtan2, f8, f8, f8)
	def(FnAtan2d, f8, f8, f8)
	def(FnPi, f8)
	for _, fn := range []string{FnSqrt, FnExp, FnLn, FnLog10} {
		def(fn, num, num)
	}
	def(FnLog10, num, num, num) // log(base, x)
	def(FnPower, num, num, num)
	def(FnIntDiv, num, num, num)
	for _, t := range []types.T{i4, i8, num} {
		def(FnGcd, t, t, t)
		def(FnLcm, t, t, t)
	}
	def(FnWidthBucket, i4, f8, f8, f8, i4)
	def(FnWidthBucket, i4, num, num, num, i4)
	def(FnFactorial, num, i8)
	def(FnRandom, f8)
}

// Volatile reports whether fn returns a new value at each call (random), so
// that a call must be evaluated once per row and never in a materialized view.
func Volatile(fn string) bool { return fn == FnRandom || fn == FnGenRandomUUID || fn == FnSetseed }
