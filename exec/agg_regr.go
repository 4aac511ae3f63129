package exec

import (
	"encoding/binary"
	"fmt"
	"math"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/bitutil"
	"github.com/streamsql/streamsql/ir"
	"github.com/streamsql/streamsql/types"
)

// regrAgg is corr, covar_pop, covar_samp and the regr_* aggregates over
// (Y, X) double precision pairs, rows where either is NULL skipped. It keeps
// PostgreSQL's float8_regr_accum sums (updated by Youngs and Cramer's
// method), so an insert-only group gives PostgreSQL's result to the bit. A
// retraction applies the update's exact inverse; in floating point that can
// leave the last bits different from a recomputation, as in
// floatVarianceAgg.
//
// Infinities and NaNs are counted apart so that retracting them restores
// the finite state: x and y keep their own sums over the pairs where that
// variable is finite (PostgreSQL's Sx and Sxx stay finite when only Y has a
// NaN), and Sxy is kept over the pairs where both are finite; the result
// then combines them as PostgreSQL's sums would be.
type regrAgg struct {
	fn   string
	xCol int
	rec  arrow.RecordBatch
	// x and y are the single-variable sums, xy the joint ones.
	x, y []ycSums
	xy   []ycJoint
	// odd counts each variable's NaNs, +Infinities and -Infinities.
	odd [][2][3]int64
}

// ycSums is n, Σv and Σ(v−v̄)² of one variable.
type ycSums struct {
	n       int64
	sum, ss float64
}

// ycJoint is n, Σx, Σy and Σ(x−x̄)(y−ȳ) over the pairs both finite.
type ycJoint struct {
	n          int64
	sx, sy, sp float64
}

func newRegrAgg(call ir.AggCall) (*regrAgg, error) {
	if len(call.ExtraArgs) != 1 {
		return nil, fmt.Errorf("exec: %s needs two arguments", call.Func)
	}
	return &regrAgg{fn: call.Func, xCol: call.ExtraArgs[0].(*ir.InputRef).Index}, nil
}

func (a *regrAgg) setRecord(rec arrow.RecordBatch) { a.rec = rec }

func (a *regrAgg) grow(n int) {
	for len(a.x) < n {
		a.x = append(a.x, ycSums{})
		a.y = append(a.y, ycSums{})
		a.xy = append(a.xy, ycJoint{})
		a.odd = append(a.odd, [2][3]int64{})
	}
}

func (a *regrAgg) reset(slot int32) {
	a.x[slot], a.y[slot], a.xy[slot], a.odd[slot] = ycSums{}, ycSums{}, ycJoint{}, [2][3]int64{}
}

func (a *regrAgg) update(col arrow.Array, slots []int32, signs []int8) error {
	if a.rec == nil {
		return fmt.Errorf("exec: %s without its input record", a.fn)
	}
	ys, ok1 := col.(*array.Float64)
	xs, ok2 := a.rec.Column(a.xCol).(*array.Float64)
	if !ok1 || !ok2 {
		return fmt.Errorf("exec: %s over %s, %s", a.fn, col.DataType(), a.rec.Column(a.xCol).DataType())
	}
	ybits, yoff, yall := validity(ys)
	xbits, xoff, xall := validity(xs)
	yv, xv := ys.Float64Values(), xs.Float64Values()
	for i, s := range signs {
		if s == 0 || !(yall || bitutil.BitIsSet(ybits, yoff+i)) || !(xall || bitutil.BitIsSet(xbits, xoff+i)) {
			continue
		}
		a.add(slots[i], s, yv[i], xv[i])
	}
	return nil
}

func finite(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }

// oddIndex is the odd counter of a non-finite v: NaN, +Inf, -Inf.
func oddIndex(v float64) int {
	switch {
	case math.IsNaN(v):
		return 0
	case v > 0:
		return 1
	}
	return 2
}

// add adds (s = 1) or retracts (s = -1) the pair (y, x).
func (a *regrAgg) add(slot int32, s int8, y, x float64) {
	fx, fy := finite(x), finite(y)
	if fx {
		a.x[slot].add(s, x)
	} else {
		a.odd[slot][0][oddIndex(x)] += int64(s)
	}
	if fy {
		a.y[slot].add(s, y)
	} else {
		a.odd[slot][1][oddIndex(y)] += int64(s)
	}
	if fx && fy {
		a.xy[slot].add(s, x, y)
	}
}

// add is float8_regr_accum's update of n, Σv and Σ(v−v̄)² (with its
// scale factor, which float8_accum does not have), or its inverse.
func (c *ycSums) add(s int8, v float64) {
	switch {
	case s > 0:
		n0 := float64(c.n)
		c.n++
		n := float64(c.n)
		c.sum += v
		if n0 > 0 {
			t := v*n - c.sum
			c.ss += t * t * (1.0 / (n * n0))
		}
	case c.n <= 1:
		*c = ycSums{n: c.n - 1}
	default:
		n := float64(c.n)
		t := v*n - c.sum
		c.ss = max(c.ss-t*t*(1.0/(n*(n-1))), 0)
		c.sum -= v
		c.n--
	}
}

// add is float8_regr_accum's update of Sxy (with the scale computed as it
// is there), or its inverse.
func (c *ycJoint) add(s int8, x, y float64) {
	switch {
	case s > 0:
		n0 := float64(c.n)
		c.n++
		n := float64(c.n)
		c.sx += x
		c.sy += y
		if n0 > 0 {
			tx, ty := x*n-c.sx, y*n-c.sy
			scale := 1.0 / (n * n0)
			c.sp += tx * ty * scale
		}
	case c.n <= 1:
		*c = ycJoint{n: c.n - 1}
	default:
		n := float64(c.n)
		tx, ty := x*n-c.sx, y*n-c.sy
		scale := 1.0 / (n * (n - 1))
		c.sp -= tx * ty * scale
		c.sx -= x
		c.sy -= y
		c.n--
	}
}

// sums are PostgreSQL's Sx and Sxx of one variable given its finite sums
// and its non-finite counts: the sum is infinite or NaN with any of those,
// Sxx is NaN.
func regrSums(c ycSums, odd [3]int64) (sum, ss float64) {
	nan, pos, neg := odd[0] > 0, odd[1] > 0, odd[2] > 0
	switch {
	case nan || (pos && neg):
		return math.NaN(), math.NaN()
	case pos:
		return math.Inf(1), math.NaN()
	case neg:
		return math.Inf(-1), math.NaN()
	}
	return c.sum, c.ss
}

func (a *regrAgg) prepare([]int32) error { return nil }

// result is PostgreSQL's final function of a.fn (float8_corr,
// float8_regr_slope, ...) over the sums.
func (a *regrAgg) result(slot int32) (types.Datum, error) {
	odd := a.odd[slot]
	// The pairs with a finite x and those with a non-finite one.
	total := a.x[slot].n + odd[0][0] + odd[0][1] + odd[0][2]
	if a.fn == ir.AggRegrCount {
		return types.DInt(total), nil
	}
	if total < 1 || (a.fn == ir.AggCovarSamp && total < 2) {
		return types.Null, nil
	}
	sx, sxx := regrSums(a.x[slot], odd[0])
	sy, syy := regrSums(a.y[slot], odd[1])
	sxy := a.xy[slot].sp
	if a.xy[slot].n != total {
		sxy = math.NaN()
	}
	n := float64(total)
	var v float64
	switch a.fn {
	case ir.AggRegrSxx:
		v = sxx
	case ir.AggRegrSyy:
		v = syy
	case ir.AggRegrSxy:
		v = sxy
	case ir.AggRegrAvgX:
		v = sx / n
	case ir.AggRegrAvgY:
		v = sy / n
	case ir.AggCovarPop:
		v = sxy / n
	case ir.AggCovarSamp:
		v = sxy / (n - 1)
	case ir.AggCorr:
		if sxx == 0 || syy == 0 {
			return types.Null, nil
		}
		v = sxy / math.Sqrt(sxx*syy)
	case ir.AggRegrR2:
		if sxx == 0 {
			return types.Null, nil
		}
		if syy == 0 {
			return types.DFloat(1), nil
		}
		v = (sxy * sxy) / (sxx * syy)
	case ir.AggRegrSlope:
		if sxx == 0 {
			return types.Null, nil
		}
		v = sxy / sxx
	case ir.AggRegrIntercept:
		if sxx == 0 {
			return types.Null, nil
		}
		v = (sy - sx*sxy/sxx) / n
	default:
		return types.Null, fmt.Errorf("exec: unknown aggregate %s", a.fn)
	}
	return types.DFloat(v), nil
}

func (a *regrAgg) appendState(buf []byte, slot int32) []byte {
	x, y, xy := a.x[slot], a.y[slot], a.xy[slot]
	buf = binary.AppendVarint(buf, x.n)
	buf = binary.AppendVarint(buf, y.n)
	buf = binary.AppendVarint(buf, xy.n)
	for _, v := range [...]float64{x.sum, x.ss, y.sum, y.ss, xy.sx, xy.sy, xy.sp} {
		buf = binary.BigEndian.AppendUint64(buf, math.Float64bits(v))
	}
	for _, odd := range a.odd[slot] {
		for _, c := range odd {
			buf = binary.AppendVarint(buf, c)
		}
	}
	return buf
}

func (a *regrAgg) loadState(buf []byte, slot int32) ([]byte, error) {
	x, y, xy := &a.x[slot], &a.y[slot], &a.xy[slot]
	buf, err := loadVarints(buf, &x.n, &y.n, &xy.n)
	if err != nil {
		return nil, err
	}
	if len(buf) < 56 {
		return nil, errCorruptState
	}
	for k, p := range [...]*float64{&x.sum, &x.ss, &y.sum, &y.ss, &xy.sx, &xy.sy, &xy.sp} {
		*p = math.Float64frombits(binary.BigEndian.Uint64(buf[8*k:]))
	}
	odd := &a.odd[slot]
	return loadVarints(buf[56:], &odd[0][0], &odd[0][1], &odd[0][2], &odd[1][0], &odd[1][1], &odd[1][2])
}
