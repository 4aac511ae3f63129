package sql

import (
	pg_query "github.com/pganalyze/pg_query_go/v6"
	"github.com/streamsql/streamsql/ir"
	"github.com/streamsql/streamsql/sqlerr"
	"github.com/streamsql/streamsql/types"
)

// bindSetOp binds UNION [ALL], INTERSECT [ALL] and EXCEPT [ALL]. Both sides
// are converted to common column types. UNION ALL is a UnionAll; UNION adds
// a DISTINCT aggregation; INTERSECT and EXCEPT tag each side's rows, count
// them per distinct row and side, and keep the rows present in both
// (INTERSECT) or only in the left side (EXCEPT), once, or with ALL as many
// times as both sides have them (INTERSECT) or as the left side has more of
// them (EXCEPT).
func (b *binder) bindSetOp(sel *pg_query.SelectStmt) (ir.Rel, error) {
	left, err := b.bindQuery(sel.Larg)
	if err != nil {
		return nil, err
	}
	right, err := b.bindQuery(sel.Rarg)
	if err != nil {
		return nil, err
	}
	opName := map[pg_query.SetOperation]string{
		pg_query.SetOperation_SETOP_UNION: "UNION", pg_query.SetOperation_SETOP_INTERSECT: "INTERSECT",
		pg_query.SetOperation_SETOP_EXCEPT: "EXCEPT",
	}[sel.Op]
	lv, rv := ir.VisibleColumns(left), ir.VisibleColumns(right)
	if len(lv) != len(rv) {
		return nil, sqlerr.New(sqlerr.SyntaxError, "each %s query must have the same number of columns", opName)
	}
	lc, rc := left.Columns(), right.Columns()
	var cols []ir.Column
	var lexprs, rexprs []ir.Expr
	for i := range lv {
		if err := b.retypeUntypedPair(left, right, lv[i], rv[i]); err != nil {
			return nil, err
		}
		l := ir.Expr(&ir.InputRef{Index: lv[i], T: lc[lv[i]].Type, Name: lc[lv[i]].Name})
		r := ir.Expr(&ir.InputRef{Index: rv[i], T: rc[rv[i]].Type, Name: rc[rv[i]].Name})
		t, err := b.commonType([]ir.Expr{l, r}, opName, -1)
		if err != nil {
			return nil, err
		}
		if l, err = b.coerce(l, t, -1); err != nil {
			return nil, err
		}
		if r, err = b.coerce(r, t, -1); err != nil {
			return nil, err
		}
		lexprs, rexprs = append(lexprs, l), append(rexprs, r)
		cols = append(cols, ir.Column{Name: lc[lv[i]].Name, Type: t})
	}
	if sel.Op != pg_query.SetOperation_SETOP_UNION {
		branch := func(v int64) ir.Expr { return &ir.Const{Value: types.DInt(v), T: types.Int32T} }
		lexprs, rexprs = append(lexprs, branch(0)), append(rexprs, branch(1))
	}
	tagged := append(append([]ir.Column(nil), cols...), ir.Column{Name: "$branch", Type: types.Int32T, Hidden: true})
	if sel.Op == pg_query.SetOperation_SETOP_UNION {
		tagged = cols
	}
	union := &ir.UnionAll{
		Inputs: []ir.Rel{
			&ir.Project{Input: left, Exprs: lexprs, Cols: tagged},
			&ir.Project{Input: right, Exprs: rexprs, Cols: tagged},
		},
		Cols: tagged,
	}
	var rel ir.Rel = union
	groupBy := make([]ir.Expr, len(cols))
	for i, c := range cols {
		groupBy[i] = &ir.InputRef{Index: i, T: c.Type, Name: c.Name}
	}
	switch {
	case sel.Op == pg_query.SetOperation_SETOP_UNION && !sel.All:
		rel = b.intervalKeyed(&ir.Aggregate{Input: union, GroupBy: groupBy, Cols: cols})
	case sel.Op != pg_query.SetOperation_SETOP_UNION:
		branchRef := &ir.InputRef{Index: len(cols), T: types.Int32T, Name: "$branch"}
		countOf := func(v int64) ir.AggCall {
			return ir.AggCall{Func: ir.AggCountStar, T: types.Int64T, Filter: &ir.Call{Fn: ir.FnEq, T: types.BoolT,
				Args: []ir.Expr{branchRef, &ir.Const{Value: types.DInt(v), T: types.Int32T}}}}
		}
		aggCols := append(append([]ir.Column(nil), cols...),
			ir.Column{Name: "$left", Type: types.Int64T}, ir.Column{Name: "$right", Type: types.Int64T})
		agg := b.intervalKeyed(&ir.Aggregate{Input: union, GroupBy: groupBy, Aggs: []ir.AggCall{countOf(0), countOf(1)}, Cols: aggCols})
		n := len(cols)
		cmp := func(fn string, col int) ir.Expr {
			return &ir.Call{Fn: fn, T: types.BoolT, Args: []ir.Expr{
				&ir.InputRef{Index: col, T: types.Int64T}, &ir.Const{Value: types.DInt(0), T: types.Int64T}}}
		}
		if sel.All {
			// Each row min(l, r) times (INTERSECT ALL) or l - r times (EXCEPT
			// ALL), l and r its numbers of copies on each side.
			l := &ir.InputRef{Index: n, T: types.Int64T, Name: "$left"}
			r := &ir.InputRef{Index: n + 1, T: types.Int64T, Name: "$right"}
			copies := ir.Expr(&ir.Call{Fn: ir.FnLeast, T: types.Int64T, Args: []ir.Expr{l, r}})
			if sel.Op == pg_query.SetOperation_SETOP_EXCEPT {
				copies = &ir.Call{Fn: ir.FnSub, T: types.Int64T, Args: []ir.Expr{l, r}}
			}
			counted := &ir.Project{Input: agg, Exprs: append(append([]ir.Expr(nil), groupBy...), copies),
				Cols: append(append([]ir.Column(nil), cols...), ir.Column{Name: "$copies", Type: types.Int64T})}
			expanded := &ir.Expand{Input: counted, Count: n,
				Cols: append(append([]ir.Column(nil), counted.Cols...), ir.Column{Name: "$copy", Type: types.Int64T, Hidden: true})}
			rel = &ir.Project{Input: expanded, Exprs: groupBy, Cols: cols}
			break
		}
		keep := cmp(ir.FnGt, n+1)
		if sel.Op == pg_query.SetOperation_SETOP_EXCEPT {
			keep = cmp(ir.FnEq, n+1)
		}
		filtered := &ir.Filter{Input: agg, Pred: &ir.Call{Fn: ir.FnAnd, T: types.BoolT, Args: []ir.Expr{cmp(ir.FnGt, n), keep}}}
		rel = &ir.Project{Input: filtered, Exprs: groupBy, Cols: cols}
	}
	return b.bindSortLimit(sel, rel, nil, nil)
}

// retypeUntypedPair gives an untyped literal column of one side of a set
// operation the type of the other side's column, when that one is typed.
func (b *binder) retypeUntypedPair(left, right ir.Rel, lcol, rcol int) error {
	llit, lok := b.untypedColumn(left, lcol)
	rlit, rok := b.untypedColumn(right, rcol)
	switch {
	case lok && !rok:
		return b.retypeUntyped(left, lcol, llit, right.Columns()[rcol].Type)
	case rok && !lok:
		return b.retypeUntyped(right, rcol, rlit, left.Columns()[lcol].Type)
	}
	return nil
}
