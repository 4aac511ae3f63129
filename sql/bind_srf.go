package sql

import (
	pg_query "github.com/pganalyze/pg_query_go/v6"
	"github.com/streamsql/streamsql/ir"
	"github.com/streamsql/streamsql/types"
)

// srfArray returns the array whose elements set-returning function fn
// returns for args, and, if the function's values are not those elements,
// the function that maps an element to the value.
func (b *binder) srfArray(fn string, args []ir.Expr, loc int32) (ir.Expr, func(ir.Expr) ir.Expr, error) {
	if fn == ir.FnPgExpandArray {
		arr, err := b.bindExpandArrayRows(args, loc)
		return arr, nil, err
	}
	arr, err := b.resolveCall(ir.ArraySRFs[fn], args, loc)
	if err != nil || fn != "regexp_matches" {
		return arr, nil, err
	}
	conv := append([]ir.Expr(nil), arr.(*ir.Call).Args...)
	if len(conv) == 2 {
		conv = append(conv, &ir.Const{Value: types.DText(""), T: types.TextT})
	}
	return arr, func(k ir.Expr) ir.Expr {
		return &ir.Call{Fn: ir.FnRegexMatchNth, Args: append(append([]ir.Expr(nil), conv...), k), T: types.ArrayOf(types.TextT)}
	}, nil
}

// seriesOf types generate_series(start, stop [, step]) as PostgreSQL's
// overloads do: over integers (int, or bigint if an argument is), numeric
// (if an argument is), or timestamp and timestamptz with an interval step
// (timestamptz if start or stop is one, or a date).
func (b *binder) seriesOf(args []ir.Expr, loc int32) (*ir.GenerateSeries, error) {
	kinds := map[types.Kind]bool{}
	for _, a := range args {
		kinds[a.Type().Kind] = true
	}
	var t, step types.T
	switch {
	case len(args) == 3 && (kinds[types.Interval] || kinds[types.Timestamp] || kinds[types.TimestampTZ] || kinds[types.Date]):
		t, step = types.TimestampT, types.IntervalT
		for _, a := range args[:2] {
			if k := a.Type().Kind; k == types.TimestampTZ || k == types.Date {
				t = types.TimestampTZT
			}
		}
		if args[0].Type().Kind == types.Unknown && args[1].Type().Kind == types.Unknown {
			return nil, b.errAt(loc, notUnique("generate_series", args))
		}
	case kinds[types.Numeric]:
		t, step = types.NumericT, types.NumericT
	default:
		t, step = types.Int32T, types.Int32T
		for _, a := range args {
			switch a.Type().Kind {
			case types.Int64:
				t, step = types.Int64T, types.Int64T
			case types.Int16, types.Int32, types.Unknown:
			default:
				return nil, b.errAt(loc, noSuchFunction("generate_series", args))
			}
		}
	}
	conv := make([]ir.Expr, len(args))
	for i, a := range args {
		want := t
		if i == 2 {
			want = step
		}
		var err error
		if conv[i], err = b.coerce(a, want, loc); err != nil {
			return nil, b.errAt(loc, noSuchFunction("generate_series", args))
		}
	}
	gs := &ir.GenerateSeries{Start: conv[0], Stop: conv[1], Col: ir.Column{Name: "generate_series", Type: t}}
	if t.Kind == types.TimestampTZ {
		gs.Zone = b.zoneName()
	}
	switch {
	case len(conv) == 3:
		gs.Step = conv[2]
	case t.Kind == types.Timestamp || t.Kind == types.TimestampTZ:
		return nil, b.errAt(loc, noSuchFunction("generate_series", args))
	default:
		one, err := b.castTo(&ir.Const{Value: types.DText("1"), T: types.UnknownT}, t, loc, false)
		if err != nil {
			return nil, err
		}
		gs.Step = one
	}
	return gs, nil
}

// bindGenerateSubscripts binds generate_subscripts(array, dim [, reverse])
// in FROM: the subscripts of dimension dim, array_lower to array_upper, or
// back with reverse.
func (b *binder) bindGenerateSubscripts(rf *pg_query.RangeFunction, f *pg_query.FuncCall) (ir.Rel, *scope, error) {
	const fn = "generate_subscripts"
	args, err := b.bindExprs(&exprCtx{clause: "FROM"}, f.Args)
	if err != nil {
		return nil, nil, err
	}
	if len(args) < 2 || len(args) > 3 || args[0].Type().Kind != types.Array {
		return nil, nil, b.errAt(f.Location, noSuchFunction(fn, args))
	}
	dim, err := b.coerce(args[1], types.Int32T, f.Location)
	if err != nil {
		return nil, nil, b.errAt(f.Location, noSuchFunction(fn, args))
	}
	lower, err := b.bindArrayCall("array_lower", []ir.Expr{args[0], dim}, f.Location)
	if err != nil {
		return nil, nil, err
	}
	upper, err := b.bindArrayCall("array_upper", []ir.Expr{args[0], dim}, f.Location)
	if err != nil {
		return nil, nil, err
	}
	i4 := types.Int32T
	gs := &ir.GenerateSeries{Start: lower, Stop: upper, Step: &ir.Const{Value: types.DInt(1), T: i4}, Col: ir.Column{Name: fn, Type: i4}}
	if len(args) == 3 {
		rev, err := b.coerce(args[2], types.BoolT, f.Location)
		if err != nil {
			return nil, nil, b.errAt(f.Location, noSuchFunction(fn, args))
		}
		pick := func(yes, no ir.Expr) ir.Expr {
			return &ir.Case{T: i4, Whens: []ir.When{{Cond: rev, Then: yes}}, Else: no}
		}
		// A NULL reverse yields no rows, as the strict function does.
		gs.Start = &ir.Case{T: i4, Whens: []ir.When{{Cond: &ir.Call{Fn: ir.FnIsNull, T: types.BoolT, Args: []ir.Expr{rev}}, Then: &ir.Const{Value: types.Null, T: i4}}},
			Else: pick(upper, lower)}
		gs.Stop = pick(lower, upper)
		gs.Step = pick(&ir.Const{Value: types.DInt(-1), T: i4}, &ir.Const{Value: types.DInt(1), T: i4})
	}
	return b.seriesScope(rf, f, gs)
}

// mapElements maps the element columns of u (after its first n columns)
// that have an element function to the function's value.
func mapElements(u ir.Rel, n int, elems []func(ir.Expr) ir.Expr) ir.Rel {
	mapped := false
	for _, f := range elems {
		mapped = mapped || f != nil
	}
	if !mapped {
		return u
	}
	cols := append([]ir.Column(nil), u.Columns()...)
	exprs := make([]ir.Expr, len(cols))
	for i, c := range cols {
		exprs[i] = &ir.InputRef{Index: i, T: c.Type, Name: c.Name}
		if k := i - n; k >= 0 && k < len(elems) && elems[k] != nil {
			exprs[i] = elems[k](exprs[i])
			cols[i].Type = exprs[i].Type()
		}
	}
	return &ir.Project{Input: u, Exprs: exprs, Cols: cols}
}
