package eval

import (
	"math"
	"math/bits"
	"strconv"
	"unsafe"

	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/streamsql/streamsql/sqlerr"
	"github.com/streamsql/streamsql/types"
)

// Numeric values are Decimal128 mantissas at a scale (numeric(p,s) slots, or
// the unpacked parts of unconstrained ones, see dyn.go). The arithmetic here
// works on 128-bit magnitudes with 256-bit intermediates so
// that it never allocates (decimal128.Num's Div and rescaling go through
// math/big).

// u128 is an unsigned 128-bit integer.
type u128 struct{ hi, lo uint64 }

// pow10 holds 10^0 .. 10^38 as u128.
var pow10 = func() (t [39]u128) {
	p := u128{lo: 1}
	for i := range t {
		t[i] = p
		h1, l := bits.Mul64(p.lo, 10)
		p = u128{hi: p.hi*10 + h1, lo: l}
	}
	return t
}()

func (a u128) less(b u128) bool { return a.hi < b.hi || (a.hi == b.hi && a.lo < b.lo) }
func (a u128) isZero() bool     { return a.hi == 0 && a.lo == 0 }

func (a u128) add(b u128) u128 {
	lo, c := bits.Add64(a.lo, b.lo, 0)
	return u128{hi: a.hi + b.hi + c, lo: lo}
}

func (a u128) sub(b u128) u128 {
	lo, br := bits.Sub64(a.lo, b.lo, 0)
	return u128{hi: a.hi - b.hi - br, lo: lo}
}

// magnitude splits n into its sign and absolute value.
func magnitude(n decimal128.Num) (neg bool, m u128) {
	hi, lo := n.HighBits(), n.LowBits()
	if hi < 0 {
		lo = ^lo + 1
		h := ^uint64(hi)
		if lo == 0 {
			h++
		}
		return true, u128{hi: h, lo: lo}
	}
	return false, u128{hi: uint64(hi), lo: lo}
}

// fromMagnitude builds the Num with sign neg and magnitude m (m < 2^127).
func fromMagnitude(neg bool, m u128) decimal128.Num {
	n := decimal128.New(int64(m.hi), m.lo)
	if neg {
		return n.Negate()
	}
	return n
}

// maxMag is 10^38, the exclusive bound of a numeric's magnitude.
var maxMag = pow10[38]

// mul128 returns the 256-bit product a*b as four little-endian words.
func mul128(a, b u128) (p [4]uint64) {
	h00, l00 := bits.Mul64(a.lo, b.lo)
	h01, l01 := bits.Mul64(a.lo, b.hi)
	h10, l10 := bits.Mul64(a.hi, b.lo)
	h11, l11 := bits.Mul64(a.hi, b.hi)
	p[0] = l00
	var c1, c2 uint64
	p[1], c1 = bits.Add64(h00, l01, 0)
	p[1], c2 = bits.Add64(p[1], l10, 0)
	p[2], c1 = bits.Add64(h01, h10, c1)
	var c3 uint64
	p[2], c3 = bits.Add64(p[2], l11, c2)
	p[3] = h11 + c1 + c3
	return p
}

// divmod256 divides u by v (v != 0) and returns the quotient and remainder.
func divmod256(u [4]uint64, v u128) (q [4]uint64, r u128) {
	if v.hi == 0 {
		var rem uint64
		for i := 3; i >= 0; i-- {
			q[i], rem = bits.Div64(rem, u[i], v.lo)
		}
		return q, u128{lo: rem}
	}
	// Knuth's algorithm D with 64-bit digits and a two-digit divisor.
	s := uint(bits.LeadingZeros64(v.hi))
	vn1 := v.hi<<s | v.lo>>(64-s)
	vn0 := v.lo << s
	var un [5]uint64
	un[4] = u[3] >> (64 - s)
	un[3] = u[3]<<s | u[2]>>(64-s)
	un[2] = u[2]<<s | u[1]>>(64-s)
	un[1] = u[1]<<s | u[0]>>(64-s)
	un[0] = u[0] << s
	// (Shifts by 64 give 0 in Go, so s == 0 needs no special case.)
	for j := 2; j >= 0; j-- {
		var qhat, rhat uint64
		rhatOver := false
		if un[j+2] >= vn1 {
			qhat = ^uint64(0)
			var c uint64
			rhat, c = bits.Add64(un[j+1], vn1, 0)
			rhatOver = c != 0
		} else {
			qhat, rhat = bits.Div64(un[j+2], un[j+1], vn1)
		}
		for !rhatOver {
			ph, pl := bits.Mul64(qhat, vn0)
			if ph < rhat || (ph == rhat && pl <= un[j]) {
				break
			}
			qhat--
			var c uint64
			rhat, c = bits.Add64(rhat, vn1, 0)
			rhatOver = c != 0
		}
		// un[j..j+2] -= qhat * (vn1, vn0)
		p0h, p0l := bits.Mul64(qhat, vn0)
		p1h, p1l := bits.Mul64(qhat, vn1)
		w1, c := bits.Add64(p1l, p0h, 0)
		w2 := p1h + c
		var br uint64
		un[j], br = bits.Sub64(un[j], p0l, 0)
		un[j+1], br = bits.Sub64(un[j+1], w1, br)
		un[j+2], br = bits.Sub64(un[j+2], w2, br)
		if br != 0 {
			qhat--
			un[j], c = bits.Add64(un[j], vn0, 0)
			un[j+1], c = bits.Add64(un[j+1], vn1, c)
			un[j+2] += c
		}
		q[j] = qhat
	}
	r.lo = un[0]>>s | un[1]<<(64-s)
	r.hi = un[1]>>s | un[2]<<(64-s)
	return q, r
}

// fitsNumeric returns the low 128 bits of p and whether p is below 10^38.
func fitsNumeric(p [4]uint64) (u128, bool) {
	m := u128{hi: p[1], lo: p[0]}
	return m, p[2] == 0 && p[3] == 0 && m.less(maxMag)
}

// roundQuotient applies half-away-from-zero rounding to a magnitude quotient
// q with remainder r of a division by d.
func roundQuotient(q [4]uint64, r, d u128) [4]uint64 {
	// 2r >= d  <=>  r >= d - r
	if !r.less(d.sub(r)) {
		q = inc256(q)
	}
	return q
}

func inc256(q [4]uint64) [4]uint64 {
	var c uint64
	q[0], c = bits.Add64(q[0], 1, 0)
	q[1], c = bits.Add64(q[1], 0, c)
	q[2], c = bits.Add64(q[2], 0, c)
	q[3] += c
	return q
}

var errNumericOverflow = sqlerr.New(sqlerr.NumericValueOutOfRange, "numeric field overflow")
var errDivByZero = sqlerr.New(sqlerr.DivisionByZero, "division by zero")

// numAdd, numSub, numMul, numDiv and numMod are the numeric operators on
// mantissas at one common scale. ok is false on overflow (or, for div and mod,
// division by zero, which the caller tells apart by checking b).
func numAdd(a, b decimal128.Num) (decimal128.Num, bool) {
	r := a.Add(b)
	_, m := magnitude(r)
	return r, m.less(maxMag)
}

func numSub(a, b decimal128.Num) (decimal128.Num, bool) {
	r := a.Sub(b)
	_, m := magnitude(r)
	return r, m.less(maxMag)
}

func numMul(a, b decimal128.Num, scale int32) (decimal128.Num, bool) {
	na, ma := magnitude(a)
	nb, mb := magnitude(b)
	p := mul128(ma, mb)
	q, r := divmod256(p, pow10[scale])
	q = roundQuotient(q, r, pow10[scale])
	m, ok := fitsNumeric(q)
	return fromMagnitude(na != nb, m), ok
}

func numDiv(a, b decimal128.Num, scale int32) (decimal128.Num, bool) {
	na, ma := magnitude(a)
	nb, mb := magnitude(b)
	if mb.isZero() {
		return decimal128.Num{}, false
	}
	p := mul128(ma, pow10[scale])
	q, r := divmod256(p, mb)
	q = roundQuotient(q, r, mb)
	m, ok := fitsNumeric(q)
	return fromMagnitude(na != nb, m), ok
}

func numMod(a, b decimal128.Num) (decimal128.Num, bool) {
	na, ma := magnitude(a)
	_, mb := magnitude(b)
	if mb.isZero() {
		return decimal128.Num{}, false
	}
	_, r := divmod256([4]uint64{ma.lo, ma.hi}, mb)
	return fromMagnitude(na, r), true
}

// rescale converts mantissa n from scale from to scale to, rounding half away
// from zero when the scale shrinks. ok is false when the result has more than
// 38 digits.
func rescale(n decimal128.Num, from, to int32) (decimal128.Num, bool) {
	switch {
	case from == to:
		return n, true
	case to > from:
		k := to - from
		if k > 38 {
			return n, n == decimal128.Num{}
		}
		neg, m := magnitude(n)
		p := mul128(m, pow10[k])
		r, ok := fitsNumeric(p)
		return fromMagnitude(neg, r), ok
	}
	k := from - to
	neg, m := magnitude(n)
	if k > 38 {
		return decimal128.Num{}, true
	}
	q, r := divmod256([4]uint64{m.lo, m.hi}, pow10[k])
	q = roundQuotient(q, r, pow10[k])
	res, ok := fitsNumeric(q)
	return fromMagnitude(neg, res), ok
}

// roundMode selects how numRoundTo treats the dropped digits.
type roundMode uint8

const (
	roundHalfAway roundMode = iota
	roundTrunc
	roundFloor
	roundCeil
)

// numRoundTo rounds mantissa n (at scale) to digits decimal places (which may
// be negative) and returns it at the same scale.
func numRoundTo(n decimal128.Num, scale int32, digits int64, mode roundMode) (decimal128.Num, bool) {
	if digits >= int64(scale) {
		return n, true
	}
	k := int64(scale) - digits
	neg, m := magnitude(n)
	if k > 38 {
		// Every representable magnitude is below half of 10^k.
		switch {
		case mode == roundFloor && neg && !m.isZero():
			return decimal128.Num{}, false
		case mode == roundCeil && !neg && !m.isZero():
			return decimal128.Num{}, false
		}
		return decimal128.Num{}, true
	}
	d := pow10[k]
	q, r := divmod256([4]uint64{m.lo, m.hi}, d)
	switch mode {
	case roundHalfAway:
		q = roundQuotient(q, r, d)
	case roundFloor, roundCeil:
		// Floor moves negative values away from zero, ceil positive ones.
		if !r.isZero() && (neg == (mode == roundFloor)) {
			q = inc256(q)
		}
	}
	qm := u128{hi: q[1], lo: q[0]}
	if q[2] != 0 || q[3] != 0 {
		return decimal128.Num{}, false
	}
	p := mul128(qm, d)
	res, ok := fitsNumeric(p)
	return fromMagnitude(neg, res), ok
}

// numToInt converts mantissa n at scale to an integer, rounding half away
// from zero. ok is false if it does not fit an int64.
func numToInt(n decimal128.Num, scale int32) (int64, bool) {
	r, ok := rescale(n, scale, 0)
	if !ok {
		return 0, false
	}
	hi, lo := r.HighBits(), r.LowBits()
	if (hi == 0 && lo <= math.MaxInt64) || (hi == -1 && lo >= 1<<63) {
		return int64(lo), true
	}
	return 0, false
}

// numFromInt converts an integer to a mantissa at scale.
func numFromInt(v int64, scale int32) (decimal128.Num, bool) {
	return rescale(decimal128.FromI64(v), 0, scale)
}

// numToFloat converts mantissa n at scale to the nearest float64.
func numToFloat(n decimal128.Num, scale int32) float64 {
	neg, m := magnitude(n)
	if m.hi == 0 && m.lo < 1<<53 && scale <= 22 {
		// Both operands are exact, so one IEEE division rounds correctly.
		f := float64(m.lo) / math.Pow10(int(scale))
		if neg {
			f = -f
		}
		return f
	}
	return parseMantissa(n, scale, 64)
}

// parseMantissa converts mantissa n at scale to the nearest float of bitSize
// through its decimal text "digits e-scale" (strconv rounds correctly),
// without allocating.
func parseMantissa(n decimal128.Num, scale int32, bitSize int) float64 {
	neg, m := magnitude(n)
	var buf [64]byte
	b := buf[:0]
	if neg {
		b = append(b, '-')
	}
	b = appendU128(b, m)
	b = append(b, 'e', '-')
	b = strconv.AppendInt(b, int64(scale), 10)
	f, _ := strconv.ParseFloat(unsafe.String(unsafe.SliceData(b), len(b)), bitSize)
	return f
}

// appendU128 appends the decimal digits of m.
func appendU128(buf []byte, m u128) []byte {
	var tmp [40]byte
	i := len(tmp)
	for {
		// Peel 19 digits at a time: m = q*10^19 + r.
		var r uint64
		q := u128{}
		q.hi, r = bits.Div64(0, m.hi, 1e19)
		q.lo, r = bits.Div64(r, m.lo, 1e19)
		m = q
		for k := 0; k < 19; k++ {
			i--
			tmp[i] = byte('0' + r%10)
			r /= 10
			if r == 0 && m.isZero() {
				break
			}
		}
		if m.isZero() {
			break
		}
	}
	return append(buf, tmp[i:]...)
}

// numFromFloat converts f to a mantissa at scale the way PostgreSQL does: via
// its decimal text with digits significant digits (15 for float8, 6 for
// float4), rounded half away from zero to scale.
func numFromFloat(f float64, digits int, bitSize int, scale int32) (decimal128.Num, *sqlerr.Error) {
	switch {
	case math.IsNaN(f):
		return decimal128.Num{}, sqlerr.Unsupported("converting NaN to numeric")
	case math.IsInf(f, 0):
		return decimal128.Num{}, sqlerr.Unsupported("converting infinity to numeric")
	case f == 0:
		return decimal128.Num{}, nil
	}
	var buf [40]byte
	b := strconv.AppendFloat(buf[:0], f, 'e', digits-1, bitSize)
	neg := b[0] == '-'
	if neg {
		b = b[1:]
	}
	// b is d.ddddde±XX
	var ds [24]byte
	nd := 0
	i := 0
	for ; i < len(b) && b[i] != 'e'; i++ {
		if b[i] != '.' {
			ds[nd] = b[i]
			nd++
		}
	}
	exp, eneg := 0, false
	for _, c := range b[i+1:] {
		switch c {
		case '-':
			eneg = true
		case '+':
		default:
			exp = exp*10 + int(c-'0')
		}
	}
	if eneg {
		exp = -exp
	}
	// value = d.dddd × 10^exp = ds × 10^(exp-(nd-1)); mantissa = value × 10^scale.
	shift := exp - (nd - 1) + int(scale)
	keep := nd + shift
	if keep > types.NumericPrecision {
		return decimal128.Num{}, errNumericOverflow
	}
	var m u128
	if keep > 0 {
		for j := 0; j < keep; j++ {
			d := uint64(0)
			if j < nd {
				d = uint64(ds[j] - '0')
			}
			h, l := bits.Mul64(m.lo, 10)
			m = u128{hi: m.hi*10 + h, lo: l}.add(u128{lo: d})
		}
	}
	if keep >= 0 && keep < nd && ds[keep] >= '5' {
		m = m.add(u128{lo: 1})
	}
	if !m.less(maxMag) {
		return decimal128.Num{}, errNumericOverflow
	}
	return fromMagnitude(neg, m), nil
}

// numFitsType reports whether slot n (already in t's representation) fits
// t's precision. Packed unconstrained numerics always do.
func numFitsType(n decimal128.Num, t types.T) bool {
	if !t.HasTypmod {
		return true
	}
	if t.Precision >= types.NumericPrecision || t.Precision <= 0 {
		_, m := magnitude(n)
		return m.less(maxMag)
	}
	_, m := magnitude(n)
	return m.less(pow10[t.Precision])
}

// numCompare compares mantissas at possibly different scales.
func numCompare(a decimal128.Num, sa int32, b decimal128.Num, sb int32) int {
	if sa == sb {
		return a.Cmp(b)
	}
	if sa < sb {
		return -numCompare(b, sb, a, sa)
	}
	// Bring b up to sa; if it does not fit, it is larger in magnitude than
	// anything at scale sa and its sign decides.
	bb, ok := rescale(b, sb, sa)
	if !ok {
		if b.Sign() > 0 {
			return -1
		}
		return 1
	}
	return a.Cmp(bb)
}
