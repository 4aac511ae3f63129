package sql

import (
	pg_query "github.com/pganalyze/pg_query_go/v6"
	"github.com/streamsql/streamsql/catalog"
	"github.com/streamsql/streamsql/sqlerr"
	"github.com/streamsql/streamsql/types"
)

// The session's time zone is bound into expressions: every operation whose
// result depends on the TimeZone setting (casts between timestamptz and
// timestamp, date or text, timestamptz ± an interval with days or months,
// date_trunc, extract, date_part and to_char of a timestamptz) becomes a
// call of a function below that takes the zone's name as a constant last
// argument. A bound expression therefore means the same wherever it runs: a
// materialized view keeps the zone of the session that created it (stored
// in its catalog entry and bound again at a restart), while the stored
// timestamptz values are instants that each reader's session prints in its
// own zone. In UTC the binder leaves the plain operations, which compute in
// UTC, as they are.
//
// The zone arguments of these functions are read as SET TIME ZONE reads a
// name (LoadZone); those of timezone() and date_trunc(text, timestamptz,
// text), which users write, as AT TIME ZONE does (ZoneAt).
const (
	FnTimezone      = "timezone"      // timezone(zone, timestamptz) -> timestamp and timezone(zone, timestamp) -> timestamptz: AT TIME ZONE
	FnTstzToTS      = "$tstz_to_ts"   // $tstz_to_ts(timestamptz, zone): the local time in zone
	FnTSToTstz      = "$ts_to_tstz"   // $ts_to_tstz(timestamp, zone): the instant of a local time in zone
	FnTstzOut       = "$tstz_out"     // $tstz_out(timestamptz, zone): the text of the value in zone
	FnTstzIn        = "$tstz_in"      // $tstz_in(text, zone): text input, a time without offset read in zone
	FnTstzAdd       = "$tstz_add"     // $tstz_add(timestamptz, interval, zone): days and months added in zone's calendar
	FnTstzSub       = "$tstz_sub"     // $tstz_sub(timestamptz, interval, zone)
	FnDateTrunc3    = "$date_trunc"   // $date_trunc(field, timestamptz, zone): date_trunc in zone
	FnExtractTZ     = "$extract"      // $extract(field, timestamptz, zone)
	FnDatePartTZ    = "$date_part"    // $date_part(field, timestamptz, zone)
	FnToCharTZ      = "$to_char_tz"   // $to_char_tz(timestamptz, format, zone)
	FnToTimestampTZ = "$to_timestamp" // $to_timestamp(text, format, zone): a value without TZH/OF read in zone
)

func init() {
	txt, ts, tstz, ivl := types.TextT, types.TimestampT, types.TimestampTZT, types.IntervalT
	def(FnTimezone, ts, txt, tstz)
	def(FnTimezone, tstz, txt, ts)
	def(FnTimezone, ts, ivl, tstz)
	def(FnTimezone, tstz, ivl, ts)
	def(FnDateTrunc, tstz, txt, tstz, txt)
	def(FnTstzToTS, ts, tstz, txt)
	def(FnTSToTstz, tstz, ts, txt)
	def(FnTstzOut, txt, tstz, txt)
	def(FnTstzIn, tstz, txt, txt)
	def(FnTstzAdd, tstz, tstz, ivl, txt)
	def(FnTstzSub, tstz, tstz, ivl, txt)
	def(FnDateTrunc3, tstz, txt, tstz, txt)
	def(FnExtractTZ, types.NumericT, txt, tstz, txt)
	def(FnDatePartTZ, types.Float64T, txt, tstz, txt)
	def(FnToCharTZ, txt, tstz, txt, txt)
	def(FnToTimestampTZ, tstz, txt, txt, txt)
}

// BindInZone is BindIn for a session whose TimeZone is zone (nil: UTC).
func BindInZone(cat *catalog.Catalog, searchPath []string, zone *types.Zone, p *Parsed) (Statement, error) {
	return bind(&binder{cat: cat, path: searchPath, zone: zone}, p)
}

// BindStoredZone is BindStored for a view created in the named zone ("":
// UTC, views stored before zones were recorded).
func BindStoredZone(cat *catalog.Catalog, refs []catalog.Ref, zone string, p *Parsed) (Statement, error) {
	z, err := storedZone(zone)
	if err != nil {
		return nil, err
	}
	return bind(&binder{cat: cat, pins: pins(refs), zone: z}, p)
}

// storedZone loads the zone a view was created in ("": UTC).
func storedZone(zone string) (*types.Zone, error) {
	if zone == "" {
		return types.UTC, nil
	}
	z, err := types.LoadZone(zone)
	if err != nil {
		return nil, sqlerr.New(sqlerr.InvalidParameterValue, "stored time zone %q of a view: %v", zone, err)
	}
	return z, nil
}

// zoned reports whether the binder's zone is other than UTC.
func (b *binder) zoned() bool { return !b.zone.IsUTC() }

func (b *binder) zoneArg() Expr {
	return &Const{Value: types.DText(b.zone.Name()), T: types.TextT}
}

// zoneName is the name of the binder's zone, "" for UTC.
func (b *binder) zoneName() string {
	if !b.zoned() {
		return ""
	}
	return b.zone.Name()
}

// stampZone records the zone a materialized view is bound in.
func (b *binder) stampZone(st Statement) {
	switch st := st.(type) {
	case *CreateMaterializedView:
		st.TimeZone = b.zoneName()
	case *CreateSink:
		st.View.TimeZone = b.zoneName()
	}
}

// parseLiteral parses an untyped literal as type t, a timestamptz without
// offset in the binder's zone.
func (b *binder) parseLiteral(t types.T, s string) (types.Datum, error) {
	return types.ParseTextIn(t, s, b.zone)
}

// zoneCast is the conversion of e to t: a Cast, or where the result depends
// on the time zone, the zone's function.
func (b *binder) zoneCast(e Expr, t types.T) Expr {
	from := e.Type()
	if !b.zoned() || from.Kind == t.Kind {
		return &Cast{Arg: e, T: t}
	}
	call := func(fn string, arg Expr, t types.T) Expr {
		return &Call{Fn: fn, Args: []Expr{arg, b.zoneArg()}, T: t}
	}
	switch {
	case from.Kind == types.TimestampTZ && t.Kind == types.Timestamp:
		return call(FnTstzToTS, e, types.TimestampT)
	case from.Kind == types.TimestampTZ && t.Kind == types.Date:
		return &Cast{Arg: call(FnTstzToTS, e, types.TimestampT), T: t}
	case from.Kind == types.TimestampTZ && t.Kind == types.Text:
		out := call(FnTstzOut, e, types.TextT)
		if t.Width > 0 {
			return &Cast{Arg: out, T: t}
		}
		return out
	case from.Kind == types.Timestamp && t.Kind == types.TimestampTZ:
		return call(FnTSToTstz, e, t)
	case from.Kind == types.Date && t.Kind == types.TimestampTZ:
		return call(FnTSToTstz, &Cast{Arg: e, T: types.TimestampT}, t)
	case from.Kind == types.Text && t.Kind == types.TimestampTZ:
		return call(FnTstzIn, e, t)
	}
	return &Cast{Arg: e, T: t}
}

// zoneCall returns c, or where its result depends on the time zone, the
// call of the zone's function.
func (b *binder) zoneCall(c *Call) Expr {
	if !b.zoned() {
		return c
	}
	a := c.Args
	kind := func(i int) types.Kind { return a[i].Type().Kind }
	with := func(fn string, args ...Expr) Expr {
		return &Call{Fn: fn, Args: append(args, b.zoneArg()), T: c.T}
	}
	switch c.Fn {
	case FnAdd:
		if len(a) == 2 && kind(0) == types.TimestampTZ && kind(1) == types.Interval && calendarInterval(a[1]) {
			return with(FnTstzAdd, a[0], a[1])
		}
		if len(a) == 2 && kind(0) == types.Interval && kind(1) == types.TimestampTZ && calendarInterval(a[0]) {
			return with(FnTstzAdd, a[1], a[0])
		}
	case FnSub:
		if len(a) == 2 && kind(0) == types.TimestampTZ && kind(1) == types.Interval && calendarInterval(a[1]) {
			return with(FnTstzSub, a[0], a[1])
		}
	case FnDateTrunc:
		if len(a) == 2 && kind(1) == types.TimestampTZ {
			return with(FnDateTrunc3, a[0], a[1])
		}
	case FnExtract:
		if len(a) == 2 && kind(1) == types.TimestampTZ {
			return with(FnExtractTZ, a[0], a[1])
		}
	case FnDatePart:
		if len(a) == 2 && kind(1) == types.TimestampTZ {
			return with(FnDatePartTZ, a[0], a[1])
		}
	case FnToChar:
		if len(a) == 2 && kind(0) == types.TimestampTZ {
			return with(FnToCharTZ, a[0], a[1])
		}
	case FnToTimestamp:
		if len(a) == 2 && kind(0) == types.Text {
			return with(FnToTimestampTZ, a[0], a[1])
		}
	}
	return c
}

// calendarInterval reports whether an interval operand may have days or
// months, whose length depends on the zone's calendar (a constant with only
// a time part does not).
func calendarInterval(e Expr) bool {
	if k, ok := e.(*Const); ok && !k.Value.Null {
		return k.Value.Ivl.Months != 0 || k.Value.Ivl.Days != 0
	}
	return true
}

// setTimeZoneValue is the value of SET TIME ZONE INTERVAL '...' [HOUR TO
// MINUTE]: the name of the fixed zone of that offset, as PostgreSQL names it.
func (b *binder) setTimeZoneValue(tc *pg_query.TypeCast) (string, error) {
	lit := tc.Arg.GetAConst()
	t, err := b.bindTypeName(tc.TypeName)
	if err != nil {
		return "", err
	}
	sv, ok := lit.GetVal().(*pg_query.A_Const_Sval)
	if lit == nil || !ok || t.Kind != types.Interval {
		return "", sqlerr.New(sqlerr.SyntaxError, "SET TIME ZONE takes a zone name, a number or an interval")
	}
	field := intervalField(tc.TypeName)
	iv, err := types.ParseIntervalWithField(sv.Sval.Sval, field)
	if err != nil {
		return "", err
	}
	invalid := func(detail string) error {
		return sqlerr.New(sqlerr.InvalidParameterValue, "invalid value for parameter \"TimeZone\": \"INTERVAL '%s'\"", sv.Sval.Sval).
			WithDetail(detail)
	}
	switch {
	case iv.Months != 0:
		return "", invalid("Cannot specify months in time zone interval.")
	case iv.Days != 0:
		return "", invalid("Cannot specify days in time zone interval.")
	}
	z, err := types.FixedZone(int(iv.Micros / 1_000_000))
	if err != nil {
		return "", invalid("UTC timezone offset is out of range.")
	}
	return z.Name(), nil
}

// zoneWraps reports whether arg is zoneCast's conversion of e (the text of a
// timestamptz in the zone), which a cast to varchar(n) then stores.
func zoneWraps(arg, e Expr) bool {
	c, ok := arg.(*Call)
	return ok && c.Fn == FnTstzOut && len(c.Args) == 2 && c.Args[0] == e
}
