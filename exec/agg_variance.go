package exec

import (
	"encoding/binary"
	"fmt"
	"math"
	"math/big"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/bitutil"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/streamsql/streamsql/exec/eval"
	"github.com/streamsql/streamsql/ir"
	"github.com/streamsql/streamsql/sqlerr"
	"github.com/streamsql/streamsql/types"
)

// varianceKind says which of the six variance aggregates a call computes.
type varianceKind struct {
	// sample divides by n-1 (NULL below two values), else by n (NULL
	// without values).
	sample bool
	// stddev takes the square root.
	stddev bool
}

func newVarianceAgg(fn string, argType types.T) (aggregator, error) {
	var k varianceKind
	switch fn {
	case ir.AggStddev, ir.AggStddevSamp:
		k = varianceKind{sample: true, stddev: true}
	case ir.AggStddevPop:
		k = varianceKind{stddev: true}
	case ir.AggVariance, ir.AggVarSamp:
		k = varianceKind{sample: true}
	case ir.AggVarPop:
	}
	switch argType.Kind {
	case types.Int16, types.Int32, types.Int64:
		return &exactVarianceAgg{kind: k}, nil
	case types.Numeric:
		if argType.DynamicNumeric() {
			return &exactVarianceAgg{kind: k, scale: varianceDynScale, dyn: true}, nil
		}
		return &exactVarianceAgg{kind: k, scale: argType.Scale, dscale: argType.Scale}, nil
	case types.Float32, types.Float64:
		return &floatVarianceAgg{kind: k}, nil
	}
	return nil, sqlerr.Unsupported("aggregate %s(%s)", fn, argType)
}

// minRows is the fewest values with a non-NULL result.
func (k varianceKind) minRows() int64 {
	if k.sample {
		return 2
	}
	return 1
}

// exactVarianceAgg is the variances and standard deviations of integers and
// numerics. Like PostgreSQL it keeps exact sums of the values and of their
// squares (in 384 bits, which cannot overflow; see wideInt), so retractions
// are exact and the result equals a computation over the current rows:
// (n·Σx² − (Σx)²) / (n·(n−1)) (or n² for the population forms), and its
// square root for the standard deviations (of the rounded variance, as
// PostgreSQL takes it).
//
// The result has PostgreSQL's display scale: select_div_scale of the
// numerator (whose scale is twice the input's display scale) and the
// denominator. Over unconstrained numerics (dyn) the values are summed at
// varianceDynScale (rounded there when they have more fraction digits) and
// scales counts the live values of each display scale, as decimalSumAgg
// does.
type exactVarianceAgg struct {
	kind   varianceKind
	scale  int32 // of the summed mantissas
	dscale int32 // display scale of the input values (not dyn)
	dyn    bool
	n      []int64
	sum    []wideInt
	sumSq  []wideInt
	scales [][]scaleCount
	// over marks dyn groups that got a value beyond varianceDynScale's
	// 26 integer digits: their result is the overflow error until reset.
	over []bool
}

// varianceDynScale is the scale unconstrained numerics are summed at.
const varianceDynScale = 12

func (a *exactVarianceAgg) grow(n int) {
	for len(a.n) < n {
		a.n = append(a.n, 0)
		a.sum = append(a.sum, wideInt{})
		a.sumSq = append(a.sumSq, wideInt{})
		if a.dyn {
			a.scales = append(a.scales, nil)
			a.over = append(a.over, false)
		}
	}
}
func (a *exactVarianceAgg) reset(slot int32) {
	a.n[slot], a.sum[slot], a.sumSq[slot] = 0, wideInt{}, wideInt{}
	if a.dyn {
		a.scales[slot], a.over[slot] = a.scales[slot][:0], false
	}
}

func (a *exactVarianceAgg) update(col arrow.Array, slots []int32, signs []int8) error {
	switch c := col.(type) {
	case *array.Int16:
		accumulateInts(a, c.Int16Values(), col, slots, signs)
	case *array.Int32:
		accumulateInts(a, c.Int32Values(), col, slots, signs)
	case *array.Int64:
		accumulateInts(a, c.Int64Values(), col, slots, signs)
	case *array.Decimal128:
		bits, off, all := validity(col)
		for i, s := range signs {
			if s != 0 && (all || bitutil.BitIsSet(bits, off+i)) {
				a.addNumeric(slots[i], s, c.Value(i))
			}
		}
	default:
		return fmt.Errorf("exec: variance over %s", col.DataType())
	}
	return nil
}

func accumulateInts[T int16 | int32 | int64](a *exactVarianceAgg, vals []T, col arrow.Array, slots []int32, signs []int8) {
	bits, off, all := validity(col)
	for i, s := range signs {
		if s != 0 && (all || bitutil.BitIsSet(bits, off+i)) {
			v := int64(vals[i])
			a.add(slots[i], s, v>>63, uint64(v))
		}
	}
}

// addNumeric adds (s = 1) or retracts (s = -1) the numeric slot v.
func (a *exactVarianceAgg) addNumeric(slot int32, s int8, v decimal128.Num) {
	if a.dyn {
		_, scale := types.UnpackNumeric(v)
		countScale(&a.scales[slot], scale, s)
		var ok bool
		if v, ok = eval.NumericToFixed(v, varianceDynScale); !ok {
			a.over[slot] = true
			a.n[slot] += int64(s)
			return
		}
	}
	a.add(slot, s, v.HighBits(), v.LowBits())
}

// add adds (s = 1) or retracts (s = -1) the 128-bit value hi:lo.
func (a *exactVarianceAgg) add(slot int32, s int8, hi int64, lo uint64) {
	x, sq := wideFrom128(hi, lo), square128(hi, lo)
	if s > 0 {
		a.sum[slot].add(&x)
		a.sumSq[slot].add(&sq)
	} else {
		a.sum[slot].sub(&x)
		a.sumSq[slot].sub(&sq)
	}
	a.n[slot] += int64(s)
}

func (a *exactVarianceAgg) prepare([]int32) error { return nil }

var errNumericOverflow = sqlerr.New(sqlerr.NumericValueOutOfRange, "numeric field overflow")

// stddevExtraDigits are the digits computed beyond the result's scale
// before the square root is rounded.
const stddevExtraDigits = 4

func (a *exactVarianceAgg) result(slot int32) (types.Datum, error) {
	n := a.n[slot]
	if n < a.kind.minRows() {
		return types.Null, nil
	}
	if a.dyn && a.over[slot] {
		return types.Null, errNumericOverflow
	}
	bn := big.NewInt(n)
	sum := a.sum[slot].big()
	num := new(big.Int).Mul(bn, a.sumSq[slot].big())
	num.Sub(num, sum.Mul(sum, sum))
	if num.Sign() <= 0 {
		// Zero, as PostgreSQL returns for equal values.
		return types.DNumeric(decimal128.Num{}), nil
	}
	den := new(big.Int).Set(bn)
	if a.kind.sample {
		den.Mul(den, big.NewInt(n-1))
	} else {
		den.Mul(den, bn)
	}
	dscale := a.dscale
	if a.dyn {
		dscale = maxScale(a.scales[slot])
	}
	// num has scale 2·a.scale; PostgreSQL's has display scale 2·dscale.
	rscale := divScaleBig(num, 2*a.scale, den, 2*dscale)
	for {
		// variance = num / (den·10^(2·scale)) at rscale.
		d := new(big.Int).Mul(den, pow10(int64(2*a.scale)))
		q := roundDiv(new(big.Int).Mul(num, pow10(int64(rscale))), d)
		if a.kind.stddev {
			// PostgreSQL takes the square root of the rounded variance.
			v := q.Mul(q, pow10(int64(rscale+2*stddevExtraDigits)))
			q = roundDiv(v.Sqrt(v), pow10(stddevExtraDigits))
		}
		if len(q.String()) <= types.DynDigits || rscale == 0 {
			if q.CmpAbs(maxDynMantissa) > 0 {
				return types.Null, errNumericOverflow
			}
			return types.DNumeric(types.PackNumeric(decimal128.FromBigInt(q), rscale)), nil
		}
		rscale-- // more digits than an unconstrained numeric holds
	}
}

// maxScale is the largest display scale with live values.
func maxScale(cs []scaleCount) int32 {
	m := int32(0)
	for _, c := range cs {
		m = max(m, c.scale)
	}
	return m
}

// divScaleBig is PostgreSQL's select_div_scale for num (a mantissa at scale
// numScale, display scale numDscale) over the integer den, capped at what an
// unconstrained numeric shows.
func divScaleBig(num *big.Int, numScale int32, den *big.Int, numDscale int32) int32 {
	w1, f1 := nbaseFirstBig(num, numScale)
	w2, f2 := nbaseFirstBig(den, 0)
	qweight := w1 - w2
	if f1 <= f2 {
		qweight--
	}
	return min(max(16-qweight*4, numDscale, 0), types.DynMaxScale)
}

// nbaseFirstBig returns the base-10000 weight and first base-10000 digit of
// v·10^-scale (v > 0).
func nbaseFirstBig(v *big.Int, scale int32) (weight, first int32) {
	digits := v.String()
	e := int32(len(digits)) - 1 - scale
	weight = e >> 2
	lead := int(e - 4*weight + 1)
	for _, c := range digits[:min(lead, len(digits))] {
		first = first*10 + int32(c-'0')
	}
	for i := len(digits); i < lead; i++ {
		first *= 10
	}
	return weight, first
}

var maxDynMantissa = new(big.Int).Sub(pow10(types.DynDigits), big.NewInt(1))

func pow10(n int64) *big.Int { return new(big.Int).Exp(big.NewInt(10), big.NewInt(n), nil) }

// roundDiv returns num/den for num >= 0, den > 0, rounded half up.
func roundDiv(num, den *big.Int) *big.Int {
	q, r := new(big.Int).QuoRem(num, den, new(big.Int))
	if r.Lsh(r, 1).Cmp(den) >= 0 {
		q.Add(q, big.NewInt(1))
	}
	return q
}

func (a *exactVarianceAgg) appendState(buf []byte, slot int32) []byte {
	buf = binary.AppendVarint(buf, a.n[slot])
	buf = appendWide(buf, &a.sum[slot])
	buf = appendWide(buf, &a.sumSq[slot])
	if a.dyn {
		buf = appendScaleCounts(buf, a.scales[slot])
		buf = append(buf, b2byte(a.over[slot]))
	}
	return buf
}
func (a *exactVarianceAgg) loadState(buf []byte, slot int32) ([]byte, error) {
	buf, err := loadVarints(buf, &a.n[slot])
	if err != nil {
		return nil, err
	}
	if buf, err = loadWide(buf, &a.sum[slot]); err != nil {
		return nil, err
	}
	if buf, err = loadWide(buf, &a.sumSq[slot]); err != nil || !a.dyn {
		return buf, err
	}
	if buf, err = loadScaleCounts(buf, &a.scales[slot]); err != nil {
		return nil, err
	}
	if len(buf) < 1 {
		return nil, errCorruptState
	}
	a.over[slot] = buf[0] != 0
	return buf[1:], nil
}

// floatVarianceAgg is the variances and standard deviations of real and
// double precision values, computed as PostgreSQL's float8_accum does
// (Youngs and Cramer's update of n, Σx and Σ(x−x̄)²), so an insert-only
// group gives PostgreSQL's result to the bit. A retraction applies the
// update's exact inverse; in floating point it can leave the last bits of
// the result different from a recomputation, as any retractable float
// aggregate. Infinities and NaNs are counted apart: while any is in the
// group the result is NaN, as PostgreSQL's is, and when the last one is
// retracted the finite values' state is intact.
type floatVarianceAgg struct {
	kind varianceKind
	// n counts the finite values, nonFinite the others.
	n         []int64
	nonFinite []int64
	sx, sxx   []float64
}

func (a *floatVarianceAgg) grow(n int) {
	for len(a.n) < n {
		a.n = append(a.n, 0)
		a.nonFinite = append(a.nonFinite, 0)
		a.sx = append(a.sx, 0)
		a.sxx = append(a.sxx, 0)
	}
}
func (a *floatVarianceAgg) reset(slot int32) {
	a.n[slot], a.nonFinite[slot], a.sx[slot], a.sxx[slot] = 0, 0, 0, 0
}

func (a *floatVarianceAgg) update(col arrow.Array, slots []int32, signs []int8) error {
	switch c := col.(type) {
	case *array.Float32:
		accumulateFloats(a, c.Float32Values(), col, slots, signs)
	case *array.Float64:
		accumulateFloats(a, c.Float64Values(), col, slots, signs)
	default:
		return fmt.Errorf("exec: variance over %s", col.DataType())
	}
	return nil
}

func accumulateFloats[T float32 | float64](a *floatVarianceAgg, vals []T, col arrow.Array, slots []int32, signs []int8) {
	bits, off, all := validity(col)
	for i, s := range signs {
		if s == 0 || !(all || bitutil.BitIsSet(bits, off+i)) {
			continue
		}
		a.add(slots[i], s, float64(vals[i]))
	}
}

// add adds (s = 1) or retracts (s = -1) x.
func (a *floatVarianceAgg) add(slot int32, s int8, x float64) {
	switch {
	case math.IsNaN(x) || math.IsInf(x, 0):
		a.nonFinite[slot] += int64(s)
	case s > 0:
		n0 := float64(a.n[slot])
		a.n[slot]++
		n := float64(a.n[slot])
		a.sx[slot] += x
		if n0 > 0 {
			tmp := x*n - a.sx[slot]
			a.sxx[slot] += tmp * tmp / (n * n0)
		}
	case a.n[slot] <= 1:
		a.n[slot]--
		a.sx[slot], a.sxx[slot] = 0, 0
	default:
		n := float64(a.n[slot])
		tmp := x*n - a.sx[slot]
		a.sxx[slot] = max(a.sxx[slot]-tmp*tmp/(n*(n-1)), 0)
		a.sx[slot] -= x
		a.n[slot]--
	}
}

func (a *floatVarianceAgg) prepare([]int32) error { return nil }
func (a *floatVarianceAgg) result(slot int32) (types.Datum, error) {
	total := a.n[slot] + a.nonFinite[slot]
	if total < a.kind.minRows() {
		return types.Null, nil
	}
	if a.nonFinite[slot] > 0 {
		return types.DFloat(math.NaN()), nil
	}
	if math.IsInf(a.sx[slot], 0) || math.IsInf(a.sxx[slot], 0) {
		return types.Null, sqlerr.New(sqlerr.NumericValueOutOfRange, "value out of range: overflow")
	}
	den := float64(total)
	if a.kind.sample {
		den--
	}
	v := a.sxx[slot] / den
	if a.kind.stddev {
		v = math.Sqrt(v)
	}
	return types.DFloat(v), nil
}
func (a *floatVarianceAgg) appendState(buf []byte, slot int32) []byte {
	buf = binary.AppendVarint(buf, a.n[slot])
	buf = binary.AppendVarint(buf, a.nonFinite[slot])
	buf = binary.BigEndian.AppendUint64(buf, math.Float64bits(a.sx[slot]))
	return binary.BigEndian.AppendUint64(buf, math.Float64bits(a.sxx[slot]))
}
func (a *floatVarianceAgg) loadState(buf []byte, slot int32) ([]byte, error) {
	buf, err := loadVarints(buf, &a.n[slot], &a.nonFinite[slot])
	if err != nil {
		return nil, err
	}
	if len(buf) < 16 {
		return nil, errCorruptState
	}
	a.sx[slot] = math.Float64frombits(binary.BigEndian.Uint64(buf))
	a.sxx[slot] = math.Float64frombits(binary.BigEndian.Uint64(buf[8:]))
	return buf[16:], nil
}
