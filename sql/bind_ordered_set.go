package sql

import (
	"strconv"

	pg_query "github.com/pganalyze/pg_query_go/v6"
	"github.com/streamsql/streamsql/ir"
	"github.com/streamsql/streamsql/sqlerr"
	"github.com/streamsql/streamsql/types"
)

// bindOrderedSet binds an ordered-set aggregate call, or reports the
// misuse of WITHIN GROUP.
func (b *binder) bindOrderedSet(ctx *exprCtx, inner *exprCtx, name string, f *pg_query.FuncCall) (ir.AggCall, error) {
	call := ir.AggCall{Func: name}
	switch {
	case !ir.IsOrderedSet(name):
		return call, b.errAt(f.Location, sqlerr.New(sqlerr.WrongObjectType, "%s is not an ordered-set aggregate, so it cannot have WITHIN GROUP", name))
	case !f.AggWithinGroup:
		return call, b.errAt(f.Location, sqlerr.New(sqlerr.WrongObjectType, "WITHIN GROUP is required for ordered-set aggregate %s", name))
	case f.AggDistinct:
		return call, b.errAt(f.Location, sqlerr.New(sqlerr.SyntaxError, "cannot use DISTINCT with WITHIN GROUP"))
	case len(f.AggOrder) != 1:
		return call, b.errAt(f.Location, sqlerr.New(sqlerr.UndefinedFunction, "function %s with %d ordered arguments does not exist", name, len(f.AggOrder)))
	}
	sb := f.AggOrder[0].GetSortBy()
	if sb.UseOp != nil {
		return call, b.errAt(sb.Location, sqlerr.Unsupported("ORDER BY ... USING"))
	}
	x, err := b.bindExpr(inner, sb.Node)
	if err != nil {
		return call, err
	}
	x = b.defaultType(x)
	k := sortKey(0, sb)
	wantDirect := 1
	if name == ir.AggMode {
		wantDirect = 0
	}
	if len(f.Args) != wantDirect {
		return call, b.errAt(f.Location, sqlerr.New(sqlerr.UndefinedFunction, "function %s with %d direct arguments does not exist", name, len(f.Args)))
	}
	array := false
	if wantDirect == 1 {
		d, err := b.bindExpr(&exprCtx{scope: ctx.scope, clause: "WITHIN GROUP direct arguments"}, f.Args[0])
		if err != nil {
			return call, err
		}
		if call.Direct, array, err = percentileFractions(d); err != nil {
			return call, b.errAt(exprLocation(f.Args[0]), err.(*sqlerr.Error))
		}
	}
	switch name {
	case ir.AggPercentileCont:
		if x.Type().Kind != types.Interval {
			fx, err := b.coerce(x, types.Float64T, f.Location)
			if err != nil {
				return call, b.errAt(f.Location, sqlerr.New(sqlerr.UndefinedFunction, "function percentile_cont(numeric, %s) does not exist", x.Type()))
			}
			x = fx
		}
	case ir.AggMode, ir.AggPercentileDisc:
		if x.Type().Kind == types.Array {
			return call, b.errAt(f.Location, sqlerr.Unsupported("%s over arrays", name))
		}
	}
	call.Arg = x
	call.OrderBy = []ir.AggOrder{{Expr: x, Desc: k.Desc, NullsFirst: k.NullsFirst}}
	call.T = x.Type()
	if array {
		call.T = types.ArrayOf(call.T)
	}
	return call, nil
}

// percentileFractions reads the fraction, or the array of fractions, of a
// percentile: constants between 0 and 1 (NaN for a NULL array element).
func percentileFractions(e ir.Expr) ([]float64, bool, error) {
	if c, ok := e.(*ir.Call); ok && c.Fn == ir.FnArray {
		fs := make([]float64, len(c.Args))
		for i, a := range c.Args {
			f, null, err := constFraction(a)
			if err != nil {
				return nil, false, err
			}
			if null {
				f = ir.NullFraction
			}
			fs[i] = f
		}
		return fs, true, nil
	}
	f, null, err := constFraction(e)
	if err != nil {
		return nil, false, err
	}
	if null {
		f = ir.NullFraction
	}
	return []float64{f}, false, nil
}

func constFraction(e ir.Expr) (f float64, null bool, err error) {
	for {
		c, ok := e.(*ir.Cast)
		if !ok {
			break
		}
		e = c.Arg
	}
	c, ok := e.(*ir.Const)
	if !ok || !(c.T.IsNumeric() || c.T.Kind == types.Unknown) {
		return 0, false, sqlerr.Unsupported("a percentile fraction that is not a numeric constant")
	}
	if c.Value.Null {
		return 0, true, nil
	}
	text := string(types.AppendText(nil, c.T, c.Value))
	if c.T.Kind == types.Unknown {
		text = c.Value.S
	}
	f, perr := strconv.ParseFloat(text, 64)
	if perr != nil {
		return 0, false, sqlerr.New(sqlerr.InvalidTextRepresentation, "invalid input syntax for type double precision: \"%s\"", text)
	}
	if !(f >= 0 && f <= 1) {
		return 0, false, sqlerr.New(sqlerr.NumericValueOutOfRange, "percentile value %s is not between 0 and 1", strconv.FormatFloat(f, 'g', -1, 64))
	}
	return f, false, nil
}
