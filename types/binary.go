package types

import (
	"encoding/binary"
	"fmt"
	"math"
	"math/bits"
	"strconv"
	"unicode/utf8"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/streamsql/streamsql/sqlerr"
)

// PostgreSQL's binary formats (the typsend and typreceive functions) count
// dates and timestamps from 2000-01-01; streamsql counts from 1970-01-01.
const (
	pgEpochDays   = 10957 // days from 1970-01-01 to 2000-01-01
	pgEpochMicros = pgEpochDays * microsPerDay
)

// The sign field of PostgreSQL's binary numeric.
const (
	numericPos  = 0x0000
	numericNeg  = 0x4000
	numericNaN  = 0xC000
	numericPInf = 0xD000
	numericNInf = 0xF000
	// numericDscaleMask bounds the display scale (NUMERIC_DSCALE_MASK).
	numericDscaleMask = 0x3FFF
	// numericNBase is the base of the digits of PostgreSQL's binary numeric.
	numericNBase = 10000
)

// invalidBinaryRepresentation is SQLSTATE 22P03.
const invalidBinaryRepresentation = "22P03"

// NewColumnBinaryFormatter returns a formatter that appends the PostgreSQL
// binary output of row i of arr, a column of type t (not NULL at i), to buf:
// the bytes a DataRow carries for a result column in binary format. Like
// NewColumnFormatter it does the type dispatch once; per-row formatting does
// not allocate beyond growing buf.
//
// arr must hold t.ArrowType(); NewColumnBinaryFormatter panics otherwise. The
// formatter reads arr without retaining it. Its output equals
// AppendBinary(buf, t, DatumAt(t, arr, i)) for every non-NULL row. For
// Unknown, whose column is all NULL, it appends nothing.
func NewColumnBinaryFormatter(t T, arr arrow.Array) ColumnFormatter {
	switch t.Kind {
	case Bool:
		a := arr.(*array.Boolean)
		return func(buf []byte, i int) []byte {
			if a.Value(i) {
				return append(buf, 1)
			}
			return append(buf, 0)
		}
	case Int16:
		vs := arr.(*array.Int16).Int16Values()
		return func(buf []byte, i int) []byte { return binary.BigEndian.AppendUint16(buf, uint16(vs[i])) }
	case Int32:
		vs := arr.(*array.Int32).Int32Values()
		return func(buf []byte, i int) []byte { return binary.BigEndian.AppendUint32(buf, uint32(vs[i])) }
	case Int64:
		vs := arr.(*array.Int64).Int64Values()
		return func(buf []byte, i int) []byte { return binary.BigEndian.AppendUint64(buf, uint64(vs[i])) }
	case Float32:
		vs := arr.(*array.Float32).Float32Values()
		return func(buf []byte, i int) []byte { return binary.BigEndian.AppendUint32(buf, math.Float32bits(vs[i])) }
	case Float64:
		vs := arr.(*array.Float64).Float64Values()
		return func(buf []byte, i int) []byte { return binary.BigEndian.AppendUint64(buf, math.Float64bits(vs[i])) }
	case Numeric:
		vs := arr.(*array.Decimal128).Values()
		return func(buf []byte, i int) []byte {
			m, scale := NumericParts(t, vs[i])
			return appendNumericBinary(buf, m, scale)
		}
	case Text:
		a := arr.(*array.String)
		if t.Bpchar && t.Width > 0 {
			return func(buf []byte, i int) []byte { return AppendBpchar(buf, a.Value(i), t.Width) }
		}
		return func(buf []byte, i int) []byte { return append(buf, a.Value(i)...) }
	case Date:
		vs := arr.(*array.Date32).Date32Values()
		return func(buf []byte, i int) []byte {
			return binary.BigEndian.AppendUint32(buf, uint32(int64(vs[i])-pgEpochDays))
		}
	case Timestamp, TimestampTZ:
		vs := arr.(*array.Timestamp).TimestampValues()
		return func(buf []byte, i int) []byte {
			return binary.BigEndian.AppendUint64(buf, uint64(int64(vs[i])-pgEpochMicros))
		}
	case Interval:
		vs := arr.(*array.MonthDayNanoInterval).MonthDayNanoIntervalValues()
		return func(buf []byte, i int) []byte { return appendIntervalBinary(buf, IntervalFromArrow(vs[i])) }
	case Array:
		return func(buf []byte, i int) []byte { return appendArrayBinary(buf, t, listDatum(t, arr, i)) }
	case Bytea, UUID:
		return func(buf []byte, i int) []byte { return append(buf, binaryValue(arr, i)...) }
	case JSONB:
		a := arr.(*array.String)
		return func(buf []byte, i int) []byte { return append(append(buf, jsonbBinaryVersion), a.Value(i)...) }
	case Struct:
		return func(buf []byte, i int) []byte { return appendStructBinary(buf, t, structDatum(t, arr, i)) }
	case Map:
		return func(buf []byte, i int) []byte { return AppendMapText(buf, t, DatumAt(t, arr, i)) }
	case Unknown:
		return func(buf []byte, _ int) []byte { return buf }
	}
	panic(fmt.Sprintf("types: no binary column formatter for %v", t))
}

// AppendBinary appends the PostgreSQL binary output (typsend) of d, a value of
// type t that is not NULL, to buf.
func AppendBinary(buf []byte, t T, d Datum) []byte {
	switch t.Kind {
	case Bool:
		if d.I != 0 {
			return append(buf, 1)
		}
		return append(buf, 0)
	case Int16:
		return binary.BigEndian.AppendUint16(buf, uint16(d.I))
	case Int32:
		return binary.BigEndian.AppendUint32(buf, uint32(d.I))
	case Int64:
		return binary.BigEndian.AppendUint64(buf, uint64(d.I))
	case Float32:
		return binary.BigEndian.AppendUint32(buf, math.Float32bits(float32(d.F)))
	case Float64:
		return binary.BigEndian.AppendUint64(buf, math.Float64bits(d.F))
	case Numeric:
		m, scale := NumericParts(t, d.Dec)
		return appendNumericBinary(buf, m, scale)
	case Text:
		if t.Bpchar && t.Width > 0 {
			return AppendBpchar(buf, d.S, t.Width)
		}
		return append(buf, d.S...)
	case Date:
		return binary.BigEndian.AppendUint32(buf, uint32(d.I-pgEpochDays))
	case Timestamp, TimestampTZ:
		return binary.BigEndian.AppendUint64(buf, uint64(d.I-pgEpochMicros))
	case Interval:
		return appendIntervalBinary(buf, d.Ivl)
	case Array:
		return appendArrayBinary(buf, t, d)
	case Bytea, UUID:
		return append(buf, d.S...)
	case JSONB:
		return append(append(buf, jsonbBinaryVersion), d.S...)
	case Struct:
		return appendStructBinary(buf, t, d)
	case Map:
		return AppendMapText(buf, t, d)
	}
	return buf
}

func appendIntervalBinary(buf []byte, iv IntervalValue) []byte {
	buf = binary.BigEndian.AppendUint64(buf, uint64(iv.Micros))
	buf = binary.BigEndian.AppendUint32(buf, uint32(iv.Days))
	return binary.BigEndian.AppendUint32(buf, uint32(iv.Months))
}

// appendNumericBinary appends PostgreSQL's binary numeric for the mantissa n
// at the given scale: ndigits, weight, sign and display scale (the scale;
// int16 each), then ndigits base-10000 digits, the most significant first,
// without leading or trailing zero digits.
func appendNumericBinary(buf []byte, n decimal128.Num, scale int32) []byte {
	var tmp [40]byte
	digits, neg := decimalDigits(&tmp, n)
	nd := int32(len(digits))
	dscale := scale
	if nd == 0 {
		buf = binary.BigEndian.AppendUint16(buf, 0) // ndigits
		buf = binary.BigEndian.AppendUint16(buf, 0) // weight
		buf = binary.BigEndian.AppendUint16(buf, numericPos)
		return binary.BigEndian.AppendUint16(buf, uint16(dscale))
	}

	// Digit k of digits has the decimal exponent nd-1-k-scale; base-10000
	// digit g holds the decimal exponents 4g..4g+3.
	weight := floorDiv4(nd - 1 - scale)
	var groups [12]int16 // 39 decimal digits span at most 11 base-10000 digits
	ngroups := 0
	for k := int32(0); k < nd; k++ {
		e := nd - 1 - k - scale
		g := floorDiv4(e)
		idx := int(weight - g)
		groups[idx] += int16(digits[k]-'0') * pow10Int16[e-4*g]
		if digits[k] != '0' {
			ngroups = idx + 1 // trailing zero digits are left out
		}
	}
	sign := uint16(numericPos)
	if neg {
		sign = numericNeg
	}
	buf = binary.BigEndian.AppendUint16(buf, uint16(ngroups))
	buf = binary.BigEndian.AppendUint16(buf, uint16(int16(weight)))
	buf = binary.BigEndian.AppendUint16(buf, sign)
	buf = binary.BigEndian.AppendUint16(buf, uint16(dscale))
	for _, g := range groups[:ngroups] {
		buf = binary.BigEndian.AppendUint16(buf, uint16(g))
	}
	return buf
}

var pow10Int16 = [4]int16{1, 10, 100, 1000}

// floorDiv4 is x/4 rounded toward negative infinity.
func floorDiv4(x int32) int32 { return x >> 2 }

// decimalDigits writes the decimal digits of |n| (none for zero) to the end
// of tmp and returns them with the sign of n.
func decimalDigits(tmp *[40]byte, n decimal128.Num) (digits []byte, neg bool) {
	hi, lo := uint64(n.HighBits()), n.LowBits()
	neg = int64(hi) < 0
	if neg {
		// Two's complement negation of the 128-bit value.
		lo = ^lo + 1
		hi = ^hi
		if lo == 0 {
			hi++
		}
	}
	pos := len(tmp)
	const chunk = 10_000_000_000_000_000_000 // 10^19
	for hi != 0 {
		var r uint64
		hi, r = hi/chunk, hi%chunk
		lo, r = bits.Div64(r, lo, chunk)
		for k := 0; k < 19; k++ {
			pos--
			tmp[pos] = '0' + byte(r%10)
			r /= 10
		}
	}
	for lo != 0 {
		pos--
		tmp[pos] = '0' + byte(lo%10)
		lo /= 10
	}
	return tmp[pos:], neg
}

// DecodeBinary parses b, a value of type t in PostgreSQL's binary format (as
// typreceive reads it), into a Datum. Errors are *sqlerr.Error values: 22P03
// (invalid_binary_representation) for a value of the wrong length or with
// invalid fields, 22021 for text that is not UTF-8, 22008 and 22003 for
// values out of range, and 0A000 for values streamsql cannot hold (numeric
// NaN and infinities, infinite dates and timestamps), as ParseText refuses
// them.
//
// An Unknown t (a parameter whose type nothing determined) is read as text.
func DecodeBinary(t T, b []byte) (Datum, error) {
	want := -1 // the exact length of a fixed-size type
	switch t.Kind {
	case Bool:
		want = 1
	case Int16:
		want = 2
	case Int32, Float32, Date:
		want = 4
	case Int64, Float64, Timestamp, TimestampTZ:
		want = 8
	case Interval, UUID:
		want = 16
	case Bytea:
		return DBytes(string(b)), nil
	}
	if t.Kind == Array {
		return decodeArrayBinary(t, b)
	}
	if t.Kind == JSONB {
		return decodeJSONBBinary(b)
	}
	if t.Kind == Struct {
		return decodeStructBinary(t, b)
	}
	if t.Kind == Map {
		return parseMap(t, string(b))
	}
	if want >= 0 && len(b) != want {
		return Null, binaryFormatError(t)
	}
	switch t.Kind {
	case Bool:
		if b[0] > 1 {
			return Null, binaryFormatError(t)
		}
		return DBool(b[0] == 1), nil
	case Int16:
		return DInt(int64(int16(binary.BigEndian.Uint16(b)))), nil
	case Int32:
		return DInt(int64(int32(binary.BigEndian.Uint32(b)))), nil
	case Int64:
		return DInt(int64(binary.BigEndian.Uint64(b))), nil
	case Float32:
		return DFloat(float64(math.Float32frombits(binary.BigEndian.Uint32(b)))), nil
	case Float64:
		return DFloat(math.Float64frombits(binary.BigEndian.Uint64(b))), nil
	case Numeric:
		n, err := decodeNumericBinary(t, b)
		return DNumeric(n), err
	case Text, Unknown:
		if !utf8.Valid(b) {
			return Null, sqlerr.New(sqlerr.CharacterNotInRepertoire, "invalid byte sequence for encoding \"UTF8\"")
		}
		s, err := parseVarchar(t, string(b))
		return DText(s), err
	case Date:
		v := int32(binary.BigEndian.Uint32(b))
		if v == math.MinInt32 || v == math.MaxInt32 {
			return Null, sqlerr.Unsupported("infinite dates")
		}
		days := int64(v) + pgEpochDays
		if days < parseMinDay || days >= parseDateEndDay {
			return Null, sqlerr.New(sqlerr.DatetimeFieldOverflow, "date out of range")
		}
		return DInt(days), nil
	case Timestamp, TimestampTZ:
		v := int64(binary.BigEndian.Uint64(b))
		if v == math.MinInt64 || v == math.MaxInt64 {
			return Null, sqlerr.Unsupported("infinite timestamps")
		}
		if v < parseMinDay*microsPerDay-pgEpochMicros || v >= parseTimestampEnd*microsPerDay-pgEpochMicros {
			return Null, sqlerr.New(sqlerr.DatetimeFieldOverflow, "timestamp out of range")
		}
		return DInt(v + pgEpochMicros), nil
	case Interval:
		iv := IntervalValue{
			Micros: int64(binary.BigEndian.Uint64(b)),
			Days:   int32(binary.BigEndian.Uint32(b[8:])),
			Months: int32(binary.BigEndian.Uint32(b[12:])),
		}
		if iv.Micros > MaxIntervalMicros || iv.Micros < -MaxIntervalMicros {
			return Null, sqlerr.New(sqlerr.DatetimeFieldOverflow, "interval out of range")
		}
		return DInterval(iv), nil
	case UUID:
		return DBytes(string(b)), nil
	}
	return Null, sqlerr.New(sqlerr.InternalError, "no binary input for type %s", t)
}

func binaryFormatError(t T) *sqlerr.Error {
	return sqlerr.New(invalidBinaryRepresentation, "incorrect binary data format for type %s", t)
}

// decodeNumericBinary reads PostgreSQL's binary numeric into a mantissa at
// t's EffectiveScale. The digits are rendered as decimal text and parsed by
// the text input, so that rounding (half away from zero) and the precision
// check are the same as for text.
func decodeNumericBinary(t T, b []byte) (decimal128.Num, error) {
	if len(b) < 8 {
		return decimal128.Num{}, binaryFormatError(t)
	}
	ndigits := int(int16(binary.BigEndian.Uint16(b)))
	weight := int(int16(binary.BigEndian.Uint16(b[2:])))
	sign := binary.BigEndian.Uint16(b[4:])
	dscale := binary.BigEndian.Uint16(b[6:])
	if ndigits < 0 || len(b) != 8+2*ndigits {
		return decimal128.Num{}, binaryFormatError(t)
	}
	switch sign {
	case numericPos, numericNeg:
	case numericNaN:
		return decimal128.Num{}, sqlerr.Unsupported("numeric value \"NaN\"")
	case numericPInf, numericNInf:
		return decimal128.Num{}, sqlerr.Unsupported("numeric value \"Infinity\"")
	default:
		return decimal128.Num{}, sqlerr.New(invalidBinaryRepresentation, "invalid sign in external \"numeric\" value")
	}
	if dscale&numericDscaleMask != dscale {
		return decimal128.Num{}, sqlerr.New(invalidBinaryRepresentation, "invalid scale in external \"numeric\" value")
	}
	digits := b[8:]
	nonzero := false
	for i := 0; i < ndigits; i++ {
		d := binary.BigEndian.Uint16(digits[2*i:])
		if d >= numericNBase {
			return decimal128.Num{}, sqlerr.New(invalidBinaryRepresentation, "invalid digit in external \"numeric\" value")
		}
		nonzero = nonzero || d != 0
	}
	switch {
	case !nonzero && t.DynamicNumeric():
		return PackNumeric(decimal128.Num{}, int32(min(int(dscale), DynMaxScale))), nil
	case !nonzero:
		return decimal128.Num{}, nil
	case weight >= NumericPrecision/4+1:
		// At least 10^40: more digits than any numeric holds.
		return decimal128.Num{}, NumericOverflowError(t)
	case t.HasTypmod && 4*(weight+1) < -int(t.Scale)-1:
		// Below 10^-(scale+1): rounds to zero.
		return decimal128.Num{}, nil
	}

	// Render [-]int.frac from the base-10000 digits: digit i has weight
	// weight-i.
	text := make([]byte, 0, 8+4*(ndigits+max(weight+1, 0)+max(-weight-1, 0)))
	if sign == numericNeg {
		text = append(text, '-')
	}
	group := func(i int) int {
		if i < 0 || i >= ndigits {
			return 0
		}
		return int(binary.BigEndian.Uint16(digits[2*i:]))
	}
	if weight < 0 {
		text = append(text, '0')
	} else {
		text = strconv.AppendInt(text, int64(group(0)), 10)
		for i := 1; i <= weight; i++ {
			text = append4(text, group(i))
		}
	}
	// The fraction has exactly dscale digits: PostgreSQL truncates digits
	// the display scale hides.
	if dscale > 0 {
		text = append(text, '.')
		for i, n := weight+1, 0; n < int(dscale); i++ {
			var g [4]byte
			append4(g[:0], group(i))
			for _, c := range g {
				if n < int(dscale) {
					text = append(text, c)
					n++
				}
			}
		}
	}
	return parseNumeric(t, string(text))
}

// append4 appends v (below 10000) as four decimal digits.
func append4(buf []byte, v int) []byte {
	return append(buf, '0'+byte(v/1000), '0'+byte(v/100%10), '0'+byte(v/10%10), '0'+byte(v%10))
}
