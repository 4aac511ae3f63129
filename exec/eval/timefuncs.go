package eval

import (
	"math"
	"strings"

	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/streamsql/streamsql/ir"
	"github.com/streamsql/streamsql/sqlerr"
	"github.com/streamsql/streamsql/types"
)

const (
	microsPerSecond = 1_000_000
	microsPerMinute = 60 * microsPerSecond
	microsPerHour   = 60 * microsPerMinute
	microsPerDay    = 24 * microsPerHour
	// unixJulian is the Julian day number of 1970-01-01.
	unixJulian = 2440588
)

// The representable ranges: dates from 4714-11-24 BC to 5874897 AD as in
// PostgreSQL; timestamps from 4714-11-24 BC to the last whole day that fits
// int64 microseconds since 1970 (in 294247 AD; PostgreSQL stops at 294276).
var (
	minDay      = types.DaysFromCivil(-4713, 11, 24)
	dateEndDay  = types.DaysFromCivil(5874898, 1, 1)
	tsMinMicros = minDay * microsPerDay
	tsEndMicros = int64(math.MaxInt64/microsPerDay) * microsPerDay
)

func validDate(d int64) bool    { return d >= minDay && d < dateEndDay }
func validTS(micros int64) bool { return micros >= tsMinMicros && micros < tsEndMicros }

func init() {
	i4, f8, txt := types.Int32T, types.Float64T, types.TextT
	date, ts, tstz, ivl := types.DateT, types.TimestampT, types.TimestampTZT, types.IntervalT

	reg(ir.FnAdd, []types.T{date, i4}, fixed(func(_ *kctx, a []types.Datum) (types.Datum, *sqlerr.Error) {
		return dateAddDays(a[0].I, a[1].I)
	}))
	reg(ir.FnAdd, []types.T{i4, date}, fixed(func(_ *kctx, a []types.Datum) (types.Datum, *sqlerr.Error) {
		return dateAddDays(a[1].I, a[0].I)
	}))
	reg(ir.FnSub, []types.T{date, i4}, fixed(func(_ *kctx, a []types.Datum) (types.Datum, *sqlerr.Error) {
		return dateAddDays(a[0].I, -a[1].I)
	}))
	reg(ir.FnSub, []types.T{date, date}, fixed(func(_ *kctx, a []types.Datum) (types.Datum, *sqlerr.Error) {
		return types.DInt(a[0].I - a[1].I), nil
	}))
	for _, t := range []types.T{ts, tstz} {
		reg(ir.FnAdd, []types.T{t, ivl}, fixed(func(_ *kctx, a []types.Datum) (types.Datum, *sqlerr.Error) {
			return tsAddIntervalDatum(a[0].I, a[1].Ivl)
		}))
		reg(ir.FnAdd, []types.T{ivl, t}, fixed(func(_ *kctx, a []types.Datum) (types.Datum, *sqlerr.Error) {
			return tsAddIntervalDatum(a[1].I, a[0].Ivl)
		}))
		reg(ir.FnSub, []types.T{t, ivl}, fixed(func(_ *kctx, a []types.Datum) (types.Datum, *sqlerr.Error) {
			iv, ok := negInterval(a[1].Ivl)
			if !ok {
				return types.Null, errIntervalRange
			}
			return tsAddIntervalDatum(a[0].I, iv)
		}))
		reg(ir.FnSub, []types.T{t, t}, fixed(func(_ *kctx, a []types.Datum) (types.Datum, *sqlerr.Error) {
			iv, ok := tsDiff(a[0].I, a[1].I)
			if !ok {
				return types.Null, errIntervalRange
			}
			return types.DInterval(iv), nil
		}))
	}
	reg(ir.FnAdd, []types.T{date, ivl}, fixed(func(_ *kctx, a []types.Datum) (types.Datum, *sqlerr.Error) {
		return tsAddIntervalDatum(a[0].I*microsPerDay, a[1].Ivl)
	}))
	reg(ir.FnAdd, []types.T{ivl, date}, fixed(func(_ *kctx, a []types.Datum) (types.Datum, *sqlerr.Error) {
		return tsAddIntervalDatum(a[1].I*microsPerDay, a[0].Ivl)
	}))
	reg(ir.FnSub, []types.T{date, ivl}, fixed(func(_ *kctx, a []types.Datum) (types.Datum, *sqlerr.Error) {
		iv, ok := negInterval(a[1].Ivl)
		if !ok {
			return types.Null, errIntervalRange
		}
		return tsAddIntervalDatum(a[0].I*microsPerDay, iv)
	}))
	reg(ir.FnAdd, []types.T{ivl, ivl}, fixed(func(_ *kctx, a []types.Datum) (types.Datum, *sqlerr.Error) {
		iv, ok := addInterval(a[0].Ivl, a[1].Ivl)
		if !ok {
			return types.Null, errIntervalRange
		}
		return types.DInterval(iv), nil
	}))
	reg(ir.FnSub, []types.T{ivl, ivl}, fixed(func(_ *kctx, a []types.Datum) (types.Datum, *sqlerr.Error) {
		n, ok := negInterval(a[1].Ivl)
		if ok {
			var r types.IntervalValue
			if r, ok = addInterval(a[0].Ivl, n); ok {
				return types.DInterval(r), nil
			}
		}
		return types.Null, errIntervalRange
	}))
	reg(ir.FnMul, []types.T{ivl, f8}, fixed(func(_ *kctx, a []types.Datum) (types.Datum, *sqlerr.Error) {
		return mulInterval(a[0].Ivl, a[1].F)
	}))
	reg(ir.FnMul, []types.T{f8, ivl}, fixed(func(_ *kctx, a []types.Datum) (types.Datum, *sqlerr.Error) {
		return mulInterval(a[1].Ivl, a[0].F)
	}))
	reg(ir.FnDiv, []types.T{ivl, f8}, fixed(func(_ *kctx, a []types.Datum) (types.Datum, *sqlerr.Error) {
		return divInterval(a[0].Ivl, a[1].F)
	}))
	reg(ir.FnNeg, []types.T{ivl}, func(args []types.T, _ types.T) scalarFn { return negKernel(args[0]) })

	for _, t := range []types.T{date, ts, tstz, ivl} {
		reg(ir.FnExtract, []types.T{txt, t}, func(args []types.T, _ types.T) scalarFn {
			src := args[1]
			return func(_ *kctx, a []types.Datum) (types.Datum, *sqlerr.Error) {
				n, err := extract(a[0].S, src, a[1], true)
				if err != nil {
					return types.Null, err
				}
				return types.DNumeric(n), nil
			}
		})
		reg(ir.FnDatePart, []types.T{txt, t}, func(args []types.T, _ types.T) scalarFn {
			src := args[1]
			return func(_ *kctx, a []types.Datum) (types.Datum, *sqlerr.Error) {
				if src.Kind == types.Interval {
					if unit, _ := types.CanonicalTimeUnit(a[0].S); unit == "epoch" {
						return types.DFloat(intervalEpochFloat(a[1].Ivl)), nil
					}
				}
				n, err := extract(a[0].S, src, a[1], false)
				if err != nil {
					return types.Null, err
				}
				m, scale := types.UnpackNumeric(n)
				return types.DFloat(numToFloat(m, scale)), nil
			}
		})
	}
	for _, t := range []types.T{ts, tstz} {
		reg(ir.FnDateTrunc, []types.T{txt, t}, func(args []types.T, _ types.T) scalarFn {
			src := args[1]
			return func(_ *kctx, a []types.Datum) (types.Datum, *sqlerr.Error) {
				unit, err := truncUnit(a[0].S, src)
				if err != nil {
					return types.Null, err
				}
				v, ok := truncTimestamp(unit, a[1].I)
				if !ok {
					return types.Null, errTimestampRange
				}
				return types.DInt(v), nil
			}
		})
	}
	reg(ir.FnDateTrunc, []types.T{txt, ivl}, fixed(func(_ *kctx, a []types.Datum) (types.Datum, *sqlerr.Error) {
		iv, err := truncInterval(a[0].S, a[1].Ivl)
		if err != nil {
			return types.Null, err
		}
		return types.DInterval(iv), nil
	}))
	reg(ir.FnNow, nil, fixed(func(k *kctx, _ []types.Datum) (types.Datum, *sqlerr.Error) {
		return types.DInt(k.now), nil
	}))
	reg(ir.FnToTimestamp, []types.T{f8}, fixed(func(_ *kctx, a []types.Datum) (types.Datum, *sqlerr.Error) {
		return toTimestamp(a[0].F)
	}))
}

// fixed wraps a kernel that does not depend on the call's argument types.
func fixed(fn scalarFn) kernelMaker {
	return func([]types.T, types.T) scalarFn { return fn }
}

func dateAddDays(d, n int64) (types.Datum, *sqlerr.Error) {
	r := d + n
	if !validDate(r) {
		return types.Null, errDateRange
	}
	return types.DInt(r), nil
}

func floorDiv(a, b int64) int64 { return types.FloorDiv(a, b) }

// tsAddInterval adds iv to the timestamp ts as PostgreSQL does: months first
// (clamping the day to the end of the month), then days, then microseconds.
func tsAddInterval(ts int64, iv types.IntervalValue) (int64, bool) {
	if iv.Months != 0 || iv.Days != 0 {
		days := floorDiv(ts, microsPerDay)
		tod := ts - days*microsPerDay
		if iv.Months != 0 {
			y, m, d := types.CivilFromDays(days)
			mm := int64(y)*12 + int64(m-1) + int64(iv.Months)
			ny := floorDiv(mm, 12)
			nm := int(mm-ny*12) + 1
			if ny < -5000 || ny > 300000 {
				return 0, false
			}
			if dim := types.DaysInMonth(int(ny), nm); d > dim {
				d = dim
			}
			days = types.DaysFromCivil(int(ny), nm, d)
		}
		days += int64(iv.Days)
		if days < minDay-1 || days > tsEndMicros/microsPerDay+1 {
			return 0, false
		}
		ts = days*microsPerDay + tod
	}
	r := ts + iv.Micros
	if (iv.Micros > 0 && r < ts) || (iv.Micros < 0 && r > ts) || !validTS(r) {
		return 0, false
	}
	return r, true
}

func tsAddIntervalDatum(ts int64, iv types.IntervalValue) (types.Datum, *sqlerr.Error) {
	r, ok := tsAddInterval(ts, iv)
	if !ok {
		return types.Null, errTimestampRange
	}
	return types.DInt(r), nil
}

// tsDiff is timestamp - timestamp: whole days and the remaining time, both
// truncated toward zero (PostgreSQL's interval_justify_hours).
func tsDiff(a, b int64) (types.IntervalValue, bool) {
	d := a - b
	if (b < 0 && d < a) || (b > 0 && d > a) {
		return types.IntervalValue{}, false
	}
	days := d / microsPerDay
	// The time part is below a day: always storable.
	return types.IntervalValue{Days: int32(days), Micros: d - days*microsPerDay}, true
}

// validIvlMicros reports whether an interval's time part can be stored.
func validIvlMicros(us int64) bool {
	return us >= -types.MaxIntervalMicros && us <= types.MaxIntervalMicros
}

func negInterval(iv types.IntervalValue) (types.IntervalValue, bool) {
	if iv.Months == math.MinInt32 || iv.Days == math.MinInt32 || iv.Micros == math.MinInt64 {
		return iv, false
	}
	return types.IntervalValue{Months: -iv.Months, Days: -iv.Days, Micros: -iv.Micros}, true
}

func addInterval(a, b types.IntervalValue) (types.IntervalValue, bool) {
	m := int64(a.Months) + int64(b.Months)
	d := int64(a.Days) + int64(b.Days)
	us := a.Micros + b.Micros
	if m != int64(int32(m)) || d != int64(int32(d)) || (a.Micros^us)&(b.Micros^us) < 0 || !validIvlMicros(us) {
		return a, false
	}
	return types.IntervalValue{Months: int32(m), Days: int32(d), Micros: us}, true
}

func fitsInt32(f float64) bool { return !math.IsNaN(f) && f >= math.MinInt32 && f < math.MaxInt32+1.0 }
func fitsInt64(f float64) bool {
	return !math.IsNaN(f) && f >= math.MinInt64 && f < -float64(math.MinInt64)
}

// tsRound is PostgreSQL's TSROUND: round to microsecond precision.
func tsRound(f float64) float64 { return math.RoundToEven(f*1e6) / 1e6 }

// mulInterval is PostgreSQL's interval_mul: fractional months cascade into
// days and fractional days into time.
func mulInterval(span types.IntervalValue, factor float64) (types.Datum, *sqlerr.Error) {
	resM := float64(span.Months) * factor
	if !fitsInt32(resM) {
		return types.Null, errIntervalRange
	}
	resD := float64(span.Days) * factor
	if !fitsInt32(resD) {
		return types.Null, errIntervalRange
	}
	r := types.IntervalValue{Months: int32(resM), Days: int32(resD)}
	monthRemDays := tsRound((float64(span.Months)*factor - float64(r.Months)) * 30)
	secRem := tsRound((float64(span.Days)*factor - float64(r.Days) + monthRemDays - math.Trunc(monthRemDays)) * 86400)
	return cascadeInterval(r, monthRemDays, secRem, float64(span.Micros)*factor)
}

// divInterval is PostgreSQL's interval_div.
func divInterval(span types.IntervalValue, factor float64) (types.Datum, *sqlerr.Error) {
	if factor == 0 {
		return types.Null, errDivByZero
	}
	resM := float64(span.Months) / factor
	resD := float64(span.Days) / factor
	if !fitsInt32(resM) || !fitsInt32(resD) {
		return types.Null, errIntervalRange
	}
	r := types.IntervalValue{Months: int32(resM), Days: int32(resD)}
	monthRemDays := tsRound((float64(span.Months)/factor - float64(r.Months)) * 30)
	secRem := tsRound((float64(span.Days)/factor - float64(r.Days) + monthRemDays - math.Trunc(monthRemDays)) * 86400)
	return cascadeInterval(r, monthRemDays, secRem, float64(span.Micros)/factor)
}

func cascadeInterval(r types.IntervalValue, monthRemDays, secRem, scaledTime float64) (types.Datum, *sqlerr.Error) {
	if math.Abs(secRem) >= 86400 {
		extra := math.Trunc(secRem / 86400)
		d := int64(r.Days) + int64(extra)
		if d != int64(int32(d)) {
			return types.Null, errIntervalRange
		}
		r.Days = int32(d)
		secRem -= extra * 86400
	}
	d := int64(r.Days) + int64(monthRemDays)
	if d != int64(int32(d)) {
		return types.Null, errIntervalRange
	}
	r.Days = int32(d)
	t := math.RoundToEven(scaledTime + secRem*1e6)
	if !fitsInt64(t) || !validIvlMicros(int64(t)) {
		return types.Null, errIntervalRange
	}
	r.Micros = int64(t)
	return types.DInterval(r), nil
}

func toTimestamp(secs float64) (types.Datum, *sqlerr.Error) {
	if math.IsNaN(secs) {
		return types.Null, sqlerr.New(sqlerr.DatetimeFieldOverflow, "timestamp cannot be NaN")
	}
	if secs < float64(tsMinMicros/microsPerSecond) || secs >= float64(tsEndMicros/microsPerSecond) {
		return types.Null, sqlerr.New(sqlerr.DatetimeFieldOverflow, "timestamp out of range: \"%g\"", secs)
	}
	// PostgreSQL rounds relative to its 2000-01-01 epoch.
	const pgEpochSecs = 946684800
	v := int64(math.RoundToEven((secs-pgEpochSecs)*1e6)) + pgEpochSecs*microsPerSecond
	if !validTS(v) {
		return types.Null, errTimestampRange
	}
	return types.DInt(v), nil
}

// civil is a broken-down timestamp.
type civil struct {
	days          int64 // days since 1970-01-01
	year          int   // astronomical (0 = 1 BC)
	month, day    int
	tod           int64 // microseconds since midnight
	hour, min     int64
	secMicros     int64 // seconds within the minute, in microseconds
	isoDOW        int   // 1 = Monday .. 7 = Sunday
	dayOfYear     int
	isoYear, week int
}

func breakDown(micros int64) civil {
	var c civil
	c.days = floorDiv(micros, microsPerDay)
	c.tod = micros - c.days*microsPerDay
	c.year, c.month, c.day = types.CivilFromDays(c.days)
	c.hour = c.tod / microsPerHour
	c.min = c.tod / microsPerMinute % 60
	c.secMicros = c.tod % microsPerMinute
	dow := int(((c.days+4)%7 + 7) % 7) // 0 = Sunday; 1970-01-01 was a Thursday
	c.isoDOW = dow
	if dow == 0 {
		c.isoDOW = 7
	}
	c.dayOfYear = int(c.days-types.DaysFromCivil(c.year, 1, 1)) + 1
	// The ISO week belongs to the year of its Thursday.
	thu := c.days - int64(c.isoDOW) + 4
	ty, _, _ := types.CivilFromDays(thu)
	c.isoYear = ty
	c.week = int((thu-types.DaysFromCivil(ty, 1, 1))/7) + 1
	return c
}

// bcYear converts an astronomical year to PostgreSQL's signed year (no year 0).
func bcYear(y int) int64 {
	if y > 0 {
		return int64(y)
	}
	return int64(y) - 1
}

func decadeOf(y int) int64 {
	if y >= 0 {
		return int64(y / 10)
	}
	return -int64((8 - (y - 1)) / 10)
}

func centuryOf(y int) int64 {
	if y > 0 {
		return int64((y + 99) / 100)
	}
	return -int64((99 - (y - 1)) / 100)
}

func millenniumOf(y int) int64 {
	if y > 0 {
		return int64((y + 999) / 1000)
	}
	return -int64((999 - (y - 1)) / 1000)
}

// Numeric results of extract are unconstrained numerics.
func numInt(v int64) decimal128.Num { return dynInt(v) }

// numMicros converts a count of microseconds to a numeric number of seconds
// (or of milliseconds when unitMicros is 1000).
// with the display scale of that unit's fraction (6 or 3), as PostgreSQL's
// int64_div_fast_to_numeric gives.
func numMicros(v int64, unitMicros int64) decimal128.Num {
	scale := int32(6)
	if unitMicros == 1000 {
		scale = 3
	}
	return types.PackNumeric(decimal128.FromI64(v), scale)
}

func unitErr(code, verb, unit string, t types.T) *sqlerr.Error {
	return sqlerr.New(code, "unit \"%s\" %s for type %s", unit, verb, t)
}

// extract computes extract(field from d) as an unconstrained numeric with
// PostgreSQL's display scale. For date_part (numericResult false) a date is
// treated as a timestamp at midnight, as PostgreSQL's implicit cast does.
func extract(field string, t types.T, d types.Datum, numericResult bool) (decimal128.Num, *sqlerr.Error) {
	unit, ok := types.CanonicalTimeUnit(field)
	lower := strings.ToLower(field)
	src := t
	if !numericResult && t.Kind == types.Date {
		src = types.TimestampT
	}
	if !ok {
		return decimal128.Num{}, unitErr(sqlerr.InvalidParameterValue, "not recognized", lower, src)
	}
	switch t.Kind {
	case types.Interval:
		return extractInterval(unit, lower, d.Ivl)
	case types.Date:
		if numericResult {
			switch unit {
			case "microseconds", "milliseconds", "second", "minute", "hour", "timezone", "timezone_hour", "timezone_minute":
				return decimal128.Num{}, unitErr(sqlerr.FeatureNotSupported, "not supported", lower, t)
			case "epoch":
				return numInt(d.I * 86400), nil
			case "julian":
				return numInt(d.I + unixJulian), nil
			}
		}
		return extractTimestamp(unit, lower, src, d.I*microsPerDay)
	}
	return extractTimestamp(unit, lower, src, d.I)
}

func extractTimestamp(unit, lower string, t types.T, micros int64) (decimal128.Num, *sqlerr.Error) {
	c := breakDown(micros)
	switch unit {
	case "microseconds":
		return numInt(c.secMicros), nil
	case "milliseconds":
		return numMicros(c.secMicros, 1000), nil
	case "second":
		return numMicros(c.secMicros, microsPerSecond), nil
	case "minute":
		return numInt(c.min), nil
	case "hour":
		return numInt(c.hour), nil
	case "day":
		return numInt(int64(c.day)), nil
	case "month":
		return numInt(int64(c.month)), nil
	case "quarter":
		return numInt(int64((c.month-1)/3 + 1)), nil
	case "week":
		return numInt(int64(c.week)), nil
	case "year":
		return numInt(bcYear(c.year)), nil
	case "isoyear":
		return numInt(bcYear(c.isoYear)), nil
	case "decade":
		return numInt(decadeOf(c.year)), nil
	case "century":
		return numInt(centuryOf(c.year)), nil
	case "millennium":
		return numInt(millenniumOf(c.year)), nil
	case "dow":
		return numInt(int64(c.isoDOW % 7)), nil
	case "isodow":
		return numInt(int64(c.isoDOW)), nil
	case "doy":
		return numInt(int64(c.dayOfYear)), nil
	case "epoch":
		return numMicros(micros, microsPerSecond), nil
	case "julian":
		// Julian day plus the fraction of the day.
		q, _ := dynDiv(numInt(c.tod), numInt(microsPerDay))
		jd, _ := dynAdd(numInt(c.days+unixJulian), q)
		return jd, nil
	case "timezone", "timezone_hour", "timezone_minute":
		if t.Kind == types.TimestampTZ {
			return numInt(0), nil
		}
	}
	return decimal128.Num{}, unitErr(sqlerr.FeatureNotSupported, "not supported", lower, t)
}

func extractInterval(unit, lower string, iv types.IntervalValue) (decimal128.Num, *sqlerr.Error) {
	year := int64(iv.Months / 12)
	switch unit {
	case "microseconds":
		return numInt(iv.Micros % microsPerMinute), nil
	case "milliseconds":
		return numMicros(iv.Micros%microsPerMinute, 1000), nil
	case "second":
		return numMicros(iv.Micros%microsPerMinute, microsPerSecond), nil
	case "minute":
		return numInt(iv.Micros / microsPerMinute % 60), nil
	case "hour":
		return numInt(iv.Micros / microsPerHour), nil
	case "day":
		return numInt(int64(iv.Days)), nil
	case "month":
		return numInt(int64(iv.Months % 12)), nil
	case "quarter":
		return numInt(int64(iv.Months%12)/3 + 1), nil
	case "year":
		return numInt(year), nil
	case "decade":
		return numInt(year / 10), nil
	case "century":
		return numInt(year / 100), nil
	case "millennium":
		return numInt(year / 1000), nil
	case "epoch":
		secs := 31557600*int64(iv.Months/12) + 2592000*int64(iv.Months%12) + 86400*int64(iv.Days)
		r, _ := dynAdd(numInt(secs), numMicros(iv.Micros, microsPerSecond))
		return r, nil
	}
	return decimal128.Num{}, unitErr(sqlerr.FeatureNotSupported, "not supported", lower, types.IntervalT)
}

// intervalEpochFloat is date_part('epoch', interval), summed in floating
// point in PostgreSQL's order (which can differ from extract's exact value
// in the last bits).
func intervalEpochFloat(iv types.IntervalValue) float64 {
	r := float64(iv.Micros) / 1e6
	r += 365.25 * 86400 * float64(iv.Months/12)
	r += 30.0 * 86400 * float64(iv.Months%12)
	r += 86400.0 * float64(iv.Days)
	return r
}

// truncUnit validates a date_trunc unit for a timestamp type.
func truncUnit(field string, t types.T) (string, *sqlerr.Error) {
	unit, ok := types.CanonicalTimeUnit(field)
	lower := strings.ToLower(field)
	if !ok {
		return "", unitErr(sqlerr.InvalidParameterValue, "not recognized", lower, t)
	}
	switch unit {
	case "microseconds", "milliseconds", "second", "minute", "hour", "day", "week", "month",
		"quarter", "year", "decade", "century", "millennium":
		return unit, nil
	}
	return "", unitErr(sqlerr.FeatureNotSupported, "not supported", lower, t)
}

// truncTimestamp is date_trunc(unit, ts) for a unit accepted by truncUnit.
func truncTimestamp(unit string, micros int64) (int64, bool) {
	switch unit {
	case "microseconds":
		return micros, true
	case "milliseconds":
		return floorDiv(micros, 1000) * 1000, true
	case "second":
		return floorDiv(micros, microsPerSecond) * microsPerSecond, true
	case "minute":
		return floorDiv(micros, microsPerMinute) * microsPerMinute, true
	case "hour":
		return floorDiv(micros, microsPerHour) * microsPerHour, true
	case "day":
		return floorDiv(micros, microsPerDay) * microsPerDay, true
	}
	c := breakDown(micros)
	y, m := c.year, c.month
	switch unit {
	case "week":
		r := (c.days - int64(c.isoDOW) + 1) * microsPerDay
		return r, validTS(r)
	case "month":
	case "quarter":
		m = (m-1)/3*3 + 1
	case "year":
		m = 1
	case "decade":
		m = 1
		if y > 0 {
			y = y / 10 * 10
		} else {
			y = -((8 - (y - 1)) / 10) * 10
		}
	case "century":
		m = 1
		if y > 0 {
			y = (y+99)/100*100 - 99
		} else {
			y = -((99-(y-1))/100)*100 + 1
		}
	case "millennium":
		m = 1
		if y > 0 {
			y = (y+999)/1000*1000 - 999
		} else {
			y = -((999-(y-1))/1000)*1000 + 1
		}
	}
	r := types.DaysFromCivil(y, m, 1) * microsPerDay
	return r, validTS(r)
}

// truncInterval is date_trunc(field, interval), PostgreSQL's interval_trunc.
func truncInterval(field string, iv types.IntervalValue) (types.IntervalValue, *sqlerr.Error) {
	unit, ok := types.CanonicalTimeUnit(field)
	lower := strings.ToLower(field)
	if !ok {
		return iv, unitErr(sqlerr.InvalidParameterValue, "not recognized", lower, types.IntervalT)
	}
	year, mon := iv.Months/12, iv.Months%12
	day := iv.Days
	hour := iv.Micros / microsPerHour
	min := iv.Micros / microsPerMinute % 60
	sec := iv.Micros / microsPerSecond % 60
	fsec := iv.Micros % microsPerSecond
	switch unit {
	case "millennium", "century", "decade", "year", "quarter", "month", "day", "hour", "minute", "second":
		switch unit {
		case "millennium":
			year = year / 1000 * 1000
		case "century":
			year = year / 100 * 100
		case "decade":
			year = year / 10 * 10
		}
		switch unit {
		case "millennium", "century", "decade", "year":
			mon = 0
		case "quarter":
			mon = 3 * (mon / 3)
		}
		switch unit {
		case "millennium", "century", "decade", "year", "quarter", "month":
			day = 0
		}
		switch unit {
		case "millennium", "century", "decade", "year", "quarter", "month", "day":
			hour = 0
		}
		switch unit {
		case "hour", "millennium", "century", "decade", "year", "quarter", "month", "day":
			min = 0
		}
		if unit != "second" {
			sec = 0
		}
		fsec = 0
	case "milliseconds":
		fsec = fsec / 1000 * 1000
	case "microseconds":
	default:
		e := unitErr(sqlerr.FeatureNotSupported, "not supported", lower, types.IntervalT)
		if unit == "week" {
			e.Detail = "Months usually have fractional weeks."
		}
		return iv, e
	}
	return types.IntervalValue{
		Months: year*12 + mon,
		Days:   day,
		Micros: hour*microsPerHour + min*microsPerMinute + sec*microsPerSecond + fsec,
	}, nil
}
