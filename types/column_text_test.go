package types

import (
	"math"
	"math/big"
	"math/rand/v2"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// formatterCase is one column: its type and the values to put in it (nil means
// NULL).
type formatterCase struct {
	name   string
	t      T
	values []any
}

func dec(s string) decimal128.Num {
	b, ok := new(big.Int).SetString(s, 10)
	if !ok {
		panic(s)
	}
	return decimal128.FromBigInt(b)
}

func formatterCases(rng *rand.Rand) []formatterCase {
	const maxDec = "99999999999999999999999999999999999999" // 38 nines
	decs := []any{
		dec("0"), dec("1"), dec("-1"), dec("10"), dec("-10"), dec("123456789"),
		dec("1000000000000"), dec("-1000000000000"), dec("1500000000000"),
		dec("999999999999"), dec("-999999999999"), dec("-5"), dec("5"),
		dec("18446744073709551615"), dec("18446744073709551616"), dec("-18446744073709551616"),
		dec("10000000000000000000"), dec("-10000000000000000000"),
		dec("100000000000000000000000000000000000000"), dec(maxDec), dec("-" + maxDec),
		nil,
	}
	for range 200 {
		hi := rng.Int64() >> rng.IntN(64)
		decs = append(decs, decimal128.New(hi, rng.Uint64()), decimal128.FromI64(rng.Int64()>>rng.IntN(64)))
	}
	var floats []any
	for _, f := range []float64{0, math.Copysign(0, -1), 1, -1, 0.1, 1.5, 1e15, 1e14, 123456789012345.6,
		1e-4, 1e-5, 0.00012345, 1e100, -1e-100, math.MaxFloat64, math.SmallestNonzeroFloat64,
		math.Inf(1), math.Inf(-1), math.NaN(), 3.141592653589793, 100, -12345.678, -0.5, -1e-4, 99999999999999.9} {
		floats = append(floats, f)
	}
	for range 200 {
		floats = append(floats, (rng.Float64()-0.5)*math.Pow(10, float64(rng.IntN(60)-30)))
	}
	floats = append(floats, nil)
	var float32s []any
	for _, f := range floats {
		if f == nil {
			float32s = append(float32s, nil)
			continue
		}
		float32s = append(float32s, float32(f.(float64)))
	}
	var ints []any
	for _, v := range []int64{0, 1, -1, math.MaxInt64, math.MinInt64, 42} {
		ints = append(ints, v)
	}
	for range 50 {
		ints = append(ints, rng.Int64()>>rng.IntN(64))
	}
	ints = append(ints, nil)
	var dates, stamps []any
	for _, d := range []int64{0, -1, 1, -719162, -719528, -719529, -800000, 2932896, 19000, -25567} {
		dates = append(dates, d)
	}
	for _, us := range []int64{0, -1, 1, -86400_000_000, -86400_000_001, 1_700_000_000_123_456,
		-62135596800_000_000, -62135596800_000_001, -210866803200_000_000, 253402300799_999_999,
		-1_500_000, 500_000} {
		stamps = append(stamps, us)
	}
	for range 100 {
		dates = append(dates, rng.Int64N(2_000_000)-1_000_000)
		stamps = append(stamps, rng.Int64N(1<<53)-(1<<52))
	}
	dates, stamps = append(dates, nil), append(stamps, nil)
	ivs := []any{
		IntervalValue{}, IntervalValue{Months: 14, Days: 3, Micros: 4*microsPerHour + 5*microsPerMinute + 6_500_000},
		IntervalValue{Months: -14, Days: -3, Micros: -microsPerHour}, IntervalValue{Days: -1, Micros: microsPerHour},
		IntervalValue{Months: 1, Micros: -1}, IntervalValue{Micros: -90 * microsPerSecond},
		IntervalValue{Months: -1}, IntervalValue{Days: 1}, IntervalValue{Micros: 1000 * microsPerHour},
		IntervalValue{Months: math.MinInt32, Days: math.MinInt32, Micros: math.MinInt64 / 1000},
		nil,
	}
	for range 100 {
		ivs = append(ivs, IntervalValue{Months: rng.Int32N(400) - 200, Days: rng.Int32N(100) - 50,
			Micros: (rng.Int64N(1<<40) - (1 << 39))})
	}
	return []formatterCase{
		{"bool", BoolT, []any{true, false, nil, true}},
		{"int16", Int16T, []any{int64(0), int64(-32768), int64(32767), nil, int64(7)}},
		{"int32", Int32T, []any{int64(0), int64(math.MinInt32), int64(math.MaxInt32), nil, int64(-7)}},
		{"int64", Int64T, ints},
		{"float32", Float32T, float32s},
		{"float64", Float64T, floats},
		{"numeric", NumericT, decs},
		{"numeric(38,0)", NumericOf(38, 0), decs},
		{"numeric(10,2)", NumericOf(10, 2), decs},
		{"numeric(38,5)", NumericOf(38, 5), decs},
		{"numeric(38,38)", NumericOf(38, 38), decs},
		{"numeric-scale3", T{Kind: Numeric, Precision: 38, Scale: 3}, decs}, // from FromArrow
		{"text", TextT, []any{"", "hello", nil, "naïve ☃", "with\ttab and \"quotes\""}},
		{"varchar(3)", T{Kind: Text, Width: 3}, []any{"abc", nil}},
		{"date", DateT, dates},
		{"timestamp", TimestampT, stamps},
		{"timestamptz", TimestampTZT, stamps},
		{"interval", IntervalT, ivs},
		{"unknown", UnknownT, []any{nil, nil}},
	}
}

// buildColumn builds an Arrow column of type t holding values.
func buildColumn(t *testing.T, mem memory.Allocator, typ T, values []any) arrow.Array {
	t.Helper()
	b := array.NewBuilder(mem, typ.ArrowType())
	defer b.Release()
	for _, v := range values {
		if v == nil {
			b.AppendNull()
			continue
		}
		switch b := b.(type) {
		case *array.BooleanBuilder:
			b.Append(v.(bool))
		case *array.Int16Builder:
			b.Append(int16(v.(int64)))
		case *array.Int32Builder:
			b.Append(int32(v.(int64)))
		case *array.Int64Builder:
			b.Append(v.(int64))
		case *array.Float32Builder:
			b.Append(v.(float32))
		case *array.Float64Builder:
			b.Append(v.(float64))
		case *array.Decimal128Builder:
			b.Append(v.(decimal128.Num))
		case *array.StringBuilder:
			b.Append(v.(string))
		case *array.Date32Builder:
			b.Append(arrow.Date32(v.(int64)))
		case *array.TimestampBuilder:
			b.Append(arrow.Timestamp(v.(int64)))
		case *array.MonthDayNanoIntervalBuilder:
			b.Append(v.(IntervalValue).ToArrow())
		default:
			t.Fatalf("no builder case for %T", b)
		}
	}
	return b.NewArray()
}

func TestColumnFormatterMatchesAppendText(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	rng := rand.New(rand.NewPCG(1, 2))
	for _, tc := range formatterCases(rng) {
		t.Run(tc.name, func(t *testing.T) {
			arr := buildColumn(t, mem, tc.t, tc.values)
			defer arr.Release()
			check := func(t *testing.T, arr arrow.Array) {
				f := NewColumnFormatter(tc.t, arr)
				buf := []byte("prefix|")
				for i := 0; i < arr.Len(); i++ {
					d := DatumAt(tc.t, arr, i)
					if d.Null {
						// The caller skips NULLs; Unknown columns are all NULL.
						if tc.t.Kind != Unknown && !arr.IsNull(i) {
							t.Fatalf("row %d: DatumAt NULL for a valid row", i)
						}
						continue
					}
					want := AppendText([]byte("prefix|"), tc.t, d)
					got := f(buf[:len("prefix|")], i)
					if string(got) != string(want) {
						t.Fatalf("row %d (%v): got %q, want %q", i, tc.values[i+arr.Data().Offset()], got, want)
					}
				}
			}
			check(t, arr)
			if arr.Len() > 2 {
				// A sliced column reads through its offset.
				s := array.NewSlice(arr, 1, int64(arr.Len()))
				defer s.Release()
				check(t, s)
			}
		})
	}
}

func TestColumnFormatterAllocs(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	rng := rand.New(rand.NewPCG(3, 4))
	for _, tc := range formatterCases(rng) {
		arr := buildColumn(t, mem, tc.t, tc.values)
		f := NewColumnFormatter(tc.t, arr)
		buf := make([]byte, 0, 1024)
		allocs := testing.AllocsPerRun(10, func() {
			for i := 0; i < arr.Len(); i++ {
				if !arr.IsNull(i) {
					buf = f(buf[:0], i)
				}
			}
		})
		arr.Release()
		if allocs != 0 {
			t.Errorf("%s: %v allocations per run, want 0", tc.name, allocs)
		}
	}
}

func TestColumnFormatterWrongArray(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	arr := buildColumn(t, mem, Int32T, []any{int64(1)})
	defer arr.Release()
	defer func() {
		if recover() == nil {
			t.Fatal("NewColumnFormatter accepted an int32 column as bigint")
		}
	}()
	NewColumnFormatter(Int64T, arr)
}

func BenchmarkColumnFormatter(b *testing.B) {
	mem := memory.NewGoAllocator()
	for _, typ := range []T{Int64T, Float64T, NumericOf(18, 2), NumericT, TimestampTZT, TextT} {
		bld := array.NewBuilder(mem, typ.ArrowType())
		rng := rand.New(rand.NewPCG(5, 6))
		for range 1024 {
			switch bld := bld.(type) {
			case *array.Int64Builder:
				bld.Append(rng.Int64N(1 << 40))
			case *array.Float64Builder:
				bld.Append(rng.Float64() * 1e6)
			case *array.Decimal128Builder:
				bld.Append(decimal128.FromI64(rng.Int64N(1 << 50)))
			case *array.TimestampBuilder:
				bld.Append(arrow.Timestamp(rng.Int64N(1 << 52)))
			case *array.StringBuilder:
				bld.Append("some text value")
			}
		}
		arr := bld.NewArray()
		bld.Release()
		b.Run(typ.String(), func(b *testing.B) {
			f := NewColumnFormatter(typ, arr)
			buf := make([]byte, 0, 64)
			for b.Loop() {
				for i := range 1024 {
					buf = f(buf[:0], i)
				}
			}
		})
		arr.Release()
	}
}
