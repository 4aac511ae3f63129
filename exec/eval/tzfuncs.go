package eval

import (
	"strings"

	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/streamsql/streamsql/ir"
	"github.com/streamsql/streamsql/sqlerr"
	"github.com/streamsql/streamsql/types"
)

// The time zone functions (see sql/bind_timezone.go): AT TIME ZONE and the
// zone-dependent operations the binder turns into calls with the session's
// zone as an argument.

// zoneMemo is a kctx's last zone lookup: the zone argument is nearly always
// one constant, so a row costs a string comparison.
type zoneMemo struct {
	name string
	at   bool
	zone *types.Zone
}

// zone resolves a zone argument: as AT TIME ZONE reads it when at, else as
// SET TIME ZONE does.
func (k *kctx) zone(name string, at bool) (*types.Zone, *sqlerr.Error) {
	m := &k.tz
	if m.zone != nil && m.at == at && m.name == name {
		return m.zone, nil
	}
	var z *types.Zone
	var err error
	if at {
		z, err = types.ZoneAt(name)
	} else {
		z, err = types.LoadZone(name)
	}
	if err != nil {
		return nil, sqlerr.New(sqlerr.InvalidParameterValue, "time zone \"%s\" not recognized", name)
	}
	// name may alias a kernel's scratch buffer: keep a copy.
	*m = zoneMemo{name: strings.Clone(name), at: at, zone: z}
	return z, nil
}

func tsDatum(v int64) (types.Datum, *sqlerr.Error) {
	if !validTS(v) {
		return types.Null, errTimestampRange
	}
	return types.DInt(v), nil
}

// intervalZone checks an interval used as a zone (AT TIME ZONE INTERVAL
// '-08:00') and returns its offset east of UTC in microseconds.
func intervalZone(iv types.IntervalValue) (int64, *sqlerr.Error) {
	if iv.Months != 0 || iv.Days != 0 {
		return 0, sqlerr.New(sqlerr.InvalidParameterValue, "interval time zone \"%s\" must not include months or days",
			types.AppendInterval(nil, iv))
	}
	return iv.Micros, nil
}

func init() {
	txt, ts, tstz, ivl := types.TextT, types.TimestampT, types.TimestampTZT, types.IntervalT

	// AT TIME ZONE: timezone(zone, value), the zone first.
	reg(ir.FnTimezone, []types.T{txt, tstz}, fixed(func(k *kctx, a []types.Datum) (types.Datum, *sqlerr.Error) {
		z, err := k.zone(a[0].S, true)
		if err != nil {
			return types.Null, err
		}
		return tsDatum(z.ToLocal(a[1].I))
	}))
	reg(ir.FnTimezone, []types.T{txt, ts}, fixed(func(k *kctx, a []types.Datum) (types.Datum, *sqlerr.Error) {
		z, err := k.zone(a[0].S, true)
		if err != nil {
			return types.Null, err
		}
		return tsDatum(z.FromLocal(a[1].I))
	}))
	reg(ir.FnTimezone, []types.T{ivl, tstz}, fixed(func(_ *kctx, a []types.Datum) (types.Datum, *sqlerr.Error) {
		off, err := intervalZone(a[0].Ivl)
		if err != nil {
			return types.Null, err
		}
		return tsDatum(a[1].I + off)
	}))
	reg(ir.FnTimezone, []types.T{ivl, ts}, fixed(func(_ *kctx, a []types.Datum) (types.Datum, *sqlerr.Error) {
		off, err := intervalZone(a[0].Ivl)
		if err != nil {
			return types.Null, err
		}
		return tsDatum(a[1].I - off)
	}))

	// The session zone's conversions: the zone last.
	reg(ir.FnTstzToTS, []types.T{tstz, txt}, fixed(func(k *kctx, a []types.Datum) (types.Datum, *sqlerr.Error) {
		z, err := k.zone(a[1].S, false)
		if err != nil {
			return types.Null, err
		}
		return tsDatum(z.ToLocal(a[0].I))
	}))
	reg(ir.FnTSToTstz, []types.T{ts, txt}, fixed(func(k *kctx, a []types.Datum) (types.Datum, *sqlerr.Error) {
		z, err := k.zone(a[1].S, false)
		if err != nil {
			return types.Null, err
		}
		return tsDatum(z.FromLocal(a[0].I))
	}))
	reg(ir.FnTstzOut, []types.T{tstz, txt}, fixed(func(k *kctx, a []types.Datum) (types.Datum, *sqlerr.Error) {
		z, err := k.zone(a[1].S, false)
		if err != nil {
			return types.Null, err
		}
		return k.textResult(types.AppendTimestampTZ(k.buf[:0], a[0].I, z)), nil
	}))
	reg(ir.FnTstzIn, []types.T{txt, txt}, fixed(func(k *kctx, a []types.Datum) (types.Datum, *sqlerr.Error) {
		z, err := k.zone(a[1].S, false)
		if err != nil {
			return types.Null, err
		}
		v, perr := types.ParseTimestampTZ(a[0].S, z)
		if perr != nil {
			return types.Null, sqlerr.Wrap(perr)
		}
		return types.DInt(v), nil
	}))
	reg(ir.FnTstzAdd, []types.T{tstz, ivl, txt}, fixed(func(k *kctx, a []types.Datum) (types.Datum, *sqlerr.Error) {
		z, err := k.zone(a[2].S, false)
		if err != nil {
			return types.Null, err
		}
		return tstzAddInterval(z, a[0].I, a[1].Ivl)
	}))
	reg(ir.FnTstzSub, []types.T{tstz, ivl, txt}, fixed(func(k *kctx, a []types.Datum) (types.Datum, *sqlerr.Error) {
		z, err := k.zone(a[2].S, false)
		if err != nil {
			return types.Null, err
		}
		iv, ok := negInterval(a[1].Ivl)
		if !ok {
			return types.Null, errIntervalRange
		}
		return tstzAddInterval(z, a[0].I, iv)
	}))
	for _, at := range []bool{false, true} {
		fn := ir.FnDateTrunc3
		if at {
			fn = ir.FnDateTrunc // date_trunc(field, timestamptz, zone), as users write it
		}
		reg(fn, []types.T{txt, tstz, txt}, fixed(func(k *kctx, a []types.Datum) (types.Datum, *sqlerr.Error) {
			z, err := k.zone(a[2].S, at)
			if err != nil {
				return types.Null, err
			}
			return truncTimestampTZ(z, a[0].S, a[1].I)
		}))
	}
	reg(ir.FnExtractTZ, []types.T{txt, tstz, txt}, fixed(func(k *kctx, a []types.Datum) (types.Datum, *sqlerr.Error) {
		z, err := k.zone(a[2].S, false)
		if err != nil {
			return types.Null, err
		}
		n, err := extractTZ(z, a[0].S, a[1].I, true)
		if err != nil {
			return types.Null, err
		}
		return types.DNumeric(n), nil
	}))
	reg(ir.FnDatePartTZ, []types.T{txt, tstz, txt}, fixed(func(k *kctx, a []types.Datum) (types.Datum, *sqlerr.Error) {
		z, err := k.zone(a[2].S, false)
		if err != nil {
			return types.Null, err
		}
		n, err := extractTZ(z, a[0].S, a[1].I, false)
		if err != nil {
			return types.Null, err
		}
		m, scale := types.UnpackNumeric(n)
		return types.DFloat(numToFloat(m, scale)), nil
	}))
	reg(ir.FnToTimestampTZ, []types.T{txt, txt, txt}, fixed(func(k *kctx, a []types.Datum) (types.Datum, *sqlerr.Error) {
		z, err := k.zone(a[2].S, false)
		if err != nil {
			return types.Null, err
		}
		p, err := fromChar(a[0].S, k.dchFormat(a[1].S))
		if err != nil {
			return types.Null, err
		}
		us, err := p.micros(a[0].S)
		if err != nil || p.tzSign != 0 {
			return types.DInt(us), err
		}
		return tsDatum(z.FromLocal(us))
	}))
	reg(ir.FnToCharTZ, []types.T{tstz, txt, txt}, fixed(func(k *kctx, a []types.Datum) (types.Datum, *sqlerr.Error) {
		z, err := k.zone(a[2].S, false)
		if err != nil {
			return types.Null, err
		}
		off := z.OffsetAt(a[0].I)
		tm := timestampTM(a[0].I+int64(off)*microsPerSecond, true)
		tm.zone, tm.gmtoff = z.AbbrevAt(a[0].I), off
		buf, err := dchToChar(k.buf[:0], k.dchFormat(a[1].S), &tm)
		if err != nil {
			return types.Null, err
		}
		return formatResult(k, a[1].S, buf), nil
	}))
}

// TimestampTZAddInterval is timestamptz u + iv in zone z; ok is false when
// the result is out of range.
func TimestampTZAddInterval(z *types.Zone, u int64, iv types.IntervalValue) (int64, bool) {
	d, err := tstzAddInterval(z, u, iv)
	return d.I, err == nil
}

// tstzAddInterval is timestamptz + interval in zone z, as PostgreSQL's
// timestamptz_pl_interval: the months, then the days, are added to the local
// date (so a day across a daylight saving transition is 23 or 25 hours), the
// time part as elapsed time.
func tstzAddInterval(z *types.Zone, u int64, iv types.IntervalValue) (types.Datum, *sqlerr.Error) {
	for _, part := range [2]types.IntervalValue{{Months: iv.Months}, {Days: iv.Days}} {
		if part.Months == 0 && part.Days == 0 {
			continue
		}
		local, ok := tsAddInterval(z.ToLocal(u), part)
		if !ok {
			return types.Null, errTimestampRange
		}
		u = z.FromLocal(local)
	}
	return tsAddIntervalDatum(u, types.IntervalValue{Micros: iv.Micros})
}

// truncTimestampTZ is date_trunc(field, value) in zone z, as PostgreSQL's
// timestamptz_trunc_zone: the local time is truncated; for units of a day
// or more the result is that local midnight's instant, for smaller units
// the truncated time in the value's own offset.
func truncTimestampTZ(z *types.Zone, field string, u int64) (types.Datum, *sqlerr.Error) {
	unit, err := truncUnit(field, types.TimestampTZT)
	if err != nil {
		return types.Null, err
	}
	off := int64(z.OffsetAt(u)) * microsPerSecond
	local, ok := truncTimestamp(unit, u+off)
	if !ok {
		return types.Null, errTimestampRange
	}
	switch unit {
	case "microseconds", "milliseconds", "second", "minute", "hour":
		return tsDatum(local - off)
	}
	return tsDatum(z.FromLocal(local))
}

// extractTZ is extract(field from value) (date_part when !numericResult)
// for a timestamptz in zone z: the fields of its local time, its epoch, and
// the zone's offset.
func extractTZ(z *types.Zone, field string, u int64, numericResult bool) (decimal128.Num, *sqlerr.Error) {
	unit, _ := types.CanonicalTimeUnit(field)
	off := z.OffsetAt(u)
	switch unit {
	case "epoch":
		return extract(field, types.TimestampTZT, types.DInt(u), numericResult)
	case "timezone":
		return numInt(int64(off)), nil
	case "timezone_hour":
		return numInt(int64(off / 3600)), nil
	case "timezone_minute":
		return numInt(int64(off / 60 % 60)), nil
	}
	return extract(field, types.TimestampTZT, types.DInt(u+int64(off)*microsPerSecond), numericResult)
}
