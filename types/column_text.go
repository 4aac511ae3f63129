package types

import (
	"fmt"
	"math"
	"strconv"
	"unicode/utf8"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// ColumnFormatter appends the PostgreSQL text output of row i of a column (which
// must not be NULL at i) to buf.
type ColumnFormatter func(buf []byte, i int) []byte

// NewColumnFormatter returns a formatter for arr, a column of type t. It does the
// type dispatch once, so per-row formatting has no interface assertions or
// allocations (beyond growing buf).
//
// arr must hold t.ArrowType() (as FromArrow maps it); NewColumnFormatter panics
// otherwise. The formatter reads arr without retaining it: arr must stay alive
// while the formatter is used. Its output equals AppendText(buf, t, DatumAt(t,
// arr, i)) for every non-NULL row. For Unknown, whose column is all NULL, the
// formatter appends nothing.
func NewColumnFormatter(t T, arr arrow.Array) ColumnFormatter {
	switch t.Kind {
	case Bool:
		a := arr.(*array.Boolean)
		return func(buf []byte, i int) []byte {
			if a.Value(i) {
				return append(buf, 't')
			}
			return append(buf, 'f')
		}
	case Int16:
		vs := arr.(*array.Int16).Int16Values()
		return func(buf []byte, i int) []byte { return strconv.AppendInt(buf, int64(vs[i]), 10) }
	case Int32:
		vs := arr.(*array.Int32).Int32Values()
		return func(buf []byte, i int) []byte { return strconv.AppendInt(buf, int64(vs[i]), 10) }
	case Int64:
		vs := arr.(*array.Int64).Int64Values()
		return func(buf []byte, i int) []byte { return strconv.AppendInt(buf, vs[i], 10) }
	case Float32:
		vs := arr.(*array.Float32).Float32Values()
		return func(buf []byte, i int) []byte { return appendFloat(buf, float64(vs[i]), 32) }
	case Float64:
		vs := arr.(*array.Float64).Float64Values()
		return func(buf []byte, i int) []byte { return appendFloat(buf, vs[i], 64) }
	case Numeric:
		vs := arr.(*array.Decimal128).Values()
		if t.DynamicNumeric() {
			return func(buf []byte, i int) []byte {
				m, scale := UnpackNumeric(vs[i])
				return appendDecimal(buf, m, scale)
			}
		}
		scale := t.EffectiveScale()
		return func(buf []byte, i int) []byte { return appendDecimal(buf, vs[i], scale) }
	case Text:
		a := arr.(*array.String)
		if t.Bpchar && t.Width > 0 {
			return func(buf []byte, i int) []byte { return AppendBpchar(buf, a.Value(i), t.Width) }
		}
		return func(buf []byte, i int) []byte { return append(buf, a.Value(i)...) }
	case Date:
		vs := arr.(*array.Date32).Date32Values()
		return func(buf []byte, i int) []byte { return AppendDate(buf, int64(vs[i])) }
	case Timestamp, TimestampTZ:
		vs := arr.(*array.Timestamp).TimestampValues()
		tz := t.Kind == TimestampTZ
		return func(buf []byte, i int) []byte { return AppendTimestamp(buf, int64(vs[i]), tz) }
	case Interval:
		vs := arr.(*array.MonthDayNanoInterval).MonthDayNanoIntervalValues()
		return func(buf []byte, i int) []byte { return AppendInterval(buf, IntervalFromArrow(vs[i])) }
	case Array:
		return func(buf []byte, i int) []byte { return AppendArrayText(buf, t, listDatum(t, arr, i)) }
	case Bytea:
		return func(buf []byte, i int) []byte { return AppendByteaHex(buf, binaryValue(arr, i)) }
	case UUID:
		return func(buf []byte, i int) []byte { return AppendUUID(buf, binaryValue(arr, i)) }
	case JSONB:
		a := arr.(*array.String)
		return func(buf []byte, i int) []byte { return append(buf, a.Value(i)...) }
	case Struct:
		return func(buf []byte, i int) []byte { return AppendStructText(buf, t, structDatum(t, arr, i)) }
	case Map:
		return func(buf []byte, i int) []byte { return AppendMapText(buf, t, DatumAt(t, arr, i)) }
	case Unknown:
		return func(buf []byte, _ int) []byte { return buf }
	}
	panic(fmt.Sprintf("types: no column formatter for %v", t))
}

// AppendBpchar appends s, a character(width) value, padded with spaces to
// width characters, as character(n) values are output (see T.Bpchar).
func AppendBpchar(buf []byte, s string, width int32) []byte {
	buf = append(buf, s...)
	for n := utf8.RuneCountInString(s); n < int(width); n++ {
		buf = append(buf, ' ')
	}
	return buf
}

// appendFloat is AppendFloat without its allocation: it parses the exponent
// in place instead of through a string.
func appendFloat(buf []byte, f float64, bitSize int) []byte {
	switch {
	case math.IsNaN(f), math.IsInf(f, 0), f == 0:
		return AppendFloat(buf, f, bitSize)
	}
	var tmp [32]byte
	e := strconv.AppendFloat(tmp[:0], f, 'e', -1, bitSize)
	// e looks like [-]d[.ddd]e±XX.
	i := 0
	for e[i] != 'e' {
		i++
	}
	exp := 0
	for _, c := range e[i+2:] {
		exp = exp*10 + int(c-'0')
	}
	if e[i+1] == '-' {
		exp = -exp
	}
	if exp < -4 || exp >= floatFixedDigits(bitSize) {
		buf = append(buf, e[:i+1]...)
		if exp < 0 {
			buf = append(buf, '-')
			exp = -exp
		} else {
			buf = append(buf, '+')
		}
		if exp < 10 {
			buf = append(buf, '0')
		}
		return strconv.AppendInt(buf, int64(exp), 10)
	}
	// Positional notation from the same shortest digits.
	if e[0] == '-' {
		buf = append(buf, '-')
		e = e[1:]
		i--
	}
	digits := e[:i]
	if len(digits) > 1 {
		// Drop the decimal point after the first digit: d.ddd -> dddd.
		copy(digits[1:], digits[2:])
		digits = digits[:len(digits)-1]
	}
	if exp < 0 {
		buf = append(buf, '0', '.')
		for ; exp < -1; exp++ {
			buf = append(buf, '0')
		}
		return append(buf, digits...)
	}
	if len(digits) <= exp+1 {
		buf = append(buf, digits...)
		for n := len(digits); n <= exp; n++ {
			buf = append(buf, '0')
		}
		return buf
	}
	buf = append(buf, digits[:exp+1]...)
	buf = append(buf, '.')
	return append(buf, digits[exp+1:]...)
}

// appendDecimal is AppendNumeric for a mantissa at the given scale without
// big.Int: it converts the 128-bit magnitude to decimal digits with 64-bit
// divisions. It prints exactly scale fractional digits.
func appendDecimal(buf []byte, n decimal128.Num, scale int32) []byte {
	var tmp [40]byte
	digits, neg := decimalDigits(&tmp, n)
	nd := int32(len(digits))

	// Split into the integer part and the fraction (leading zeros of the
	// fraction are implied when the number has fewer digits than the scale).
	var intPart, frac []byte
	fracZeros := int32(0)
	if nd > scale {
		intPart, frac = digits[:nd-scale], digits[nd-scale:]
	} else {
		fracZeros, frac = scale-nd, digits
	}
	hasFrac := fracZeros > 0 || len(frac) > 0
	if neg && (hasFrac || len(intPart) > 0) {
		buf = append(buf, '-')
	}
	if len(intPart) == 0 {
		buf = append(buf, '0')
	} else {
		buf = append(buf, intPart...)
	}
	if hasFrac {
		buf = append(buf, '.')
		for ; fracZeros > 0; fracZeros-- {
			buf = append(buf, '0')
		}
		buf = append(buf, frac...)
	}
	return buf
}

// TextColumn renders arr, a column of type t, as a utf8 column of its
// PostgreSQL text output (for clients and files that have no Arrow type
// for t's values, such as unconstrained numeric, each with its own scale).
// The caller releases the result.
func TextColumn(mem memory.Allocator, t T, arr arrow.Array) arrow.Array {
	b := array.NewStringBuilder(mem)
	defer b.Release()
	b.Reserve(arr.Len())
	format := NewColumnFormatter(t, arr)
	var buf []byte
	for i := 0; i < arr.Len(); i++ {
		if arr.IsNull(i) {
			b.AppendNull()
			continue
		}
		buf = format(buf[:0], i)
		b.BinaryBuilder.Append(buf)
	}
	return b.NewArray()
}

// PortableType is the Arrow type a column of type t is written as for
// clients and files outside streamsql: t.ArrowType(), except utf8 text for
// unconstrained numeric, whose Decimal128 slots pack each value's own
// scale (see TextColumn), and for character(n), whose values are stored
// without the padding they are output with.
func PortableType(t T) arrow.DataType {
	if NeedsText(t) {
		return arrow.BinaryTypes.String
	}
	return t.ArrowType()
}

// NeedsText reports whether columns of t are written as their text output
// outside streamsql (see PortableType).
func NeedsText(t T) bool {
	return t.Kind == Numeric && !t.HasTypmod || t.Kind == Text && t.Bpchar && t.Width > 0
}
