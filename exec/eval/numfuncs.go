package eval

import (
	"math"

	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/cockroachdb/apd/v3"
	"github.com/streamsql/streamsql/ir"
	"github.com/streamsql/streamsql/sqlerr"
	"github.com/streamsql/streamsql/types"
)

// The numeric versions of sqrt, exp, ln, log and power are computed with
// apd (arbitrary precision decimals) to 50 significant digits and rounded
// half away from zero to PostgreSQL's result scale (numscale.go: at least 16
// significant digits), so their digits are exact. They allocate; they are
// not hot paths.

var (
	errSqrtNegative = sqlerr.New(codeInvalidPowerArg, "cannot take square root of a negative number")
	errLogZero      = sqlerr.New(codeInvalidLogArg, "cannot take logarithm of zero")
	errLogNegative  = sqlerr.New(codeInvalidLogArg, "cannot take logarithm of a negative number")
	errZeroNegPower = sqlerr.New(codeInvalidPowerArg, "zero raised to a negative power is undefined")
	errComplexPower = sqlerr.New(codeInvalidPowerArg, "a negative number raised to a non-integer power yields a complex result")
	errFactorialNeg = sqlerr.New(sqlerr.NumericValueOutOfRange, "factorial of a negative number is undefined")
)

// apdCtx computes with enough digits for a 38-digit result.
var apdCtx = func() *apd.Context {
	c := apd.BaseContext.WithPrecision(50)
	c.Rounding = apd.RoundHalfUp
	return c
}()

// toAPD sets d to the numeric n of scale.
func toAPD(d *apd.Decimal, n decimal128.Num, scale int32) *apd.Decimal {
	neg, m := magnitude(n)
	d.Coeff.SetUint64(m.hi)
	d.Coeff.Lsh(&d.Coeff, 64)
	var lo apd.BigInt
	lo.SetUint64(m.lo)
	d.Coeff.Add(&d.Coeff, &lo)
	d.Exponent = -scale
	d.Negative = neg && d.Coeff.Sign() != 0
	d.Form = apd.Finite
	return d
}

// fromAPDDyn rounds d to scale (as far as an unconstrained numeric holds
// digits) and packs it.
func fromAPDDyn(d *apd.Decimal, scale int32) (types.Datum, *sqlerr.Error) {
	scale = min(scale, types.DynMaxScale)
	// Integer digits of d: the scale that leaves DynDigits significant
	// digits is DynDigits minus them.
	if d.Coeff.Sign() != 0 {
		intDigits := int32(d.NumDigits()) + d.Exponent
		scale = max(min(scale, types.DynDigits-intDigits), 0)
	}
	r, err := fromAPD(d, scale)
	if err != nil {
		return r, err
	}
	p, ok := dynFromParts(r.Dec, scale)
	if !ok {
		return types.Null, errNumericOverflow
	}
	return types.DNumeric(p), nil
}

// fromAPD rounds d to scale; a result beyond 38 digits is an overflow.
func fromAPD(d *apd.Decimal, scale int32) (types.Datum, *sqlerr.Error) {
	var q apd.Decimal
	if _, err := apdCtx.Quantize(&q, d, -scale); err != nil || q.Form != apd.Finite {
		return types.Null, errNumericOverflow
	}
	c := &q.Coeff
	if c.BitLen() > 127 {
		return types.Null, errNumericOverflow
	}
	var hi apd.BigInt
	hi.Rsh(c, 64)
	var lo apd.BigInt
	lo.Sub(c, new(apd.BigInt).Lsh(&hi, 64))
	m := u128{hi: hi.MathBigInt().Uint64(), lo: lo.MathBigInt().Uint64()}
	if !m.less(maxMag) {
		return types.Null, errNumericOverflow
	}
	return types.DNumeric(fromMagnitude(q.Negative, m)), nil
}

// numMath1 makes the kernel of a numeric function of one argument computed
// by f on apd decimals, with the result's display scale chosen by rscale
// from the argument and its display scale (PostgreSQL's rule for f).
func numMath1(f func(r, x *apd.Decimal) *sqlerr.Error, rscale func(x *apd.Decimal, dscale int32) int32) kernelMaker {
	return func(args []types.T, result types.T) scalarFn {
		in := args[0]
		return func(_ *kctx, a []types.Datum) (types.Datum, *sqlerr.Error) {
			var x, r apd.Decimal
			m, s := types.NumericParts(in, a[0].Dec)
			if err := f(&r, toAPD(&x, m, s)); err != nil {
				return types.Null, err
			}
			return fromAPDDyn(&r, rscale(&x, s))
		}
	}
}

func apdErr(_ apd.Condition, err error) *sqlerr.Error {
	if err != nil {
		return errNumericOverflow
	}
	return nil
}

func numSqrt(r, x *apd.Decimal) *sqlerr.Error {
	if x.Negative {
		return errSqrtNegative
	}
	return apdErr(apdCtx.Sqrt(r, x))
}

// expLimit bounds the argument of exp: e^60 is beyond 38 digits, and e^-40
// rounds to zero at any scale numeric has.
const expLimit = 60

func numExp(r, x *apd.Decimal) *sqlerr.Error {
	f, _ := x.Float64()
	switch {
	case f > expLimit:
		return errNumericOverflow
	case f < -expLimit:
		r.SetInt64(0)
		return nil
	}
	return apdErr(apdCtx.Exp(r, x))
}

// logDomain checks the argument of a logarithm.
func logDomain(x *apd.Decimal) *sqlerr.Error {
	switch x.Sign() {
	case 0:
		return errLogZero
	case -1:
		return errLogNegative
	}
	return nil
}

func numLn(r, x *apd.Decimal) *sqlerr.Error {
	if err := logDomain(x); err != nil {
		return err
	}
	return apdErr(apdCtx.Ln(r, x))
}

func numLog10(r, x *apd.Decimal) *sqlerr.Error {
	if err := logDomain(x); err != nil {
		return err
	}
	return apdErr(apdCtx.Log10(r, x))
}

// numLogBase is log(base, x) = ln(x) / ln(base), checked in that order as
// PostgreSQL does: the base first, then x, then the division (base 1).
func numLogBase(r, base, x *apd.Decimal) *sqlerr.Error {
	var lb, lx apd.Decimal
	if err := numLn(&lb, base); err != nil {
		return err
	}
	if err := numLn(&lx, x); err != nil {
		return err
	}
	if lb.IsZero() {
		return errDivByZero
	}
	return apdErr(apdCtx.Quo(r, &lx, &lb))
}

// numPower is PostgreSQL's numeric power: 0^negative and a negative base
// with a non-integer exponent are errors; results beyond numeric's range
// overflow and those below its scale are zero.
func numPower(r, x, y *apd.Decimal) *sqlerr.Error {
	var frac apd.Decimal
	if _, err := apdCtx.Rem(&frac, y, apd.New(1, 0)); err != nil {
		return errNumericOverflow
	}
	yInt := frac.IsZero()
	switch {
	case x.IsZero():
		if y.Negative {
			return errZeroNegPower
		}
		if y.IsZero() {
			r.SetInt64(1)
		} else {
			r.SetInt64(0)
		}
		return nil
	case x.Negative && !yInt:
		return errComplexPower
	case y.IsZero():
		r.SetInt64(1)
		return nil
	}
	// Estimate the result's magnitude before computing it.
	fx, _ := x.Float64()
	fy, _ := y.Float64()
	mag := fy * math.Log10(math.Abs(fx))
	switch {
	case mag > types.NumericPrecision:
		return errNumericOverflow
	case mag < -2*types.NumericPrecision:
		r.SetInt64(0)
		return nil
	}
	return apdErr(apdCtx.Pow(r, x, y))
}

// numMath2 makes the kernel of a numeric function of two arguments.
func numMath2(f func(r, x, y *apd.Decimal) *sqlerr.Error, rscale func(x, y *apd.Decimal, dx, dy int32) int32) kernelMaker {
	return func(args []types.T, result types.T) scalarFn {
		t0, t1 := args[0], args[1]
		return func(_ *kctx, a []types.Datum) (types.Datum, *sqlerr.Error) {
			var x, y, r apd.Decimal
			m0, s0 := types.NumericParts(t0, a[0].Dec)
			m1, s1 := types.NumericParts(t1, a[1].Dec)
			if err := f(&r, toAPD(&x, m0, s0), toAPD(&y, m1, s1)); err != nil {
				return types.Null, err
			}
			return fromAPDDyn(&r, rscale(&x, &y, s0, s1))
		}
	}
}

// The numeric functions below work on mantissas at one scale (the kernels
// align their unconstrained arguments; see dynAlign).

// numIntDiv is div(a, b): a / b truncated toward zero.
func numIntDiv(a, b decimal128.Num, scale int32) (types.Datum, *sqlerr.Error) {
	if b.Sign() == 0 {
		return types.Null, errDivByZero
	}
	na, ma := magnitude(a)
	nb, mb := magnitude(b)
	q, _ := divmod256([4]uint64{ma.lo, ma.hi}, mb)
	p := mul128(u128{hi: q[1], lo: q[0]}, pow10[scale])
	m, ok := fitsNumeric(p)
	if !ok {
		return types.Null, errNumericOverflow
	}
	return types.DNumeric(fromMagnitude(na != nb && !m.isZero(), m)), nil
}

// gcd128 is Euclid's algorithm on magnitudes.
func gcd128(a, b u128) u128 {
	for !b.isZero() {
		_, r := divmod256([4]uint64{a.lo, a.hi}, b)
		a, b = b, r
	}
	return a
}

// numGcd is gcd of two numerics of one scale (non-negative).
func numGcd(a, b decimal128.Num) (types.Datum, *sqlerr.Error) {
	_, ma := magnitude(a)
	_, mb := magnitude(b)
	return types.DNumeric(fromMagnitude(false, gcd128(ma, mb))), nil
}

// numLcm is lcm of two numerics of one scale: |a| / gcd * |b| as mantissas.
func numLcm(a, b decimal128.Num) (types.Datum, *sqlerr.Error) {
	_, ma := magnitude(a)
	_, mb := magnitude(b)
	if ma.isZero() || mb.isZero() {
		return types.DNumeric(decimal128.Num{}), nil
	}
	q, _ := divmod256([4]uint64{ma.lo, ma.hi}, gcd128(ma, mb))
	m, ok := fitsNumeric(mul128(u128{hi: q[1], lo: q[0]}, mb))
	if !ok {
		return types.Null, errNumericOverflow
	}
	return types.DNumeric(fromMagnitude(false, m)), nil
}

// numWidthBucket is width_bucket on numerics of one scale, computed exactly.
func numWidthBucket(op, b1, b2 decimal128.Num, count int64) (types.Datum, *sqlerr.Error) {
	switch c := b1.Cmp(b2); {
	case count <= 0:
		return types.Null, errBucketCount
	case c == 0:
		return types.Null, errBucketEqual
	case c > 0:
		// Reversed bounds count from b1 down.
		op, b1, b2 = op.Negate(), b1.Negate(), b2.Negate()
	}
	switch {
	case op.Less(b1):
		return types.DInt(0), nil
	case !op.Less(b2):
		if count == math.MaxInt32 {
			return types.Null, errInt4Range
		}
		return types.DInt(count + 1), nil
	}
	// op - b1 and b2 - b1 are below 2 * 10^38: they fit 128 bits unsigned.
	_, mop := magnitude(op)
	_, m1 := magnitude(b1)
	_, m2 := magnitude(b2)
	sub := func(x, y decimal128.Num, mx, my u128) u128 {
		nx, ny := x.Sign() < 0, y.Sign() < 0
		switch {
		case !nx && !ny:
			return mx.sub(my)
		case nx && ny:
			return my.sub(mx)
		}
		return mx.add(my) // x >= 0 > y
	}
	num := sub(op, b1, mop, m1)
	den := sub(b2, b1, m2, m1)
	q, _ := divmod256(mul128(num, u128{lo: uint64(count)}), den)
	return types.DInt(int64(q[0]) + 1), nil
}

// numFactorial is factorial(n) as a numeric of scale.
func numFactorial(n int64, scale int32) (types.Datum, *sqlerr.Error) {
	if n < 0 {
		return types.Null, errFactorialNeg
	}
	limit := pow10[types.NumericPrecision-scale]
	p := u128{lo: 1}
	for i := int64(2); i <= n; i++ {
		m, ok := fitsNumeric(mul128(p, u128{lo: uint64(i)}))
		if !ok || !m.less(limit) {
			return types.Null, errNumericOverflow
		}
		p = m
	}
	m, _ := fitsNumeric(mul128(p, pow10[scale]))
	return types.DNumeric(fromMagnitude(false, m)), nil
}

func init() {
	num, i4, i8 := types.NumericT, types.Int32T, types.Int64T
	reg(ir.FnSqrt, ts(num), numMath1(numSqrt, sqrtScale))
	reg(ir.FnExp, ts(num), numMath1(numExp, expScale))
	reg(ir.FnLn, ts(num), numMath1(numLn, lnScale))
	reg(ir.FnLog10, ts(num), numMath1(numLog10, log10Scale))
	reg(ir.FnLog10, ts(num, num), numMath2(numLogBase, logScale))
	reg(ir.FnPower, ts(num, num), numMath2(numPower, powerScale))
	reg(ir.FnIntDiv, ts(num, num), fixed(func(_ *kctx, a []types.Datum) (types.Datum, *sqlerr.Error) {
		x, y, _, ok := dynAlign(a[0].Dec, a[1].Dec)
		if !ok {
			return types.Null, errNumericOverflow
		}
		r, err := numIntDiv(x, y, 0)
		if err != nil {
			return r, err
		}
		return dynDatum(r.Dec, 0)
	}))
	reg(ir.FnGcd, ts(num, num), fixed(func(_ *kctx, a []types.Datum) (types.Datum, *sqlerr.Error) {
		x, y, s, ok := dynAlign(a[0].Dec, a[1].Dec)
		if !ok {
			return types.Null, errNumericOverflow
		}
		r, _ := numGcd(x, y)
		return dynDatum(r.Dec, s)
	}))
	reg(ir.FnLcm, ts(num, num), fixed(func(_ *kctx, a []types.Datum) (types.Datum, *sqlerr.Error) {
		x, y, s, ok := dynAlign(a[0].Dec, a[1].Dec)
		if !ok {
			return types.Null, errNumericOverflow
		}
		r, err := numLcm(x, y)
		if err != nil {
			return r, err
		}
		return dynDatum(r.Dec, s)
	}))
	reg(ir.FnWidthBucket, ts(num, num, num, i4), fixed(func(_ *kctx, a []types.Datum) (types.Datum, *sqlerr.Error) {
		s := int32(0)
		var ms [3]decimal128.Num
		for i := range ms {
			var si int32
			ms[i], si = types.UnpackNumeric(a[i].Dec)
			s = max(s, si)
		}
		for i := range ms {
			_, si := types.UnpackNumeric(a[i].Dec)
			var ok bool
			if ms[i], ok = rescale(ms[i], si, s); !ok {
				return types.Null, errNumericOverflow
			}
		}
		return numWidthBucket(ms[0], ms[1], ms[2], a[3].I)
	}))
	reg(ir.FnFactorial, ts(i8), fixed(func(_ *kctx, a []types.Datum) (types.Datum, *sqlerr.Error) {
		r, err := numFactorial(a[0].I, 0)
		if err != nil {
			return r, err
		}
		return dynDatum(r.Dec, 0)
	}))
	// Their arguments are unconstrained numerics.
	for _, fn := range []string{ir.FnIntDiv, ir.FnGcd, ir.FnLcm, ir.FnWidthBucket} {
		numericScaled[fn] = true
	}
}

// dynAlign returns the mantissas of packed a and b at their larger scale.
func dynAlign(a, b decimal128.Num) (ma, mb decimal128.Num, scale int32, ok bool) {
	ma, sa := types.UnpackNumeric(a)
	mb, sb := types.UnpackNumeric(b)
	s := max(sa, sb)
	ma, ok1 := rescale(ma, sa, s)
	mb, ok2 := rescale(mb, sb, s)
	return ma, mb, s, ok1 && ok2
}

// dynDatum packs mantissa m at scale, failing with an overflow beyond what
// an unconstrained numeric holds.
func dynDatum(m decimal128.Num, scale int32) (types.Datum, *sqlerr.Error) {
	p, ok := dynFromParts(m, scale)
	if !ok {
		return types.Null, errNumericOverflow
	}
	return types.DNumeric(p), nil
}
