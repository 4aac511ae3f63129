package sql

import (
	"strings"

	pg_query "github.com/pganalyze/pg_query_go/v6"
	"github.com/streamsql/streamsql/ir"
	"github.com/streamsql/streamsql/sqlerr"
	"github.com/streamsql/streamsql/types"
)

// bindAggregate binds an aggregate call and records it in ctx.aggs.
func (b *binder) bindAggregate(ctx *exprCtx, name string, f *pg_query.FuncCall) (ir.Expr, error) {
	if ctx.inAgg {
		return nil, b.errAt(f.Location, sqlerr.New(sqlerr.GroupingError, "aggregate function calls cannot be nested"))
	}
	if ctx.aggs == nil {
		clause := ctx.clause
		if clause == "" {
			clause = "this context"
		}
		return nil, b.errAt(f.Location, sqlerr.New(sqlerr.GroupingError, "aggregate functions are not allowed in %s", clause))
	}
	inner := &exprCtx{scope: ctx.scope, aggs: ctx.aggs, clause: ctx.clause, inAgg: true, wins: ctx.wins}
	call := ir.AggCall{Func: name, Distinct: f.AggDistinct}
	if f.AggFilter != nil {
		filter, err := b.bindExpr(&exprCtx{scope: ctx.scope, aggs: ctx.aggs, clause: "FILTER", inAgg: true}, f.AggFilter)
		if err != nil {
			return nil, err
		}
		if call.Filter, err = b.requireBool(filter, "argument of FILTER", f.Location); err != nil {
			return nil, err
		}
	}
	if f.AggWithinGroup || ir.IsOrderedSet(name) {
		oc, err := b.bindOrderedSet(ctx, inner, name, f)
		if err != nil {
			return nil, err
		}
		oc.Filter = call.Filter
		*ctx.aggs = append(*ctx.aggs, oc)
		return &aggRef{Index: len(*ctx.aggs) - 1, T: oc.T}, nil
	}
	if f.AggStar {
		if name != ir.AggCount {
			return nil, b.errAt(f.Location, sqlerr.New(sqlerr.SyntaxError, "%s(*) is not allowed", name))
		}
		call.Func = ir.AggCountStar
		call.T = types.Int64T
	} else {
		args, err := b.bindAggArgs(inner, name, f)
		if err != nil {
			return nil, err
		}
		call.Arg, call.ExtraArgs = args[0], args[1:]
		if call.T, err = aggResultType(name, call.Arg.Type()); err != nil {
			return nil, b.errAt(f.Location, err.(*sqlerr.Error))
		}
	}
	if err := b.bindAggOrder(inner, &call, f); err != nil {
		return nil, err
	}
	*ctx.aggs = append(*ctx.aggs, call)
	return &aggRef{Index: len(*ctx.aggs) - 1, T: call.T}, nil
}

// bindAggArgs binds the arguments of aggregate name: one, or a value and a
// delimiter for string_agg. Untyped literals take the type the aggregate
// wants (boolean for bool_and, text for string_agg), else text.
func (b *binder) bindAggArgs(ctx *exprCtx, name string, f *pg_query.FuncCall) ([]ir.Expr, error) {
	args, err := b.bindExprs(ctx, f.Args)
	if err != nil {
		return nil, err
	}
	want := 1
	if name == ir.AggStringAgg || name == ir.AggJSONBObjectAgg || ir.IsRegression(name) {
		want = 2
	}
	if name == ir.AggJSONBObjectAgg && f.AggDistinct {
		return nil, b.errAt(f.Location, sqlerr.Unsupported("jsonb_object_agg(DISTINCT ...)"))
	}
	for i, a := range args {
		switch {
		case a.Type().Kind != types.Unknown:
		case name == ir.AggJSONBAgg:
			return nil, b.errAt(f.Location, sqlerr.New(sqlerr.DatatypeMismatch,
				"could not determine polymorphic type because input has type unknown"))
		case name == ir.AggArrayAgg:
			return nil, b.errAt(f.Location, notUnique(name, args))
		case name == ir.AggBoolAnd || name == ir.AggBoolOr || name == ir.AggEvery:
			if args[i], err = b.castTo(a, types.BoolT, f.Location, false); err != nil {
				return nil, err
			}
		default:
			args[i] = b.defaultType(a)
		}
	}
	if len(args) != want {
		return nil, b.errAt(f.Location, noSuchFunction(name, args))
	}
	if ir.IsRegression(name) {
		// (double precision, double precision), to which every numeric
		// type converts implicitly.
		coerced := make([]ir.Expr, len(args))
		for i, a := range args {
			if coerced[i], err = b.coerce(a, types.Float64T, f.Location); err != nil {
				return nil, b.errAt(f.Location, noSuchFunction(name, args))
			}
		}
		args = coerced
		if f.AggDistinct {
			return nil, b.errAt(f.Location, sqlerr.Unsupported("DISTINCT in %s", name))
		}
	}
	if name == ir.AggStringAgg {
		for _, a := range args {
			if a.Type().Kind != types.Text {
				return nil, b.errAt(f.Location, noSuchFunction(name, args))
			}
		}
	}
	return args, nil
}

// bindAggOrder binds the ORDER BY inside an aggregate call. It is kept for
// the order-sensitive aggregates and checked, then dropped, for the others
// (sum(x ORDER BY y) is sum(x)), as their result does not depend on it.
func (b *binder) bindAggOrder(ctx *exprCtx, call *ir.AggCall, f *pg_query.FuncCall) error {
	args := append([]ir.Expr{call.Arg}, call.ExtraArgs...)
	for _, n := range f.AggOrder {
		sb := n.GetSortBy()
		if sb == nil {
			return b.errAt(f.Location, sqlerr.Unsupported("this ORDER BY item in an aggregate call"))
		}
		if sb.UseOp != nil {
			return b.errAt(sb.Location, sqlerr.Unsupported("ORDER BY ... USING"))
		}
		e, err := b.bindExpr(ctx, sb.Node)
		if err != nil {
			return err
		}
		e = b.defaultType(e)
		if call.Distinct && !sameAsSome(e, args) {
			return b.errAt(exprLocation(sb.Node), sqlerr.New(sqlerr.InvalidColumnReference,
				"in an aggregate with DISTINCT, ORDER BY expressions must appear in argument list"))
		}
		k := sortKey(0, sb)
		call.OrderBy = append(call.OrderBy, ir.AggOrder{Expr: e, Desc: k.Desc, NullsFirst: k.NullsFirst})
	}
	if !ir.OrderSensitive(call.Func) {
		call.OrderBy = nil
		return nil
	}
	switch call.Func {
	case ir.AggFirstValue, ir.AggLastValue:
		if len(call.OrderBy) == 0 {
			return b.errAt(f.Location, sqlerr.New(sqlerr.SyntaxError, "%s requires ORDER BY", call.Func).
				WithHint("Write %s(x ORDER BY y).", call.Func))
		}
		if call.Distinct {
			return b.errAt(f.Location, sqlerr.Unsupported("DISTINCT in %s", call.Func))
		}
	case ir.AggStringAgg:
		if _, ok := call.ExtraArgs[0].(*ir.Const); call.Distinct && !ok {
			return b.errAt(f.Location, sqlerr.Unsupported("string_agg(DISTINCT ...) with a delimiter that is not a constant"))
		}
	}
	return nil
}

// notUnique is PostgreSQL's error for a call of a polymorphic function
// whose only argument is an untyped literal.
func notUnique(name string, args []ir.Expr) *sqlerr.Error {
	ts := make([]string, len(args))
	for i, a := range args {
		ts[i] = a.Type().String()
	}
	return sqlerr.New(sqlerr.AmbiguousFunction, "function %s(%s) is not unique", name, strings.Join(ts, ", ")).
		WithHint("Could not choose a best candidate function. You might need to add explicit type casts.")
}

// sameAsSome reports whether e is the same expression as one of args.
func sameAsSome(e ir.Expr, args []ir.Expr) bool {
	for _, a := range args {
		if a.String() == e.String() && a.Type().Kind == e.Type().Kind {
			return true
		}
	}
	return false
}

// aggResultType is PostgreSQL's result type of an aggregate over t.
func aggResultType(fn string, t types.T) (types.T, error) {
	if rt, ok := moreAggResultType(fn, t); ok {
		return rt, nil
	}
	switch fn {
	case ir.AggCount, ir.AggApproxCountDistinct:
		if t.Kind != types.Unknown {
			return types.Int64T, nil
		}
	case ir.AggSum:
		switch t.Kind {
		case types.Interval:
			return types.IntervalT, nil
		case types.Int16, types.Int32:
			return types.Int64T, nil
		case types.Numeric:
			if t.HasTypmod {
				// The sum keeps the scale of its input, which PostgreSQL
				// displays (a sum of numeric(8,2) prints 5.00).
				return types.NumericOf(types.NumericPrecision, t.Scale), nil
			}
			return types.NumericT, nil
		case types.Int64:
			return types.NumericT, nil
		case types.Float32:
			return types.Float32T, nil
		case types.Float64:
			return types.Float64T, nil
		}
	case ir.AggAvg:
		switch t.Kind {
		case types.Int16, types.Int32, types.Int64, types.Numeric:
			return types.NumericT, nil
		case types.Float32, types.Float64:
			return types.Float64T, nil
		case types.Interval:
			return types.IntervalT, nil
		}
	case ir.AggStddev, ir.AggStddevSamp, ir.AggStddevPop, ir.AggVariance, ir.AggVarSamp, ir.AggVarPop:
		switch t.Kind {
		case types.Int16, types.Int32, types.Int64, types.Numeric:
			return types.NumericT, nil
		case types.Float32, types.Float64:
			return types.Float64T, nil
		}
	case ir.AggBoolAnd, ir.AggBoolOr, ir.AggEvery:
		if t.Kind == types.Bool {
			return types.BoolT, nil
		}
	case ir.AggStringAgg:
		return types.TextT, nil
	case ir.AggJSONBAgg, ir.AggJSONBObjectAgg:
		return types.JSONBT, nil
	case ir.AggArrayAgg:
		switch t.Kind {
		case types.Unknown:
		case types.Array:
			return types.T{}, sqlerr.Unsupported("array_agg over arrays (multidimensional arrays)")
		default:
			return types.ArrayOf(t), nil
		}
	case ir.AggMin, ir.AggMax, ir.AggFirstValue, ir.AggLastValue:
		if t.Kind != types.Unknown && !noMinMax(fn, t) {
			return t, nil
		}
	}
	return types.T{}, sqlerr.New(sqlerr.UndefinedFunction, "function %s(%s) does not exist", fn, t).
		WithHint("No function matches the given name and argument types. You might need to add explicit type casts.")
}
