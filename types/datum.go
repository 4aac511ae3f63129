package types

import (
	"math"
	"strconv"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
)

// IntervalValue is a PostgreSQL interval: months, days and microseconds are kept
// apart because their lengths vary (a month is not always 30 days).
type IntervalValue struct {
	Months int32
	Days   int32
	Micros int64
}

// ToArrow converts iv to its Arrow representation.
func (iv IntervalValue) ToArrow() arrow.MonthDayNanoInterval {
	return arrow.MonthDayNanoInterval{Months: iv.Months, Days: iv.Days, Nanoseconds: iv.Micros * 1000}
}

// IntervalFromArrow converts an Arrow month-day-nano value to an IntervalValue.
func IntervalFromArrow(v arrow.MonthDayNanoInterval) IntervalValue {
	return IntervalValue{Months: v.Months, Days: v.Days, Micros: v.Nanoseconds / 1000}
}

// Compare orders intervals as PostgreSQL does: by their length with a month
// counted as 30 days and a day as 24 hours.
func (iv IntervalValue) Compare(o IntervalValue) int {
	a, b := iv.span(), o.span()
	switch {
	case a.Cmp(b) < 0:
		return -1
	case a.Cmp(b) > 0:
		return 1
	}
	return 0
}

// span returns the interval's length in microseconds as a 128-bit number so that
// extreme values do not overflow.
func (iv IntervalValue) span() decimal128.Num {
	const microsPerDay = 24 * 3600 * 1_000_000
	n := decimal128.FromI64(int64(iv.Months) * 30)
	n = n.Add(decimal128.FromI64(int64(iv.Days)))
	n = n.Mul(decimal128.FromI64(microsPerDay))
	return n.Add(decimal128.FromI64(iv.Micros))
}

// Datum is one scalar SQL value of a type known from context. It is used for
// constants, catalog values and other places off the hot path; operators work
// on Arrow columns instead.
//
// Which field holds the value depends on the type's Kind:
//
//	Bool                         I (0 or 1)
//	Int16, Int32, Int64          I
//	Date                         I (days since 1970-01-01)
//	Timestamp, TimestampTZ       I (microseconds since 1970-01-01 00:00:00 UTC)
//	Float32, Float64             F
//	Numeric                      Dec, at the type's EffectiveScale
//	Text                         S
//	Interval                     Ivl
//	Array                        Arr (the elements; never nil)
//	Bytea, UUID                  S (the bytes; 16 of them for a uuid)
//	Struct                       Arr (the fields; never nil)
//	Map                          Arr (the entries, struct datums of key and value)
type Datum struct {
	Null bool
	I    int64
	F    float64
	S    string
	Dec  decimal128.Num
	Ivl  IntervalValue
	Arr  []Datum
}

// Null is the NULL datum.
var Null = Datum{Null: true}

// DBool returns a boolean datum.
func DBool(b bool) Datum {
	if b {
		return Datum{I: 1}
	}
	return Datum{}
}

// DInt returns an integer (or date or timestamp) datum.
func DInt(i int64) Datum { return Datum{I: i} }

// DFloat returns a float datum.
func DFloat(f float64) Datum { return Datum{F: f} }

// DText returns a text datum.
func DText(s string) Datum { return Datum{S: s} }

// DNumeric returns a numeric datum with mantissa n.
func DNumeric(n decimal128.Num) Datum { return Datum{Dec: n} }

// DInterval returns an interval datum.
func DInterval(iv IntervalValue) Datum { return Datum{Ivl: iv} }

// Bool returns the datum as a Go bool.
func (d Datum) Bool() bool { return d.I != 0 }

// Compare orders two non-NULL datums of type t. NaN sorts above every other
// float, as in PostgreSQL.
func Compare(t T, a, b Datum) int {
	switch t.Kind {
	case Bool, Int16, Int32, Int64, Date, Timestamp, TimestampTZ:
		return cmpOrdered(a.I, b.I)
	case Float32, Float64:
		return CompareFloat(a.F, b.F)
	case Numeric:
		return CompareNumeric(t, a.Dec, b.Dec)
	case Text:
		return cmpOrdered(a.S, b.S)
	case Interval:
		return a.Ivl.Compare(b.Ivl)
	case Array:
		return CompareArrays(t.ElemT(), a.Arr, b.Arr)
	case Bytea, UUID:
		return cmpOrdered(a.S, b.S)
	case JSONB:
		return CompareJSONB(a.S, b.S)
	case Struct:
		return CompareStructs(t.Fields, a.Arr, b.Arr)
	case Map:
		return CompareArrays(MapEntriesT(t).ElemT(), a.Arr, b.Arr)
	}
	return 0
}

// CompareFloat orders floats with PostgreSQL's rule that NaN equals NaN and is
// greater than every other value.
func CompareFloat(a, b float64) int {
	an, bn := math.IsNaN(a), math.IsNaN(b)
	switch {
	case an && bn:
		return 0
	case an:
		return 1
	case bn:
		return -1
	}
	return cmpOrdered(a, b)
}

func cmpOrdered[V int64 | float64 | string](a, b V) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// DatumAt reads row i of arr, a column of type t.
func DatumAt(t T, arr arrow.Array, i int) Datum {
	if arr.IsNull(i) {
		return Null
	}
	switch t.Kind {
	case Bool:
		return DBool(arr.(interface{ Value(int) bool }).Value(i))
	case Int16:
		return DInt(int64(arr.(interface{ Value(int) int16 }).Value(i)))
	case Int32:
		return DInt(int64(arr.(interface{ Value(int) int32 }).Value(i)))
	case Int64:
		return DInt(arr.(interface{ Value(int) int64 }).Value(i))
	case Float32:
		return DFloat(float64(arr.(interface{ Value(int) float32 }).Value(i)))
	case Float64:
		return DFloat(arr.(interface{ Value(int) float64 }).Value(i))
	case Numeric:
		return DNumeric(arr.(interface{ Value(int) decimal128.Num }).Value(i))
	case Text, JSONB:
		return DText(arr.(interface{ Value(int) string }).Value(i))
	case Date:
		return DInt(int64(arr.(interface{ Value(int) arrow.Date32 }).Value(i)))
	case Timestamp, TimestampTZ:
		return DInt(int64(arr.(interface{ Value(int) arrow.Timestamp }).Value(i)))
	case Interval:
		return DInterval(IntervalFromArrow(arr.(interface {
			Value(int) arrow.MonthDayNanoInterval
		}).Value(i)))
	case Array:
		return listDatum(t, arr, i)
	case Bytea, UUID:
		return DBytes(binaryValue(arr, i))
	case Struct:
		return structDatum(t, arr, i)
	case Map:
		return listDatum(MapEntriesT(t), arr, i)
	}
	return Null
}

// AppendText appends the PostgreSQL text output of d (of type t) to buf. It must
// not be called for NULL.
func AppendText(buf []byte, t T, d Datum) []byte {
	switch t.Kind {
	case Bool:
		if d.I != 0 {
			return append(buf, 't')
		}
		return append(buf, 'f')
	case Int16, Int32, Int64:
		return strconv.AppendInt(buf, d.I, 10)
	case Float32:
		return AppendFloat(buf, d.F, 32)
	case Float64:
		return AppendFloat(buf, d.F, 64)
	case Numeric:
		return AppendNumeric(buf, d.Dec, t)
	case Text, JSONB:
		if t.Bpchar && t.Width > 0 {
			return AppendBpchar(buf, d.S, t.Width)
		}
		return append(buf, d.S...)
	case Date:
		return AppendDate(buf, d.I)
	case Timestamp:
		return AppendTimestamp(buf, d.I, false)
	case TimestampTZ:
		return AppendTimestamp(buf, d.I, true)
	case Interval:
		return AppendInterval(buf, d.Ivl)
	case Array:
		return AppendArrayText(buf, t, d)
	case Bytea:
		return AppendByteaHex(buf, d.S)
	case UUID:
		return AppendUUID(buf, d.S)
	case Struct:
		return AppendStructText(buf, t, d)
	case Map:
		return AppendMapText(buf, t, d)
	}
	return buf
}

// Text returns the PostgreSQL text output of d, or "NULL".
func (d Datum) Text(t T) string {
	if d.Null {
		return "NULL"
	}
	return string(AppendText(nil, t, d))
}

// floatFixedDigits is the decimal exponent from which PostgreSQL prints a
// float in exponential notation: DBL_DIG (15) for double precision, FLT_DIG
// (6) for real.
func floatFixedDigits(bitSize int) int {
	if bitSize == 32 {
		return 6
	}
	return 15
}

// AppendFloat appends f the way PostgreSQL (extra_float_digits = 1, the default
// since version 12) prints it: the shortest decimal that reads back exactly,
// in positional notation for decimal exponents in [-4, 15) ([-4, 6) for real)
// and scientific notation otherwise.
func AppendFloat(buf []byte, f float64, bitSize int) []byte {
	switch {
	case math.IsNaN(f):
		return append(buf, "NaN"...)
	case math.IsInf(f, 1):
		return append(buf, "Infinity"...)
	case math.IsInf(f, -1):
		return append(buf, "-Infinity"...)
	case f == 0:
		if math.Signbit(f) {
			return append(buf, "-0"...)
		}
		return append(buf, '0')
	}
	var tmp [32]byte
	e := strconv.AppendFloat(tmp[:0], f, 'e', -1, bitSize)
	// e looks like [-]d[.ddd]e±XX.
	i := 0
	for e[i] != 'e' {
		i++
	}
	exp, _ := strconv.Atoi(string(e[i+1:]))
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
	return strconv.AppendFloat(buf, f, 'f', -1, bitSize)
}

// AppendNumeric appends the text of the numeric slot n of type t with
// exactly its display scale of fractional digits: the declared scale of
// numeric(p,s), the value's own scale for unconstrained numeric.
func AppendNumeric(buf []byte, n decimal128.Num, t T) []byte {
	m, scale := NumericParts(t, n)
	return appendDecimal(buf, m, scale)
}

// CompareNumeric orders the numeric slots a and b of type t by value.
func CompareNumeric(t T, a, b decimal128.Num) int {
	if t.HasTypmod {
		return a.Cmp(b)
	}
	ma, sa := UnpackNumeric(a)
	mb, sb := UnpackNumeric(b)
	return CompareParts(ma, sa, mb, sb)
}

// CompareParts orders ma·10^-sa and mb·10^-sb (mantissas below 10^38).
func CompareParts(ma decimal128.Num, sa int32, mb decimal128.Num, sb int32) int {
	if sa < sb {
		return -CompareParts(mb, sb, ma, sa)
	}
	if sa == sb {
		return ma.Cmp(mb)
	}
	// Bring b up to scale sa. If that takes b past 38 digits, b is larger in
	// magnitude than a and its sign decides.
	k := sa - sb
	if k > NumericPrecision || !mb.Abs().Less(decimal128.GetScaleMultiplier(int(NumericPrecision-k))) {
		if mb == (decimal128.Num{}) {
			return ma.Sign()
		}
		return -mb.Sign()
	}
	return ma.Cmp(mb.Mul(decimal128.GetScaleMultiplier(int(k))))
}

const (
	microsPerSecond = 1_000_000
	microsPerMinute = 60 * microsPerSecond
	microsPerHour   = 60 * microsPerMinute
	microsPerDay    = 24 * microsPerHour
	// unixEpochJulian is the Julian day number of 1970-01-01.
	unixEpochJulian = 2440588
)

// CivilFromDays converts days since 1970-01-01 to a proleptic Gregorian date.
func CivilFromDays(days int64) (year, month, day int) {
	// Fliegel & Van Flandern's conversion from a Julian day number.
	l := days + unixEpochJulian + 68569
	n := 4 * l / 146097
	l -= (146097*n + 3) / 4
	i := 4000 * (l + 1) / 1461001
	l = l - 1461*i/4 + 31
	j := 80 * l / 2447
	d := l - 2447*j/80
	l = j / 11
	m := j + 2 - 12*l
	y := 100*(n-49) + i + l
	return int(y), int(m), int(d)
}

// DaysFromCivil converts a proleptic Gregorian date to days since 1970-01-01.
func DaysFromCivil(year, month, day int) int64 {
	y, m, d := int64(year), int64(month), int64(day)
	a := (14 - m) / 12
	y2 := y + 4800 - a
	m2 := m + 12*a - 3
	jdn := d + (153*m2+2)/5 + 365*y2 + y2/4 - y2/100 + y2/400 - 32045
	return jdn - unixEpochJulian
}

// FloorDiv divides rounding toward negative infinity.
func FloorDiv(a, b int64) int64 {
	q := a / b
	if (a%b != 0) && ((a < 0) != (b < 0)) {
		q--
	}
	return q
}

func appendYear(buf []byte, y int) []byte {
	if y <= 0 {
		// PostgreSQL prints year 0 as 0001 BC; the caller appends " BC".
		y = 1 - y
	}
	if y < 1000 {
		buf = append(buf, '0'+byte(y/1000), '0'+byte(y/100%10), '0'+byte(y/10%10), '0'+byte(y%10))
		return buf
	}
	return strconv.AppendInt(buf, int64(y), 10)
}

func append2(buf []byte, v int) []byte {
	return append(buf, '0'+byte(v/10%10), '0'+byte(v%10))
}

// AppendDate appends the ISO text (YYYY-MM-DD) of a date given in days.
func AppendDate(buf []byte, days int64) []byte {
	y, m, d := CivilFromDays(days)
	buf = appendYear(buf, y)
	buf = append(buf, '-')
	buf = append2(buf, m)
	buf = append(buf, '-')
	buf = append2(buf, d)
	if y <= 0 {
		buf = append(buf, " BC"...)
	}
	return buf
}

// AppendTimestamp appends the ISO text of a timestamp in microseconds, with a
// "+00" zone suffix for timestamptz (sessions always run in UTC).
func AppendTimestamp(buf []byte, micros int64, tz bool) []byte {
	days := FloorDiv(micros, microsPerDay)
	rem := micros - days*microsPerDay
	y, m, d := CivilFromDays(days)
	buf = appendYear(buf, y)
	buf = append(buf, '-')
	buf = append2(buf, m)
	buf = append(buf, '-')
	buf = append2(buf, d)
	buf = append(buf, ' ')
	buf = appendClock(buf, rem)
	if tz {
		buf = append(buf, "+00"...)
	}
	if y <= 0 {
		buf = append(buf, " BC"...)
	}
	return buf
}

// appendClock appends HH:MM:SS[.ffffff] for a non-negative count of
// microseconds; hours may exceed 24 (intervals).
func appendClock(buf []byte, micros int64) []byte {
	h := micros / microsPerHour
	micros -= h * microsPerHour
	mi := micros / microsPerMinute
	micros -= mi * microsPerMinute
	s := micros / microsPerSecond
	frac := micros - s*microsPerSecond
	if h < 100 {
		buf = append2(buf, int(h))
	} else {
		buf = strconv.AppendInt(buf, h, 10)
	}
	buf = append(buf, ':')
	buf = append2(buf, int(mi))
	buf = append(buf, ':')
	buf = append2(buf, int(s))
	if frac != 0 {
		var f [7]byte
		f[0] = '.'
		for i := 6; i >= 1; i-- {
			f[i] = '0' + byte(frac%10)
			frac /= 10
		}
		n := 7
		for f[n-1] == '0' {
			n--
		}
		buf = append(buf, f[:n]...)
	}
	return buf
}

// AppendInterval appends an interval in PostgreSQL's default output style
// (IntervalStyle postgres), e.g. "1 year 2 mons -3 days +04:05:06.5": units are
// plural unless exactly 1, and a positive part after a negative one carries
// an explicit "+".
func AppendInterval(buf []byte, iv IntervalValue) []byte {
	start := len(buf)
	isBefore := false
	part := func(n int64, unit string) {
		if n == 0 {
			return
		}
		if len(buf) > start {
			buf = append(buf, ' ')
		}
		if isBefore && n > 0 {
			buf = append(buf, '+')
		}
		buf = strconv.AppendInt(buf, n, 10)
		buf = append(buf, ' ')
		buf = append(buf, unit...)
		if n != 1 {
			buf = append(buf, 's')
		}
		isBefore = n < 0
	}
	part(int64(iv.Months/12), "year")
	part(int64(iv.Months%12), "mon")
	part(int64(iv.Days), "day")
	if iv.Micros != 0 || len(buf) == start {
		if len(buf) > start {
			buf = append(buf, ' ')
		}
		m := iv.Micros
		if m < 0 {
			buf = append(buf, '-')
			m = -m
		} else if isBefore {
			buf = append(buf, '+')
		}
		buf = appendClock(buf, m)
	}
	return buf
}
