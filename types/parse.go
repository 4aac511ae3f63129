package types

import (
	"math"
	"strconv"
	"strings"

	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/streamsql/streamsql/sqlerr"
)

// ParseText parses s, PostgreSQL text input for type t, into a Datum. Errors are
// *sqlerr.Error: 22P02 invalid_text_representation ("invalid input syntax for type
// integer: \"abc\""), 22003 for out-of-range numbers ("value \"99999\" is out of range
// for type smallint"), 22007/22008 for bad dates/times.
//
// Surrounding whitespace is ignored for every type but text. The special
// date/time inputs that need a clock or a value outside the representable range
// ('now', 'today', 'infinity', ...) are refused with 0A000; numeric NaN and
// Infinity likewise, since numeric values are Decimal128 mantissas.
func ParseText(t T, s string) (Datum, error) {
	switch t.Kind {
	case Bool:
		b, err := parseBool(s)
		return DBool(b), err
	case Int16, Int32, Int64:
		v, err := parseInteger(t, s)
		return DInt(v), err
	case Float32, Float64:
		f, err := parseFloat(t, s)
		return DFloat(f), err
	case Numeric:
		n, err := parseNumeric(t, s)
		return DNumeric(n), err
	case Text, Unknown:
		v, err := parseVarchar(t, s)
		return DText(v), err
	case Date:
		d, err := parseDate(s)
		return DInt(d), err
	case Timestamp, TimestampTZ:
		v, err := parseTimestamp(t, s)
		return DInt(v), err
	case Interval:
		iv, err := parseInterval(s, "")
		return DInterval(iv), err
	case Array:
		return parseArray(t, s)
	case Bytea:
		b, err := ParseBytea(s)
		return DBytes(b), err
	case UUID:
		u, err := ParseUUID(s)
		return DBytes(u), err
	case JSONB:
		v, err := ParseJSONB(s)
		return DText(v), err
	case Struct:
		return parseStruct(t, s)
	case Map:
		return parseMap(t, s)
	}
	return Null, sqlerr.New(sqlerr.InternalError, "no text input for type %s", t)
}

// ParseIntervalWithField parses a literal like INTERVAL '10' SECOND: a bare number is in
// units of field ("year", "month", "day", "hour", "minute", "second"); other text is
// parsed as ParseText would and then truncated to the field's precision as PostgreSQL does.
//
// field may also be a range such as "day to second" or "year to month": the
// last field of the range decides both the unit of a bare number and the
// truncation. An empty field behaves like ParseText.
func ParseIntervalWithField(s string, field string) (IntervalValue, error) {
	f := strings.Join(strings.Fields(strings.ToLower(field)), " ")
	last := f
	if i := strings.LastIndex(f, " to "); i >= 0 {
		last = f[i+4:]
	}
	switch last {
	case "", "year", "month", "day", "hour", "minute", "second":
	default:
		return IntervalValue{}, sqlerr.New(sqlerr.SyntaxError, "invalid interval field %q", field)
	}
	iv, err := parseInterval(s, f)
	if err != nil {
		return iv, err
	}
	switch last {
	case "year":
		iv = IntervalValue{Months: iv.Months / 12 * 12}
	case "month":
		iv = IntervalValue{Months: iv.Months}
	case "day":
		iv.Micros = 0
	case "hour":
		iv.Micros = iv.Micros / microsPerHour * microsPerHour
	case "minute":
		iv.Micros = iv.Micros / microsPerMinute * microsPerMinute
	}
	return iv, nil
}

// CanonicalTimeUnit maps a date/time unit as PostgreSQL accepts it in interval
// input, extract, date_part and date_trunc ("hours", "hr", "MON", "msec", ...)
// to its canonical name: microseconds, milliseconds, second, minute, hour, day,
// week, month, quarter, year, decade, century, millennium, dow, isodow, doy,
// epoch, isoyear, julian, timezone, timezone_hour or timezone_minute. ok is
// false for an unknown unit.
func CanonicalTimeUnit(s string) (unit string, ok bool) {
	unit, ok = parseUnits[strings.ToLower(strings.TrimSpace(s))]
	return unit, ok
}

var parseUnits = map[string]string{}

func init() {
	add := func(canon string, names ...string) {
		parseUnits[canon] = canon
		for _, n := range names {
			parseUnits[n] = canon
		}
	}
	add("microseconds", "microsecond", "microsecon", "us", "usec", "usecs", "usecond", "useconds")
	add("milliseconds", "millisecond", "millisecon", "ms", "msec", "msecs", "msecond", "mseconds")
	add("second", "seconds", "s", "sec", "secs")
	add("minute", "minutes", "m", "min", "mins")
	add("hour", "hours", "h", "hr", "hrs")
	add("day", "days", "d")
	add("week", "weeks", "w")
	add("month", "months", "mon", "mons")
	add("quarter", "qtr")
	add("year", "years", "y", "yr", "yrs")
	add("decade", "decades", "dec", "decs")
	add("century", "centuries", "c", "cent")
	add("millennium", "millennia", "mil", "mils")
	add("dow")
	add("isodow")
	add("doy")
	add("epoch")
	add("isoyear")
	add("julian", "j")
	add("timezone")
	add("timezone_hour")
	add("timezone_minute")
}

// parseIsSpace reports whether c is whitespace as C's isspace sees it.
func parseIsSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f'
}

func parseTrim(s string) string {
	i, j := 0, len(s)
	for i < j && parseIsSpace(s[i]) {
		i++
	}
	for j > i && parseIsSpace(s[j-1]) {
		j--
	}
	return s[i:j]
}

func parseSyntaxErr(t T, s string) *sqlerr.Error {
	return sqlerr.New(sqlerr.InvalidTextRepresentation, "invalid input syntax for type %s: %s", parseTypeName(t), parseQuote(s))
}

// parseTypeName is the type name PostgreSQL's input functions use in messages.
func parseTypeName(t T) string {
	switch t.Kind {
	case Numeric:
		return "numeric"
	case Text:
		return "character varying"
	case Timestamp:
		return "timestamp"
	}
	return t.String()
}

func parseQuote(s string) string { return `"` + s + `"` }

// --- boolean ---

func parseBool(s string) (bool, error) {
	v := strings.ToLower(parseTrim(s))
	if v != "" {
		switch v[0] {
		case 't':
			if strings.HasPrefix("true", v) {
				return true, nil
			}
		case 'f':
			if strings.HasPrefix("false", v) {
				return false, nil
			}
		case 'y':
			if strings.HasPrefix("yes", v) {
				return true, nil
			}
		case 'n':
			if strings.HasPrefix("no", v) {
				return false, nil
			}
		case 'o':
			// "o" alone is ambiguous.
			if len(v) >= 2 && strings.HasPrefix("on", v) {
				return true, nil
			}
			if len(v) >= 2 && strings.HasPrefix("off", v) {
				return false, nil
			}
		case '1':
			if v == "1" {
				return true, nil
			}
		case '0':
			if v == "0" {
				return false, nil
			}
		}
	}
	return false, parseSyntaxErr(BoolT, s)
}

// --- integers ---

// parseInteger accepts what PostgreSQL 16's pg_strtoint accepts: an optional
// sign, decimal digits or a 0x/0o/0b prefixed number, underscores between
// digits, and surrounding whitespace.
func parseInteger(t T, s string) (int64, error) {
	v := parseTrim(s)
	neg := false
	if v != "" && (v[0] == '+' || v[0] == '-') {
		neg = v[0] == '-'
		v = v[1:]
	}
	base := uint64(10)
	if len(v) > 2 && v[0] == '0' {
		switch v[1] {
		case 'x', 'X':
			base = 16
		case 'o', 'O':
			base = 8
		case 'b', 'B':
			base = 2
		}
		if base != 10 {
			v = v[2:]
		}
	}
	if v == "" {
		return 0, parseSyntaxErr(t, s)
	}
	var mag uint64
	overflow := false
	prevDigit := false
	for i := 0; i < len(v); i++ {
		c := v[i]
		if c == '_' {
			// Underscores only between digits.
			if !prevDigit || i+1 == len(v) {
				return 0, parseSyntaxErr(t, s)
			}
			prevDigit = false
			continue
		}
		d := parseDigitVal(c)
		if d >= base {
			return 0, parseSyntaxErr(t, s)
		}
		prevDigit = true
		if mag > (math.MaxUint64-d)/base {
			overflow = true
			continue
		}
		mag = mag*base + d
	}
	limit := uint64(math.MaxInt64)
	switch t.Kind {
	case Int16:
		limit = math.MaxInt16
	case Int32:
		limit = math.MaxInt32
	}
	if neg {
		limit++
	}
	if overflow || mag > limit {
		return 0, sqlerr.New(sqlerr.NumericValueOutOfRange, "value %s is out of range for type %s", parseQuote(s), t)
	}
	if neg {
		return int64(-mag), nil
	}
	return int64(mag), nil
}

func parseDigitVal(c byte) uint64 {
	switch {
	case c >= '0' && c <= '9':
		return uint64(c - '0')
	case c >= 'a' && c <= 'f':
		return uint64(c-'a') + 10
	case c >= 'A' && c <= 'F':
		return uint64(c-'A') + 10
	}
	return 99
}

// --- floats ---

func parseFloat(t T, s string) (float64, error) {
	v := parseTrim(s)
	switch strings.ToLower(v) {
	case "nan", "+nan", "-nan":
		return math.NaN(), nil
	case "infinity", "+infinity", "inf", "+inf":
		return math.Inf(1), nil
	case "-infinity", "-inf":
		return math.Inf(-1), nil
	}
	// Validate the syntax ourselves: strconv also takes hex floats,
	// underscores and "Inf" spellings that PostgreSQL's strtod use does not.
	i := 0
	if i < len(v) && (v[i] == '+' || v[i] == '-') {
		i++
	}
	digits, nonzero := 0, false
	for ; i < len(v) && v[i] >= '0' && v[i] <= '9'; i++ {
		digits++
		nonzero = nonzero || v[i] != '0'
	}
	if i < len(v) && v[i] == '.' {
		for i++; i < len(v) && v[i] >= '0' && v[i] <= '9'; i++ {
			digits++
			nonzero = nonzero || v[i] != '0'
		}
	}
	if digits == 0 {
		return 0, parseSyntaxErr(t, s)
	}
	if i < len(v) && (v[i] == 'e' || v[i] == 'E') {
		i++
		if i < len(v) && (v[i] == '+' || v[i] == '-') {
			i++
		}
		start := i
		for i < len(v) && v[i] >= '0' && v[i] <= '9' {
			i++
		}
		if i == start {
			return 0, parseSyntaxErr(t, s)
		}
	}
	if i != len(v) {
		return 0, parseSyntaxErr(t, s)
	}
	bitSize := 64
	if t.Kind == Float32 {
		bitSize = 32
	}
	f, err := strconv.ParseFloat(v, bitSize)
	if err != nil || (f == 0 && nonzero) {
		return 0, sqlerr.New(sqlerr.NumericValueOutOfRange, "%s is out of range for type %s", parseQuote(v), t)
	}
	return f, nil
}

// --- numeric ---

// parseNumeric parses a decimal number into a mantissa at t's EffectiveScale,
// rounding half away from zero, and checks it against t's precision.
func parseNumeric(t T, s string) (decimal128.Num, error) {
	v := parseTrim(s)
	switch strings.ToLower(strings.TrimLeft(v, "+-")) {
	case "nan", "infinity", "inf":
		return decimal128.Num{}, sqlerr.Unsupported("numeric value %s", parseQuote(v))
	}
	i := 0
	neg := false
	if i < len(v) && (v[i] == '+' || v[i] == '-') {
		neg = v[i] == '-'
		i++
	}
	// Collect the significant digits (without leading zeros) and the number of
	// them after the decimal point.
	var digs [80]byte
	nd, ndigits, fracDigits := 0, 0, 0
	lastDigit := false
	seenPoint := false
	for ; i < len(v); i++ {
		c := v[i]
		switch {
		case c >= '0' && c <= '9':
			ndigits++
			lastDigit = true
			if seenPoint {
				fracDigits++
			}
			if nd == 0 && c == '0' {
				continue
			}
			if nd < len(digs) {
				digs[nd] = c
				nd++
			} else {
				// Digits beyond the 80th significant one cannot change
				// the rounded result; drop them but keep their weight
				// (an integer digit multiplies by ten, a fraction digit
				// was already counted in fracDigits).
				fracDigits--
			}
			continue
		case c == '_' && lastDigit && i+1 < len(v) && v[i+1] >= '0' && v[i+1] <= '9':
			lastDigit = false
			continue
		case c == '.' && !seenPoint:
			seenPoint = true
			lastDigit = false
			continue
		}
		break
	}
	if ndigits == 0 {
		return decimal128.Num{}, parseSyntaxErr(t, s)
	}
	exp := 0
	if i < len(v) && (v[i] == 'e' || v[i] == 'E') {
		i++
		eneg := false
		if i < len(v) && (v[i] == '+' || v[i] == '-') {
			eneg = v[i] == '-'
			i++
		}
		start := i
		for ; i < len(v) && v[i] >= '0' && v[i] <= '9'; i++ {
			if exp < 1_000_000 {
				exp = exp*10 + int(v[i]-'0')
			}
		}
		if i == start {
			return decimal128.Num{}, parseSyntaxErr(t, s)
		}
		if eneg {
			exp = -exp
		}
	}
	if i != len(v) {
		return decimal128.Num{}, parseSyntaxErr(t, s)
	}
	if t.DynamicNumeric() {
		return parseDynNumeric(digs[:nd], exp, fracDigits, neg)
	}
	n, ok := parseDigitsToMantissa(digs[:nd], exp-fracDigits+int(t.EffectiveScale()), NumericPrecision)
	if !ok || !parseFitsPrecision(n, t) {
		return decimal128.Num{}, NumericOverflowError(t)
	}
	if neg {
		n = n.Negate()
	}
	return n, nil
}

// parseDynNumeric packs the unconstrained numeric digits×10^(exp-fracDigits)
// with PostgreSQL's display scale max(fracDigits-exp, 0), rounding fraction
// digits away (half away from zero) where the value has more than DynDigits
// significant digits or a scale above DynMaxScale.
func parseDynNumeric(digits []byte, exp, fracDigits int, neg bool) (decimal128.Num, error) {
	scale := max(fracDigits-exp, 0)
	intDigits := len(digits) + exp - fracDigits
	if len(digits) > 0 && intDigits > DynDigits {
		return decimal128.Num{}, NumericOverflowError(NumericT)
	}
	// The mantissa has intDigits+scale digits (leading fraction zeros are
	// not significant).
	scale = max(min(scale, DynMaxScale, DynDigits-intDigits), 0)
	for {
		n, ok := parseDigitsToMantissa(digits, exp-fracDigits+scale, DynDigits)
		if ok {
			if neg {
				n = n.Negate()
			}
			return PackNumeric(n, int32(scale)), nil
		}
		if scale == 0 {
			return decimal128.Num{}, NumericOverflowError(NumericT)
		}
		scale-- // rounding carried into a 37th digit
	}
}

// parseDigitsToMantissa returns digits × 10^shift rounded half away from zero
// to an integer (only the first dropped digit decides). ok is false when the
// result has more than maxDigits digits.
func parseDigitsToMantissa(digits []byte, shift, maxDigits int) (decimal128.Num, bool) {
	if len(digits) == 0 {
		return decimal128.Num{}, true
	}
	keep := len(digits) + shift
	if keep > maxDigits {
		return decimal128.Num{}, false
	}
	if keep < 0 {
		return decimal128.Num{}, true
	}
	var n decimal128.Num
	ten := decimal128.FromU64(10)
	for j := 0; j < keep; j++ {
		d := uint64(0)
		if j < len(digits) {
			d = uint64(digits[j] - '0')
		}
		n = n.Mul(ten).Add(decimal128.FromU64(d))
	}
	if keep < len(digits) && digits[keep] >= '5' {
		n = n.Add(decimal128.FromU64(1))
	}
	if n.Cmp(decimal128.GetScaleMultiplier(maxDigits)) >= 0 {
		return decimal128.Num{}, false
	}
	return n, true
}

// parseFitsPrecision reports whether mantissa n (at t's EffectiveScale) fits
// t's declared precision.
func parseFitsPrecision(n decimal128.Num, t T) bool {
	p := int32(NumericPrecision)
	if t.HasTypmod && t.Precision > 0 && t.Precision < p {
		p = t.Precision
	}
	return n.Abs().Less(decimal128.GetScaleMultiplier(int(p)))
}

// NumericOverflowError is PostgreSQL's error for a numeric value that does not
// fit type t.
func NumericOverflowError(t T) *sqlerr.Error {
	e := sqlerr.New(sqlerr.NumericValueOutOfRange, "numeric field overflow")
	if t.HasTypmod {
		p, s := t.Precision, t.Scale
		if p == s {
			e.Detail = "A field with precision " + strconv.Itoa(int(p)) + ", scale " + strconv.Itoa(int(s)) +
				" must round to an absolute value less than 1."
		} else {
			e.Detail = "A field with precision " + strconv.Itoa(int(p)) + ", scale " + strconv.Itoa(int(s)) +
				" must round to an absolute value less than 10^" + strconv.Itoa(int(p-s)) + "."
		}
	}
	return e
}

// --- text ---

// parseVarchar applies varchar(n) input rules: a longer value is an error
// unless the excess characters are all spaces, which are dropped. For
// character(n) and bpchar the trailing spaces are dropped first (they are
// stored without them, see T.Bpchar).
func parseVarchar(t T, s string) (string, error) {
	if t.Bpchar {
		s = strings.TrimRight(s, " ")
	}
	if t.Width <= 0 || len(s) <= int(t.Width) {
		return s, nil
	}
	n, cut := 0, len(s)
	for i := range s {
		if n == int(t.Width) {
			cut = i
			break
		}
		n++
	}
	if cut == len(s) {
		return s, nil
	}
	for j := cut; j < len(s); j++ {
		if s[j] != ' ' {
			return "", sqlerr.New(sqlerr.StringDataRightTruncation, "value too long for type %s", t)
		}
	}
	return s[:cut], nil
}

// --- dates and timestamps ---

// The range of dates and timestamps PostgreSQL accepts: from 4714-11-24 BC
// (Julian day 0) to the end of 5874897 AD for dates.
var (
	parseMinDay     = DaysFromCivil(-4713, 11, 24)
	parseDateEndDay = DaysFromCivil(5874898, 1, 1)
	// PostgreSQL's own end, 294277-01-01, does not fit int64 microseconds
	// since 1970; ours is the last whole day that does (in 294247).
	parseTimestampEnd = int64(math.MaxInt64 / microsPerDay)
)

// parsedDateTime is the result of decoding date/time text.
type parsedDateTime struct {
	year, month, day int // year is astronomical (0 = 1 BC)
	hasTime          bool
	micros           int64 // time of day; may be 24:00:00
	hasZone          bool
	zoneSecs         int   // offset east of UTC
	zone             *Zone // a named zone (Europe/Berlin), whose offset depends on the time
}

func parseDate(s string) (int64, error) {
	dt, err := parseDateTime(DateT, s)
	if err != nil {
		return 0, err
	}
	days := DaysFromCivil(dt.year, dt.month, dt.day)
	if days < parseMinDay || days >= parseDateEndDay {
		return 0, sqlerr.New(sqlerr.DatetimeFieldOverflow, "date out of range: %s", parseQuote(s))
	}
	return days, nil
}

func parseTimestamp(t T, s string) (int64, error) {
	dt, err := parseDateTime(t, s)
	if err != nil {
		return 0, err
	}
	days := DaysFromCivil(dt.year, dt.month, dt.day)
	if days < parseMinDay-1 || days >= parseTimestampEnd+1 {
		return 0, sqlerr.New(sqlerr.DatetimeFieldOverflow, "timestamp out of range: %s", parseQuote(s))
	}
	micros := days*microsPerDay + dt.micros
	if t.Kind == TimestampTZ && dt.zone != nil {
		micros = dt.zone.FromLocal(micros)
	} else if t.Kind == TimestampTZ && dt.hasZone {
		micros -= int64(dt.zoneSecs) * microsPerSecond
	}
	if micros < parseMinDay*microsPerDay || micros >= parseTimestampEnd*microsPerDay {
		return 0, sqlerr.New(sqlerr.DatetimeFieldOverflow, "timestamp out of range: %s", parseQuote(s))
	}
	return micros, nil
}

var parseMonthNames = map[string]int{
	"jan": 1, "january": 1, "feb": 2, "february": 2, "mar": 3, "march": 3,
	"apr": 4, "april": 4, "may": 5, "jun": 6, "june": 6, "jul": 7, "july": 7,
	"aug": 8, "august": 8, "sep": 9, "sept": 9, "september": 9, "oct": 10, "october": 10,
	"nov": 11, "november": 11, "dec": 12, "december": 12,
}

var parseDayNames = map[string]bool{
	"sun": true, "sunday": true, "mon": true, "monday": true, "tue": true, "tues": true,
	"tuesday": true, "wed": true, "wednesday": true, "thu": true, "thur": true, "thurs": true,
	"thursday": true, "fri": true, "friday": true, "sat": true, "saturday": true,
}

// parseCursor walks date/time text.
type parseCursor struct {
	s string
	i int
}

func (c *parseCursor) done() bool { return c.i >= len(c.s) }

func (c *parseCursor) peek() byte {
	if c.i < len(c.s) {
		return c.s[c.i]
	}
	return 0
}

func (c *parseCursor) digits() string {
	j := c.i
	for c.i < len(c.s) && c.s[c.i] >= '0' && c.s[c.i] <= '9' {
		c.i++
	}
	return c.s[j:c.i]
}

func (c *parseCursor) letters() string {
	j := c.i
	for c.i < len(c.s) && c.s[c.i] >= 'a' && c.s[c.i] <= 'z' {
		c.i++
	}
	return c.s[j:c.i]
}

func (c *parseCursor) spaces() bool {
	j := c.i
	for c.i < len(c.s) && parseIsSpace(c.s[c.i]) {
		c.i++
	}
	return c.i > j
}

func parseAtoi(d string) (int, bool) {
	if d == "" || len(d) > 9 {
		return 0, false
	}
	n := 0
	for i := 0; i < len(d); i++ {
		n = n*10 + int(d[i]-'0')
	}
	return n, true
}

// parseDateTime decodes the date/time input forms PostgreSQL accepts with
// DateStyle ISO, MDY: ISO dates (1999-01-08, 19990108), M/D/Y, dates with
// month names (January 8, 1999; 8-Jan-1999; 1999-Jan-08), an optional time
// after a space or 'T' (04:05, 04:05:06.789, with am/pm), a zone (Z, UTC,
// GMT, ±hh, ±hhmm, ±hh:mm[:ss]) and a BC/AD suffix.
func parseDateTime(t T, s string) (parsedDateTime, error) {
	var dt parsedDateTime
	v := strings.ToLower(parseTrim(s))
	syntax := func() error {
		return sqlerr.New(sqlerr.InvalidDatetimeFormat, "invalid input syntax for type %s: %s", parseTypeName(t), parseQuote(s))
	}
	rangeErr := func() error {
		return sqlerr.New(sqlerr.DatetimeFieldOverflow, "date/time field value out of range: %s", parseQuote(s))
	}
	switch v {
	case "epoch":
		dt.year, dt.month, dt.day = 1970, 1, 1
		return dt, nil
	case "infinity", "+infinity", "-infinity", "now", "today", "tomorrow", "yesterday":
		return dt, sqlerr.Unsupported("%s as input for type %s", parseQuote(v), parseTypeName(t)).
			WithHint("Use now(), current_date or an explicit date.")
	case "allballs":
		if t.Kind == Date {
			return dt, syntax()
		}
	}
	c := &parseCursor{s: v}
	// An optional leading day of the week.
	if w := c.letters(); w != "" {
		if parseDayNames[w] {
			if c.peek() == ',' {
				c.i++
			}
			c.spaces()
		} else {
			c.i -= len(w)
		}
	}
	var yearStr string
	if w := c.letters(); w != "" {
		// Month name first: "jan 8, 1999", "january-08-1999".
		m, ok := parseMonthNames[w]
		if !ok {
			return dt, syntax()
		}
		dt.month = m
		if !c.spaces() && (c.peek() == '-' || c.peek() == '/' || c.peek() == '.') {
			c.i++
		}
		d, ok := parseAtoi(c.digits())
		if !ok {
			return dt, syntax()
		}
		dt.day = d
		if c.peek() == ',' {
			c.i++
		}
		if !c.spaces() && (c.peek() == '-' || c.peek() == '/' || c.peek() == '.') {
			c.i++
		}
		yearStr = c.digits()
	} else {
		d1 := c.digits()
		if d1 == "" {
			return dt, syntax()
		}
		switch sep := c.peek(); {
		case sep == '-' || sep == '/' || sep == '.':
			c.i++
			if w := c.letters(); w != "" {
				m, ok := parseMonthNames[w]
				if !ok || c.peek() != sep {
					return dt, syntax()
				}
				c.i++
				d3 := c.digits()
				dt.month = m
				if len(d1) >= 3 {
					yearStr = d1
					dt.day, _ = parseAtoi(d3)
				} else {
					dt.day, _ = parseAtoi(d1)
					yearStr = d3
				}
				if d3 == "" {
					return dt, syntax()
				}
				break
			}
			d2 := c.digits()
			if d2 == "" || c.peek() != sep {
				return dt, syntax()
			}
			c.i++
			d3 := c.digits()
			if d3 == "" {
				return dt, syntax()
			}
			if len(d1) >= 3 {
				yearStr = d1
				dt.month, _ = parseAtoi(d2)
				dt.day, _ = parseAtoi(d3)
			} else {
				dt.month, _ = parseAtoi(d1)
				dt.day, _ = parseAtoi(d2)
				yearStr = d3
			}
		case len(d1) == 8 && (sep == 0 || sep == ' ' || sep == 't'):
			yearStr = d1[:4]
			dt.month, _ = parseAtoi(d1[4:6])
			dt.day, _ = parseAtoi(d1[6:])
		case sep == ' ':
			// "8 jan 1999"
			c.spaces()
			m, ok := parseMonthNames[c.letters()]
			if !ok {
				return dt, syntax()
			}
			dt.month = m
			dt.day, _ = parseAtoi(d1)
			if !c.spaces() && (c.peek() == '-' || c.peek() == ',') {
				c.i++
			}
			c.spaces()
			yearStr = c.digits()
		default:
			return dt, syntax()
		}
	}
	year, ok := parseAtoi(yearStr)
	if !ok {
		return dt, syntax()
	}
	if len(yearStr) == 2 {
		if year < 70 {
			year += 2000
		} else {
			year += 1900
		}
	}
	// The rest: [era] [(space|T) time [zone]] [era].
	bc, era := false, false
	takeEra := func() bool {
		save := c.i
		c.spaces()
		switch w := c.letters(); w {
		case "bc", "ad":
			if era {
				return false
			}
			era, bc = true, w == "bc"
			return true
		}
		c.i = save
		return true
	}
	if !takeEra() {
		return dt, syntax()
	}
	if !c.done() {
		save := c.i
		sp := c.spaces()
		if !sp && c.peek() == 't' {
			c.i++
		}
		if c.i == save {
			return dt, syntax()
		}
		if !c.done() {
			if c.peek() >= '0' && c.peek() <= '9' {
				micros, err := parseClock(c, syntax, rangeErr)
				if err != nil {
					return dt, err
				}
				dt.hasTime, dt.micros = true, micros
			}
			if err := parseZone(c, &dt, syntax); err != nil {
				return dt, err
			}
			if !takeEra() {
				return dt, syntax()
			}
			c.spaces()
			if !c.done() {
				return dt, syntax()
			}
		}
	}
	if year == 0 {
		return dt, rangeErr()
	}
	if bc {
		year = 1 - year
	}
	dt.year = year
	if dt.month < 1 || dt.month > 12 || dt.day < 1 || dt.day > parseDaysIn(year, dt.month) {
		return dt, rangeErr()
	}
	return dt, nil
}

// parseClock reads hh:mm[:ss[.frac]] [am|pm] and returns the microseconds
// since midnight (24:00:00 is allowed).
func parseClock(c *parseCursor, syntax, rangeErr func() error) (int64, error) {
	h, ok := parseAtoi(c.digits())
	if !ok || c.peek() != ':' {
		return 0, syntax()
	}
	c.i++
	ms := c.digits()
	m, ok := parseAtoi(ms)
	if !ok || len(ms) != 2 {
		return 0, syntax()
	}
	sec, frac := 0, int64(0)
	if c.peek() == ':' {
		c.i++
		ss := c.digits()
		if len(ss) != 2 {
			return 0, syntax()
		}
		sec, _ = parseAtoi(ss)
		if c.peek() == '.' {
			c.i++
			fs := c.digits()
			var carry bool
			frac, carry = parseFraction(fs)
			if carry {
				frac = microsPerSecond
			}
		}
	}
	save := c.i
	c.spaces()
	switch w := c.letters(); w {
	case "am", "pm":
		if h < 1 || h > 12 {
			return 0, rangeErr()
		}
		if h == 12 {
			h = 0
		}
		if w == "pm" {
			h += 12
		}
	default:
		c.i = save
	}
	if h > 24 || m > 59 || sec > 60 || (h == 24 && (m != 0 || sec != 0 || frac != 0)) {
		return 0, rangeErr()
	}
	return int64(h)*microsPerHour + int64(m)*microsPerMinute + int64(sec)*microsPerSecond + frac, nil
}

// parseFraction converts the digits after a decimal point to microseconds,
// rounding half to even beyond the sixth digit. carry reports a round-up to a
// whole second.
func parseFraction(fs string) (micros int64, carry bool) {
	for i := 0; i < 6; i++ {
		micros *= 10
		if i < len(fs) {
			micros += int64(fs[i] - '0')
		}
	}
	if len(fs) > 6 {
		rest := fs[6:]
		up := false
		switch {
		case rest[0] > '5':
			up = true
		case rest[0] == '5':
			up = strings.TrimRight(rest[1:], "0") != "" || micros%2 == 1
		}
		if up {
			micros++
		}
	}
	return micros, micros >= microsPerSecond
}

// parseZone reads an optional time zone: Z, UTC, GMT or a numeric offset.
func parseZone(c *parseCursor, dt *parsedDateTime, syntax func() error) error {
	save := c.i
	c.spaces()
	switch c.peek() {
	case '+', '-':
		neg := c.peek() == '-'
		c.i++
		d := c.digits()
		var h, m, sec int
		switch len(d) {
		case 1, 2:
			h, _ = parseAtoi(d)
			if c.peek() == ':' {
				c.i++
				md := c.digits()
				if len(md) != 2 {
					return syntax()
				}
				m, _ = parseAtoi(md)
				if c.peek() == ':' {
					c.i++
					sd := c.digits()
					if len(sd) != 2 {
						return syntax()
					}
					sec, _ = parseAtoi(sd)
				}
			}
		case 4:
			h, _ = parseAtoi(d[:2])
			m, _ = parseAtoi(d[2:])
		case 6:
			h, _ = parseAtoi(d[:2])
			m, _ = parseAtoi(d[2:4])
			sec, _ = parseAtoi(d[4:])
		default:
			return syntax()
		}
		if h > 15 || m > 59 || sec > 59 {
			return sqlerr.New(sqlerr.InvalidDatetimeFormat, "time zone displacement out of range: %s", parseQuote(c.s))
		}
		off := h*3600 + m*60 + sec
		if neg {
			off = -off
		}
		dt.hasZone, dt.zoneSecs = true, off
		return nil
	}
	w := c.letters()
	switch w {
	case "z", "utc", "gmt", "zulu", "ut":
		dt.hasZone = true
		return nil
	case "", "am", "pm", "bc", "ad":
		c.i = save
		return nil
	}
	if off, ok := zoneAbbrevs[w]; ok && c.peek() != '/' {
		dt.hasZone, dt.zoneSecs = true, off // EST, CEST, ... (see timezone.go)
		return nil
	}
	if z := parseZoneName(c, w); z != nil {
		dt.hasZone, dt.zone = true, z
		return nil
	}
	return sqlerr.New(sqlerr.InvalidDatetimeFormat, "time zone %s not recognized", parseQuote(w))
}

func parseIsLeap(y int) bool {
	return y%4 == 0 && (y%100 != 0 || y%400 == 0)
}

// parseDaysIn returns the number of days in month m of astronomical year y.
func parseDaysIn(y, m int) int {
	switch m {
	case 2:
		if parseIsLeap(y) {
			return 29
		}
		return 28
	case 4, 6, 9, 11:
		return 30
	}
	return 31
}

// DaysInMonth returns the number of days in month (1-12) of the astronomical
// year (0 = 1 BC).
func DaysInMonth(year, month int) int { return parseDaysIn(year, month) }

// --- intervals ---

// MaxIntervalMicros is the largest magnitude of IntervalValue.Micros that an
// Arrow MonthDayNanoInterval can hold (its nanoseconds are an int64): about
// 292 years of time part. Interval input and arithmetic beyond it is an
// "interval out of range" error (PostgreSQL itself allows about 1000 times
// more).
const MaxIntervalMicros = math.MaxInt64 / 1000

// parseIntervalAcc accumulates interval fields with PostgreSQL's rules for
// fractional units.
type parseIntervalAcc struct {
	months, days int64
	micros       int64
	bad          bool // an intermediate overflowed
}

func (a *parseIntervalAcc) addMicros(v int64, scale int64) {
	p, ok := parseMulAdd(v, scale, a.micros)
	a.micros, a.bad = p, a.bad || !ok
}

// addFracMicros is PostgreSQL's AdjustFractMicroseconds.
func (a *parseIntervalAcc) addFracMicros(frac float64, scale int64) {
	if frac == 0 {
		return
	}
	frac *= float64(scale)
	usec := int64(frac)
	usec += int64(math.RoundToEven(frac - float64(usec)))
	p, ok := parseMulAdd(usec, 1, a.micros)
	a.micros, a.bad = p, a.bad || !ok
}

// addFracDays is PostgreSQL's AdjustFractDays.
func (a *parseIntervalAcc) addFracDays(frac float64, scale int64) {
	if frac == 0 {
		return
	}
	frac *= float64(scale)
	extra := int64(frac)
	a.days += extra
	a.addFracMicros(frac-float64(extra), microsPerDay)
}

// add applies number val (integer part) + fval (fraction of the same sign) of
// unit. It reports false for a unit that is not an interval unit.
func (a *parseIntervalAcc) add(unit string, val int64, fval float64) bool {
	var ok bool
	switch unit {
	case "microseconds":
		a.addMicros(val, 1)
		a.addFracMicros(fval, 1)
	case "milliseconds":
		a.addMicros(val, 1000)
		a.addFracMicros(fval, 1000)
	case "second":
		a.addMicros(val, microsPerSecond)
		a.addFracMicros(fval, microsPerSecond)
	case "minute":
		a.addMicros(val, microsPerMinute)
		a.addFracMicros(fval, microsPerMinute)
	case "hour":
		a.addMicros(val, microsPerHour)
		a.addFracMicros(fval, microsPerHour)
	case "day":
		a.days, ok = parseMulAdd(val, 1, a.days)
		a.bad = a.bad || !ok
		a.addFracMicros(fval, microsPerDay)
	case "week":
		a.days, ok = parseMulAdd(val, 7, a.days)
		a.bad = a.bad || !ok
		a.addFracDays(fval, 7)
	case "month":
		a.months, ok = parseMulAdd(val, 1, a.months)
		a.bad = a.bad || !ok
		a.addFracDays(fval, 30)
	case "year", "decade", "century", "millennium":
		scale := int64(1)
		switch unit {
		case "decade":
			scale = 10
		case "century":
			scale = 100
		case "millennium":
			scale = 1000
		}
		a.months, ok = parseMulAdd(val, 12*scale, a.months)
		a.bad = a.bad || !ok
		a.months += int64(math.RoundToEven(fval * float64(scale) * 12))
	default:
		return false
	}
	// Keep the day and month accumulators far from int64 overflow; result
	// rejects anything outside int32 anyway.
	const far = 1 << 40
	if a.days > far || a.days < -far || a.months > far || a.months < -far {
		a.bad = true
	}
	return true
}

func (a *parseIntervalAcc) result() (IntervalValue, bool) {
	if a.bad || a.months > math.MaxInt32 || a.months < math.MinInt32 || a.days > math.MaxInt32 || a.days < math.MinInt32 ||
		a.micros > MaxIntervalMicros || a.micros < -MaxIntervalMicros {
		return IntervalValue{}, false
	}
	return IntervalValue{Months: int32(a.months), Days: int32(a.days), Micros: a.micros}, true
}

// parseMulAdd returns v*scale+acc and whether it did not overflow.
func parseMulAdd(v, scale, acc int64) (int64, bool) {
	if v != 0 && (v > math.MaxInt64/scale || v < math.MinInt64/scale) {
		return 0, false
	}
	p := v * scale
	r := p + acc
	if (p > 0 && acc > 0 && r < 0) || (p < 0 && acc < 0 && r >= 0) {
		return 0, false
	}
	return r, true
}

// parseInterval parses interval text; rng is the (lower-case) field range of
// a typed literal such as "day to second", or "".
func parseInterval(s string, rng string) (IntervalValue, error) {
	v := strings.ToLower(parseTrim(s))
	syntax := func() error {
		return sqlerr.New(sqlerr.InvalidDatetimeFormat, "invalid input syntax for type interval: %s", parseQuote(s))
	}
	overflow := func() error {
		return sqlerr.New(sqlerr.DatetimeFieldOverflow, "interval field value out of range: %s", parseQuote(s))
	}
	if v == "" {
		return IntervalValue{}, syntax()
	}
	switch v {
	case "infinity", "+infinity", "-infinity":
		return IntervalValue{}, sqlerr.Unsupported("%s as input for type interval", parseQuote(v))
	}
	var acc parseIntervalAcc
	if v[0] == 'p' || (len(v) > 1 && (v[0] == '-' || v[0] == '+') && v[1] == 'p') {
		if !parseISOInterval(v, &acc) {
			return IntervalValue{}, syntax()
		}
		iv, ok := acc.result()
		if !ok {
			return IntervalValue{}, overflow()
		}
		return iv, nil
	}
	defUnit := "second"
	if i := strings.LastIndex(rng, " "); i >= 0 {
		defUnit = rng[i+1:]
	} else if rng != "" {
		defUnit = rng
	}
	toks, ok := parseIntervalTokens(v)
	if !ok {
		return IntervalValue{}, syntax()
	}
	ago := false
	for k := 0; k < len(toks); k++ {
		tk := toks[k]
		switch tk.kind {
		case 'w':
			switch tk.text {
			case "@":
				if k != 0 {
					return IntervalValue{}, syntax()
				}
				continue
			case "ago":
				if k != len(toks)-1 || ago {
					return IntervalValue{}, syntax()
				}
				ago = true
				continue
			}
			return IntervalValue{}, syntax()
		case ':':
			micros, ok := parseIntervalClock(tk.text, rng == "minute to second")
			if !ok {
				return IntervalValue{}, overflow()
			}
			acc.micros, ok = parseMulAdd(micros, 1, acc.micros)
			if !ok {
				return IntervalValue{}, overflow()
			}
		case '-':
			// SQL-standard year-month: [+-]y-m.
			neg := tk.text[0] == '-'
			body := strings.TrimLeft(tk.text, "+-")
			yStr, mStr, _ := strings.Cut(body, "-")
			y, ok1 := parseAtoi(yStr)
			m, ok2 := parseAtoi(mStr)
			if !ok1 || !ok2 || m > 11 {
				return IntervalValue{}, overflow()
			}
			total := int64(y)*12 + int64(m)
			if neg {
				total = -total
			}
			acc.months += total
		case 'n':
			val, fval, ok := parseIntervalNumber(tk.text)
			if !ok {
				return IntervalValue{}, overflow()
			}
			unit := ""
			if k+1 < len(toks) && toks[k+1].kind == 'w' {
				if u, ok := parseUnits[toks[k+1].text]; ok {
					unit = u
					k++
				}
			}
			if unit == "" {
				switch {
				case k+1 < len(toks) && toks[k+1].kind == ':':
					unit = "day"
				case k+1 == len(toks) || (k+2 == len(toks) && toks[k+1].text == "ago"):
					unit = defUnit
				default:
					return IntervalValue{}, syntax()
				}
			}
			if !acc.add(unit, val, fval) {
				return IntervalValue{}, syntax()
			}
		}
	}
	iv, ok := acc.result()
	if !ok {
		return IntervalValue{}, overflow()
	}
	if ago {
		if iv.Months == math.MinInt32 || iv.Days == math.MinInt32 || iv.Micros == math.MinInt64 {
			return IntervalValue{}, overflow()
		}
		iv = IntervalValue{Months: -iv.Months, Days: -iv.Days, Micros: -iv.Micros}
	}
	return iv, nil
}

type parseToken struct {
	kind byte // 'n' number, ':' clock, '-' year-month, 'w' word
	text string
}

// parseIntervalTokens splits interval text into numbers, clocks, year-month
// pairs and words; a unit may follow its number without a space ("10min").
func parseIntervalTokens(v string) ([]parseToken, bool) {
	var toks []parseToken
	i := 0
	for i < len(v) {
		c := v[i]
		switch {
		case parseIsSpace(c) || c == ',':
			i++
		case c == '@':
			toks = append(toks, parseToken{'w', "@"})
			i++
		case c >= 'a' && c <= 'z':
			j := i
			for i < len(v) && ((v[i] >= 'a' && v[i] <= 'z') || v[i] == '_') {
				i++
			}
			toks = append(toks, parseToken{'w', v[j:i]})
		case c == '+' || c == '-' || c == '.' || (c >= '0' && c <= '9'):
			j := i
			if c == '+' || c == '-' {
				i++
			}
			kind := byte('n')
			for i < len(v) {
				d := v[i]
				switch {
				case d >= '0' && d <= '9', d == '.':
					i++
					continue
				case d == ':':
					kind = ':'
					i++
					continue
				case d == '-' && kind == 'n' && i > j && v[i-1] >= '0' && v[i-1] <= '9':
					kind = '-'
					i++
					continue
				}
				break
			}
			tok := v[j:i]
			if tok == "+" || tok == "-" || tok == "." {
				return nil, false
			}
			toks = append(toks, parseToken{kind, tok})
		default:
			return nil, false
		}
	}
	return toks, len(toks) > 0
}

// parseIntervalNumber splits a signed decimal into its integer part and its
// fraction (with the same sign).
func parseIntervalNumber(t string) (val int64, fval float64, ok bool) {
	neg := false
	if t[0] == '+' || t[0] == '-' {
		neg = t[0] == '-'
		t = t[1:]
	}
	ip, fp, hasPoint := strings.Cut(t, ".")
	if ip == "" && fp == "" || strings.ContainsAny(fp, ".") {
		return 0, 0, false
	}
	for i := 0; i < len(ip); i++ {
		d := int64(ip[i] - '0')
		if val > (math.MaxInt64-d)/10 {
			return 0, 0, false
		}
		val = val*10 + d
	}
	if hasPoint && fp != "" {
		f, err := strconv.ParseFloat("0."+fp, 64)
		if err != nil {
			return 0, 0, false
		}
		fval = f
	}
	if neg {
		val, fval = -val, -fval
	}
	return val, fval, true
}

// parseIntervalClock parses [+-]h:mm[:ss[.frac]] (or mm:ss.frac, or mm:ss when
// minSec) into microseconds.
func parseIntervalClock(t string, minSec bool) (int64, bool) {
	neg := false
	if t[0] == '+' || t[0] == '-' {
		neg = t[0] == '-'
		t = t[1:]
	}
	parts := strings.Split(t, ":")
	if len(parts) > 3 {
		return 0, false
	}
	for _, p := range parts[:len(parts)-1] {
		if p == "" || strings.Contains(p, ".") {
			return 0, false
		}
	}
	lastHasFrac := strings.Contains(parts[len(parts)-1], ".")
	var h, m int64
	var secPart string
	switch {
	case len(parts) == 3:
		hv, ok := parseIntervalNumberInt(parts[0])
		if !ok {
			return 0, false
		}
		h = hv
		mv, ok := parseAtoi(parts[1])
		if !ok {
			return 0, false
		}
		m = int64(mv)
		secPart = parts[2]
	case len(parts) == 2 && (lastHasFrac || minSec):
		mv, ok := parseIntervalNumberInt(parts[0])
		if !ok {
			return 0, false
		}
		m = mv
		secPart = parts[1]
	case len(parts) == 2:
		hv, ok := parseIntervalNumberInt(parts[0])
		if !ok {
			return 0, false
		}
		h = hv
		mv, ok := parseAtoi(parts[1])
		if !ok {
			return 0, false
		}
		m = int64(mv)
	default:
		return 0, false
	}
	var sec, frac int64
	if secPart != "" {
		ss, fs, _ := strings.Cut(secPart, ".")
		sv, ok := parseAtoi(ss)
		if !ok && ss != "" {
			return 0, false
		}
		sec = int64(sv)
		var carry bool
		frac, carry = parseFraction(fs)
		if carry {
			frac -= microsPerSecond
			sec++
		}
	}
	if (len(parts) == 3 || (len(parts) == 2 && !lastHasFrac && !minSec)) && m > 59 {
		return 0, false
	}
	if sec > 60 {
		return 0, false
	}
	total, ok := parseMulAdd(h, microsPerHour, 0)
	if !ok {
		return 0, false
	}
	total, ok = parseMulAdd(m, microsPerMinute, total)
	if !ok {
		return 0, false
	}
	total, ok = parseMulAdd(sec, microsPerSecond, total)
	if !ok {
		return 0, false
	}
	total, ok = parseMulAdd(frac, 1, total)
	if !ok {
		return 0, false
	}
	if neg {
		total = -total
	}
	return total, true
}

func parseIntervalNumberInt(d string) (int64, bool) {
	if d == "" {
		return 0, false
	}
	var v int64
	for i := 0; i < len(d); i++ {
		c := d[i]
		if c < '0' || c > '9' {
			return 0, false
		}
		if v > (math.MaxInt64-int64(c-'0'))/10 {
			return 0, false
		}
		v = v*10 + int64(c-'0')
	}
	return v, true
}

// parseISOInterval parses ISO 8601 "format with designators":
// P[nY][nM][nW][nD][T[nH][nM][nS]], numbers optionally signed and fractional.
func parseISOInterval(v string, acc *parseIntervalAcc) bool {
	neg := false
	if v[0] == '-' || v[0] == '+' {
		neg = v[0] == '-'
		v = v[1:]
	}
	v = v[1:] // 'p'
	if v == "" {
		return false
	}
	timePart := false
	for v != "" {
		if v[0] == 't' {
			if timePart {
				return false
			}
			timePart = true
			v = v[1:]
			if v == "" {
				return false
			}
			continue
		}
		j := 0
		if j < len(v) && (v[j] == '+' || v[j] == '-') {
			j++
		}
		for j < len(v) && ((v[j] >= '0' && v[j] <= '9') || v[j] == '.') {
			j++
		}
		if j == 0 || j >= len(v) {
			return false
		}
		val, fval, ok := parseIntervalNumber(v[:j])
		if !ok {
			return false
		}
		var unit string
		switch d := v[j]; {
		case !timePart && d == 'y':
			unit = "year"
		case !timePart && d == 'm':
			unit = "month"
		case !timePart && d == 'w':
			unit = "week"
		case !timePart && d == 'd':
			unit = "day"
		case timePart && d == 'h':
			unit = "hour"
		case timePart && d == 'm':
			unit = "minute"
		case timePart && d == 's':
			unit = "second"
		default:
			return false
		}
		acc.add(unit, val, fval)
		v = v[j+1:]
	}
	if neg {
		acc.months, acc.days, acc.micros = -acc.months, -acc.days, -acc.micros
	}
	return true
}
