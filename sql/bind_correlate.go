package sql

import (
	pg_query "github.com/pganalyze/pg_query_go/v6"
	"github.com/streamsql/streamsql/ir"
	"github.com/streamsql/streamsql/sqlerr"
	"github.com/streamsql/streamsql/types"
)

// Correlated subqueries are decorrelated into joins. The WHERE clause of a
// subquery is split into conditions on its own columns, which stay, and
// equalities between one of its expressions and an expression of the outer
// query, the correlation. The subquery is then bound without the
// correlation, with its inner expressions as extra output columns (and extra
// GROUP BY keys if it aggregates), and joined with the outer query on
// outer = inner. So
//
//	SELECT ... FROM o WHERE o.x > (SELECT avg(y) FROM i WHERE i.k = o.k)
//
// becomes a left join of o with (SELECT avg(y), i.k FROM i GROUP BY i.k) on
// o.k = i.k. A key without inner rows has no row in the grouped subquery, so
// the join pads its value with NULL; where the subquery's value over no rows
// is not NULL (count(*)), that value is substituted.

// subqueryRel is a subquery bound for a join with the query around it.
type subqueryRel struct {
	rel ir.Rel
	// cols are the positions of the subquery's own (visible) output columns
	// in rel.
	cols []int
	// outerKeys[i] = column keyCols[i] of rel is the correlation, compared as
	// keyTypes[i]; outerKeys are over the outer scope.
	outerKeys []ir.Expr
	keyCols   []int
	keyTypes  []types.T
	// aggregated: the subquery aggregates without GROUP BY, so it has exactly
	// one row per correlation key that has inner rows, and empty[i] is the
	// (constant) value of own column i for a key without any.
	aggregated bool
	empty      []ir.Expr
}

// correlation is one equality between an outer and an inner expression.
type correlation struct {
	outer ir.Expr // over the outer scope
	inner *pg_query.Node
	t     types.T // the common type
}

// bindSubquery binds the SELECT of a subquery whose enclosing query's scope
// is outer (nil: none). It returns errNotCorrelation for a correlated
// subquery that is not of this form, which bindDependent decorrelates.
func (b *binder) bindSubquery(s *pg_query.SubLink, outer *scope) (*subqueryRel, error) {
	sel := s.Subselect.GetSelectStmt()
	if sel == nil {
		return nil, b.errAt(s.Location, sqlerr.Unsupported("this kind of subquery"))
	}
	var keys []correlation
	var local []*pg_query.Node
	aggregates := false
	if outer != nil && sel.Op == pg_query.SetOperation_SETOP_NONE && len(sel.ValuesLists) == 0 && sel.WhereClause != nil {
		keys, local, aggregates = b.splitCorrelation(sel, outer)
	}
	if len(keys) == 0 {
		rel, err := b.bindUncorrelated(sel, outer)
		if err != nil {
			return nil, err
		}
		return &subqueryRel{rel: rel, cols: ir.VisibleColumns(rel)}, nil
	}
	if sel.LimitCount != nil || sel.LimitOffset != nil || sel.HavingClause != nil {
		return nil, errNotCorrelation
	}
	// The subquery without its correlation, and without ORDER BY, which
	// does not matter without LIMIT.
	nsel := &pg_query.SelectStmt{
		Op:             pg_query.SetOperation_SETOP_NONE,
		DistinctClause: sel.DistinctClause,
		TargetList:     sel.TargetList,
		FromClause:     sel.FromClause,
		WhereClause:    andNodes(local),
		GroupClause:    sel.GroupClause,
		WindowClause:   sel.WindowClause,
		WithClause:     sel.WithClause,
		LockingClause:  sel.LockingClause,
		IntoClause:     sel.IntoClause,
	}
	nsel.TargetList = append([]*pg_query.Node(nil), sel.TargetList...)
	nsel.GroupClause = append([]*pg_query.Node(nil), sel.GroupClause...)
	for _, k := range keys {
		nsel.TargetList = append(nsel.TargetList, pg_query.MakeResTargetNodeWithVal(k.inner, -1))
		if aggregates {
			nsel.GroupClause = append(nsel.GroupClause, k.inner)
		}
	}
	rel, err := b.bindUncorrelated(nsel, outer)
	if err != nil {
		return nil, err
	}
	if relHasWindow(rel) {
		// The windows would have to be partitioned by the correlation too.
		return nil, errNotCorrelation
	}
	sq := &subqueryRel{rel: rel}
	width := len(rel.Columns()) - len(keys)
	for i := 0; i < width; i++ {
		sq.cols = append(sq.cols, i)
	}
	for i, k := range keys {
		sq.outerKeys = append(sq.outerKeys, k.outer)
		sq.keyCols = append(sq.keyCols, width+i)
		sq.keyTypes = append(sq.keyTypes, k.t)
	}
	if aggregates && len(sel.GroupClause) == 0 && len(sel.DistinctClause) == 0 {
		empty, ok := emptyGroupValues(rel, width, len(keys))
		if !ok {
			return nil, errNotCorrelation
		}
		sq.aggregated, sq.empty = true, empty
	}
	return sq, nil
}

// bindUncorrelated binds sel on its own. When it fails for want of a column
// or table, and there is an outer scope, the subquery may be correlated
// otherwise than by equalities: errNotCorrelation sends it to the general
// decorrelation, which reports the error if there is one.
func (b *binder) bindUncorrelated(sel *pg_query.SelectStmt, outer *scope) (ir.Rel, error) {
	saved := b.outer
	b.outer = nil
	rel, err := b.bindQuery(sel)
	b.outer = saved
	if err == nil {
		return rel, nil
	}
	if code := sqlerr.Code(err); outer != nil && (code == sqlerr.UndefinedColumn || code == sqlerr.UndefinedTable) {
		return nil, errNotCorrelation
	}
	return nil, err
}

// splitCorrelation sorts the WHERE conjuncts of sel into the correlation
// equalities and the local conditions, and says whether sel aggregates. It
// finds no correlation (and leaves the errors to the binding of the whole
// subquery) if a conjunct or the select list does not bind here, or a
// conjunct is correlated otherwise than by an equality.
func (b *binder) splitCorrelation(sel *pg_query.SelectStmt, outer *scope) ([]correlation, []*pg_query.Node, bool) {
	var keys []correlation
	var local []*pg_query.Node
	var aggs []ir.AggCall
	saved := b.outer
	defer func() { b.outer = saved }()
	ok := b.withCTEs(sel.WithClause, func() error {
		b.outer = nil
		_, sc, err := b.bindFrom(sel.FromClause)
		if err != nil {
			return err
		}
		b.outer = []*scope{outer}
		ctx := &exprCtx{scope: sc, clause: "WHERE"}
		for _, c := range rawConjuncts(sel.WhereClause) {
			e, err := b.bindExpr(ctx, c)
			if err != nil {
				return err
			}
			if !hasOuterRef(e) {
				local = append(local, c)
				continue
			}
			k, ok := b.correlationKey(ctx, c)
			if !ok {
				return errNotCorrelation
			}
			keys = append(keys, k)
		}
		// Aggregates in the select list (the inner scope only).
		b.outer = nil
		actx := &exprCtx{scope: sc, aggs: &aggs, clause: "SELECT"}
		for _, t := range sel.TargetList {
			v := t.GetResTarget().GetVal()
			if cr := v.GetColumnRef(); cr != nil {
				if _, star := cr.Fields[len(cr.Fields)-1].Node.(*pg_query.Node_AStar); star {
					continue
				}
			}
			if _, err := b.bindExpr(actx, v); err != nil {
				return err
			}
		}
		return nil
	}) == nil
	if !ok {
		return nil, nil, false
	}
	return keys, local, len(aggs) > 0 || len(sel.GroupClause) > 0 || sel.HavingClause != nil
}

// errNotCorrelation says that a subquery is correlated otherwise than the
// equality decorrelation handles; it never reaches the user.
var errNotCorrelation = sqlerr.New(sqlerr.FeatureNotSupported, "not a correlation")

// correlationKey recognises outer = inner (either way round), where outer
// references only outer columns and inner only the subquery's.
func (b *binder) correlationKey(ctx *exprCtx, n *pg_query.Node) (correlation, bool) {
	ae := n.GetAExpr()
	if ae == nil || ae.Kind != pg_query.A_Expr_Kind_AEXPR_OP || opName(ae.Name) != "=" {
		return correlation{}, false
	}
	l, err := b.bindExpr(ctx, ae.Lexpr)
	if err != nil {
		return correlation{}, false
	}
	r, err := b.bindExpr(ctx, ae.Rexpr)
	if err != nil {
		return correlation{}, false
	}
	inner := ae.Rexpr
	if onlyOuter(r) && !hasOuterRef(l) {
		l, r, inner = r, l, ae.Lexpr
	}
	if !onlyOuter(l) || hasOuterRef(r) || !refsOnly(r) {
		return correlation{}, false
	}
	t, err := b.commonType([]ir.Expr{l, r}, "=", -1)
	if err != nil {
		return correlation{}, false
	}
	return correlation{outer: outerToInput(l), inner: inner, t: t}, true
}

// withCTEs runs fn with the CTEs of w in scope.
func (b *binder) withCTEs(w *pg_query.WithClause, fn func() error) error {
	if w == nil {
		return fn()
	}
	saved, savedDepth := b.ctes, b.cteDepth
	b.ctes, b.cteDepth = cloneCTEs(saved, savedDepth)
	b.depth++
	defer func() { b.ctes, b.cteDepth = saved, savedDepth; b.depth-- }()
	if err := b.bindWith(w); err != nil {
		return err
	}
	return fn()
}

func andNodes(ns []*pg_query.Node) *pg_query.Node {
	switch len(ns) {
	case 0:
		return nil
	case 1:
		return ns[0]
	}
	return pg_query.MakeBoolExprNode(pg_query.BoolExprType_AND_EXPR, ns, -1)
}

// emptyGroupValues returns the values of the first width columns of an
// aggregating SELECT grouped by nkeys correlation keys (a Project over an
// Aggregate whose group columns are the keys) for a group without rows:
// count is 0, other aggregates and the keys are NULL.
func emptyGroupValues(rel ir.Rel, width, nkeys int) ([]ir.Expr, bool) {
	p, ok := rel.(*ir.Project)
	if !ok {
		return nil, false
	}
	agg, ok := p.Input.(*ir.Aggregate)
	if !ok || len(agg.GroupBy) != nkeys {
		return nil, false
	}
	out := make([]ir.Expr, width)
	for i := 0; i < width; i++ {
		out[i] = ir.Rewrite(p.Exprs[i], func(x ir.Expr) ir.Expr {
			ref, ok := x.(*ir.InputRef)
			if !ok {
				return x
			}
			if ref.Index >= nkeys {
				if f := agg.Aggs[ref.Index-nkeys].Func; f == ir.AggCount || f == ir.AggCountStar || f == ir.AggApproxCountDistinct {
					return &ir.Const{Value: types.DInt(0), T: ref.T}
				}
			}
			return &ir.Const{Value: types.Null, T: ref.T}
		})
	}
	return out, true
}

// isNullConst reports whether e is the constant NULL.
func isNullConst(e ir.Expr) bool {
	c, ok := e.(*ir.Const)
	return ok && c.Value.Null
}

// joinKeys returns the correlation of sq as join keys: over the outer scope
// and over sq.rel's columns, converted to their common types.
func (b *binder) joinKeys(sq *subqueryRel) (left, right []ir.Expr, err error) {
	cols := sq.rel.Columns()
	for i, o := range sq.outerKeys {
		c := sq.keyCols[i]
		l, err := b.coerce(o, sq.keyTypes[i], -1)
		if err != nil {
			return nil, nil, err
		}
		r, err := b.coerce(&ir.InputRef{Index: c, T: cols[c].Type, Name: cols[c].Name}, sq.keyTypes[i], -1)
		if err != nil {
			return nil, nil, err
		}
		left, right = append(left, l), append(right, r)
	}
	return left, right, nil
}

// singleValue aggregates the rows of a one-column subquery (column col of
// rel), grouped by the columns keys: its output is the value (error 21000 if
// a group has several rows) followed by the keys.
func singleValue(rel ir.Rel, col int, keys []int) ir.Rel {
	cols := rel.Columns()
	vt := cols[col].Type
	agg := &ir.Aggregate{Input: rel}
	for _, k := range keys {
		agg.GroupBy = append(agg.GroupBy, &ir.InputRef{Index: k, T: cols[k].Type, Name: cols[k].Name})
		agg.Cols = append(agg.Cols, ir.Column{Name: cols[k].Name, Type: cols[k].Type})
	}
	agg.Aggs = []ir.AggCall{
		{Func: ir.AggCountStar, T: types.Int64T},
		{Func: ir.AggMin, Arg: &ir.InputRef{Index: col, T: vt, Name: cols[col].Name}, T: vt},
	}
	agg.Cols = append(agg.Cols, ir.Column{Name: "count", Type: types.Int64T}, ir.Column{Name: cols[col].Name, Type: vt})
	nk := len(keys)
	p := &ir.Project{Input: agg}
	p.Exprs = append(p.Exprs, &ir.Call{Fn: ir.FnSingleRow, T: vt, Args: []ir.Expr{
		&ir.InputRef{Index: nk, T: types.Int64T, Name: "count"},
		&ir.InputRef{Index: nk + 1, T: vt, Name: cols[col].Name},
	}})
	p.Cols = append(p.Cols, ir.Column{Name: cols[col].Name, Type: vt})
	for i := range keys {
		p.Exprs = append(p.Exprs, &ir.InputRef{Index: i, T: agg.Cols[i].Type, Name: agg.Cols[i].Name})
		p.Cols = append(p.Cols, agg.Cols[i])
	}
	return p
}

// uniqueOn reports whether rel has at most one row per value of the columns
// cols: they are a table's primary key, through projections and filters.
func uniqueOn(rel ir.Rel, cols []int) bool {
	for {
		switch r := rel.(type) {
		case *ir.Filter:
			rel = r.Input
			continue
		case *ir.Project:
			next := make([]int, len(cols))
			for i, c := range cols {
				ref, ok := r.Exprs[c].(*ir.InputRef)
				if !ok {
					return false
				}
				next[i] = ref.Index
			}
			rel, cols = r.Input, next
			continue
		case *ir.Scan:
			if !r.Relation.PrimaryKey {
				return false
			}
			for _, k := range r.Relation.Key {
				found := false
				for _, c := range cols {
					found = found || c == k
				}
				if !found {
					return false
				}
			}
			return true
		}
		return false
	}
}
