package sql

import (
	pg_query "github.com/pganalyze/pg_query_go/v6"
	"github.com/streamsql/streamsql/ir"
	"github.com/streamsql/streamsql/sqlerr"
	"github.com/streamsql/streamsql/types"
)

// Subqueries become joins. In a WHERE clause, a top-level conjunct
// [NOT] EXISTS (...) becomes a semi (anti) join correlated on the equalities
// between the subquery's and the outer query's columns; x [NOT] IN
// (SELECT y ...) becomes a semi (null-aware anti) join on x = y, and
// x op ANY/ALL (SELECT y ...) a semi or anti join on the condition x op y. A
// scalar subquery in a WHERE or HAVING conjunct or in the select list becomes
// a left join of the query with the subquery's value (one row, or one row per
// correlation key: see bind_correlate.go), and the subquery's value a column.

// outerRef is a reference from a correlated subquery to column Index of the
// scope of the query Depth levels around it (1: the query immediately
// around it). It only lives during binding.
type outerRef struct {
	Depth int
	Index int
	T     types.T
	Name  string
}

func (e *outerRef) Type() types.T { return e.T }
func (e *outerRef) String() string {
	if e.Depth > 1 {
		return "outer" + itoa(int64(e.Depth)) + "." + e.Name
	}
	return "outer." + e.Name
}

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
	joins []scalarJoin
}

// scalarJoin is a scalar subquery to left-join with the query: rel has at
// most one row per value of rightKeys (one row in all without keys), which
// match leftKeys over the query's columns; value, over rel's columns, is the
// subquery's value.
//
// A subquery that needs the general decorrelation has dep set instead.
type scalarJoin struct {
	rel                 ir.Rel
	leftKeys, rightKeys []ir.Expr
	value               ir.Expr
	dep                 *dependentSub
}

// bindScalarSubquery binds a scalar subquery and returns the expression
// standing for its value.
func (b *binder) bindScalarSubquery(ctx *exprCtx, s *pg_query.SubLink) (ir.Expr, error) {
	if ctx.subs == nil {
		return nil, b.errAt(s.Location, sqlerr.Unsupported("subqueries in %s", clauseName(ctx)))
	}
	sq, err := b.bindSubquery(s, ctx.scope)
	if err == errNotCorrelation {
		return b.bindDependentScalar(ctx, s)
	}
	if err != nil {
		return nil, err
	}
	if len(sq.cols) != 1 {
		return nil, b.errAt(s.Location, sqlerr.New(sqlerr.SyntaxError, "subquery must return only one column"))
	}
	rel, c := sq.rel, sq.cols[0]
	cols := rel.Columns()
	sj := scalarJoin{value: &ir.InputRef{Index: c, T: cols[c].Type, Name: cols[c].Name}}
	switch {
	case len(sq.outerKeys) == 0 && singleRow(rel):
	case sq.aggregated:
		// A key without inner rows gets the aggregate's value over no rows;
		// the join pads the key column with NULL exactly then.
		if !isNullConst(sq.empty[0]) {
			k := sq.keyCols[0]
			sj.value = &ir.Case{T: cols[c].Type, Else: sj.value, Whens: []ir.When{{
				Cond: &ir.Call{Fn: ir.FnIsNull, T: types.BoolT, Args: []ir.Expr{&ir.InputRef{Index: k, T: cols[k].Type, Name: cols[k].Name}}},
				Then: sq.empty[0],
			}}}
		}
	case len(sq.outerKeys) > 0 && uniqueOn(rel, sq.keyCols):
		// A lookup by primary key: at most one row per key.
	default:
		// Any number of rows: one value per key, an error for several.
		rel = singleValue(rel, c, sq.keyCols)
		sq.rel = rel
		for i := range sq.keyCols {
			sq.keyCols[i] = 1 + i
		}
		sj.value = &ir.InputRef{Index: 0, T: cols[c].Type, Name: cols[c].Name}
	}
	sj.rel = rel
	if sj.leftKeys, sj.rightKeys, err = b.joinKeys(sq); err != nil {
		return nil, err
	}
	ctx.subs.joins = append(ctx.subs.joins, sj)
	return &scalarRef{Index: len(ctx.subs.joins) - 1, T: sj.value.Type()}, nil
}

func clauseName(ctx *exprCtx) string {
	if ctx.clause == "" {
		return "this context"
	}
	return ctx.clause
}

// singleRow reports whether rel produces at most one row.
func singleRow(rel ir.Rel) bool {
	switch r := rel.(type) {
	case *ir.Aggregate:
		return len(r.GroupBy) == 0
	case *ir.Project:
		return singleRow(r.Input)
	case *ir.Filter:
		return singleRow(r.Input)
	case *ir.Sort:
		return singleRow(r.Input)
	case *ir.Limit:
		return r.Count >= 0 && r.Count <= 1 && !r.WithTies || singleRow(r.Input)
	case *ir.Values:
		return len(r.Rows) <= 1
	}
	return false
}

// joinScalarSubqueries left-joins input with each collected subquery. The
// subqueries' join keys are over input's columns after rewriteKey, if set
// (the outer scope of subqueries above an aggregation is the aggregation's
// input). It returns the join and a function that replaces the scalarRefs of
// an expression over input with the subqueries' values.
func joinScalarSubqueries(input ir.Rel, subs *subqueries, rewriteKey func(ir.Expr) (ir.Expr, error)) (ir.Rel, func(ir.Expr) ir.Expr, error) {
	values := make([]ir.Expr, len(subs.joins))
	// A subquery's keys may hold the value of one collected before it (x
	// IN (...) where x has a subquery).
	resolve := func(e ir.Expr) ir.Expr {
		return ir.Rewrite(e, func(x ir.Expr) ir.Expr {
			if r, ok := x.(*scalarRef); ok && values[r.Index] != nil {
				return values[r.Index]
			}
			return x
		})
	}
	for i, sj := range subs.joins {
		keys := sj.leftKeys
		if sj.dep != nil {
			keys = sj.dep.domain
		}
		keys = append([]ir.Expr(nil), keys...)
		for k, e := range keys {
			if rewriteKey != nil {
				var err error
				if e, err = rewriteKey(e); err != nil {
					return nil, nil, err
				}
			}
			keys[k] = resolve(e)
		}
		if sj.dep != nil {
			var err error
			if input, values[i], err = sj.dep.join(input, keys); err != nil {
				return nil, nil, err
			}
			continue
		}
		values[i] = ir.ShiftRefs(sj.value, len(input.Columns()))
		input = &ir.Join{Type: ir.LeftJoin, Left: input, Right: sj.rel, LeftKeys: keys, RightKeys: sj.rightKeys}
	}
	return input, resolve, nil
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

// semiJoinSubLink recognises [NOT] EXISTS (...), x [NOT] IN (SELECT ...)
// and x op ANY/ALL (SELECT ...) conjuncts.
func semiJoinSubLink(n *pg_query.Node) (s *pg_query.SubLink, negated bool) {
	if be := n.GetBoolExpr(); be != nil && be.Boolop == pg_query.BoolExprType_NOT_EXPR && len(be.Args) == 1 {
		s, neg := semiJoinSubLink(be.Args[0])
		return s, s != nil && !neg
	}
	s = n.GetSubLink()
	if s == nil {
		return nil, false
	}
	switch s.SubLinkType {
	case pg_query.SubLinkType_EXISTS_SUBLINK, pg_query.SubLinkType_ANY_SUBLINK, pg_query.SubLinkType_ALL_SUBLINK:
		return s, false
	}
	return nil, false
}

// bindWhereClause binds a WHERE clause over input (whose columns are sc):
// EXISTS and IN subqueries become semi and anti joins, scalar subqueries
// joined columns, and the rest a filter. The result has sc's columns first.
func (b *binder) bindWhereClause(input ir.Rel, sc *scope, where *pg_query.Node) (ir.Rel, error) {
	subs := &subqueries{}
	var preds []ir.Expr
	for _, c := range rawConjuncts(where) {
		if s, negated := semiJoinSubLink(c); s != nil {
			var j ir.Rel
			var err error
			if s.SubLinkType == pg_query.SubLinkType_EXISTS_SUBLINK {
				j, err = b.bindExists(input, sc, s, negated)
			} else {
				j, err = b.bindQuantified(input, sc, s, negated)
			}
			if err == nil {
				input = j
				continue
			}
			// Not of a form a semi join expresses: the subquery's value
			// as a column (bind_decorrelate.go), which reports the error
			// if there is one.
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
	if len(subs.joins) > 0 {
		var resolve func(ir.Expr) ir.Expr
		var err error
		if input, resolve, err = joinScalarSubqueries(input, subs, nil); err != nil {
			return nil, err
		}
		for i, p := range preds {
			preds[i] = resolve(p)
		}
	}
	if len(preds) > 0 {
		input = &ir.Filter{Input: input, Pred: conjunction(preds)}
	}
	return input, nil
}

// negatedComparison is NOT (x op y) as a comparison, which holds in SQL's
// three-valued logic too.
var negatedComparison = map[string]string{ir.FnEq: ir.FnNe, ir.FnNe: ir.FnEq, ir.FnLt: ir.FnGe, ir.FnGe: ir.FnLt, ir.FnGt: ir.FnLe, ir.FnLe: ir.FnGt}

// comparisonOps are the operators of ANY and ALL subqueries.
var comparisonOps = map[string]string{"=": ir.FnEq, "<>": ir.FnNe, "<": ir.FnLt, "<=": ir.FnLe, ">": ir.FnGt, ">=": ir.FnGe}

// bindQuantified binds x [NOT] IN (SELECT y ...) and x op ANY/ALL (SELECT y
// ...), possibly correlated, as a join of input with the subquery: IN (=
// ANY) is a semi join on x = y; NOT IN (<> ALL) uncorrelated a null-aware
// anti join on x = y; op ANY a semi join on the condition x op y; op ALL an
// anti join on the condition (x op y) IS NOT TRUE. NOT flips ANY and ALL and
// negates op.
func (b *binder) bindQuantified(input ir.Rel, sc *scope, s *pg_query.SubLink, negated bool) (ir.Rel, error) {
	if s.Testexpr.GetRowExpr() != nil {
		return nil, b.errAt(s.Location, sqlerr.Unsupported("row-valued IN subqueries"))
	}
	op := opName(s.OperName)
	if op == "" {
		op = "=" // IN
	}
	fn, ok := comparisonOps[op]
	if !ok {
		return nil, b.errAt(s.Location, sqlerr.Unsupported("operator %s with ANY or ALL", op))
	}
	all := s.SubLinkType == pg_query.SubLinkType_ALL_SUBLINK
	if negated {
		fn, all = negatedComparison[fn], !all
	}
	x, err := b.bindExpr(&exprCtx{scope: sc, clause: "WHERE"}, s.Testexpr)
	if err != nil {
		return nil, err
	}
	sq, err := b.bindSubquery(s, sc)
	if err != nil {
		return nil, err
	}
	if len(sq.cols) != 1 {
		return nil, b.errAt(s.Location, sqlerr.New(sqlerr.SyntaxError, "subquery has too many columns"))
	}
	c := sq.cols[0]
	col := sq.rel.Columns()[c]
	var y ir.Expr = &ir.InputRef{Index: c, T: col.Type, Name: col.Name}
	t, err := b.commonType([]ir.Expr{x, y}, "IN", s.Location)
	if err != nil {
		return nil, err
	}
	if x, err = b.coerce(x, t, s.Location); err != nil {
		return nil, err
	}
	if y, err = b.coerce(y, t, s.Location); err != nil {
		return nil, err
	}
	join := &ir.Join{Left: input, Right: sq.rel}
	if join.LeftKeys, join.RightKeys, err = b.joinKeys(sq); err != nil {
		return nil, err
	}
	switch {
	case fn == ir.FnEq && !all:
		join.Type = ir.SemiJoin
		join.LeftKeys = append([]ir.Expr{x}, join.LeftKeys...)
		join.RightKeys = append([]ir.Expr{y}, join.RightKeys...)
		return join, nil
	case fn == ir.FnNe && all && len(sq.outerKeys) == 0:
		join.Type = ir.NullAwareAntiJoin
		join.LeftKeys, join.RightKeys = []ir.Expr{x}, []ir.Expr{y}
		return join, nil
	}
	// Over the input's columns followed by the subquery's.
	cond, err := b.bindComparison(fn, x, ir.ShiftRefs(y, len(input.Columns())), s.Location)
	if err != nil {
		return nil, err
	}
	join.Type = ir.SemiJoin
	if all {
		join.Type = ir.AntiJoin
		cond = &ir.Call{Fn: ir.FnNot, T: types.BoolT, Args: []ir.Expr{&ir.Call{Fn: ir.FnIsTrue, T: types.BoolT, Args: []ir.Expr{cond}}}}
	}
	join.Cond = cond
	return join, nil
}

// bindExists binds [NOT] EXISTS (SELECT ... FROM ... WHERE ...) as a semi
// (anti) join of input with the subquery's FROM: the subquery's conditions on
// its own columns filter it, equalities between its columns and the outer
// query's are the join keys, and the other correlated conditions the join's
// residual condition.
func (b *binder) bindExists(input ir.Rel, sc *scope, s *pg_query.SubLink, negated bool) (ir.Rel, error) {
	sel := s.Subselect.GetSelectStmt()
	switch {
	case sel == nil, sel.Op != pg_query.SetOperation_SETOP_NONE, len(sel.ValuesLists) > 0:
		return nil, b.errAt(s.Location, sqlerr.Unsupported("this form of EXISTS subquery"))
	case len(sel.GroupClause) > 0, sel.HavingClause != nil, sel.LimitCount != nil, sel.LimitOffset != nil:
		return nil, b.errAt(s.Location, sqlerr.Unsupported("GROUP BY, HAVING or LIMIT in an EXISTS subquery"))
	}
	nOuter := len(sc.cols)
	join := &ir.Join{Type: ir.SemiJoin, Left: input}
	if negated {
		join.Type = ir.AntiJoin
	}
	saved := b.outer
	defer func() { b.outer = saved }()
	err := b.withCTEs(sel.WithClause, func() error {
		b.outer = nil
		sub, subSc, err := b.bindFrom(sel.FromClause)
		if err != nil {
			return err
		}
		var local []*pg_query.Node
		var residual []ir.Expr
		for _, c := range rawConjuncts(sel.WhereClause) {
			if c == nil {
				continue
			}
			// Only the query immediately around: references further out
			// need the general decorrelation (bind_decorrelate.go).
			b.outer = []*scope{sc}
			e, err := b.bindExpr(&exprCtx{scope: subSc, clause: "WHERE"}, c)
			b.outer = nil
			if err != nil || !hasOuterRef(e) {
				// Conditions on the subquery's own columns, and those that
				// do not bind here (subqueries), are bound below as the
				// subquery's WHERE clause.
				local = append(local, c)
				continue
			}
			if e, err = b.requireBool(e, "argument of WHERE", exprLocation(c)); err != nil {
				return err
			}
			if call, ok := e.(*ir.Call); ok && call.Fn == ir.FnEq {
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
			residual = append(residual, outerToInput(ir.ShiftRefs(e, nOuter)))
		}
		if len(local) > 0 {
			// The result has subSc's columns first, which the keys and the
			// residual condition refer to.
			if sub, err = b.bindWhereClause(sub, subSc, andNodes(local)); err != nil {
				return err
			}
		}
		join.Right = sub
		join.Cond = conjunction(residual)
		return nil
	})
	if err != nil {
		return nil, err
	}
	return join, nil
}

func hasOuterRef(e ir.Expr) bool {
	found := false
	ir.Walk(e, func(x ir.Expr) bool {
		if _, ok := x.(*outerRef); ok {
			found = true
		}
		return !found
	})
	return found
}

// onlyOuter reports whether e references outer columns and no inner ones.
func onlyOuter(e ir.Expr) bool {
	inner := false
	ir.Walk(e, func(x ir.Expr) bool {
		if _, ok := x.(*ir.InputRef); ok {
			inner = true
		}
		return true
	})
	return !inner && hasOuterRef(e)
}

// refsOnly reports whether e references at least one inner column.
func refsOnly(e ir.Expr) bool {
	found := false
	ir.Walk(e, func(x ir.Expr) bool {
		if _, ok := x.(*ir.InputRef); ok {
			found = true
		}
		return true
	})
	return found
}

// outerToInput turns outer references into references to the same columns
// of the join's left input.
func outerToInput(e ir.Expr) ir.Expr {
	return ir.Rewrite(e, func(x ir.Expr) ir.Expr {
		if r, ok := x.(*outerRef); ok {
			return &ir.InputRef{Index: r.Index, T: r.T, Name: r.Name}
		}
		return x
	})
}
