package state

import (
	"flag"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/streamsql/streamsql/types"
)

// seed makes the randomized tests reproducible: go test -run X -seed N.
var seed = flag.Uint64("seed", 1, "seed of the randomized tests")

func newRand(t testing.TB) *rand.Rand {
	t.Logf("seed %d (rerun with -seed)", *seed)
	return rand.New(rand.NewPCG(*seed, 0x5eed))
}

// allTypes lists one type of every kind with a key and row encoding.
var allTypes = []types.T{
	types.BoolT, types.Int16T, types.Int32T, types.Int64T, types.Float32T, types.Float64T,
	types.NumericT, types.NumericOf(10, 2), types.TextT, types.DateT, types.TimestampT,
	types.TimestampTZT, types.IntervalT, types.ByteaT, types.UUIDT,
}

// randDatum returns a random value of t: often an edge case, sometimes NULL,
// from a small domain so that equal values are common.
func randDatum(r *rand.Rand, t types.T, nullable bool) types.Datum {
	if nullable && r.IntN(8) == 0 {
		return types.Null
	}
	pick := func(edges ...int64) int64 {
		if r.IntN(3) == 0 {
			return edges[r.IntN(len(edges))]
		}
		return r.Int64N(21) - 10
	}
	switch t.Kind {
	case types.Bool:
		return types.DBool(r.IntN(2) == 0)
	case types.Int16:
		return types.DInt(pick(math.MinInt16, math.MaxInt16, -1, 0, 1, 255, 256))
	case types.Int32, types.Date:
		return types.DInt(pick(math.MinInt32, math.MaxInt32, -1, 0, 1, 1<<16))
	case types.Int64, types.Timestamp, types.TimestampTZ:
		return types.DInt(pick(math.MinInt64, math.MaxInt64, -1, 0, 1, 1<<32, 1_700_000_000_000_000))
	case types.Float32, types.Float64:
		var f float64
		switch r.IntN(6) {
		case 0:
			fs := []float64{math.NaN(), -math.NaN(), math.Inf(1), math.Inf(-1), math.Copysign(0, -1), 0,
				math.SmallestNonzeroFloat32, -math.SmallestNonzeroFloat32, math.MaxFloat32, -math.MaxFloat32}
			f = fs[r.IntN(len(fs))]
		case 1:
			f = float64(r.IntN(5) - 2)
		default:
			f = (r.Float64() - 0.5) * math.Pow(10, float64(r.IntN(20)-10))
		}
		if t.Kind == types.Float32 {
			f = float64(float32(f))
		}
		return types.DFloat(f)
	case types.Numeric:
		var n decimal128.Num
		switch r.IntN(4) {
		case 0:
			ns := []decimal128.Num{decimal128.FromI64(math.MinInt64), decimal128.FromI64(math.MaxInt64),
				decimal128.New(1, 0), decimal128.New(-1, 0), decimal128.New(math.MaxInt64>>8, math.MaxUint64),
				decimal128.New(math.MinInt64>>8, 0), decimal128.New(-2, math.MaxUint64)}
			n = ns[r.IntN(len(ns))]
		default:
			n = decimal128.FromI64(r.Int64N(2001) - 1000)
		}
		if t.DynamicNumeric() {
			// A mantissa of up to 36 digits with its own display scale;
			// trailing zeros are common.
			switch r.IntN(3) {
			case 0:
				n = decimal128.FromI64(r.Int64N(2001) - 1000)
			case 1:
				n = decimal128.FromI64(r.Int64N(2001) - 1000).Mul(decimal128.GetScaleMultiplier(r.IntN(34)))
			default:
				n = decimal128.FromI64(r.Int64()).Mul(decimal128.FromI64(r.Int64N(1e17)))
			}
			return types.DNumeric(types.PackNumeric(n, int32(r.IntN(types.DynMaxScale+1))))
		}
		return types.DNumeric(n)
	case types.Text:
		alphabet := []byte{0x00, 0x01, 'a', 'b', 0xFE, 0xFF}
		b := make([]byte, r.IntN(5))
		for i := range b {
			b[i] = alphabet[r.IntN(len(alphabet))]
		}
		return types.DText(string(b))
	case types.Interval:
		if r.IntN(4) == 0 {
			ivs := []types.IntervalValue{{Months: 1}, {Days: 30}, {Micros: 30 * microsPerDay},
				{Months: math.MaxInt32, Days: math.MaxInt32, Micros: math.MaxInt64 / 1000},
				{Months: math.MinInt32, Days: math.MinInt32, Micros: math.MinInt64 / 1000},
				{Months: 1, Days: -30}, {}}
			return types.DInterval(ivs[r.IntN(len(ivs))])
		}
		return types.DInterval(types.IntervalValue{
			Months: int32(r.IntN(5) - 2), Days: int32(r.IntN(61) - 30),
			Micros: (r.Int64N(5) - 2) * microsPerDay / 2})
	case types.Bytea:
		return types.DBytes(randDatum(r, types.TextT, false).S)
	case types.UUID:
		u := make([]byte, types.UUIDLen)
		for i := range u {
			u[i] = []byte{0x00, 0x01, 0x7F, 0x80, 0xFF}[r.IntN(5)]
		}
		return types.DBytes(string(u))
	}
	panic("randDatum: " + t.String())
}

// appendDatum appends d (of type t) to b.
func appendDatum(b array.Builder, t types.T, d types.Datum) {
	if d.Null {
		b.AppendNull()
		return
	}
	switch t.Kind {
	case types.Bool:
		b.(*array.BooleanBuilder).Append(d.I != 0)
	case types.Int16:
		b.(*array.Int16Builder).Append(int16(d.I))
	case types.Int32:
		b.(*array.Int32Builder).Append(int32(d.I))
	case types.Int64:
		b.(*array.Int64Builder).Append(d.I)
	case types.Float32:
		b.(*array.Float32Builder).Append(float32(d.F))
	case types.Float64:
		b.(*array.Float64Builder).Append(d.F)
	case types.Numeric:
		b.(*array.Decimal128Builder).Append(d.Dec)
	case types.Text:
		b.(*array.StringBuilder).Append(d.S)
	case types.Date:
		b.(*array.Date32Builder).Append(arrow.Date32(d.I))
	case types.Timestamp, types.TimestampTZ:
		b.(*array.TimestampBuilder).Append(arrow.Timestamp(d.I))
	case types.Interval:
		b.(*array.MonthDayNanoIntervalBuilder).Append(d.Ivl.ToArrow())
	case types.Bytea, types.UUID:
		b.(*array.BinaryBuilder).AppendString(d.S)
	default:
		panic("appendDatum: " + t.String())
	}
}

// buildColumn returns a column of type t holding ds. The caller releases it.
func buildColumn(mem memory.Allocator, t types.T, ds []types.Datum) arrow.Array {
	b := array.NewBuilder(mem, t.ArrowType())
	defer b.Release()
	for _, d := range ds {
		appendDatum(b, t, d)
	}
	return b.NewArray()
}

// sameDatum reports whether a and b are the same value of t, bit for bit
// (floats by their bits).
func sameDatum(t types.T, a, b types.Datum) bool {
	if a.Null || b.Null {
		return a.Null == b.Null
	}
	switch t.Kind {
	case types.Float32:
		return math.Float32bits(float32(a.F)) == math.Float32bits(float32(b.F))
	case types.Float64:
		return math.Float64bits(a.F) == math.Float64bits(b.F)
	case types.Interval:
		return a.Ivl == b.Ivl
	case types.Numeric:
		return a.Dec == b.Dec // the display scale too
	}
	return types.Compare(t, a, b) == 0
}

// keyCanonical returns the value a key of d decodes to: -0 becomes 0 and any
// NaN the canonical NaN.
func keyCanonical(t types.T, d types.Datum) types.Datum {
	if !d.Null && t.DynamicNumeric() {
		// Keys drop the display scale's trailing zeros.
		return types.DNumeric(types.NormalizeNumeric(d.Dec))
	}
	if d.Null || (t.Kind != types.Float32 && t.Kind != types.Float64) {
		return d
	}
	switch {
	case math.IsNaN(d.F):
		if t.Kind == types.Float32 {
			d.F = float64(math.Float32frombits(0x7FFFFFFF))
		} else {
			d.F = math.Float64frombits(0x7FFFFFFFFFFFFFFF)
		}
	case d.F == 0:
		d.F = 0
	}
	return d
}

// compareNullsFirst orders datums of t with NULL first.
func compareNullsFirst(t types.T, a, b types.Datum) int {
	switch {
	case a.Null && b.Null:
		return 0
	case a.Null:
		return -1
	case b.Null:
		return 1
	}
	return types.Compare(t, a, b)
}
