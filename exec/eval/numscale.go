package eval

import (
	"math"

	"github.com/cockroachdb/apd/v3"
)

// The display scales PostgreSQL's numeric.c gives the results of sqrt, exp,
// ln, log and power: enough digits for NUMERIC_MIN_SIG_DIGITS (16)
// significant ones given an estimate of the result's magnitude, and never
// less than an input's display scale.

const minSigDigits = 16

// decWeight is the decimal exponent of x's leading digit (0 for zero).
func decWeight(x *apd.Decimal) int32 {
	if x.Coeff.Sign() == 0 {
		return 0
	}
	return int32(x.NumDigits()) + x.Exponent - 1
}

// nbaseWeight is the weight of x in PostgreSQL's base-10000 digits.
func nbaseWeight(x *apd.Decimal) int32 { return decWeight(x) >> 2 }

func apdFloat(x *apd.Decimal) float64 {
	f, _ := x.Float64()
	return f
}

// sqrtScale is numeric_sqrt's: the result has about half the digits.
func sqrtScale(x *apd.Decimal, dscale int32) int32 {
	sweight := (nbaseWeight(x)+1)*4/2 - 1
	return max(minSigDigits-sweight, dscale, 0)
}

// expScale is numeric_exp's: log10(e^x) = x·log10(e).
func expScale(x *apd.Decimal, dscale int32) int32 {
	val := apdFloat(x) * 0.434294481903252
	val = max(min(val, 2000), -2000)
	return max(minSigDigits-int32(val), dscale, 0)
}

// lnDweight is estimate_ln_dweight: the decimal weight of ln(x).
func lnDweight(x *apd.Decimal) int32 {
	if x.Sign() <= 0 {
		return 0
	}
	f := apdFloat(x)
	if f >= 0.9 && f <= 1.1 {
		// ln(1+d) ~ d.
		var d apd.Decimal
		if _, err := apdCtx.Sub(&d, x, apd.New(1, 0)); err != nil || d.IsZero() {
			return 0
		}
		return decWeight(&d)
	}
	return int32(math.Log10(math.Abs(math.Log(f))))
}

func lnScale(x *apd.Decimal, dscale int32) int32 {
	return max(minSigDigits-lnDweight(x), dscale, 0)
}

// logScale is log_var's for log(base, x).
func logScale(base, x *apd.Decimal, dbase, dx int32) int32 {
	return max(minSigDigits-(lnDweight(x)-lnDweight(base)), dbase, dx, 0)
}

// log10Scale is log(10, x)'s.
func log10Scale(x *apd.Decimal, dscale int32) int32 {
	return logScale(apd.New(10, 0), x, 0, dscale)
}

// powerScale is power_var's: an integral exponent (power_var_int) gives 16
// decimals, another one enough for 16 significant digits of a result whose
// decimal weight is about y·log10|x|; never less than an input's scale.
func powerScale(x, y *apd.Decimal, dx, dy int32) int32 {
	var frac apd.Decimal
	if _, err := apdCtx.Rem(&frac, y, apd.New(1, 0)); err == nil && frac.IsZero() || x.IsZero() {
		return max(minSigDigits, dx, dy)
	}
	fx, fy := math.Abs(apdFloat(x)), apdFloat(y)
	val := fy * math.Log10(fx)
	val = max(min(val, 2000), -2000)
	return max(minSigDigits-int32(val), dx, dy, 0)
}
