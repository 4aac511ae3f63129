package exec

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/bitutil"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/streamsql/streamsql/exec/eval"
	"github.com/streamsql/streamsql/ir"
	"github.com/streamsql/streamsql/sqlerr"
	"github.com/streamsql/streamsql/state"
	"github.com/streamsql/streamsql/types"
)

// aggregator holds one aggregate call's state for every group of a hash
// aggregation, indexed by group slot. All aggregators are retractable: a
// row applied with sign -1 undoes the same row applied with +1.
type aggregator interface {
	// grow makes slots [0, n) addressable.
	grow(n int)
	// reset clears slot for a new group.
	reset(slot int32)
	// update applies row i of col to group slots[i] with sign signs[i]
	// (+1 add, -1 retract, 0 skip). NULL values are skipped by every
	// aggregate but count(*), which gets a nil col, and array_agg,
	// first_value and last_value, which keep them.
	update(col arrow.Array, slots []int32, signs []int8) error
	// prepare brings the results of the dirty slots up to date before result
	// is read (min and max rescan their value sets here).
	prepare(dirty []int32) error
	// result returns the aggregate's value for slot.
	result(slot int32) (types.Datum, error)
	// appendState appends the persistent state of slot to buf; loadState
	// restores it and returns the rest of buf.
	appendState(buf []byte, slot int32) []byte
	loadState(buf []byte, slot int32) ([]byte, error)
}

// newAggregator returns the aggregator for call, whose argument has type
// argType. valueSet is the state table of the group's multiset of values,
// used by min and max (and by DISTINCT, handled by the caller).
func newAggregator(call ir.AggCall, argType types.T, valueSet *state.Table, groupKey func(slot int32) []byte, rowKey func(i int) []byte) (aggregator, error) {
	switch call.Func {
	case ir.AggCountStar, ir.AggCount:
		return &countAgg{star: call.Func == ir.AggCountStar}, nil
	case ir.AggSum, ir.AggAvg:
		avg := call.Func == ir.AggAvg
		switch argType.Kind {
		case types.Int16, types.Int32:
			return &intSumAgg{avg: avg, resultT: call.T}, nil
		case types.Int64:
			return &decimalSumAgg{avg: avg, scale: 0, resultScale: -1, int64Input: true}, nil
		case types.Numeric:
			if argType.DynamicNumeric() {
				return &decimalSumAgg{avg: avg, dyn: true}, nil
			}
			return &decimalSumAgg{avg: avg, scale: argType.Scale, resultScale: call.T.EffectiveScale()}, nil
		case types.Float32, types.Float64:
			return &floatSumAgg{avg: avg, resultT: call.T}, nil
		case types.Interval:
			return &intervalSumAgg{avg: avg}, nil
		}
	case ir.AggMin, ir.AggMax:
		return &minMaxAgg{max: call.Func == ir.AggMax, t: argType, set: valueSet, groupKey: groupKey, rowKey: rowKey}, nil
	case ir.AggKeyValue:
		return &minMaxAgg{max: true, t: argType, set: valueSet, groupKey: groupKey, rowKey: rowKey, exact: true}, nil
	case ir.AggBoolAnd, ir.AggEvery, ir.AggBoolOr:
		return &boolAgg{or: call.Func == ir.AggBoolOr}, nil
	case ir.AggStddev, ir.AggStddevSamp, ir.AggStddevPop, ir.AggVariance, ir.AggVarSamp, ir.AggVarPop:
		return newVarianceAgg(call.Func, argType)
	case ir.AggStringAgg, ir.AggArrayAgg, ir.AggFirstValue, ir.AggLastValue, ir.AggJSONBAgg, ir.AggJSONBObjectAgg:
		return newOrderedAgg(call, argType, valueSet, groupKey, rowKey), nil
	case ir.AggApproxCountDistinct:
		return &approxDistinctAgg{t: argType, set: valueSet, groupKey: groupKey}, nil
	case ir.AggBitAnd, ir.AggBitOr, ir.AggBitXor:
		return newBitAgg(call.Func, argType)
	case ir.AggPercentileCont, ir.AggPercentileDisc, ir.AggMode:
		return newOrderedSetAgg(call, argType, valueSet, groupKey)
	}
	if ir.IsRegression(call.Func) {
		return newRegrAgg(call)
	}
	return nil, sqlerr.Unsupported("aggregate %s(%s)", call.Func, argType)
}

// recordAggregator is an aggregator that reads input columns besides its
// argument (a delimiter, ORDER BY keys): HashAgg hands it each batch's
// record before calling update with that batch.
type recordAggregator interface {
	setRecord(rec arrow.RecordBatch)
}

// needsRowKeys reports whether call's aggregator, given a value set, keys
// its entries by the input rows' stream keys.
func needsRowKeys(call ir.AggCall) bool {
	switch call.Func {
	case ir.AggMin, ir.AggMax, ir.AggKeyValue:
		return true
	}
	return ir.OrderSensitive(call.Func) && !call.Distinct
}

// isValid reports whether row i of arr is not NULL without an interface call
// per row when the column has no NULLs.
func validity(arr arrow.Array) (bits []byte, offset int, all bool) {
	if arr.NullN() == 0 {
		return nil, 0, true
	}
	return arr.NullBitmapBytes(), arr.Data().Offset(), false
}

// countAgg is count(*) and count(x).
type countAgg struct {
	star bool
	n    []int64
}

func (a *countAgg) grow(n int) {
	for len(a.n) < n {
		a.n = append(a.n, 0)
	}
}
func (a *countAgg) reset(slot int32) { a.n[slot] = 0 }
func (a *countAgg) update(col arrow.Array, slots []int32, signs []int8) error {
	if a.star || col == nil {
		for i, s := range signs {
			a.n[slots[i]] += int64(s)
		}
		return nil
	}
	bits, off, all := validity(col)
	for i, s := range signs {
		if s != 0 && (all || bitutil.BitIsSet(bits, off+i)) {
			a.n[slots[i]] += int64(s)
		}
	}
	return nil
}
func (a *countAgg) prepare([]int32) error { return nil }
func (a *countAgg) result(slot int32) (types.Datum, error) {
	return types.DInt(a.n[slot]), nil
}
func (a *countAgg) appendState(buf []byte, slot int32) []byte {
	return binary.AppendVarint(buf, a.n[slot])
}
func (a *countAgg) loadState(buf []byte, slot int32) ([]byte, error) {
	v, n := binary.Varint(buf)
	if n <= 0 {
		return nil, errCorruptState
	}
	a.n[slot] = v
	return buf[n:], nil
}

var errCorruptState = fmt.Errorf("exec: corrupt aggregation state")

// intSumAgg is sum and avg over smallint and integer: an int64 sum (which
// cannot overflow for fewer than 2^32 rows) and a count of non-NULL values.
type intSumAgg struct {
	avg     bool
	resultT types.T
	sum     []int64
	n       []int64
}

func (a *intSumAgg) grow(n int) {
	for len(a.sum) < n {
		a.sum = append(a.sum, 0)
		a.n = append(a.n, 0)
	}
}
func (a *intSumAgg) reset(slot int32) { a.sum[slot], a.n[slot] = 0, 0 }
func (a *intSumAgg) update(col arrow.Array, slots []int32, signs []int8) error {
	switch c := col.(type) {
	case *array.Int16:
		sumInts(a.sum, a.n, c.Int16Values(), col, slots, signs)
	case *array.Int32:
		sumInts(a.sum, a.n, c.Int32Values(), col, slots, signs)
	default:
		return fmt.Errorf("exec: sum over %s", col.DataType())
	}
	return nil
}

func sumInts[T int16 | int32](sum, n []int64, vals []T, col arrow.Array, slots []int32, signs []int8) {
	bits, off, all := validity(col)
	for i, s := range signs {
		if s != 0 && (all || bitutil.BitIsSet(bits, off+i)) {
			sum[slots[i]] += int64(s) * int64(vals[i])
			n[slots[i]] += int64(s)
		}
	}
}

func (a *intSumAgg) prepare([]int32) error { return nil }
func (a *intSumAgg) result(slot int32) (types.Datum, error) {
	if a.n[slot] == 0 {
		return types.Null, nil
	}
	if !a.avg {
		return types.DInt(a.sum[slot]), nil
	}
	return divideDecimal(decimal128.FromI64(a.sum[slot]), 0, a.n[slot])
}
func (a *intSumAgg) appendState(buf []byte, slot int32) []byte {
	buf = binary.AppendVarint(buf, a.sum[slot])
	return binary.AppendVarint(buf, a.n[slot])
}
func (a *intSumAgg) loadState(buf []byte, slot int32) ([]byte, error) {
	return loadVarints(buf, &a.sum[slot], &a.n[slot])
}

func loadVarints(buf []byte, dst ...*int64) ([]byte, error) {
	for _, d := range dst {
		v, n := binary.Varint(buf)
		if n <= 0 {
			return nil, errCorruptState
		}
		*d = v
		buf = buf[n:]
	}
	return buf, nil
}

// divideDecimal returns sum/n for avg, sum a mantissa at scale: an
// unconstrained numeric with PostgreSQL's division display scale (avg is
// numeric_div of the sum by the count).
func divideDecimal(sum decimal128.Num, scale int32, n int64) (types.Datum, error) {
	p, ok := eval.NumericFromParts(sum, scale)
	if !ok {
		return types.Null, errNumericOverflow
	}
	q, ok := eval.NumericDiv(p, eval.NumericInt(n))
	if !ok {
		return types.Null, errNumericOverflow
	}
	return types.DNumeric(q), nil
}

// decimalSumAgg is sum and avg over bigint and numeric: a 128-bit sum and a
// count of non-NULL values. Over numeric(p,s) the sum is a mantissa at the
// input's scale, returned at the result type's scale. Over bigint and
// unconstrained numeric (dyn) it is an unconstrained numeric whose scale is
// the largest one added so far, and scales counts the live values of each
// display scale: the result shows the largest live one, as PostgreSQL's sum
// of the current rows does after deletes.
type decimalSumAgg struct {
	avg         bool
	scale       int32
	resultScale int32
	int64Input  bool
	dyn         bool
	sum         []decimal128.Num
	n           []int64
	scales      [][]scaleCount
	// over marks dyn sums that overflowed (an integer part beyond 36
	// digits): their result is the overflow error until the group resets.
	over []bool
}

// scaleCount is the number of live values of one display scale.
type scaleCount struct {
	scale int32
	n     int64
}

func (a *decimalSumAgg) grow(n int) {
	for len(a.sum) < n {
		a.sum = append(a.sum, decimal128.Num{})
		a.n = append(a.n, 0)
		if a.dyn {
			a.scales = append(a.scales, nil)
			a.over = append(a.over, false)
		}
	}
}
func (a *decimalSumAgg) reset(slot int32) {
	a.sum[slot], a.n[slot] = decimal128.Num{}, 0
	if a.dyn {
		a.scales[slot], a.over[slot] = a.scales[slot][:0], false
	}
}

// countScale adds s (+1 or -1) to the live values of display scale scale
// in *cs.
func countScale(cs *[]scaleCount, scale int32, s int8) {
	for i := range *cs {
		if c := &(*cs)[i]; c.scale == scale {
			c.n += int64(s)
			if c.n == 0 {
				last := len(*cs) - 1
				(*cs)[i] = (*cs)[last]
				*cs = (*cs)[:last]
			}
			return
		}
	}
	*cs = append(*cs, scaleCount{scale: scale, n: int64(s)})
}

func appendScaleCounts(buf []byte, cs []scaleCount) []byte {
	buf = binary.AppendUvarint(buf, uint64(len(cs)))
	for _, c := range cs {
		buf = append(buf, byte(c.scale))
		buf = binary.AppendVarint(buf, c.n)
	}
	return buf
}

func loadScaleCounts(buf []byte, dst *[]scaleCount) ([]byte, error) {
	k, n := binary.Uvarint(buf)
	if n <= 0 || k > types.DynMaxScale+1 {
		return nil, errCorruptState
	}
	buf = buf[n:]
	cs := (*dst)[:0]
	for ; k > 0; k-- {
		if len(buf) < 1 {
			return nil, errCorruptState
		}
		c := scaleCount{scale: int32(buf[0])}
		var err error
		if buf, err = loadVarints(buf[1:], &c.n); err != nil {
			return nil, err
		}
		cs = append(cs, c)
	}
	*dst = cs
	return buf, nil
}

func (a *decimalSumAgg) update(col arrow.Array, slots []int32, signs []int8) error {
	bits, off, all := validity(col)
	switch c := col.(type) {
	case *array.Int64:
		vals := c.Int64Values()
		for i, s := range signs {
			if s != 0 && (all || bitutil.BitIsSet(bits, off+i)) {
				v := decimal128.FromI64(vals[i])
				if s < 0 {
					v = v.Negate()
				}
				a.sum[slots[i]] = a.sum[slots[i]].Add(v)
				a.n[slots[i]] += int64(s)
			}
		}
	case *array.Decimal128:
		if a.dyn {
			return a.updateDyn(c, slots, signs, bits, off, all)
		}
		for i, s := range signs {
			if s != 0 && (all || bitutil.BitIsSet(bits, off+i)) {
				v := c.Value(i)
				if s < 0 {
					v = v.Negate()
				}
				a.sum[slots[i]] = a.sum[slots[i]].Add(v)
				a.n[slots[i]] += int64(s)
			}
		}
	default:
		return fmt.Errorf("exec: sum over %s", col.DataType())
	}
	return nil
}

func (a *decimalSumAgg) updateDyn(c *array.Decimal128, slots []int32, signs []int8, bits []byte, off int, all bool) error {
	vals := c.Values()
	for i, s := range signs {
		if s == 0 || !(all || bitutil.BitIsSet(bits, off+i)) {
			continue
		}
		slot := slots[i]
		v := vals[i]
		var sum decimal128.Num
		ok := true
		if s > 0 {
			sum, ok = eval.NumericAdd(a.sum[slot], v)
		} else {
			sum, ok = eval.NumericSub(a.sum[slot], v)
		}
		if ok {
			a.sum[slot] = sum
		} else {
			a.over[slot] = true
		}
		a.n[slot] += int64(s)
		_, scale := types.UnpackNumeric(v)
		countScale(&a.scales[slot], scale, s)
	}
	return nil
}

func (a *decimalSumAgg) prepare([]int32) error { return nil }
func (a *decimalSumAgg) result(slot int32) (types.Datum, error) {
	if a.n[slot] == 0 {
		return types.Null, nil
	}
	if a.dyn {
		if a.over[slot] {
			return types.Null, errNumericOverflow
		}
		v, ok := eval.NumericRescale(a.sum[slot], maxScale(a.scales[slot]))
		if !ok {
			return types.Null, errNumericOverflow
		}
		if a.avg {
			q, ok := eval.NumericDiv(v, eval.NumericInt(a.n[slot]))
			if !ok {
				return types.Null, errNumericOverflow
			}
			v = q
		}
		return types.DNumeric(v), nil
	}
	if a.avg {
		return divideDecimal(a.sum[slot], a.scale, a.n[slot])
	}
	if a.resultScale < 0 {
		// bigint input, unconstrained numeric result.
		return packSum(a.sum[slot])
	}
	v, err := a.sum[slot].Rescale(a.scale, a.resultScale)
	if err != nil || !v.FitsInPrecision(types.NumericPrecision) {
		return types.Null, errNumericOverflow
	}
	return types.DNumeric(v), nil
}

// packSum packs an integer sum as an unconstrained numeric.
func packSum(sum decimal128.Num) (types.Datum, error) {
	p, ok := eval.NumericFromParts(sum, 0)
	if !ok {
		return types.Null, errNumericOverflow
	}
	return types.DNumeric(p), nil
}

func (a *decimalSumAgg) appendState(buf []byte, slot int32) []byte {
	buf = binary.BigEndian.AppendUint64(buf, uint64(a.sum[slot].HighBits()))
	buf = binary.BigEndian.AppendUint64(buf, a.sum[slot].LowBits())
	buf = binary.AppendVarint(buf, a.n[slot])
	if a.dyn {
		buf = appendScaleCounts(buf, a.scales[slot])
		buf = append(buf, b2byte(a.over[slot]))
	}
	return buf
}
func (a *decimalSumAgg) loadState(buf []byte, slot int32) ([]byte, error) {
	if len(buf) < 16 {
		return nil, errCorruptState
	}
	a.sum[slot] = decimal128.New(int64(binary.BigEndian.Uint64(buf)), binary.BigEndian.Uint64(buf[8:]))
	buf, err := loadVarints(buf[16:], &a.n[slot])
	if err != nil || !a.dyn {
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

func b2byte(b bool) byte {
	if b {
		return 1
	}
	return 0
}

// floatSumAgg is sum and avg over real and double precision, accumulated in
// float64. Retractions subtract, so long-running sums can differ from a
// fresh batch computation in the last bits, as in every streaming system.
// NaN and infinite values are counted apart (special), not added, so that
// the sum is finite again once they are deleted.
type floatSumAgg struct {
	avg     bool
	resultT types.T
	sum     []float64
	n       []int64
	special [][3]int64 // NaN, +Infinity, -Infinity
}

func (a *floatSumAgg) grow(n int) {
	for len(a.sum) < n {
		a.sum = append(a.sum, 0)
		a.n = append(a.n, 0)
		a.special = append(a.special, [3]int64{})
	}
}
func (a *floatSumAgg) reset(slot int32) {
	a.sum[slot], a.n[slot], a.special[slot] = 0, 0, [3]int64{}
}
func (a *floatSumAgg) update(col arrow.Array, slots []int32, signs []int8) error {
	switch c := col.(type) {
	case *array.Float32:
		sumFloats(a, c.Float32Values(), col, slots, signs)
	case *array.Float64:
		sumFloats(a, c.Float64Values(), col, slots, signs)
	default:
		return fmt.Errorf("exec: sum over %s", col.DataType())
	}
	return nil
}

func sumFloats[T float32 | float64](a *floatSumAgg, vals []T, col arrow.Array, slots []int32, signs []int8) {
	bits, off, all := validity(col)
	for i, s := range signs {
		if s == 0 || !(all || bitutil.BitIsSet(bits, off+i)) {
			continue
		}
		slot, v := slots[i], float64(vals[i])
		a.n[slot] += int64(s)
		switch {
		case v-v == 0: // finite
			a.sum[slot] += float64(s) * v
		case v != v:
			a.special[slot][0] += int64(s)
		case v > 0:
			a.special[slot][1] += int64(s)
		default:
			a.special[slot][2] += int64(s)
		}
	}
}

func (a *floatSumAgg) prepare([]int32) error { return nil }
func (a *floatSumAgg) result(slot int32) (types.Datum, error) {
	if a.n[slot] == 0 {
		return types.Null, nil
	}
	v := a.sum[slot]
	switch sp := a.special[slot]; {
	case sp[0] > 0 || sp[1] > 0 && sp[2] > 0:
		v = math.NaN()
	case sp[1] > 0:
		v = math.Inf(1)
	case sp[2] > 0:
		v = math.Inf(-1)
	}
	if a.avg {
		v /= float64(a.n[slot])
	}
	if a.resultT.Kind == types.Float32 {
		v = float64(float32(v))
	}
	return types.DFloat(v), nil
}

// floatSpecialMark, in place of the sum, says that the special counts
// follow the sum and count; states without NaN or infinite values keep the
// plain layout (sum, count), which older states have.
const floatSpecialMark = 0x7ff8_5350_4543_0001 // a NaN no arithmetic makes

func (a *floatSumAgg) appendState(buf []byte, slot int32) []byte {
	sp := a.special[slot]
	if sp == [3]int64{} {
		buf = binary.BigEndian.AppendUint64(buf, math.Float64bits(a.sum[slot]))
		return binary.AppendVarint(buf, a.n[slot])
	}
	buf = binary.BigEndian.AppendUint64(buf, floatSpecialMark)
	buf = binary.BigEndian.AppendUint64(buf, math.Float64bits(a.sum[slot]))
	buf = binary.AppendVarint(buf, a.n[slot])
	for _, c := range sp {
		buf = binary.AppendVarint(buf, c)
	}
	return buf
}
func (a *floatSumAgg) loadState(buf []byte, slot int32) ([]byte, error) {
	if len(buf) < 8 {
		return nil, errCorruptState
	}
	a.special[slot] = [3]int64{}
	if binary.BigEndian.Uint64(buf) != floatSpecialMark {
		a.sum[slot] = math.Float64frombits(binary.BigEndian.Uint64(buf))
		return loadVarints(buf[8:], &a.n[slot])
	}
	if len(buf) < 16 {
		return nil, errCorruptState
	}
	a.sum[slot] = math.Float64frombits(binary.BigEndian.Uint64(buf[8:]))
	sp := &a.special[slot]
	return loadVarints(buf[16:], &a.n[slot], &sp[0], &sp[1], &sp[2])
}

// intervalSumAgg is sum and avg over intervals. As PostgreSQL adds intervals
// field by field, it keeps 64-bit sums of the months, days and microseconds
// (which cannot overflow for fewer than 2^31 rows) and a count of non-NULL
// values; the result is checked against the interval range when read.
type intervalSumAgg struct {
	avg    bool
	months []int64
	days   []int64
	micros []decimal128.Num
	n      []int64
}

var errIntervalOutOfRange = sqlerr.New(sqlerr.DatetimeFieldOverflow, "interval out of range")

func (a *intervalSumAgg) grow(n int) {
	for len(a.n) < n {
		a.months = append(a.months, 0)
		a.days = append(a.days, 0)
		a.micros = append(a.micros, decimal128.Num{})
		a.n = append(a.n, 0)
	}
}
func (a *intervalSumAgg) reset(slot int32) {
	a.months[slot], a.days[slot], a.micros[slot], a.n[slot] = 0, 0, decimal128.Num{}, 0
}
func (a *intervalSumAgg) update(col arrow.Array, slots []int32, signs []int8) error {
	c, ok := col.(*array.MonthDayNanoInterval)
	if !ok {
		return fmt.Errorf("exec: sum over %s", col.DataType())
	}
	vals := c.MonthDayNanoIntervalValues()
	bits, off, all := validity(col)
	for i, s := range signs {
		if s == 0 || !(all || bitutil.BitIsSet(bits, off+i)) {
			continue
		}
		slot := slots[i]
		v := vals[i]
		us := decimal128.FromI64(v.Nanoseconds / 1000)
		if s < 0 {
			us = us.Negate()
		}
		a.months[slot] += int64(s) * int64(v.Months)
		a.days[slot] += int64(s) * int64(v.Days)
		a.micros[slot] = a.micros[slot].Add(us)
		a.n[slot] += int64(s)
	}
	return nil
}
func (a *intervalSumAgg) prepare([]int32) error { return nil }
func (a *intervalSumAgg) result(slot int32) (types.Datum, error) {
	if a.n[slot] == 0 {
		return types.Null, nil
	}
	m, d, us := a.months[slot], a.days[slot], a.micros[slot]
	lim := decimal128.FromI64(types.MaxIntervalMicros)
	if m != int64(int32(m)) || d != int64(int32(d)) || us.Greater(lim) || us.Less(lim.Negate()) {
		return types.Null, errIntervalOutOfRange
	}
	sum := types.IntervalValue{Months: int32(m), Days: int32(d), Micros: int64(us.LowBits())}
	if !a.avg {
		return types.DInterval(sum), nil
	}
	return eval.DivInterval(sum, float64(a.n[slot]))
}
func (a *intervalSumAgg) appendState(buf []byte, slot int32) []byte {
	buf = binary.AppendVarint(buf, a.months[slot])
	buf = binary.AppendVarint(buf, a.days[slot])
	buf = binary.BigEndian.AppendUint64(buf, uint64(a.micros[slot].HighBits()))
	buf = binary.BigEndian.AppendUint64(buf, a.micros[slot].LowBits())
	return binary.AppendVarint(buf, a.n[slot])
}
func (a *intervalSumAgg) loadState(buf []byte, slot int32) ([]byte, error) {
	buf, err := loadVarints(buf, &a.months[slot], &a.days[slot])
	if err != nil {
		return nil, err
	}
	if len(buf) < 16 {
		return nil, errCorruptState
	}
	a.micros[slot] = decimal128.New(int64(binary.BigEndian.Uint64(buf)), binary.BigEndian.Uint64(buf[8:]))
	return loadVarints(buf[16:], &a.n[slot])
}

// minMaxAgg is min and max. In a streaming aggregation each group's values
// are kept in a state table, one entry per input row (key: group key, the
// value's memcomparable encoding, the row's stream key; no value), so an
// insert or delete is one write with no read, and deleting the current
// minimum finds the next one with one seek. The current result per group is
// cached; a retraction of the cached value marks it stale, and prepare
// rescans the group's first (min) or last (max) entry. In a batch query
// (insert-only, no value set) only the running result is kept.
type minMaxAgg struct {
	max      bool
	t        types.T
	set      *state.Table
	groupKey func(slot int32) []byte
	// rowKey returns the encoded stream key of input row i of the batch
	// being aggregated.
	rowKey func(i int) []byte
	// exact is the value of an interval group key (ir.AggKeyValue, with
	// max): without a value set the first value seen, with one the largest
	// in key order, which tells apart intervals of equal span by months,
	// then days.
	exact bool
	// readsSet is set when the value set is another min or max's over the
	// same values (see shareValueSets): that one writes it, this one only
	// rescans it.
	readsSet   bool
	vBuf, wBuf []byte
	sBuf       [1]byte

	cur   []types.Datum
	stale []bool

	keyBuf []byte
}

func (a *minMaxAgg) grow(n int) {
	for len(a.cur) < n {
		a.cur = append(a.cur, types.Null)
		a.stale = append(a.stale, false)
	}
}
func (a *minMaxAgg) reset(slot int32) { a.cur[slot], a.stale[slot] = types.Null, false }

func (a *minMaxAgg) update(col arrow.Array, slots []int32, signs []int8) error {
	bits, off, all := validity(col)
	for i, s := range signs {
		if s == 0 || !(all || bitutil.BitIsSet(bits, off+i)) {
			continue
		}
		slot := slots[i]
		if a.set != nil {
			a.write(col, i, slot, s)
		} else if s < 0 {
			return fmt.Errorf("exec: retraction in an insert-only %s", map[bool]string{true: "max", false: "min"}[a.max])
		}
		if a.stale[slot] {
			continue
		}
		v := types.DatumAt(a.t, col, i)
		cur := a.cur[slot]
		if s > 0 {
			if cur.Null || a.better(v, cur) {
				if a.t.Kind == types.Text {
					v.S = strings.Clone(v.S)
				}
				a.cur[slot] = v
			}
		} else if !cur.Null && (types.Compare(a.t, v, cur) == 0 && !a.exact || a.exact && a.exactCompare(v, cur) == 0) {
			// Other rows may hold the same value: the rescan will tell.
			a.stale[slot] = true
		}
	}
	return nil
}

// write adds row i to (s > 0) or removes it from the group's value set,
// unless the set is another's (readsSet), which writes it.
func (a *minMaxAgg) write(col arrow.Array, i int, slot int32, s int8) {
	if a.readsSet {
		return
	}
	a.keyBuf = append(a.keyBuf[:0], a.groupKey(slot)...)
	a.keyBuf = state.AppendKey(a.keyBuf, a.t, col, i)
	a.keyBuf = append(a.keyBuf, a.rowKey(i)...)
	if s > 0 {
		a.set.Put(a.keyBuf, a.entryValue(col, i))
	} else {
		a.set.Delete(a.keyBuf)
	}
}

// better reports whether v should replace cur.
func (a *minMaxAgg) better(v, cur types.Datum) bool {
	if a.exact {
		return a.set != nil && a.exactCompare(v, cur) > 0
	}
	c := types.Compare(a.t, v, cur)
	if a.max {
		return c > 0
	}
	return c < 0
}

// exactCompare orders values by their key encoding, which for intervals
// of equal span orders by months, then days.
func (a *minMaxAgg) exactCompare(v, w types.Datum) int {
	a.vBuf = state.AppendKeyDatum(a.vBuf[:0], a.t, v)
	a.wBuf = state.AppendKeyDatum(a.wBuf[:0], a.t, w)
	return bytes.Compare(a.vBuf, a.wBuf)
}

func (a *minMaxAgg) prepare(dirty []int32) error {
	for _, slot := range dirty {
		if !a.stale[slot] {
			continue
		}
		if err := a.rescan(slot); err != nil {
			return err
		}
	}
	return nil
}

// rescan reads the group's smallest (min) or largest (max) value from the
// value set.
func (a *minMaxAgg) rescan(slot int32) error {
	prefix := a.groupKey(slot)
	it, err := a.set.NewIter(prefix, state.PrefixEnd(prefix))
	if err != nil {
		return err
	}
	defer it.Close()
	var ok bool
	if a.max {
		ok = it.Last()
	} else {
		ok = it.First()
	}
	a.stale[slot] = false
	if !ok {
		a.cur[slot] = types.Null
		return it.Error()
	}
	d, _, err := state.DecodeKeyDatum(it.Key()[len(prefix):], a.t)
	if err != nil {
		return err
	}
	if a.t.Kind == types.Text {
		d.S = strings.Clone(d.S)
	}
	if v := it.Value(); a.t.DynamicNumeric() && len(v) == 1 {
		d = withScale(d, v[0])
	}
	a.cur[slot] = d
	return nil
}

// entryValue is the value of row i's value-set entry: nothing, or for an
// unconstrained numeric its display scale, which the key drops.
func (a *minMaxAgg) entryValue(col arrow.Array, i int) []byte {
	if !a.t.DynamicNumeric() {
		return nil
	}
	_, scale := types.UnpackNumeric(col.(*array.Decimal128).Value(i))
	a.sBuf[0] = byte(scale)
	return a.sBuf[:]
}

// withScale gives the unconstrained numeric d (decoded from a key) the
// display scale scale.
func withScale(d types.Datum, scale byte) types.Datum {
	if !d.Null {
		if v, ok := eval.NumericRescale(d.Dec, int32(scale)); ok {
			d.Dec = v
		}
	}
	return d
}

func (a *minMaxAgg) result(slot int32) (types.Datum, error) {
	if a.stale[slot] {
		if err := a.rescan(slot); err != nil {
			return types.Null, err
		}
	}
	return a.cur[slot], nil
}

// The cached value is not persisted: a group loaded from state is stale and
// rescans its value set when first read.
// With a value set, the state is there and the current value is found again
// by a rescan; without one (insert-only input) the current value is the
// state.
func (a *minMaxAgg) appendState(buf []byte, slot int32) []byte {
	if a.set != nil {
		return buf
	}
	buf = state.AppendKeyDatum(buf, a.t, a.cur[slot])
	if a.t.DynamicNumeric() {
		_, scale := types.UnpackNumeric(a.cur[slot].Dec)
		buf = append(buf, byte(scale))
	}
	return buf
}

func (a *minMaxAgg) loadState(buf []byte, slot int32) ([]byte, error) {
	if a.set != nil {
		a.stale[slot] = true
		return buf, nil
	}
	d, rest, err := state.DecodeKeyDatum(buf, a.t)
	if err != nil {
		return nil, err
	}
	if a.t.DynamicNumeric() {
		if len(rest) < 1 {
			return nil, errCorruptState
		}
		d, rest = withScale(d, rest[0]), rest[1:]
	}
	a.cur[slot], a.stale[slot] = d, false
	return rest, nil
}
