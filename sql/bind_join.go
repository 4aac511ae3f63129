package sql

import (
	pg_query "github.com/pganalyze/pg_query_go/v6"
	"github.com/streamsql/streamsql/ir"
	"github.com/streamsql/streamsql/sqlerr"
	"github.com/streamsql/streamsql/types"
)

// cte is a bound WITH query, visible by name in the FROM clauses of the
// query that declares it.
type cte struct {
	rel  ir.Rel
	cols []string
}

// bindWith binds the WITH clause of a query; each CTE sees the ones before it.
func (b *binder) bindWith(w *pg_query.WithClause) error {
	if w == nil {
		return nil
	}
	if w.Recursive {
		return b.errAt(w.Location, sqlerr.Unsupported("WITH RECURSIVE"))
	}
	for _, n := range w.Ctes {
		c := n.GetCommonTableExpr()
		sel := c.Ctequery.GetSelectStmt()
		if sel == nil {
			return b.errAt(c.Location, sqlerr.Unsupported("data-modifying statements in WITH"))
		}
		rel, err := b.bindQuery(sel)
		if err != nil {
			return err
		}
		if _, dup := b.ctes[c.Ctename]; dup && b.cteDepth[c.Ctename] == b.depth {
			return b.errAt(c.Location, sqlerr.New(sqlerr.DuplicateAlias, "WITH query name \"%s\" specified more than once", c.Ctename))
		}
		def := &cte{rel: rel}
		for _, col := range rel.Columns() {
			def.cols = append(def.cols, col.Name)
		}
		vis := ir.VisibleColumns(rel)
		if len(c.Aliascolnames) > len(vis) {
			return b.errAt(c.Location, sqlerr.New(sqlerr.InvalidColumnReference,
				"WITH query \"%s\" has %d columns available but %d columns specified", c.Ctename, len(vis), len(c.Aliascolnames)))
		}
		for i, a := range c.Aliascolnames {
			def.cols[vis[i]] = a.GetString_().Sval
		}
		if b.ctes == nil {
			b.ctes = map[string]*cte{}
			b.cteDepth = map[string]int{}
		}
		b.ctes[c.Ctename] = def
		b.cteDepth[c.Ctename] = b.depth
	}
	return nil
}

// bindFrom binds a FROM list: several items are an inner join without
// condition (the WHERE clause's conditions are pushed into it by the planner).
func (b *binder) bindFrom(items []*pg_query.Node) (ir.Rel, *scope, error) {
	if len(items) == 0 {
		return &ir.Values{Rows: [][]ir.Expr{{}}}, &scope{}, nil
	}
	rel, sc, err := b.bindFromItem(items[0])
	if err != nil {
		return nil, nil, err
	}
	for _, item := range items[1:] {
		if rf := item.GetRangeFunction(); rf != nil {
			if calls := unnestCalls(rf); calls != nil {
				// A function in FROM sees the items before it (LATERAL).
				if rel, sc, err = b.bindUnnest(rf, calls, rel, sc); err != nil {
					return nil, nil, err
				}
				continue
			}
		}
		if rs := lateralSubselect(item); rs != nil {
			if rel, sc, _, err = b.bindLateral(rs, ir.InnerJoin, nil, rel, sc); err != nil {
				return nil, nil, err
			}
			continue
		}
		right, rsc, err := b.bindFromItem(item)
		if err != nil {
			return nil, nil, err
		}
		rel = &ir.Join{Type: ir.InnerJoin, Left: rel, Right: right}
		sc = concatScopes(sc, rsc)
	}
	return rel, sc, nil
}

func concatScopes(a, b *scope) *scope {
	return &scope{cols: append(append([]scopeCol(nil), a.cols...), b.cols...)}
}

// bindJoinExpr binds JOIN ... ON / USING / NATURAL JOIN.
func (b *binder) bindJoinExpr(j *pg_query.JoinExpr) (ir.Rel, *scope, error) {
	var typ ir.JoinType
	switch j.Jointype {
	case pg_query.JoinType_JOIN_INNER:
		typ = ir.InnerJoin
	case pg_query.JoinType_JOIN_LEFT:
		typ = ir.LeftJoin
	case pg_query.JoinType_JOIN_RIGHT:
		typ = ir.RightJoin
	case pg_query.JoinType_JOIN_FULL:
		typ = ir.FullJoin
	default:
		return nil, nil, sqlerr.Unsupported("join type %s", j.Jointype)
	}
	left, lsc, err := b.bindFromItem(j.Larg)
	if err != nil {
		return nil, nil, err
	}
	if rf := j.Rarg.GetRangeFunction(); rf != nil {
		if calls := unnestCalls(rf); calls != nil {
			return b.joinUnnest(j, typ, rf, calls, left, lsc)
		}
	}
	if rs := lateralSubselect(j.Rarg); rs != nil {
		if j.IsNatural || len(j.UsingClause) > 0 {
			return nil, nil, sqlerr.Unsupported("JOIN LATERAL with USING or NATURAL")
		}
		rel, sc, ok, err := b.bindLateral(rs, typ, j.Quals, left, lsc)
		if err != nil {
			return nil, nil, err
		}
		if ok {
			return rel, sc, applyJoinAlias(sc, j.Alias)
		}
	}
	right, rsc, err := b.bindFromItem(j.Rarg)
	if err != nil {
		return nil, nil, err
	}
	sc := concatScopes(lsc, rsc)
	nl := len(lsc.cols)
	join := &ir.Join{Type: typ, Left: left, Right: right}

	// USING and NATURAL: equalities on the named (or all common) columns.
	var using []string
	if j.IsNatural {
		for _, lc := range lsc.cols {
			if !lc.visible() {
				continue
			}
			for _, rc := range rsc.cols {
				if rc.visible() && rc.name == lc.name {
					using = append(using, lc.name)
				}
			}
		}
	}
	for _, u := range j.UsingClause {
		using = append(using, u.GetString_().Sval)
	}
	var conds []ir.Expr
	var merged []usingColumn
	for _, name := range using {
		li, err := usingIndex(lsc, name, "left")
		if err != nil {
			return nil, nil, err
		}
		ri, err := usingIndex(rsc, name, "right")
		if err != nil {
			return nil, nil, err
		}
		b.noteRead(lsc.cols[li])
		b.noteRead(rsc.cols[ri])
		l := ir.Expr(&ir.InputRef{Index: li, T: lsc.cols[li].t, Name: name})
		r := ir.Expr(&ir.InputRef{Index: nl + ri, T: rsc.cols[ri].t, Name: name})
		t, err := b.commonType([]ir.Expr{l, r}, "JOIN/USING", -1)
		if err != nil {
			return nil, nil, err
		}
		if l, err = b.coerce(l, t, -1); err != nil {
			return nil, nil, err
		}
		if r, err = b.coerce(r, t, -1); err != nil {
			return nil, nil, err
		}
		eq, err := b.resolveCall(ir.FnEq, []ir.Expr{l, r}, -1)
		if err != nil {
			return nil, nil, err
		}
		conds = append(conds, eq)
		merged = append(merged, usingColumn{name: name, left: l, right: r, t: t})
		sc.cols[li].usingDup = true
		sc.cols[nl+ri].usingDup = true
	}
	onSubs := &subqueries{}
	var subCond ir.Expr
	if j.Quals != nil {
		on, err := b.bindExpr(&exprCtx{scope: sc, clause: "JOIN conditions", subs: onSubs}, j.Quals)
		if err != nil {
			return nil, nil, err
		}
		if on, err = b.requireBool(on, "argument of JOIN/ON", exprLocation(j.Quals)); err != nil {
			return nil, nil, err
		}
		if len(onSubs.joins) > 0 && typ != ir.InnerJoin {
			return nil, nil, b.errAt(exprLocation(j.Quals), sqlerr.Unsupported("subqueries in the ON condition of an outer join"))
		}
		var withSubs []ir.Expr
		for _, c := range ir.Conjuncts(on) {
			if hasScalarRef(c) {
				withSubs = append(withSubs, c)
			} else {
				conds = append(conds, c)
			}
		}
		if len(withSubs) > 0 {
			subCond = conjunction(withSubs)
		}
	}
	splitJoinCondition(join, nl, conjunction(conds))
	var rel ir.Rel = join
	if subCond != nil {
		// An inner join's condition filters the joined rows: the
		// subqueries join them, and the filter drops their columns.
		in, resolve, err := joinScalarSubqueries(join, onSubs, nil)
		if err != nil {
			return nil, nil, err
		}
		rel = reorder(&ir.Filter{Input: in, Pred: resolve(subCond)}, seq(0, width(join)))
	}
	if loc, ok := fromItemLocation(j.Rarg); ok && b.takeAsof(loc) {
		if subCond != nil {
			return nil, nil, b.errAt(loc, sqlerr.Unsupported("subqueries in the ON condition of an ASOF JOIN"))
		}
		if len(merged) > 0 {
			return nil, nil, b.errAt(loc, sqlerr.Unsupported("ASOF JOIN with USING or NATURAL"))
		}
		if rel, err = b.asofJoin(join, nl, loc); err != nil {
			return nil, nil, err
		}
	}
	if len(merged) > 0 {
		if rel, sc, err = b.mergeUsingColumns(join, sc, merged); err != nil {
			return nil, nil, err
		}
	}
	if err := applyJoinAlias(sc, j.Alias); err != nil {
		return nil, nil, err
	}
	return rel, sc, nil
}

// applyJoinAlias names the columns of a join's scope sc by the join's
// alias, if any.
func applyJoinAlias(sc *scope, alias *pg_query.Alias) error {
	if alias == nil {
		return nil
	}
	for i := range sc.cols {
		if sc.cols[i].usingDup {
			// The alias hides the joined tables' names, and with them
			// the only way to reach these columns.
			sc.cols[i].table, sc.cols[i].hidden = "", true
			continue
		}
		sc.cols[i].table = alias.Aliasname
	}
	return applyColumnAliases(sc, alias.Colnames)
}

// usingColumn is one column of JOIN USING: the two sides' columns converted
// to their common type.
type usingColumn struct {
	name        string
	left, right ir.Expr // over the join's columns
	t           types.T
}

// usingIndex finds the USING column name among a join input's columns.
func usingIndex(sc *scope, name, side string) (int, error) {
	idx := -1
	for i, c := range sc.cols {
		if c.name != name || !c.visible() {
			continue
		}
		if idx >= 0 {
			return -1, sqlerr.New(sqlerr.AmbiguousColumn, "common column name \"%s\" appears more than once in %s table", name, side)
		}
		idx = i
	}
	if idx < 0 {
		return -1, sqlerr.New(sqlerr.UndefinedColumn, "column \"%s\" specified in USING clause does not exist in %s table", name, side)
	}
	return idx, nil
}

// mergeUsingColumns projects a JOIN USING (or NATURAL JOIN) as PostgreSQL
// shows it: the joined columns once, first (the left value for inner and left
// joins, the right value for right joins, the non-NULL one for full joins),
// then the other columns of each side. The sides' own copies of the joined
// columns stay reachable qualified (l.k) only.
func (b *binder) mergeUsingColumns(join *ir.Join, sc *scope, merged []usingColumn) (ir.Rel, *scope, error) {
	p := &ir.Project{Input: join}
	out := &scope{}
	for _, m := range merged {
		var e ir.Expr
		switch join.Type {
		case ir.RightJoin:
			e = m.right
		case ir.FullJoin:
			var err error
			if e, err = b.resolveCall(ir.FnCoalesce, []ir.Expr{m.left, m.right}, -1); err != nil {
				return nil, nil, err
			}
		default:
			e = m.left
		}
		p.Exprs = append(p.Exprs, e)
		p.Cols = append(p.Cols, ir.Column{Name: m.name, Type: m.t})
		out.cols = append(out.cols, scopeCol{name: m.name, t: m.t})
	}
	for i, c := range sc.cols {
		p.Exprs = append(p.Exprs, &ir.InputRef{Index: i, T: c.t, Name: c.name})
		p.Cols = append(p.Cols, ir.Column{Name: c.name, Type: c.t, Hidden: c.hidden})
		out.cols = append(out.cols, c)
	}
	return p, out, nil
}

// conjunction ANDs conditions (nil for none).
func conjunction(conds []ir.Expr) ir.Expr {
	switch len(conds) {
	case 0:
		return nil
	case 1:
		return conds[0]
	}
	return &ir.Call{Fn: ir.FnAnd, Args: conds, T: types.BoolT}
}

// splitJoinCondition turns the equalities of cond between a left and a right
// expression into join keys and keeps the rest as the join's residual
// condition.
func splitJoinCondition(j *ir.Join, nl int, cond ir.Expr) {
	var rest []ir.Expr
	for _, c := range ir.Conjuncts(cond) {
		if call, ok := c.(*ir.Call); ok && call.Fn == ir.FnEq && len(call.Args) == 2 {
			l, r := call.Args[0], call.Args[1]
			ls, rs := ir.SideOf(l, nl), ir.SideOf(r, nl)
			if ls == 2 && rs == 1 {
				l, r, ls, rs = r, l, rs, ls
			}
			if ls == 1 && rs == 2 && ir.KeyCompatible(l.Type(), r.Type()) {
				j.LeftKeys = append(j.LeftKeys, l)
				j.RightKeys = append(j.RightKeys, ir.ShiftRefs(r, -nl))
				continue
			}
		}
		rest = append(rest, c)
	}
	j.Cond = conjunction(rest)
}

// queryState is the binder's state for nested queries: the CTEs in scope
// and the subqueries of the expression being bound.
type queryState struct {
	ctes map[string]*cte
	// cteDepth is the query nesting depth that declared each CTE; depth is
	// the current one.
	cteDepth map[string]int
	depth    int
	// outer are the scopes of the queries enclosing a subquery, the nearest
	// first: a column not in the subquery's own scope is looked up in each
	// in turn and becomes an outerRef.
	outer []*scope
}

// lookup finds column col (of relation table, if not empty) in sc. It
// returns -1 if there is none; tableSeen says whether table is in scope.
func (sc *scope) lookup(table, col string) (idx int, tableSeen, ambiguous bool) {
	idx = -1
	for i, c := range sc.cols {
		if table != "" && c.table != table || table == "" && c.usingDup {
			continue
		}
		tableSeen = true
		if c.name != col {
			continue
		}
		if idx >= 0 {
			return idx, tableSeen, true
		}
		idx = i
	}
	return idx, tableSeen, false
}

func cloneCTEs(m map[string]*cte, depth map[string]int) (map[string]*cte, map[string]int) {
	c := make(map[string]*cte, len(m))
	d := make(map[string]int, len(depth))
	for k, v := range m {
		c[k] = v
		d[k] = depth[k]
	}
	return c, d
}

// cteRef resolves an unqualified FROM name to a CTE in scope.
func (b *binder) cteRef(rv *pg_query.RangeVar) (ir.Rel, *scope, bool) {
	if rv.Schemaname != "" || rv.Catalogname != "" {
		return nil, nil, false
	}
	def := b.ctes[rv.Relname]
	if def == nil {
		return nil, nil, false
	}
	alias := rv.Relname
	if rv.Alias != nil {
		alias = rv.Alias.Aliasname
	}
	sc := &scope{}
	for i, c := range def.rel.Columns() {
		sc.cols = append(sc.cols, scopeCol{table: alias, name: def.cols[i], t: c.Type, hidden: c.Hidden})
	}
	if rv.Alias != nil {
		if err := applyColumnAliases(sc, rv.Alias.Colnames); err != nil {
			return nil, nil, false
		}
	}
	return def.rel, sc, true
}
