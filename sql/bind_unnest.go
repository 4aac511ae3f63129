package sql

import (
	"fmt"

	pg_query "github.com/pganalyze/pg_query_go/v6"
	"github.com/streamsql/streamsql/ir"
	"github.com/streamsql/streamsql/sqlerr"
	"github.com/streamsql/streamsql/types"
)

// unnest, the set-returning function over arrays: in FROM (bindUnnest),
// with several arguments, ROWS FROM (unnest(a), unnest(b)), WITH
// ORDINALITY and column aliases, over the columns of the FROM items before
// it; and in the select list (bindSRF), where each call stands for an
// element column of an Unnest placed over the query's input (after its
// aggregation) by placeSRFs.

const fnUnnest = "unnest"

// srfRef stands for set-returning call Index of the select list until
// placeSRFs replaces it with the element column of the query's Unnest.
type srfRef struct {
	Index int
	T     types.T
}

func (e *srfRef) Type() types.T  { return e.T }
func (e *srfRef) String() string { return fmt.Sprintf("srf#%d", e.Index) }

// unnestCalls returns the unnest calls of a function in FROM, or nil when
// it is not (only) unnest: unnest(...) or ROWS FROM (unnest(...), ...).
func unnestCalls(rf *pg_query.RangeFunction) []*pg_query.FuncCall {
	var calls []*pg_query.FuncCall
	for _, item := range rf.Functions {
		items := item.GetList().GetItems()
		if len(items) == 0 {
			return nil
		}
		f := items[0].GetFuncCall()
		if f == nil || !isSetReturning(JSONAlias(funcName(f.Funcname))) && ir.ArraySRFs[funcName(f.Funcname)] == "" {
			return nil
		}
		calls = append(calls, f)
	}
	return calls
}

// unnestArg checks that a bound argument of unnest is an array.
func (b *binder) unnestArg(a ir.Expr, args []ir.Expr, loc int32) error {
	switch a.Type().Kind {
	case types.Array:
		return nil
	case types.Unknown:
		return b.errAt(loc, notUnique(fnUnnest, args))
	}
	return b.errAt(loc, noSuchFunction(fnUnnest, args))
}

// bindUnnest binds unnest in FROM after the items left (nil when it is the
// first), whose scope lsc its arguments see, and returns the Unnest over
// left with the scope of both.
func (b *binder) bindUnnest(rf *pg_query.RangeFunction, calls []*pg_query.FuncCall, left ir.Rel, lsc *scope) (ir.Rel, *scope, error) {
	if left == nil {
		left, lsc = &ir.Values{Rows: [][]ir.Expr{{}}}, &scope{}
	}
	ctx := &exprCtx{scope: lsc, clause: "functions in FROM"}
	var arrays []ir.Expr
	var colNames []string // the default name of each array's column, "" for unnest
	named := false
	// elems map each array's element to the function's value (nil: the
	// element itself).
	var elems []func(ir.Expr) ir.Expr
	for _, f := range calls {
		fname := JSONAlias(funcName(f.Funcname))
		if f.AggDistinct || f.AggStar || f.AggFilter != nil || len(f.AggOrder) > 0 || f.Over != nil {
			return nil, nil, b.errAt(f.Location, sqlerr.New(sqlerr.WrongObjectType, "%s is not an aggregate function", fname))
		}
		args, err := b.bindExprs(ctx, f.Args)
		if err != nil {
			return nil, nil, err
		}
		if fname == ir.FnPgExpandArray {
			a, err := b.bindExpandArrayRows(args, f.Location)
			if err != nil {
				return nil, nil, err
			}
			arrays, colNames = append(arrays, a, a), append(colNames, "x", "n")
			elems = append(elems, expandArrayField(0), expandArrayField(1))
			named = true
			continue
		}
		if ir.ArraySRFs[fname] != "" {
			a, elem, err := b.srfArray(fname, args, f.Location)
			if err != nil {
				return nil, nil, err
			}
			arrays, colNames, elems = append(arrays, a), append(colNames, fname), append(elems, elem)
			continue
		}
		if fname != fnUnnest {
			as, srf, err := b.bindJSONBSRF(fname, args, f.Location)
			if err != nil {
				return nil, nil, err
			}
			arrays, colNames = append(arrays, as...), append(colNames, srf.cols...)
			elems = append(elems, make([]func(ir.Expr) ir.Expr, len(as))...)
			named = named || srf.named
			continue
		}
		if len(args) == 0 || (len(args) > 1 && rf.IsRowsfrom) {
			return nil, nil, b.errAt(f.Location, noSuchFunction(fnUnnest, args))
		}
		for _, a := range args {
			if err := b.unnestArg(a, args, f.Location); err != nil {
				return nil, nil, err
			}
		}
		arrays = append(arrays, args...)
		colNames = append(colNames, make([]string, len(args))...)
		elems = append(elems, make([]func(ir.Expr) ir.Expr, len(args))...)
	}
	alias := ""
	var colAliases []*pg_query.Node
	if rf.Alias != nil {
		alias, colAliases = rf.Alias.Aliasname, rf.Alias.Colnames
	}
	names := make([]string, len(arrays))
	for i := range names {
		names[i] = fnUnnest
		if colNames[i] != "" {
			names[i] = colNames[i]
		}
		if alias != "" && len(arrays) == 1 && !named {
			// A one-column function takes its table alias as column name.
			names[i] = alias
		}
	}
	ordName := "ordinality"
	if len(colAliases) > len(arrays)+boolInt(rf.Ordinality) {
		return nil, nil, b.errAt(calls[0].Location, sqlerr.New(sqlerr.InvalidColumnReference,
			"table \"%s\" has %d columns available but %d columns specified", alias, len(arrays)+boolInt(rf.Ordinality), len(colAliases)))
	}
	for i, a := range colAliases {
		if i < len(arrays) {
			names[i] = a.GetString_().Sval
		} else {
			ordName = a.GetString_().Sval
		}
	}
	table := alias
	if table == "" {
		table = JSONAlias(funcName(calls[0].Funcname))
	}
	var rel ir.Rel = ir.NewUnnest(left, arrays, names, ordName, rf.Ordinality)
	rel = mapElements(rel, len(lsc.cols), elems)
	sc := &scope{cols: append([]scopeCol(nil), lsc.cols...)}
	for _, c := range rel.Columns()[len(lsc.cols):] {
		sc.cols = append(sc.cols, scopeCol{table: table, name: c.Name, t: c.Type, hidden: c.Hidden})
	}
	return rel, sc, nil
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// bindSRF binds a set-returning call (unnest) in the select list.
func (b *binder) bindSRF(ctx *exprCtx, f *pg_query.FuncCall) (ir.Expr, error) {
	name := funcName(f.Funcname)
	switch {
	case ctx.inAgg:
		return nil, b.errAt(f.Location, sqlerr.New(sqlerr.FeatureNotSupported, "aggregate function calls cannot contain set-returning function calls").
			WithHint("You might be able to move the set-returning function into a LATERAL FROM item."))
	case ctx.inWindow:
		return nil, b.errAt(f.Location, sqlerr.New(sqlerr.FeatureNotSupported, "window function calls cannot contain set-returning function calls").
			WithHint("You might be able to move the set-returning function into a LATERAL FROM item."))
	case ctx.srfs == nil:
		clause := ctx.clause
		if clause == "" {
			clause = "this context"
		}
		return nil, b.errAt(f.Location, sqlerr.New(sqlerr.FeatureNotSupported, "set-returning functions are not allowed in %s", clause))
	}
	if f.AggDistinct || f.AggStar || f.AggFilter != nil || len(f.AggOrder) > 0 {
		return nil, b.errAt(f.Location, sqlerr.New(sqlerr.WrongObjectType, "%s is not an aggregate function", name))
	}
	inner := *ctx
	inner.srfs = nil
	inner.clause = "arguments of set-returning functions"
	args, err := b.bindExprs(&inner, f.Args)
	if err != nil {
		return nil, err
	}
	var elem func(ir.Expr) ir.Expr
	if ir.ArraySRFs[name] != "" {
		a, el, err := b.srfArray(name, args, f.Location)
		if err != nil {
			return nil, err
		}
		args, elem = []ir.Expr{a}, el
	} else if name = JSONAlias(name); name != fnUnnest {
		if srf := jsonbSRFs[name]; len(srf.fns) > 1 {
			return nil, b.errAt(f.Location, sqlerr.Unsupported("%s in the select list (a record result); call it in FROM", name))
		}
		as, _, err := b.bindJSONBSRF(name, args, f.Location)
		if err != nil {
			return nil, err
		}
		args = as
	}
	if len(args) != 1 {
		return nil, b.errAt(f.Location, noSuchFunction(name, args))
	}
	if err := b.unnestArg(args[0], args, f.Location); err != nil {
		return nil, err
	}
	*ctx.srfs = append(*ctx.srfs, args[0])
	ref := &srfRef{Index: len(*ctx.srfs) - 1, T: args[0].Type().ElemT()}
	if elem != nil {
		return elem(ref), nil
	}
	return ref, nil
}

// placeSRFs puts the Unnest of the select list's set-returning calls srfs
// (over the FROM scope; rewrite maps them over input, the aggregation's
// output) over input and points the targets' srfRefs at its element
// columns.
func placeSRFs(input ir.Rel, srfs []ir.Expr, rewrite func(ir.Expr) (ir.Expr, error), targets []target) (ir.Rel, error) {
	arrays := make([]ir.Expr, len(srfs))
	names := make([]string, len(srfs))
	for i, e := range srfs {
		var err error
		if arrays[i], err = rewrite(e); err != nil {
			return nil, err
		}
		names[i] = fnUnnest
	}
	u := ir.NewUnnest(input, arrays, names, "ordinality", false)
	base := len(input.Columns())
	for i := range targets {
		targets[i].expr = ir.Rewrite(targets[i].expr, func(x ir.Expr) ir.Expr {
			if r, ok := x.(*srfRef); ok {
				return &ir.InputRef{Index: base + r.Index, T: r.T, Name: fnUnnest}
			}
			return x
		})
	}
	return u, nil
}

// joinUnnest binds left JOIN unnest(...) ON cond: the function sees left's
// columns (LATERAL). An inner join filters the Unnest's rows by cond; a
// left join is supported with ON true, keeping rows without elements.
func (b *binder) joinUnnest(j *pg_query.JoinExpr, typ ir.JoinType, rf *pg_query.RangeFunction, calls []*pg_query.FuncCall, left ir.Rel, lsc *scope) (ir.Rel, *scope, error) {
	loc := calls[0].Location
	switch {
	case j.IsNatural || len(j.UsingClause) > 0:
		return nil, nil, b.errAt(loc, sqlerr.Unsupported("USING or NATURAL joins with a function in FROM"))
	case j.Alias != nil:
		return nil, nil, b.errAt(loc, sqlerr.Unsupported("an alias on a join with a function in FROM"))
	case typ != ir.InnerJoin && typ != ir.LeftJoin:
		return nil, nil, b.errAt(loc, sqlerr.Unsupported("%s joins with a function in FROM", typ))
	}
	rel, sc, err := b.bindUnnest(rf, calls, left, lsc)
	if err != nil {
		return nil, nil, err
	}
	if j.Quals == nil {
		return rel, sc, nil
	}
	on, err := b.bindExpr(&exprCtx{scope: sc, clause: "JOIN conditions"}, j.Quals)
	if err != nil {
		return nil, nil, err
	}
	if on, err = b.requireBool(on, "argument of JOIN/ON", exprLocation(j.Quals)); err != nil {
		return nil, nil, err
	}
	if typ == ir.LeftJoin {
		if c, ok := on.(*ir.Const); !ok || c.Value.Null || c.Value.I == 0 {
			return nil, nil, b.errAt(exprLocation(j.Quals), sqlerr.Unsupported("LEFT JOIN with a function in FROM on a condition other than true"))
		}
		u, ok := rel.(*ir.Unnest)
		if !ok {
			u = rel.(*ir.Project).Input.(*ir.Unnest) // see mapElements
		}
		u.Outer = true
		return rel, sc, nil
	}
	return &ir.Filter{Input: rel, Pred: on}, sc, nil
}
