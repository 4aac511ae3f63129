package exec

import (
	"encoding/binary"
	"math"

	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/streamsql/streamsql/exec/eval"
	"github.com/streamsql/streamsql/ir"
	"github.com/streamsql/streamsql/sqlerr"
	"github.com/streamsql/streamsql/state"
	"github.com/streamsql/streamsql/types"
)

// frameAcc accumulates the rows of a window frame for one call: an
// aggregate, or first_value, last_value and nth_value over frames whose
// start never moves. The evaluator adds each row of the frame (its argument
// value; NULL values are skipped by the aggregates, count(*) gets a non-NULL
// placeholder) and, when the frame start moves, removes the rows that left
// it, or starts over if the function has no inverse, as PostgreSQL does (so
// float sums add their values in frame order, exactly as PostgreSQL's).
//
// The state is encoded by appendState and restored by loadState: a
// streaming window keeps the state of each row's frame of a running frame
// (UNBOUNDED PRECEDING), so that a change after a row resumes from it.
type frameAcc interface {
	reset()
	add(d types.Datum)
	// remove undoes add(d); it is called only if invertible.
	remove(d types.Datum)
	invertible() bool
	result() (types.Datum, error)
	appendState(buf []byte) []byte
	loadState(buf []byte) ([]byte, error)
}

// newFrameAcc returns the accumulator of frame function fn over arguments
// of type argT with results of type resultT; n is nth_value's n, sep
// string_agg's separator.
func newFrameAcc(fn string, argT, resultT types.T, ignoreNulls bool, n int64, sep string) (frameAcc, error) {
	switch fn {
	case ir.AggCountStar:
		return &countAcc{star: true}, nil
	case ir.AggCount:
		return &countAcc{}, nil
	case ir.AggSum, ir.AggAvg:
		avg := fn == ir.AggAvg
		switch argT.Kind {
		case types.Int16, types.Int32:
			return &intSumAcc{avg: avg}, nil
		case types.Int64, types.Numeric:
			return &decSumAcc{avg: avg, int64Input: argT.Kind == types.Int64, dyn: argT.DynamicNumeric(),
				scale: argT.EffectiveScale(), resultScale: resultT.EffectiveScale()}, nil
		case types.Float32, types.Float64:
			return &floatSumAcc{avg: avg, f32: resultT.Kind == types.Float32}, nil
		case types.Interval:
			return &intervalSumAcc{avg: avg}, nil
		}
	case ir.AggMin, ir.AggMax:
		return &minMaxAcc{max: fn == ir.AggMax, t: argT, codec: state.NewRowCodec([]types.T{argT})}, nil
	case ir.WinFirstValue:
		return &nthAcc{n: 1, ignoreNulls: ignoreNulls, codec: state.NewRowCodec([]types.T{argT})}, nil
	case ir.WinNthValue:
		return &nthAcc{n: n, ignoreNulls: ignoreNulls, codec: state.NewRowCodec([]types.T{argT})}, nil
	case ir.WinLastValue:
		return &lastAcc{ignoreNulls: ignoreNulls, codec: state.NewRowCodec([]types.T{argT})}, nil
	}
	if acc, err := newOtherFrameAcc(fn, argT, resultT, sep); acc != nil || err != nil {
		return acc, err
	}
	return nil, sqlerr.Unsupported("window function %s(%s)", fn, argT)
}

// countAcc is count(*) and count(x).
type countAcc struct {
	star bool
	n    int64
}

func (a *countAcc) reset() { a.n = 0 }
func (a *countAcc) add(d types.Datum) {
	if a.star || !d.Null {
		a.n++
	}
}
func (a *countAcc) remove(d types.Datum) {
	if a.star || !d.Null {
		a.n--
	}
}
func (a *countAcc) invertible() bool                     { return true }
func (a *countAcc) result() (types.Datum, error)         { return types.DInt(a.n), nil }
func (a *countAcc) appendState(buf []byte) []byte        { return binary.AppendVarint(buf, a.n) }
func (a *countAcc) loadState(buf []byte) ([]byte, error) { return loadVarints(buf, &a.n) }

// intSumAcc is sum and avg over smallint and integer.
type intSumAcc struct {
	avg    bool
	sum, n int64
}

func (a *intSumAcc) reset() { a.sum, a.n = 0, 0 }
func (a *intSumAcc) add(d types.Datum) {
	if !d.Null {
		a.sum += d.I
		a.n++
	}
}
func (a *intSumAcc) remove(d types.Datum) {
	if !d.Null {
		a.sum -= d.I
		a.n--
	}
}
func (a *intSumAcc) invertible() bool { return true }
func (a *intSumAcc) result() (types.Datum, error) {
	switch {
	case a.n == 0:
		return types.Null, nil
	case a.avg:
		return divideDecimal(decimal128.FromI64(a.sum), 0, a.n)
	}
	return types.DInt(a.sum), nil
}
func (a *intSumAcc) appendState(buf []byte) []byte {
	return binary.AppendVarint(binary.AppendVarint(buf, a.sum), a.n)
}
func (a *intSumAcc) loadState(buf []byte) ([]byte, error) { return loadVarints(buf, &a.sum, &a.n) }

// decSumAcc is sum and avg over bigint (scale 0) and numeric: a 128-bit sum
// at the argument's scale, or over unconstrained numerics (dyn) an
// unconstrained numeric with the live values' display scales counted (see
// decimalSumAgg).
type decSumAcc struct {
	avg, int64Input, dyn bool
	scale, resultScale   int32
	sum                  decimal128.Num
	n                    int64
	scales               []scaleCount
	err                  error
}

func (a *decSumAcc) reset() { a.sum, a.n, a.scales, a.err = decimal128.Num{}, 0, a.scales[:0], nil }
func (a *decSumAcc) value(d types.Datum) decimal128.Num {
	if a.int64Input {
		return decimal128.FromI64(d.I)
	}
	return d.Dec
}
func (a *decSumAcc) add(d types.Datum)    { a.update(d, 1) }
func (a *decSumAcc) remove(d types.Datum) { a.update(d, -1) }

func (a *decSumAcc) update(d types.Datum, s int8) {
	if d.Null {
		return
	}
	a.n += int64(s)
	if !a.dyn {
		if s > 0 {
			a.sum = a.sum.Add(a.value(d))
		} else {
			a.sum = a.sum.Sub(a.value(d))
		}
		return
	}
	var ok bool
	if s > 0 {
		a.sum, ok = eval.NumericAdd(a.sum, d.Dec)
	} else {
		a.sum, ok = eval.NumericSub(a.sum, d.Dec)
	}
	if !ok {
		a.err = errNumericOverflow
	}
	_, scale := types.UnpackNumeric(d.Dec)
	countScale(&a.scales, scale, s)
}

func (a *decSumAcc) invertible() bool { return true }
func (a *decSumAcc) result() (types.Datum, error) {
	switch {
	case a.n == 0:
		return types.Null, nil
	case a.err != nil:
		return types.Null, a.err
	case a.dyn:
		v, ok := eval.NumericRescale(a.sum, maxScale(a.scales))
		if ok && a.avg {
			v, ok = eval.NumericDiv(v, eval.NumericInt(a.n))
		}
		if !ok {
			return types.Null, errNumericOverflow
		}
		return types.DNumeric(v), nil
	case a.avg:
		return divideDecimal(a.sum, a.scale, a.n)
	case a.int64Input:
		return packSum(a.sum)
	}
	return rescaleSum(a.sum, a.scale, a.resultScale)
}

// rescaleSum returns sum (at scale from) at scale to, or the overflow error.
func rescaleSum(sum decimal128.Num, from, to int32) (types.Datum, error) {
	v, err := sum.Rescale(from, to)
	if err != nil || !v.FitsInPrecision(types.NumericPrecision) {
		return types.Null, errNumericOverflow
	}
	return types.DNumeric(v), nil
}
func (a *decSumAcc) appendState(buf []byte) []byte {
	buf = binary.BigEndian.AppendUint64(buf, uint64(a.sum.HighBits()))
	buf = binary.BigEndian.AppendUint64(buf, a.sum.LowBits())
	buf = binary.AppendVarint(buf, a.n)
	if a.dyn {
		buf = appendScaleCounts(buf, a.scales)
	}
	return buf
}
func (a *decSumAcc) loadState(buf []byte) ([]byte, error) {
	if len(buf) < 16 {
		return nil, errCorruptState
	}
	a.sum = decimal128.New(int64(binary.BigEndian.Uint64(buf)), binary.BigEndian.Uint64(buf[8:]))
	buf, err := loadVarints(buf[16:], &a.n)
	if err != nil || !a.dyn {
		return buf, err
	}
	return loadScaleCounts(buf, &a.scales)
}

// floatSumAcc is sum and avg over real and double precision. It has no
// inverse: PostgreSQL's float sums restart when the frame start moves, so
// that every result adds the frame's values in order.
type floatSumAcc struct {
	avg, f32 bool
	sum      float64
	n        int64
}

func (a *floatSumAcc) reset() { a.sum, a.n = 0, 0 }
func (a *floatSumAcc) add(d types.Datum) {
	if !d.Null {
		a.sum += d.F
		a.n++
	}
}
func (a *floatSumAcc) remove(types.Datum) {}
func (a *floatSumAcc) invertible() bool   { return false }
func (a *floatSumAcc) result() (types.Datum, error) {
	if a.n == 0 {
		return types.Null, nil
	}
	v := a.sum
	if a.avg {
		v /= float64(a.n)
	}
	if a.f32 {
		v = float64(float32(v))
	}
	return types.DFloat(v), nil
}
func (a *floatSumAcc) appendState(buf []byte) []byte {
	buf = binary.BigEndian.AppendUint64(buf, math.Float64bits(a.sum))
	return binary.AppendVarint(buf, a.n)
}
func (a *floatSumAcc) loadState(buf []byte) ([]byte, error) {
	if len(buf) < 8 {
		return nil, errCorruptState
	}
	a.sum = math.Float64frombits(binary.BigEndian.Uint64(buf))
	return loadVarints(buf[8:], &a.n)
}

// intervalSumAcc is sum and avg over intervals, field by field.
type intervalSumAcc struct {
	avg          bool
	months, days int64
	micros       decimal128.Num
	n            int64
}

func (a *intervalSumAcc) reset() { *a = intervalSumAcc{avg: a.avg} }
func (a *intervalSumAcc) apply(d types.Datum, s int64) {
	if d.Null {
		return
	}
	us := decimal128.FromI64(d.Ivl.Micros)
	if s < 0 {
		us = us.Negate()
	}
	a.months += s * int64(d.Ivl.Months)
	a.days += s * int64(d.Ivl.Days)
	a.micros = a.micros.Add(us)
	a.n += s
}
func (a *intervalSumAcc) add(d types.Datum)    { a.apply(d, 1) }
func (a *intervalSumAcc) remove(d types.Datum) { a.apply(d, -1) }
func (a *intervalSumAcc) invertible() bool     { return true }
func (a *intervalSumAcc) result() (types.Datum, error) {
	if a.n == 0 {
		return types.Null, nil
	}
	lim := decimal128.FromI64(types.MaxIntervalMicros)
	if a.months != int64(int32(a.months)) || a.days != int64(int32(a.days)) || a.micros.Greater(lim) || a.micros.Less(lim.Negate()) {
		return types.Null, errIntervalOutOfRange
	}
	sum := types.IntervalValue{Months: int32(a.months), Days: int32(a.days), Micros: int64(a.micros.LowBits())}
	if !a.avg {
		return types.DInterval(sum), nil
	}
	return eval.DivInterval(sum, float64(a.n))
}
func (a *intervalSumAcc) appendState(buf []byte) []byte {
	buf = binary.AppendVarint(buf, a.months)
	buf = binary.AppendVarint(buf, a.days)
	buf = binary.BigEndian.AppendUint64(buf, uint64(a.micros.HighBits()))
	buf = binary.BigEndian.AppendUint64(buf, a.micros.LowBits())
	return binary.AppendVarint(buf, a.n)
}
func (a *intervalSumAcc) loadState(buf []byte) ([]byte, error) {
	buf, err := loadVarints(buf, &a.months, &a.days)
	if err != nil {
		return nil, err
	}
	if len(buf) < 16 {
		return nil, errCorruptState
	}
	a.micros = decimal128.New(int64(binary.BigEndian.Uint64(buf)), binary.BigEndian.Uint64(buf[8:]))
	return loadVarints(buf[16:], &a.n)
}

// minMaxAcc is min and max; it has no inverse.
type minMaxAcc struct {
	max   bool
	t     types.T
	codec *state.RowCodec
	cur   types.Datum
}

func (a *minMaxAcc) reset() { a.cur = types.Null }
func (a *minMaxAcc) add(d types.Datum) {
	if d.Null {
		return
	}
	if a.cur.Null {
		a.cur = d
		return
	}
	// Of equal values the later one wins, as in PostgreSQL (equal
	// intervals may differ: '1 mon' and '30 days').
	c := types.Compare(a.t, d, a.cur)
	if (a.max && c >= 0) || (!a.max && c <= 0) {
		a.cur = d
	}
}
func (a *minMaxAcc) remove(types.Datum)            {}
func (a *minMaxAcc) invertible() bool              { return false }
func (a *minMaxAcc) result() (types.Datum, error)  { return a.cur, nil }
func (a *minMaxAcc) appendState(buf []byte) []byte { return appendDatumState(buf, a.codec, a.cur) }
func (a *minMaxAcc) loadState(buf []byte) ([]byte, error) {
	var err error
	a.cur, buf, err = loadDatumState(buf, a.codec)
	return buf, err
}

// nthAcc is first_value (n = 1) and nth_value over frames that only grow:
// the value of the frame's n-th row (with IGNORE NULLS, of its n-th non-NULL
// value).
type nthAcc struct {
	n           int64
	ignoreNulls bool
	codec       *state.RowCodec
	seen        int64
	v           types.Datum
}

func (a *nthAcc) reset() { a.seen, a.v = 0, types.Null }
func (a *nthAcc) add(d types.Datum) {
	if a.ignoreNulls && d.Null {
		return
	}
	a.seen++
	if a.seen == a.n {
		a.v = d
	}
}
func (a *nthAcc) remove(types.Datum)           {}
func (a *nthAcc) invertible() bool             { return false }
func (a *nthAcc) result() (types.Datum, error) { return a.v, nil }
func (a *nthAcc) appendState(buf []byte) []byte {
	return appendDatumState(binary.AppendVarint(buf, a.seen), a.codec, a.v)
}
func (a *nthAcc) loadState(buf []byte) ([]byte, error) {
	buf, err := loadVarints(buf, &a.seen)
	if err != nil {
		return nil, err
	}
	a.v, buf, err = loadDatumState(buf, a.codec)
	return buf, err
}

// lastAcc is last_value over frames that only grow.
type lastAcc struct {
	ignoreNulls bool
	codec       *state.RowCodec
	v           types.Datum
}

func (a *lastAcc) reset() { a.v = types.Null }
func (a *lastAcc) add(d types.Datum) {
	if !a.ignoreNulls || !d.Null {
		a.v = d
	}
}
func (a *lastAcc) remove(types.Datum)            {}
func (a *lastAcc) invertible() bool              { return false }
func (a *lastAcc) result() (types.Datum, error)  { return a.v, nil }
func (a *lastAcc) appendState(buf []byte) []byte { return appendDatumState(buf, a.codec, a.v) }
func (a *lastAcc) loadState(buf []byte) ([]byte, error) {
	var err error
	a.v, buf, err = loadDatumState(buf, a.codec)
	return buf, err
}

// appendDatumState appends d, length-prefixed, in the one-column codec's
// row encoding.
func appendDatumState(buf []byte, codec *state.RowCodec, d types.Datum) []byte {
	// The encoding of one column is at most a few bytes longer than a
	// text's length: reserve a one-byte length, move the row if longer.
	start := len(buf)
	buf = append(buf, 0)
	one := [1]types.Datum{d}
	buf = codec.AppendDatums(buf, one[:])
	n := len(buf) - start - 1
	if n < 0x80 {
		buf[start] = byte(n)
		return buf
	}
	var lenBuf [binary.MaxVarintLen64]byte
	k := binary.PutUvarint(lenBuf[:], uint64(n))
	buf = append(buf, lenBuf[:k-1]...)
	copy(buf[start+k:], buf[start+1:start+1+n])
	copy(buf[start:], lenBuf[:k])
	return buf
}

func loadDatumState(buf []byte, codec *state.RowCodec) (types.Datum, []byte, error) {
	n, k := binary.Uvarint(buf)
	if k <= 0 || uint64(len(buf)-k) < n {
		return types.Null, nil, errCorruptState
	}
	out := []types.Datum{{}}
	if err := codec.DecodeDatums(buf[k:k+int(n)], out); err != nil {
		return types.Null, nil, err
	}
	return out[0], buf[k+int(n):], nil
}
