package sql

import (
	pg_query "github.com/pganalyze/pg_query_go/v6"
	"github.com/streamsql/streamsql/catalog"
	"github.com/streamsql/streamsql/ir"
	"github.com/streamsql/streamsql/sqlerr"
	"github.com/streamsql/streamsql/types"
)

// BindInZone is BindIn for a session whose TimeZone is zone (nil: UTC).
func BindInZone(cat *catalog.Catalog, searchPath []string, zone *types.Zone, p *Parsed) (ir.Statement, error) {
	return bind(&binder{cat: cat, path: searchPath, zone: zone}, p)
}

// BindStoredZone is BindStored for a view created in the named zone ("":
// UTC, views stored before zones were recorded).
func BindStoredZone(cat *catalog.Catalog, refs []catalog.Ref, zone string, p *Parsed) (ir.Statement, error) {
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

func (b *binder) zoneArg() ir.Expr {
	return &ir.Const{Value: types.DText(b.zone.Name()), T: types.TextT}
}

// zoneName is the name of the binder's zone, "" for UTC.
func (b *binder) zoneName() string {
	if !b.zoned() {
		return ""
	}
	return b.zone.Name()
}

// stampZone records the zone a materialized view is bound in.
func (b *binder) stampZone(st ir.Statement) {
	switch st := st.(type) {
	case *ir.CreateMaterializedView:
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
func (b *binder) zoneCast(e ir.Expr, t types.T) ir.Expr {
	from := e.Type()
	if !b.zoned() || from.Kind == t.Kind {
		return &ir.Cast{Arg: e, T: t}
	}
	call := func(fn string, arg ir.Expr, t types.T) ir.Expr {
		return &ir.Call{Fn: fn, Args: []ir.Expr{arg, b.zoneArg()}, T: t}
	}
	switch {
	case from.Kind == types.TimestampTZ && t.Kind == types.Timestamp:
		return call(ir.FnTstzToTS, e, types.TimestampT)
	case from.Kind == types.TimestampTZ && t.Kind == types.Date:
		return &ir.Cast{Arg: call(ir.FnTstzToTS, e, types.TimestampT), T: t}
	case from.Kind == types.TimestampTZ && t.Kind == types.Text:
		out := call(ir.FnTstzOut, e, types.TextT)
		if t.Width > 0 {
			return &ir.Cast{Arg: out, T: t}
		}
		return out
	case from.Kind == types.Timestamp && t.Kind == types.TimestampTZ:
		return call(ir.FnTSToTstz, e, t)
	case from.Kind == types.Date && t.Kind == types.TimestampTZ:
		return call(ir.FnTSToTstz, &ir.Cast{Arg: e, T: types.TimestampT}, t)
	case from.Kind == types.Text && t.Kind == types.TimestampTZ:
		return call(ir.FnTstzIn, e, t)
	}
	return &ir.Cast{Arg: e, T: t}
}

// zoneCall returns c, or where its result depends on the time zone, the
// call of the zone's function.
func (b *binder) zoneCall(c *ir.Call) ir.Expr {
	if !b.zoned() {
		return c
	}
	a := c.Args
	kind := func(i int) types.Kind { return a[i].Type().Kind }
	with := func(fn string, args ...ir.Expr) ir.Expr {
		return &ir.Call{Fn: fn, Args: append(args, b.zoneArg()), T: c.T}
	}
	switch c.Fn {
	case ir.FnAdd:
		if len(a) == 2 && kind(0) == types.TimestampTZ && kind(1) == types.Interval && calendarInterval(a[1]) {
			return with(ir.FnTstzAdd, a[0], a[1])
		}
		if len(a) == 2 && kind(0) == types.Interval && kind(1) == types.TimestampTZ && calendarInterval(a[0]) {
			return with(ir.FnTstzAdd, a[1], a[0])
		}
	case ir.FnSub:
		if len(a) == 2 && kind(0) == types.TimestampTZ && kind(1) == types.Interval && calendarInterval(a[1]) {
			return with(ir.FnTstzSub, a[0], a[1])
		}
	case ir.FnDateTrunc:
		if len(a) == 2 && kind(1) == types.TimestampTZ {
			return with(ir.FnDateTrunc3, a[0], a[1])
		}
	case ir.FnExtract:
		if len(a) == 2 && kind(1) == types.TimestampTZ {
			return with(ir.FnExtractTZ, a[0], a[1])
		}
	case ir.FnDatePart:
		if len(a) == 2 && kind(1) == types.TimestampTZ {
			return with(ir.FnDatePartTZ, a[0], a[1])
		}
	case ir.FnToChar:
		if len(a) == 2 && kind(0) == types.TimestampTZ {
			return with(ir.FnToCharTZ, a[0], a[1])
		}
	case ir.FnToTimestamp:
		if len(a) == 2 && kind(0) == types.Text {
			return with(ir.FnToTimestampTZ, a[0], a[1])
		}
	}
	return c
}

// calendarInterval reports whether an interval operand may have days or
// months, whose length depends on the zone's calendar (a constant with only
// a time part does not).
func calendarInterval(e ir.Expr) bool {
	if k, ok := e.(*ir.Const); ok && !k.Value.Null {
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
func zoneWraps(arg, e ir.Expr) bool {
	c, ok := arg.(*ir.Call)
	return ok && c.Fn == ir.FnTstzOut && len(c.Args) == 2 && c.Args[0] == e
}
