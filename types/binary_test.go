package types

import (
	"bytes"
	"fmt"
	"math"
	"math/big"
	mrand "math/rand"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/jackc/pgx/v5/pgtype"

	"github.com/streamsql/streamsql/sqlerr"
)

// The tests in this file check the binary formats against pgx's pgtype
// codecs, an independent implementation of PostgreSQL's typsend and
// typreceive: our output must decode there to the same value, and pgtype's
// encoding of a value must decode here to the same datum.

// binaryCase is a value of a type, as a datum and as the Go value pgtype
// decodes it to.
type binaryCase struct {
	t  T
	d  Datum
	gv any // what pgtype's binary decoding yields (see pgValue)
}

var pgEpoch = time.Date(1970, 1, 1, 0, 0, 0, 0, time.UTC)

// pgValue converts a datum of type t to the value pgtype decodes it to.
func pgValue(t T, d Datum) any {
	switch t.Kind {
	case Bool:
		return d.I != 0
	case Int16:
		return int16(d.I)
	case Int32:
		return int32(d.I)
	case Int64:
		return d.I
	case Float32:
		return float32(d.F)
	case Float64:
		return d.F
	case Text:
		return d.S
	case Date:
		return pgtype.Date{Time: pgEpoch.AddDate(0, 0, int(d.I)), Valid: true}
	case Timestamp:
		return pgtype.Timestamp{Time: time.UnixMicro(d.I).UTC(), Valid: true}
	case TimestampTZ:
		return pgtype.Timestamptz{Time: time.UnixMicro(d.I).UTC(), Valid: true}
	case Interval:
		return pgtype.Interval{Microseconds: d.Ivl.Micros, Days: d.Ivl.Days, Months: d.Ivl.Months, Valid: true}
	}
	panic(t.String())
}

func randomDatum(r *rand.Rand, t T) Datum {
	switch t.Kind {
	case Bool:
		return DBool(r.IntN(2) == 1)
	case Int16:
		return DInt(int64(int16(r.Uint64())))
	case Int32:
		return DInt(int64(int32(r.Uint64())))
	case Int64:
		return DInt(int64(r.Uint64()) >> r.IntN(64))
	case Float32:
		return DFloat(float64(float32(r.NormFloat64() * math.Pow(10, float64(r.IntN(60)-30)))))
	case Float64:
		return DFloat(r.NormFloat64() * math.Pow(10, float64(r.IntN(600)-300)))
	case Numeric:
		// Up to the type's precision, often with trailing zeros.
		p := int(t.Precision)
		if !t.HasTypmod {
			p = DynDigits
		}
		digits := r.IntN(p) + 1
		n := new(big.Int).Rand(mrand.New(randSource{r}), new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(digits)), nil))
		n.Mul(n, new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(r.IntN(max(1, p-digits)))), nil))
		if r.IntN(2) == 0 {
			n.Neg(n)
		}
		if !t.HasTypmod {
			return DNumeric(PackNumeric(decimal128.FromBigInt(n), int32(r.IntN(DynMaxScale+1))))
		}
		return DNumeric(decimal128.FromBigInt(n))
	case Text:
		return DText(string([]rune{'a', 'é', '∑', rune(r.IntN(0x7ff) + 1)}[:r.IntN(4)+1]))
	case Date:
		return DInt(r.Int64N(parseDateEndDay-parseMinDay) + parseMinDay)
	case Timestamp, TimestampTZ:
		switch r.IntN(3) {
		case 0:
			return DInt(r.Int64N(parseTimestampEnd * microsPerDay))
		case 1:
			return DInt(-r.Int64N(-parseMinDay*microsPerDay + 1))
		}
		return DInt(r.Int64N(200*365*microsPerDay) - 100*365*microsPerDay)
	case Interval:
		return DInterval(IntervalValue{Months: int32(r.Uint32()), Days: int32(r.Uint32()), Micros: r.Int64N(2*MaxIntervalMicros) - MaxIntervalMicros})
	}
	panic(t.String())
}

func newOf(v any) reflect.Value { return reflect.New(reflect.TypeOf(v)) }

// sameValue compares values pgtype decodes: floats by their bits, times
// with Equal.
func sameValue(a, b any) bool {
	switch a := a.(type) {
	case float32:
		return math.Float32bits(a) == math.Float32bits(b.(float32))
	case float64:
		return math.Float64bits(a) == math.Float64bits(b.(float64))
	case pgtype.Date:
		b := b.(pgtype.Date)
		return a.Valid == b.Valid && a.InfinityModifier == b.InfinityModifier && a.Time.Equal(b.Time)
	case pgtype.Timestamp:
		b := b.(pgtype.Timestamp)
		return a.Valid == b.Valid && a.InfinityModifier == b.InfinityModifier && a.Time.Equal(b.Time)
	case pgtype.Timestamptz:
		b := b.(pgtype.Timestamptz)
		return a.Valid == b.Valid && a.InfinityModifier == b.InfinityModifier && a.Time.Equal(b.Time)
	}
	return reflect.DeepEqual(a, b)
}

// randSource adapts math/rand/v2 for big.Int.Rand.
type randSource struct{ r *rand.Rand }

func (s randSource) Int63() int64 { return s.r.Int64() }
func (s randSource) Seed(int64)   {}

var binaryTypes = []T{BoolT, Int16T, Int32T, Int64T, Float32T, Float64T, NumericT, NumericOf(38, 0),
	NumericOf(10, 2), NumericOf(38, 38), TextT, DateT, TimestampT, TimestampTZT, IntervalT}

func binaryCases(t *testing.T) []binaryCase {
	t.Helper()
	fixed := []binaryCase{
		{t: BoolT, d: DBool(true)}, {t: BoolT, d: DBool(false)},
		{t: Int16T, d: DInt(math.MinInt16)}, {t: Int32T, d: DInt(math.MaxInt32)}, {t: Int64T, d: DInt(math.MinInt64)},
		{t: Float32T, d: DFloat(math.Inf(-1))}, {t: Float64T, d: DFloat(math.NaN())}, {t: Float64T, d: DFloat(math.Copysign(0, -1))},
		{t: TextT, d: DText("")}, {t: TextT, d: DText("héllo\x01")},
		{t: DateT, d: DInt(0)}, {t: DateT, d: DInt(pgEpochDays)}, {t: DateT, d: DInt(-1)}, {t: DateT, d: DInt(parseMinDay)},
		{t: TimestampT, d: DInt(-1)}, {t: TimestampTZT, d: DInt(1_700_000_000_123_456)},
		{t: IntervalT, d: DInterval(IntervalValue{Months: -26, Days: -3, Micros: -1_500_000})},
	}
	for _, s := range []string{"0", "1", "-1", "0.05", "1.5", "-1.5", "10000", "9999.9999", "0.0001", "123456789.000000000001",
		"99999999999999999999999999.999999999999", "-0.000000000001", "1e20", "100000000"} {
		d, err := ParseText(NumericT, s)
		if err != nil {
			t.Fatal(err)
		}
		fixed = append(fixed, binaryCase{t: NumericT, d: d})
	}
	for _, s := range []string{"0", "0.05", "-12345678.90", "1"} {
		d, err := ParseText(NumericOf(10, 2), s)
		if err != nil {
			t.Fatal(err)
		}
		fixed = append(fixed, binaryCase{t: NumericOf(10, 2), d: d})
	}
	r := rand.New(rand.NewPCG(1, 2))
	for _, typ := range binaryTypes {
		for range 300 {
			fixed = append(fixed, binaryCase{t: typ, d: randomDatum(r, typ)})
		}
	}
	for i := range fixed {
		if fixed[i].t.Kind != Numeric {
			fixed[i].gv = pgValue(fixed[i].t, fixed[i].d)
		}
	}
	return fixed
}

// TestBinaryOutputMatchesPgtype decodes our binary output with pgtype.
func TestBinaryOutputMatchesPgtype(t *testing.T) {
	m := pgtype.NewMap()
	for _, c := range binaryCases(t) {
		b := AppendBinary([]byte{}, c.t, c.d) // not nil: that would be NULL
		if c.t.Kind == Numeric {
			// Compare the text pgtype makes of the decoded numeric (its
			// digits and display scale) with our text output.
			var n pgtype.Numeric
			if err := m.Scan(OIDNumeric, pgtype.BinaryFormatCode, b, &n); err != nil {
				t.Fatalf("%v %s: pgtype scan: %v", c.t, c.d.Text(c.t), err)
			}
			txt, err := m.Encode(OIDNumeric, pgtype.TextFormatCode, n, nil)
			if err != nil {
				t.Fatal(err)
			}
			want := c.d.Text(c.t)
			if c.d.Dec == (decimal128.Num{}) {
				// PostgreSQL sends zero as no digits with the display
				// scale; pgtype ignores the scale of zero.
				want = "0"
			}
			if string(txt) != want {
				t.Errorf("%v: pgtype reads our binary %x as %s, want %s", c.t, b, txt, want)
			}
			continue
		}
		got := newOf(c.gv)
		if err := m.Scan(c.t.OID(), pgtype.BinaryFormatCode, b, got.Interface()); err != nil {
			t.Fatalf("%v %s: pgtype scan: %v", c.t, c.d.Text(c.t), err)
		}
		if !sameValue(got.Elem().Interface(), c.gv) {
			t.Errorf("%v %s: pgtype reads %#v, want %#v", c.t, c.d.Text(c.t), got.Elem().Interface(), c.gv)
		}
	}
}

// TestBinaryInputMatchesPgtype decodes pgtype's binary encoding with
// DecodeBinary, and checks that AppendBinary gives back the same bytes.
func TestBinaryInputMatchesPgtype(t *testing.T) {
	m := pgtype.NewMap()
	for _, c := range binaryCases(t) {
		var b []byte
		var err error
		if c.t.Kind == Numeric {
			var n pgtype.Numeric
			if err := n.Scan(c.d.Text(c.t)); err != nil {
				t.Fatal(err)
			}
			b, err = m.Encode(OIDNumeric, pgtype.BinaryFormatCode, n, nil)
		} else {
			b, err = m.Encode(c.t.OID(), pgtype.BinaryFormatCode, c.gv, nil)
		}
		if err != nil {
			t.Fatalf("%v %s: pgtype encode: %v", c.t, c.d.Text(c.t), err)
		}
		d, err := DecodeBinary(c.t, b)
		if err != nil {
			t.Fatalf("%v %s: DecodeBinary(%x): %v", c.t, c.d.Text(c.t), b, err)
		}
		if d.Null || Compare(c.t, d, c.d) != 0 || c.t.Kind == Float64 && math.Float64bits(d.F) != math.Float64bits(c.d.F) {
			t.Errorf("%v: DecodeBinary(%x) = %s, want %s", c.t, b, d.Text(c.t), c.d.Text(c.t))
		}
		if c.t.Kind != Numeric {
			if ours := AppendBinary(nil, c.t, d); !bytes.Equal(ours, b) {
				t.Errorf("%v %s: we encode %x, pgtype %x", c.t, c.d.Text(c.t), ours, b)
			}
		}
	}
}

// TestColumnBinaryFormatter checks that the column formatter writes what
// AppendBinary writes.
func TestColumnBinaryFormatter(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	byType := map[T][]Datum{}
	var order []T
	for _, c := range binaryCases(t) {
		if _, ok := byType[c.t]; !ok {
			order = append(order, c.t)
		}
		byType[c.t] = append(byType[c.t], c.d)
	}
	for _, typ := range order {
		ds := append(byType[typ], Null)
		arr := buildDatumColumn(t, mem, typ, ds)
		f := NewColumnBinaryFormatter(typ, arr)
		for i, d := range ds[:len(ds)-1] {
			if got, want := f(nil, i), AppendBinary(nil, typ, d); !bytes.Equal(got, want) {
				t.Errorf("%v row %d (%s): formatter %x, AppendBinary %x", typ, i, d.Text(typ), got, want)
			}
		}
		arr.Release()
	}
	// Unknown columns are all NULL; the formatter writes nothing.
	if got := NewColumnBinaryFormatter(UnknownT, array.NewNull(1))(nil, 0); len(got) != 0 {
		t.Errorf("Unknown formatter wrote %x", got)
	}
}

func buildDatumColumn(t *testing.T, mem memory.Allocator, typ T, ds []Datum) arrow.Array {
	t.Helper()
	b := array.NewBuilder(mem, typ.ArrowType())
	defer b.Release()
	for _, d := range ds {
		AppendDatum(b, typ, d)
	}
	return b.NewArray()
}

// TestDecodeBinaryErrors checks the errors for malformed and unsupported
// binary input.
func TestDecodeBinaryErrors(t *testing.T) {
	numeric := func(ndigits, weight int16, sign, dscale uint16, digits ...uint16) []byte {
		b := []byte{byte(ndigits >> 8), byte(ndigits), byte(weight >> 8), byte(weight), byte(sign >> 8), byte(sign), byte(dscale >> 8), byte(dscale)}
		for _, d := range digits {
			b = append(b, byte(d>>8), byte(d))
		}
		return b
	}
	for _, tc := range []struct {
		t    T
		b    []byte
		code string
	}{
		{Int32T, []byte{0, 0, 1}, invalidBinaryRepresentation},
		{Int32T, []byte{0, 0, 0, 0, 1}, invalidBinaryRepresentation},
		{Int64T, nil, invalidBinaryRepresentation},
		{BoolT, []byte{2}, invalidBinaryRepresentation},
		{IntervalT, make([]byte, 12), invalidBinaryRepresentation},
		{TextT, []byte{0xff}, sqlerr.CharacterNotInRepertoire},
		{NumericT, numeric(0, 0, numericNaN, 0), sqlerr.FeatureNotSupported},
		{NumericT, numeric(0, 0, numericPInf, 0), sqlerr.FeatureNotSupported},
		{NumericT, numeric(0, 0, 0x1234, 0), invalidBinaryRepresentation},
		{NumericT, numeric(1, 0, 0, 0, 10000), invalidBinaryRepresentation},
		{NumericT, numeric(1, 0, 0, 0xffff, 1), invalidBinaryRepresentation},
		{NumericT, numeric(2, 0, 0, 0, 1), invalidBinaryRepresentation},
		{NumericT, numeric(1, 10, 0, 0, 1), sqlerr.NumericValueOutOfRange},
		{NumericOf(4, 2), numeric(1, 0, 0, 0, 100), sqlerr.NumericValueOutOfRange},
		{DateT, []byte{0x7f, 0xff, 0xff, 0xff}, sqlerr.FeatureNotSupported},
		{DateT, []byte{0x7f, 0xff, 0xff, 0xfe}, sqlerr.DatetimeFieldOverflow},
		{TimestampT, []byte{0x7f, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff}, sqlerr.FeatureNotSupported},
		{TimestampTZT, []byte{0x7f, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xfe}, sqlerr.DatetimeFieldOverflow},
		{IntervalT, []byte{0x7f, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0, 0, 0, 0, 0, 0, 0, 0}, sqlerr.DatetimeFieldOverflow},
	} {
		_, err := DecodeBinary(tc.t, tc.b)
		if got := sqlerr.Code(err); got != tc.code {
			t.Errorf("DecodeBinary(%v, %x): %v (%s), want %s", tc.t, tc.b, err, got, tc.code)
		}
	}
	// Tiny values round to zero; a value rounding at the scale rounds half
	// away from zero.
	for _, tc := range []struct {
		b    []byte
		want string
	}{
		// Unconstrained numerics keep the display scale (capped at
		// DynMaxScale); digits it hides are truncated, as PostgreSQL's
		// numeric_recv does.
		{numeric(1, -20, numericPos, 80, 5), "0." + strings.Repeat("0", DynMaxScale)},
		{numeric(1, -4, numericNeg, 16, 5000), "-0.0000000000005000"},
		{numeric(1, -4, numericNeg, 13, 5000), "-0.0000000000005"},
		{numeric(1, -4, numericNeg, 12, 5000), "0.000000000000"},
		{numeric(2, 1, numericPos, 0, 1, 0), "10000"},
		{numeric(3, 0, numericNeg, 8, 12, 3400, 5600), "-12.34005600"},
	} {
		d, err := DecodeBinary(NumericT, tc.b)
		if err != nil || d.Text(NumericT) != tc.want {
			t.Errorf("DecodeBinary(numeric %x) = %s, %v; want %s", tc.b, d.Text(NumericT), err, tc.want)
		}
	}
}

// TestFromOID checks that every type's OID maps back to the type, without
// modifiers.
func TestFromOID(t *testing.T) {
	for _, typ := range binaryTypes {
		got, ok := FromOID(typ.OID())
		want := T{Kind: typ.Kind}
		if typ.Kind == Numeric {
			want = NumericT
		}
		if !ok || got != want {
			t.Errorf("FromOID(%d) = %v, %v; want %v", typ.OID(), got, ok, want)
		}
	}
	for _, oid := range []uint32{0, OIDUnknown, 600 /* point */} {
		if _, ok := FromOID(oid); ok {
			t.Errorf("FromOID(%d) succeeded", oid)
		}
	}
}

// TestNumericBinaryGolden checks numerics against the bytes PostgreSQL's
// numeric_send produces.
func TestNumericBinaryGolden(t *testing.T) {
	for _, tc := range []struct {
		t    T
		text string
		hex  string
	}{
		{NumericT, "0", "0000000000000000"},
		{NumericOf(10, 2), "0", "0000000000000002"},
		{NumericT, "1.5", "000200000000000100011388"},
		{NumericOf(8, 3), "-12345.678", "0003000140000003000109291a7c"},
		{NumericT, "10000", "00010001000000000001"},
		{NumericT, "0.0001", "0001ffff000000040001"},
		{NumericOf(38, 0), "-99999999999999999999999999999999999999",
			"000a0009400000000063270f270f270f270f270f270f270f270f270f"},
	} {
		d, err := ParseText(tc.t, tc.text)
		if err != nil {
			t.Fatal(err)
		}
		if got := fmt.Sprintf("%x", AppendBinary(nil, tc.t, d)); got != tc.hex {
			t.Errorf("%v %s: %s, want %s", tc.t, tc.text, got, tc.hex)
		}
	}
}
