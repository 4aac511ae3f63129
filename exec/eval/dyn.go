package eval

import (
	"bytes"
	"math"
	"math/bits"
	"strconv"

	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/streamsql/streamsql/sqlerr"
	"github.com/streamsql/streamsql/types"
)

// Unconstrained numeric values carry their own display scale (dscale, see
// types.PackNumeric). The operators here follow PostgreSQL's numeric.c for
// the result's display scale: + and - take the larger input scale, * the
// sum of the input scales, / the scale of select_div_scale, % the larger
// one. A result with more than types.DynDigits significant digits (or a
// scale above types.DynMaxScale) loses fraction digits, rounded half away
// from zero; only an integer part of more than DynDigits digits is an
// overflow. Nothing here allocates.

// dynLimit is 10^DynDigits, the exclusive bound of a packed mantissa.
var dynLimit = pow10[types.DynDigits]

// numDigits returns the number of decimal digits of m (0 for zero).
func numDigits(m u128) int32 {
	n := int32(0)
	for n <= 38 && !m.less(pow10[n]) {
		n++
	}
	return n
}

// digits256 returns the number of decimal digits of p.
func digits256(p [4]uint64) int32 {
	n := int32(0)
	for p[2] != 0 || p[3] != 0 {
		p, _ = divmod256(p, pow10[19])
		n += 19
	}
	return n + numDigits(u128{hi: p[1], lo: p[0]})
}

// roundDiv256 divides p by 10^k (k >= 1), rounding half away from zero.
func roundDiv256(p [4]uint64, k int32) [4]uint64 {
	for k > 19 {
		p, _ = divmod256(p, pow10[19])
		k -= 19
	}
	// Only the first dropped digit decides half away from zero.
	if k > 1 {
		p, _ = divmod256(p, pow10[k-1])
	}
	q, r := divmod256(p, pow10[1])
	if r.lo >= 5 {
		q = inc256(q)
	}
	return q
}

// dynFit packs the value ±mag·10^-scale (scale >= 0), dropping fraction
// digits beyond DynDigits significant digits or DynMaxScale. ok is false if
// the integer part has more than DynDigits digits.
func dynFit(neg bool, mag [4]uint64, scale int32) (decimal128.Num, bool) {
	drop := max(digits256(mag)-types.DynDigits, scale-types.DynMaxScale, 0)
	if drop > 0 {
		if drop > scale {
			return decimal128.Num{}, false
		}
		mag = roundDiv256(mag, drop)
		scale -= drop
		if m, ok := fitsDyn(mag); !ok || !m.less(dynLimit) {
			// Rounding carried into another digit: 10^36 exactly.
			if scale == 0 {
				return decimal128.Num{}, false
			}
			mag, scale = [4]uint64{pow10[types.DynDigits-1].lo, pow10[types.DynDigits-1].hi}, scale-1
		}
	}
	m := u128{hi: mag[1], lo: mag[0]}
	return types.PackNumeric(fromMagnitude(neg && !m.isZero(), m), scale), true
}

func fitsDyn(p [4]uint64) (u128, bool) {
	m := u128{hi: p[1], lo: p[0]}
	return m, p[2] == 0 && p[3] == 0
}

// dynParts returns the sign, magnitude and scale of the packed slot p.
func dynParts(p decimal128.Num) (neg bool, m u128, scale int32) {
	n, s := types.UnpackNumeric(p)
	neg, m = magnitude(n)
	return neg, m, s
}

// dynFromParts packs mantissa n at scale (any numeric mantissa: up to 38
// digits) as an unconstrained numeric.
func dynFromParts(n decimal128.Num, scale int32) (decimal128.Num, bool) {
	neg, m := magnitude(n)
	if m.less(dynLimit) && scale <= types.DynMaxScale {
		return types.PackNumeric(n, scale), true
	}
	return dynFit(neg, [4]uint64{m.lo, m.hi}, scale)
}

// dynInt packs the integer v.
func dynInt(v int64) decimal128.Num { return types.PackNumeric(decimal128.FromI64(v), 0) }

// shiftUp returns m·10^k as 256 bits; m·10^k must stay below 10^76.
func shiftUp(m u128, k int32) [4]uint64 {
	if k <= 38 {
		return mul128(m, pow10[k])
	}
	p := mul128(m, pow10[k-38])
	return mul128(u128{hi: p[1], lo: p[0]}, pow10[38])
}

// add256 and sub256 are 256-bit addition and subtraction (a >= b for sub).
func add256(a, b [4]uint64) (r [4]uint64) {
	var c uint64
	r[0], c = bits.Add64(a[0], b[0], 0)
	r[1], c = bits.Add64(a[1], b[1], c)
	r[2], c = bits.Add64(a[2], b[2], c)
	r[3], _ = bits.Add64(a[3], b[3], c)
	return r
}

func sub256(a, b [4]uint64) (r [4]uint64) {
	var c uint64
	r[0], c = bits.Sub64(a[0], b[0], 0)
	r[1], c = bits.Sub64(a[1], b[1], c)
	r[2], c = bits.Sub64(a[2], b[2], c)
	r[3], _ = bits.Sub64(a[3], b[3], c)
	return r
}

func less256(a, b [4]uint64) bool {
	for i := 3; i >= 0; i-- {
		if a[i] != b[i] {
			return a[i] < b[i]
		}
	}
	return false
}

// maxAlign bounds how far addition brings an operand up: 36 + 40 digits fit
// 256 bits. Digits of the other operand that lie further down cannot reach a
// 36-digit result unless the first operand is zero (handled apart).
const maxAlign = 40

// dynAddParts returns ±ma·10^-sa + ±mb·10^-sb at scale max(sa, sb).
func dynAddParts(na bool, ma u128, sa int32, nb bool, mb u128, sb int32) (decimal128.Num, bool) {
	if sa < sb {
		na, ma, sa, nb, mb, sb = nb, mb, sb, na, ma, sa
	}
	// Now sa >= sb: bring b up to sa.
	scale := sa
	if mb.isZero() {
		return dynFit(na, [4]uint64{ma.lo, ma.hi}, scale)
	}
	a := [4]uint64{ma.lo, ma.hi}
	if sa-sb > maxAlign {
		// a's low digits lie below any 36-digit result around b.
		a = roundDiv256(a, sa-sb-maxAlign)
		sa = sb + maxAlign
	}
	b := shiftUp(mb, sa-sb)
	var r [4]uint64
	neg := na
	switch {
	case na == nb:
		r = add256(a, b)
	case less256(a, b):
		r, neg = sub256(b, a), nb
	default:
		r = sub256(a, b)
	}
	res, ok := dynFit(neg, r, sa)
	if ok && sa < scale {
		// Show the display scale PostgreSQL shows, as far as it fits.
		res = dynPad(res, scale)
	}
	return res, ok
}

// dynPad raises the display scale of p towards scale while the mantissa
// stays within DynDigits digits.
func dynPad(p decimal128.Num, scale int32) decimal128.Num {
	neg, m, s := dynParts(p)
	k := min(scale, types.DynMaxScale) - s
	if room := types.DynDigits - numDigits(m); k > room {
		k = room
	}
	if k <= 0 {
		return p
	}
	r := mul128(m, pow10[k])
	return types.PackNumeric(fromMagnitude(neg, u128{hi: r[1], lo: r[0]}), s+k)
}

func dynAdd(a, b decimal128.Num) (decimal128.Num, bool) {
	na, ma, sa := dynParts(a)
	nb, mb, sb := dynParts(b)
	return dynAddParts(na, ma, sa, nb, mb, sb)
}

func dynSub(a, b decimal128.Num) (decimal128.Num, bool) {
	na, ma, sa := dynParts(a)
	nb, mb, sb := dynParts(b)
	return dynAddParts(na, ma, sa, !nb, mb, sb)
}

// dynMul returns a*b at scale sa+sb.
func dynMul(a, b decimal128.Num) (decimal128.Num, bool) {
	na, ma, sa := dynParts(a)
	nb, mb, sb := dynParts(b)
	return dynFit(na != nb, mul128(ma, mb), sa+sb)
}

// nbaseFirst returns PostgreSQL's base-10000 weight and first base-10000
// digit of m·10^-scale (0, 0 for zero).
func nbaseFirst(m u128, scale int32) (weight, first int32) {
	nd := numDigits(m)
	if nd == 0 {
		return 0, 0
	}
	e := nd - 1 - scale // decimal exponent of the leading digit
	weight = e >> 2     // floor(e/4)
	lead := e - 4*weight + 1
	if nd < lead {
		return weight, int32(mul128(m, pow10[lead-nd])[0])
	}
	q, _ := divmod256([4]uint64{m.lo, m.hi}, pow10[nd-lead])
	return weight, int32(q[0])
}

// divScale is PostgreSQL's select_div_scale: enough digits for 16
// significant ones (NUMERIC_MIN_SIG_DIGITS), at least either input's scale.
func divScale(ma u128, sa int32, mb u128, sb int32) int32 {
	w1, f1 := nbaseFirst(ma, sa)
	w2, f2 := nbaseFirst(mb, sb)
	qweight := w1 - w2
	if f1 <= f2 {
		qweight--
	}
	return max(16-qweight*4, sa, sb, 0)
}

// dynDivParts returns ±ma·10^-sa / ±mb·10^-sb (mb != 0) rounded half away
// from zero at scale rscale (as far as DynDigits digits allow).
func dynDivParts(na bool, ma u128, sa int32, nb bool, mb u128, sb int32, rscale int32) (decimal128.Num, bool) {
	if ma.isZero() {
		return types.PackNumeric(decimal128.Num{}, min(rscale, types.DynMaxScale)), true
	}
	// The quotient has at most intDigits integer digits.
	intDigits := (numDigits(ma) - sa) - (numDigits(mb) - sb) + 1
	if intDigits > types.DynDigits+1 {
		return decimal128.Num{}, false
	}
	// Compute one digit beyond DynDigits at most, so that dynFit rounds a
	// quotient whose estimate was one digit high.
	s := min(rscale, types.DynMaxScale, types.DynDigits+1-intDigits)
	// q = ma·10^(s+sb-sa) / mb. With s bounded so, the shift k is not
	// negative (s >= sa unless the digit bound decides, and then k >= 1)
	// and the numerator stays below 10^73.
	k := s + sb - sa
	q, r := divmod256(shiftUp(ma, k), mb)
	if digits256(q) > types.DynDigits && s > 0 {
		// Drop the extra digit from the truncated quotient: the dropped
		// part is at least half exactly when that digit is 5 or more.
		q, s = roundDiv256(q, 1), s-1
	} else {
		q = roundQuotient(q, r, mb)
	}
	res, ok := dynFit(na != nb, q, s)
	if ok && s < rscale {
		res = dynPad(res, rscale)
	}
	return res, ok
}

// dynDiv returns a/b with PostgreSQL's display scale; ok is false on
// overflow or division by zero (the caller tells them apart).
func dynDiv(a, b decimal128.Num) (decimal128.Num, bool) {
	na, ma, sa := dynParts(a)
	nb, mb, sb := dynParts(b)
	if mb.isZero() {
		return decimal128.Num{}, false
	}
	return dynDivParts(na, ma, sa, nb, mb, sb, divScale(ma, sa, mb, sb))
}

// dynMod returns a % b (b != 0) with the sign of a at scale max(sa, sb).
func dynMod(a, b decimal128.Num) (decimal128.Num, bool) {
	na, ma, sa := dynParts(a)
	_, mb, sb := dynParts(b)
	if mb.isZero() {
		return decimal128.Num{}, false
	}
	s := max(sa, sb)
	if sa-sb > 38 {
		// |a| < 10^(36-sa) < 10^-sb <= |b|: a itself.
		return a, true
	}
	if sb-sa > 38 {
		// a·10^(sb-sa) mod b, the power of ten applied modulo b in steps
		// (products of two values below 10^38 fit 256 bits).
		_, r := divmod256([4]uint64{ma.lo, ma.hi}, mb)
		for k := sb - sa; k > 0; k -= min(k, 38) {
			_, r = divmod256(mul128(r, pow10[min(k, 38)]), mb)
		}
		return dynFit(na, [4]uint64{r.lo, r.hi}, s)
	}
	x, y := mul128(ma, pow10[s-sa]), mul128(mb, pow10[s-sb])
	yy, ok := fitsDyn(y)
	if !ok {
		return dynFit(na, x, s) // |b| > |a|
	}
	_, r := divmod256(x, yy)
	return dynFit(na, [4]uint64{r.lo, r.hi}, s)
}

// dynNeg negates a packed value, keeping its scale.
func dynNeg(p decimal128.Num) decimal128.Num {
	m, s := types.UnpackNumeric(p)
	return types.PackNumeric(m.Negate(), s)
}

// dynAbs is the absolute value, keeping the scale.
func dynAbs(p decimal128.Num) decimal128.Num {
	m, s := types.UnpackNumeric(p)
	return types.PackNumeric(m.Abs(), s)
}

// dynRescale converts packed p to scale to (>= 0), rounding half away from
// zero when digits are dropped; a larger scale is shown as far as DynDigits
// digits allow.
func dynRescale(p decimal128.Num, to int32) (decimal128.Num, bool) {
	neg, m, s := dynParts(p)
	if to >= s {
		return dynPad(p, to), true
	}
	q := roundDiv256([4]uint64{m.lo, m.hi}, s-to)
	return dynFit(neg, q, to)
}

// dynToFixed converts packed p to a mantissa at the fixed scale to
// (numeric(p,s)); ok is false beyond 38 digits.
func dynToFixed(p decimal128.Num, to int32) (decimal128.Num, bool) {
	m, s := types.UnpackNumeric(p)
	return rescale(m, s, to)
}

// dynCompare orders packed values by value.
func dynCompare(a, b decimal128.Num) int { return types.CompareNumeric(types.NumericT, a, b) }

// dynIsZero reports whether packed p is zero (at any scale).
func dynIsZero(p decimal128.Num) bool {
	m, _ := types.UnpackNumeric(p)
	return m == (decimal128.Num{})
}

// numCompareTypes orders slot x of numeric type tx and slot y of ty by value.
func numCompareTypes(tx types.T, x decimal128.Num, ty types.T, y decimal128.Num) int {
	mx, sx := types.NumericParts(tx, x)
	my, sy := types.NumericParts(ty, y)
	return numCompare(mx, sx, my, sy)
}

// numConvert converts slot d of numeric type from to the representation of
// numeric type to, rounding half away from zero to a declared scale. ok is
// false if the value does not fit the representation (the caller checks a
// declared precision with numFitsType).
func numConvert(from types.T, d decimal128.Num, to types.T) (decimal128.Num, bool) {
	m, s := types.NumericParts(from, d)
	if to.DynamicNumeric() {
		return dynFromParts(m, s)
	}
	return rescale(m, s, to.Scale)
}

// numFromIntTo converts v to numeric type t (scale 0 when unconstrained).
func numFromIntTo(v int64, t types.T) (decimal128.Num, bool) {
	if t.DynamicNumeric() {
		return dynInt(v), true
	}
	return numFromInt(v, t.Scale)
}

// numFromFloatTo converts f to numeric type t as PostgreSQL does, through its
// text with digits significant digits: an unconstrained numeric gets the
// display scale of that text ("%.15g" of 0.1 is 0.1, of 1.5e-07 0.00000015).
func numFromFloatTo(f float64, digits, bitSize int, t types.T) (decimal128.Num, *sqlerr.Error) {
	if !t.DynamicNumeric() {
		return numFromFloat(f, digits, bitSize, t.Scale)
	}
	scale := int32(0)
	if f != 0 && !math.IsNaN(f) && !math.IsInf(f, 0) {
		var buf [40]byte
		b := strconv.AppendFloat(buf[:0], f, 'e', digits-1, bitSize)
		e := bytes.IndexByte(b, 'e')
		exp, eneg := 0, false
		for _, c := range b[e+1:] {
			switch {
			case c == '-':
				eneg = true
			case c >= '0' && c <= '9':
				exp = exp*10 + int(c-'0')
			}
		}
		if eneg {
			exp = -exp
		}
		mant := b[:e]
		for len(mant) > 0 && (mant[len(mant)-1] == '0' || mant[len(mant)-1] == '.') {
			mant = mant[:len(mant)-1]
		}
		nd := 0
		for _, c := range mant {
			if c >= '0' && c <= '9' {
				nd++
			}
		}
		scale = int32(max(nd-1-exp, 0))
		scale = min(scale, types.DynMaxScale)
	}
	n, err := numFromFloat(f, digits, bitSize, scale)
	if err != nil {
		return n, err
	}
	if !types.DynFits(n) {
		return decimal128.Num{}, errNumericOverflow
	}
	return types.PackNumeric(n, scale), nil
}

// dynRoundTo rounds packed p to digits decimal places (negative digits round
// integer digits) and gives it the display scale max(digits, 0), as
// PostgreSQL's round and trunc do.
func dynRoundTo(p decimal128.Num, digits int64, mode roundMode) (decimal128.Num, bool) {
	m, s := types.UnpackNumeric(p)
	r, ok := numRoundTo(m, s, digits, mode)
	if !ok {
		return decimal128.Num{}, false
	}
	to := int32(max(min(digits, types.DynMaxScale), 0))
	if to < s {
		// The digits below to are zero now: exact.
		if r, ok = rescale(r, s, to); !ok {
			return decimal128.Num{}, false
		}
		s = to
	}
	res, ok := dynFromParts(r, s)
	if !ok {
		return decimal128.Num{}, false
	}
	return dynPad(res, to), true
}
