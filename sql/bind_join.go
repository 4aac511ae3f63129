package sql

import (
	pg_query "github.com/pganalyze/pg_query_go/v6"
	"github.com/streamsql/streamsql/sqlerr"
	"github.com/streamsql/streamsql/types"
)

// cte is a bound WITH query, visible by name in the FROM clauses of the
// query that declares it.
type cte struct {
	rel  Rel
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
		vis := VisibleColumns(rel)
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
func (b *binder) bindFrom(items []*pg_query.Node) (Rel, *scope, error) {
	if len(items) == 0 {
		return &Values{Rows: [][]Expr{{}}}, &scope{}, nil
	}
	rel, sc, err := b.bindFromItem(items[0])
	if err != nil {
		return nil, nil, err
	}
	for _, item := range items[1:] {
		right, rsc, err := b.bindFromItem(item)
		if err != nil {
			return nil, nil, err
		}
		rel = &Join{Type: InnerJoin, Left: rel, Right: right}
		sc = concatScopes(sc, rsc)
	}
	return rel, sc, nil
}

func concatScopes(a, b *scope) *scope {
	return &scope{cols: append(append([]scopeCol(nil), a.cols...), b.cols...)}
}

// bindJoinExpr binds JOIN ... ON / USING / NATURAL JOIN.
func (b *binder) bindJoinExpr(j *pg_query.JoinExpr) (Rel, *scope, error) {
	var typ JoinType
	switch j.Jointype {
	case pg_query.JoinType_JOIN_INNER:
		typ = InnerJoin
	case pg_query.JoinType_JOIN_LEFT:
		typ = LeftJoin
	case pg_query.JoinType_JOIN_RIGHT:
		typ = RightJoin
	case pg_query.JoinType_JOIN_FULL:
		typ = FullJoin
	default:
		return nil, nil, sqlerr.Unsupported("join type %s", j.Jointype)
	}
	left, lsc, err := b.bindFromItem(j.Larg)
	if err != nil {
		return nil, nil, err
	}
	right, rsc, err := b.bindFromItem(j.Rarg)
	if err != nil {
		return nil, nil, err
	}
	sc := concatScopes(lsc, rsc)
	nl := len(lsc.cols)
	join := &Join{Type: typ, Left: left, Right: right}

	// USING and NATURAL: equalities on the named (or all common) columns; the
	// joined columns appear once, from the left side (the right side for a
	// right join).
	var using []string
	if j.IsNatural {
		for _, lc := range lsc.cols {
			if lc.hidden {
				continue
			}
			for _, rc := range rsc.cols {
				if !rc.hidden && rc.name == lc.name {
					using = append(using, lc.name)
				}
			}
		}
	}
	for _, u := range j.UsingClause {
		using = append(using, u.GetString_().Sval)
	}
	if len(using) > 0 && typ == FullJoin {
		return nil, nil, sqlerr.Unsupported("FULL JOIN with USING or NATURAL")
	}
	var conds []Expr
	for _, name := range using {
		li, ri := -1, -1
		for i, c := range lsc.cols {
			if c.name == name && !c.hidden {
				li = i
			}
		}
		for i, c := range rsc.cols {
			if c.name == name && !c.hidden {
				ri = i
			}
		}
		if li < 0 || ri < 0 {
			return nil, nil, sqlerr.New(sqlerr.UndefinedColumn, "column \"%s\" specified in USING clause does not exist in %s table", name, map[bool]string{true: "left", false: "right"}[li < 0])
		}
		eq, err := b.resolveCall(FnEq, []Expr{
			&InputRef{Index: li, T: lsc.cols[li].t, Name: name},
			&InputRef{Index: nl + ri, T: rsc.cols[ri].t, Name: name},
		}, -1)
		if err != nil {
			return nil, nil, err
		}
		conds = append(conds, eq)
		if typ == RightJoin {
			sc.cols[li].hidden = true
		} else {
			sc.cols[nl+ri].hidden = true
		}
	}
	if j.Quals != nil {
		on, err := b.bindExpr(&exprCtx{scope: sc, clause: "JOIN conditions"}, j.Quals)
		if err != nil {
			return nil, nil, err
		}
		if on, err = b.requireBool(on, "argument of JOIN/ON", exprLocation(j.Quals)); err != nil {
			return nil, nil, err
		}
		conds = append(conds, on)
	}
	splitJoinCondition(join, nl, conjunction(conds))
	if j.Alias != nil {
		for i := range sc.cols {
			sc.cols[i].table = j.Alias.Aliasname
		}
		if err := applyColumnAliases(sc, j.Alias.Colnames); err != nil {
			return nil, nil, err
		}
	}
	return join, sc, nil
}

// conjunction ANDs conditions (nil for none).
func conjunction(conds []Expr) Expr {
	switch len(conds) {
	case 0:
		return nil
	case 1:
		return conds[0]
	}
	return &Call{Fn: FnAnd, Args: conds, T: types.BoolT}
}

// Conjuncts splits an AND tree into its conjuncts.
func Conjuncts(e Expr) []Expr {
	if e == nil {
		return nil
	}
	if c, ok := e.(*Call); ok && c.Fn == FnAnd {
		var out []Expr
		for _, a := range c.Args {
			out = append(out, Conjuncts(a)...)
		}
		return out
	}
	return []Expr{e}
}

// SideOf reports which inputs of a join an expression over the
// concatenated columns references: bit 0 the left (columns < nl), bit 1 the
// right.
func SideOf(e Expr, nl int) int {
	sides := 0
	Walk(e, func(x Expr) bool {
		if ref, ok := x.(*InputRef); ok {
			if ref.Index < nl {
				sides |= 1
			} else {
				sides |= 2
			}
		}
		return true
	})
	return sides
}

// ShiftRefs returns e with every column reference moved by delta.
func ShiftRefs(e Expr, delta int) Expr {
	return Rewrite(e, func(x Expr) Expr {
		if ref, ok := x.(*InputRef); ok {
			return &InputRef{Index: ref.Index + delta, T: ref.T, Name: ref.Name}
		}
		return x
	})
}

// splitJoinCondition turns the equalities of cond between a left and a right
// expression into join keys and keeps the rest as the join's residual
// condition.
func splitJoinCondition(j *Join, nl int, cond Expr) {
	var rest []Expr
	for _, c := range Conjuncts(cond) {
		if call, ok := c.(*Call); ok && call.Fn == FnEq && len(call.Args) == 2 {
			l, r := call.Args[0], call.Args[1]
			ls, rs := SideOf(l, nl), SideOf(r, nl)
			if ls == 2 && rs == 1 {
				l, r, ls, rs = r, l, rs, ls
			}
			if ls == 1 && rs == 2 && l.Type() == r.Type() {
				j.LeftKeys = append(j.LeftKeys, l)
				j.RightKeys = append(j.RightKeys, ShiftRefs(r, -nl))
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
	// outer is the scope of the query enclosing a correlated subquery.
	outer *scope
}

// lookup finds column col (of relation table, if not empty) in sc. It
// returns -1 if there is none; tableSeen says whether table is in scope.
func (sc *scope) lookup(table, col string) (idx int, tableSeen, ambiguous bool) {
	idx = -1
	for i, c := range sc.cols {
		if table != "" && c.table != table {
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
func (b *binder) cteRef(rv *pg_query.RangeVar) (Rel, *scope, bool) {
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
