package sql

import (
	pg_query "github.com/pganalyze/pg_query_go/v6"
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
func (b *binder) bindSetOp(sel *pg_query.SelectStmt) (Rel, error) {
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
	lv, rv := VisibleColumns(left), VisibleColumns(right)
	if len(lv) != len(rv) {
		return nil, sqlerr.New(sqlerr.SyntaxError, "each %s query must have the same number of columns", opName)
	}
	lc, rc := left.Columns(), right.Columns()
	var cols []Column
	var lexprs, rexprs []Expr
	for i := range lv {
		if err := b.retypeUntypedPair(left, right, lv[i], rv[i]); err != nil {
			return nil, err
		}
		l := Expr(&InputRef{Index: lv[i], T: lc[lv[i]].Type, Name: lc[lv[i]].Name})
		r := Expr(&InputRef{Index: rv[i], T: rc[rv[i]].Type, Name: rc[rv[i]].Name})
		t, err := b.commonType([]Expr{l, r}, opName, -1)
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
		cols = append(cols, Column{Name: lc[lv[i]].Name, Type: t})
	}
	if sel.Op != pg_query.SetOperation_SETOP_UNION {
		branch := func(v int64) Expr { return &Const{Value: types.DInt(v), T: types.Int32T} }
		lexprs, rexprs = append(lexprs, branch(0)), append(rexprs, branch(1))
	}
	tagged := append(append([]Column(nil), cols...), Column{Name: "$branch", Type: types.Int32T, Hidden: true})
	if sel.Op == pg_query.SetOperation_SETOP_UNION {
		tagged = cols
	}
	union := &UnionAll{
		Inputs: []Rel{
			&Project{Input: left, Exprs: lexprs, Cols: tagged},
			&Project{Input: right, Exprs: rexprs, Cols: tagged},
		},
		Cols: tagged,
	}
	var rel Rel = union
	groupBy := make([]Expr, len(cols))
	for i, c := range cols {
		groupBy[i] = &InputRef{Index: i, T: c.Type, Name: c.Name}
	}
	switch {
	case sel.Op == pg_query.SetOperation_SETOP_UNION && !sel.All:
		rel = b.intervalKeyed(&Aggregate{Input: union, GroupBy: groupBy, Cols: cols})
	case sel.Op != pg_query.SetOperation_SETOP_UNION:
		branchRef := &InputRef{Index: len(cols), T: types.Int32T, Name: "$branch"}
		countOf := func(v int64) AggCall {
			return AggCall{Func: AggCountStar, T: types.Int64T, Filter: &Call{Fn: FnEq, T: types.BoolT,
				Args: []Expr{branchRef, &Const{Value: types.DInt(v), T: types.Int32T}}}}
		}
		aggCols := append(append([]Column(nil), cols...),
			Column{Name: "$left", Type: types.Int64T}, Column{Name: "$right", Type: types.Int64T})
		agg := b.intervalKeyed(&Aggregate{Input: union, GroupBy: groupBy, Aggs: []AggCall{countOf(0), countOf(1)}, Cols: aggCols})
		n := len(cols)
		cmp := func(fn string, col int) Expr {
			return &Call{Fn: fn, T: types.BoolT, Args: []Expr{
				&InputRef{Index: col, T: types.Int64T}, &Const{Value: types.DInt(0), T: types.Int64T}}}
		}
		if sel.All {
			// Each row min(l, r) times (INTERSECT ALL) or l - r times (EXCEPT
			// ALL), l and r its numbers of copies on each side.
			l := &InputRef{Index: n, T: types.Int64T, Name: "$left"}
			r := &InputRef{Index: n + 1, T: types.Int64T, Name: "$right"}
			copies := Expr(&Call{Fn: FnLeast, T: types.Int64T, Args: []Expr{l, r}})
			if sel.Op == pg_query.SetOperation_SETOP_EXCEPT {
				copies = &Call{Fn: FnSub, T: types.Int64T, Args: []Expr{l, r}}
			}
			counted := &Project{Input: agg, Exprs: append(append([]Expr(nil), groupBy...), copies),
				Cols: append(append([]Column(nil), cols...), Column{Name: "$copies", Type: types.Int64T})}
			expanded := &Expand{Input: counted, Count: n,
				Cols: append(append([]Column(nil), counted.Cols...), Column{Name: "$copy", Type: types.Int64T, Hidden: true})}
			rel = &Project{Input: expanded, Exprs: groupBy, Cols: cols}
			break
		}
		keep := cmp(FnGt, n+1)
		if sel.Op == pg_query.SetOperation_SETOP_EXCEPT {
			keep = cmp(FnEq, n+1)
		}
		filtered := &Filter{Input: agg, Pred: &Call{Fn: FnAnd, T: types.BoolT, Args: []Expr{cmp(FnGt, n), keep}}}
		rel = &Project{Input: filtered, Exprs: groupBy, Cols: cols}
	}
	return b.bindSortLimit(sel, rel, nil, nil)
}

// retypeUntypedPair gives an untyped literal column of one side of a set
// operation the type of the other side's column, when that one is typed.
func (b *binder) retypeUntypedPair(left, right Rel, lcol, rcol int) error {
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
