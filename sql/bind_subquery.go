package sql

import (
	pg_query "github.com/pganalyze/pg_query_go/v6"
	"github.com/streamsql/streamsql/sqlerr"
	"github.com/streamsql/streamsql/types"
)

// Subqueries become joins. In a WHERE clause, a top-level conjunct
// [NOT] EXISTS (...) becomes a semi (anti) join correlated on the equalities
// between the subquery's and the outer query's columns; x [NOT] IN
// (SELECT y ...) becomes a semi (null-aware anti) join on x = y. A scalar
// subquery (one column, at most one row: an aggregate without GROUP BY)
// anywhere in a WHERE or HAVING conjunct becomes a left join of the query
// with the subquery's single row, and the subquery's value a column.

// outerRef is a reference from a correlated subquery to column Index of the
// enclosing query's scope. It only lives during binding.
type outerRef struct {
	Index int
	T     types.T
	Name  string
}

func (e *outerRef) Type() types.T  { return e.T }
func (e *outerRef) String() string { return "outer." + e.Name }

// scalarRef stands for the value of scalar subquery Index of the clause
// being bound until the subqueries are joined in.
type scalarRef struct {
	Index int
	T     types.T
}

func (e *scalarRef) Type() types.T  { return e.T }
func (e *scalarRef) String() string { return "subquery#" + itoa(int64(e.Index)) }

// subqueries collects the scalar subqueries of one clause.
type subqueries struct {
	rels []Rel
}

// bindScalarSubquery binds an uncorrelated scalar subquery and returns the
// expression standing for its value.
func (b *binder) bindScalarSubquery(ctx *exprCtx, s *pg_query.SubLink) (Expr, error) {
	if ctx.subs == nil {
		return nil, b.errAt(s.Location, sqlerr.Unsupported("subqueries in %s", clauseName(ctx)))
	}
	rel, err := b.bindSubqueryRel(s)
	if err != nil {
		return nil, err
	}
	vis := VisibleColumns(rel)
	if len(vis) != 1 {
		return nil, b.errAt(s.Location, sqlerr.New(sqlerr.SyntaxError, "subquery must return only one column"))
	}
	if !singleRow(rel) {
		return nil, b.errAt(s.Location, sqlerr.Unsupported("scalar subqueries that may return more than one row (use an aggregate without GROUP BY)"))
	}
	if len(rel.Columns()) != 1 {
		col := rel.Columns()[vis[0]]
		rel = &Project{Input: rel, Exprs: []Expr{&InputRef{Index: vis[0], T: col.Type, Name: col.Name}}, Cols: []Column{col}}
	}
	ctx.subs.rels = append(ctx.subs.rels, rel)
	return &scalarRef{Index: len(ctx.subs.rels) - 1, T: rel.Columns()[0].Type}, nil
}

func clauseName(ctx *exprCtx) string {
	if ctx.clause == "" {
		return "this context"
	}
	return ctx.clause
}

// bindSubqueryRel binds a subquery's SELECT with the current scope visible
// as the outer scope, and refuses correlated references (the callers that
// handle correlation bind the subquery themselves).
func (b *binder) bindSubqueryRel(s *pg_query.SubLink) (Rel, error) {
	sel := s.Subselect.GetSelectStmt()
	if sel == nil {
		return nil, b.errAt(s.Location, sqlerr.Unsupported("this kind of subquery"))
	}
	saved := b.outer
	b.outer = nil
	rel, err := b.bindQuery(sel)
	b.outer = saved
	if err != nil {
		if sqlerr.Code(err) == sqlerr.UndefinedColumn && saved != nil {
			return nil, b.errAt(s.Location, sqlerr.Unsupported("correlated subqueries other than EXISTS"))
		}
		return nil, err
	}
	return rel, nil
}

// singleRow reports whether rel produces at most one row.
func singleRow(rel Rel) bool {
	switch r := rel.(type) {
	case *Aggregate:
		return len(r.GroupBy) == 0
	case *Project:
		return singleRow(r.Input)
	case *Filter:
		return singleRow(r.Input)
	case *Sort:
		return singleRow(r.Input)
	case *Limit:
		return r.Count >= 0 && r.Count <= 1 || singleRow(r.Input)
	case *Values:
		return len(r.Rows) <= 1
	}
	return false
}

// joinScalarSubqueries left-joins input with each collected subquery (one
// row each) and returns the join and the column index of the first
// subquery's value.
func joinScalarSubqueries(input Rel, subs *subqueries) (Rel, int) {
	base := len(input.Columns())
	for _, sub := range subs.rels {
		input = &Join{Type: LeftJoin, Left: input, Right: sub}
	}
	return input, base
}

// resolveScalarRefs replaces the scalarRefs of e with references to the
// joined subquery columns starting at base.
func resolveScalarRefs(e Expr, base int) Expr {
	return Rewrite(e, func(x Expr) Expr {
		if r, ok := x.(*scalarRef); ok {
			return &InputRef{Index: base + r.Index, T: r.T, Name: r.String()}
		}
		return x
	})
}

// rawConjuncts splits a WHERE clause's AST at its top-level ANDs.
func rawConjuncts(n *pg_query.Node) []*pg_query.Node {
	if be := n.GetBoolExpr(); be != nil && be.Boolop == pg_query.BoolExprType_AND_EXPR {
		var out []*pg_query.Node
		for _, a := range be.Args {
			out = append(out, rawConjuncts(a)...)
		}
		return out
	}
	return []*pg_query.Node{n}
}

// semiJoinSubLink recognises [NOT] EXISTS (...) and x [NOT] IN (SELECT ...)
// conjuncts.
func semiJoinSubLink(n *pg_query.Node) (s *pg_query.SubLink, negated bool) {
	if be := n.GetBoolExpr(); be != nil && be.Boolop == pg_query.BoolExprType_NOT_EXPR && len(be.Args) == 1 {
		s, _ := semiJoinSubLink(be.Args[0])
		return s, s != nil
	}
	s = n.GetSubLink()
	if s == nil {
		return nil, false
	}
	switch s.SubLinkType {
	case pg_query.SubLinkType_EXISTS_SUBLINK:
		return s, false
	case pg_query.SubLinkType_ANY_SUBLINK:
		if op := opName(s.OperName); op == "" || op == "=" {
			return s, false
		}
	}
	return nil, false
}

// bindWhereClause binds a WHERE clause over input (whose columns are sc):
// EXISTS and IN subqueries become semi and anti joins, scalar subqueries
// joined columns, and the rest a filter. The result has sc's columns first.
func (b *binder) bindWhereClause(input Rel, sc *scope, where *pg_query.Node) (Rel, error) {
	subs := &subqueries{}
	var preds []Expr
	for _, c := range rawConjuncts(where) {
		if s, negated := semiJoinSubLink(c); s != nil {
			var err error
			if s.SubLinkType == pg_query.SubLinkType_EXISTS_SUBLINK {
				input, err = b.bindExists(input, sc, s, negated)
			} else {
				input, err = b.bindInSubquery(input, sc, s, negated)
			}
			if err != nil {
				return nil, err
			}
			continue
		}
		e, err := b.bindExpr(&exprCtx{scope: sc, clause: "WHERE", subs: subs}, c)
		if err != nil {
			return nil, err
		}
		if e, err = b.requireBool(e, "argument of WHERE", exprLocation(c)); err != nil {
			return nil, err
		}
		preds = append(preds, e)
	}
	if len(subs.rels) > 0 {
		var base int
		input, base = joinScalarSubqueries(input, subs)
		for i, p := range preds {
			preds[i] = resolveScalarRefs(p, base)
		}
	}
	if len(preds) > 0 {
		input = &Filter{Input: input, Pred: conjunction(preds)}
	}
	return input, nil
}

// bindInSubquery binds x [NOT] IN (SELECT y ...) as a semi join (NOT IN: a
// null-aware anti join) of input with the subquery on x = y.
func (b *binder) bindInSubquery(input Rel, sc *scope, s *pg_query.SubLink, negated bool) (Rel, error) {
	if s.Testexpr.GetRowExpr() != nil {
		return nil, b.errAt(s.Location, sqlerr.Unsupported("row-valued IN subqueries"))
	}
	x, err := b.bindExpr(&exprCtx{scope: sc, clause: "WHERE"}, s.Testexpr)
	if err != nil {
		return nil, err
	}
	sub, err := b.bindSubqueryRel(s)
	if err != nil {
		return nil, err
	}
	vis := VisibleColumns(sub)
	if len(vis) != 1 {
		return nil, b.errAt(s.Location, sqlerr.New(sqlerr.SyntaxError, "subquery has too many columns"))
	}
	col := sub.Columns()[vis[0]]
	var y Expr = &InputRef{Index: vis[0], T: col.Type, Name: col.Name}
	t, err := b.commonType([]Expr{x, y}, "IN", s.Location)
	if err != nil {
		return nil, err
	}
	if x, err = b.coerce(x, t, s.Location); err != nil {
		return nil, err
	}
	if y, err = b.coerce(y, t, s.Location); err != nil {
		return nil, err
	}
	typ := SemiJoin
	if negated {
		typ = NullAwareAntiJoin
	}
	return &Join{Type: typ, Left: input, Right: sub, LeftKeys: []Expr{x}, RightKeys: []Expr{y}}, nil
}

// bindExists binds [NOT] EXISTS (SELECT ... FROM ... WHERE ...) as a semi
// (anti) join of input with the subquery's FROM: the subquery's conditions on
// its own columns filter it, equalities between its columns and the outer
// query's are the join keys, and the other correlated conditions the join's
// residual condition.
func (b *binder) bindExists(input Rel, sc *scope, s *pg_query.SubLink, negated bool) (Rel, error) {
	sel := s.Subselect.GetSelectStmt()
	switch {
	case sel == nil, sel.Op != pg_query.SetOperation_SETOP_NONE, len(sel.ValuesLists) > 0:
		return nil, b.errAt(s.Location, sqlerr.Unsupported("this form of EXISTS subquery"))
	case len(sel.GroupClause) > 0, sel.HavingClause != nil, sel.LimitCount != nil, sel.LimitOffset != nil, sel.WithClause != nil:
		return nil, b.errAt(s.Location, sqlerr.Unsupported("GROUP BY, HAVING, LIMIT or WITH in an EXISTS subquery"))
	}
	sub, subSc, err := b.bindFrom(sel.FromClause)
	if err != nil {
		return nil, err
	}
	nOuter := len(sc.cols)
	join := &Join{Type: SemiJoin, Left: input}
	if negated {
		join.Type = AntiJoin
	}
	var local, residual []Expr
	if sel.WhereClause != nil {
		saved := b.outer
		b.outer = sc
		defer func() { b.outer = saved }()
		for _, c := range rawConjuncts(sel.WhereClause) {
			e, err := b.bindExpr(&exprCtx{scope: subSc, clause: "WHERE"}, c)
			if err != nil {
				return nil, err
			}
			if e, err = b.requireBool(e, "argument of WHERE", exprLocation(c)); err != nil {
				return nil, err
			}
			if !hasOuterRef(e) {
				local = append(local, e)
				continue
			}
			if call, ok := e.(*Call); ok && call.Fn == FnEq {
				l, r := call.Args[0], call.Args[1]
				if onlyOuter(r) && !hasOuterRef(l) {
					l, r = r, l
				}
				if onlyOuter(l) && !hasOuterRef(r) && refsOnly(r) {
					join.LeftKeys = append(join.LeftKeys, outerToInput(l))
					join.RightKeys = append(join.RightKeys, r)
					continue
				}
			}
			// Over the outer columns followed by the subquery's.
			residual = append(residual, outerToInput(ShiftRefs(e, nOuter)))
		}
	}
	if len(local) > 0 {
		sub = &Filter{Input: sub, Pred: conjunction(local)}
	}
	join.Right = sub
	join.Cond = conjunction(residual)
	return join, nil
}

func hasOuterRef(e Expr) bool {
	found := false
	Walk(e, func(x Expr) bool {
		if _, ok := x.(*outerRef); ok {
			found = true
		}
		return !found
	})
	return found
}

// onlyOuter reports whether e references outer columns and no inner ones.
func onlyOuter(e Expr) bool {
	inner := false
	Walk(e, func(x Expr) bool {
		if _, ok := x.(*InputRef); ok {
			inner = true
		}
		return true
	})
	return !inner && hasOuterRef(e)
}

// refsOnly reports whether e references at least one inner column.
func refsOnly(e Expr) bool {
	found := false
	Walk(e, func(x Expr) bool {
		if _, ok := x.(*InputRef); ok {
			found = true
		}
		return true
	})
	return found
}

// outerToInput turns outer references into references to the same columns
// of the join's left input.
func outerToInput(e Expr) Expr {
	return Rewrite(e, func(x Expr) Expr {
		if r, ok := x.(*outerRef); ok {
			return &InputRef{Index: r.Index, T: r.T, Name: r.Name}
		}
		return x
	})
}
