package sql

import (
	pg_query "github.com/pganalyze/pg_query_go/v6"
	"github.com/streamsql/streamsql/ir"
	"github.com/streamsql/streamsql/sqlerr"
	"github.com/streamsql/streamsql/types"
)

// General decorrelation, after Neumann and Kemper, "Unnesting Arbitrary
// Queries" (BTW 2015). A subquery that the equality decorrelation of
// bind_correlate.go and the semi joins of bind_subquery.go do not handle is
// bound as it is, with its references to enclosing queries left in place
// (outerRefs, at any depth, anywhere in it): a dependent relation. Its
// domain is the distinct values of the outer expressions it depends on (the
// outer columns it references, and for x IN (...) the value x):
//
//	D = SELECT DISTINCT <domain> FROM <outer query>
//
// The decorrelator pushes D down the dependent relation until no outer
// reference is left: a part without outer references is cross-joined with
// D, every operator above carries D's columns (a projection passes them
// through, a grouping groups by them too, a LIMIT becomes a TopN per domain
// value), and each outer reference becomes a reference to D's column. The
// result holds, for every domain value, the subquery's rows for that value,
// tagged with it. It is then reduced to one row per domain value (the
// scalar value, whether a row exists, or the ANY/ALL outcome in SQL's
// three-valued logic) and left-joined to the outer query on the domain
// columns, matched NULL-safely (IS NOT DISTINCT FROM). Only joins,
// aggregations, projections and TopNs are used, so a materialized view
// maintains the result incrementally like any other.
//
// An aggregation without GROUP BY yields one row also for no input rows,
// which a grouping by the domain does not: its result is left-joined to D,
// and a domain value without rows gets the aggregates' values over no rows
// (count 0, the others NULL).
//
// A subquery nested in a correlated subquery and referring to a query
// further out has that reference in its own domain: binding the middle
// query decorrelates the inner subquery with D computed over the middle
// query, and D's projection keeps the reference, one level less deep, as an
// outer reference of the middle query, which is in turn decorrelated.

// markKind is what a dependent subquery computes for each outer row.
type markKind uint8

const (
	markScalar markKind = iota // the value of the subquery's one column
	markExists                 // whether it has a row
	markAny                    // x op ANY (...): cond over some row
	markAll                    // x op ALL (...): cond over every row
)

// dependentSub is a subquery bound with its outer references in place.
type dependentSub struct {
	kind markKind
	rel  ir.Rel
	// domain are the values rel depends on, over the enclosing query's
	// scope (outer references of the enclosing query for references from
	// further out); refs maps each outer reference of rel to its domain
	// column.
	domain []ir.Expr
	refs   map[outerKey]int
	// value is the column of rel that a scalar subquery returns.
	value int
	// cond, for ANY and ALL, is x op y over rel's columns followed by the
	// domain's (x is a domain column).
	cond ir.Expr
}

// outerKey identifies an outer reference.
type outerKey struct{ depth, index int }

// bindDependent binds the SELECT of subquery s with the scopes of the
// queries around it visible, outer (the query immediately around) first.
func (b *binder) bindDependent(s *pg_query.SubLink, outer *scope) (ir.Rel, error) {
	sel := s.Subselect.GetSelectStmt()
	if sel == nil {
		return nil, b.errAt(s.Location, sqlerr.Unsupported("this kind of subquery"))
	}
	saved := b.outer
	b.outer = append([]*scope{outer}, saved...)
	defer func() { b.outer = saved }()
	return b.bindQuery(sel)
}

// newDependent makes rel a dependent subquery of the given kind: its domain
// is the outer references in it.
func newDependent(kind markKind, rel ir.Rel) *dependentSub {
	d := &dependentSub{kind: kind, rel: rel, refs: map[outerKey]int{}}
	walkRelExprs(rel, func(e ir.Expr) {
		ir.Walk(e, func(x ir.Expr) bool {
			r, ok := x.(*outerRef)
			if !ok {
				return true
			}
			k := outerKey{r.Depth, r.Index}
			if _, seen := d.refs[k]; seen {
				return true
			}
			d.refs[k] = len(d.domain)
			if r.Depth == 1 {
				d.domain = append(d.domain, &ir.InputRef{Index: r.Index, T: r.T, Name: r.Name})
			} else {
				d.domain = append(d.domain, &outerRef{Depth: r.Depth - 1, Index: r.Index, T: r.T, Name: r.Name})
			}
			return true
		})
	})
	return d
}

// bindDependentScalar binds a scalar subquery that is correlated otherwise
// than by equalities.
func (b *binder) bindDependentScalar(ctx *exprCtx, s *pg_query.SubLink) (ir.Expr, error) {
	rel, err := b.bindDependent(s, ctx.scope)
	if err != nil {
		return nil, err
	}
	cols := ir.VisibleColumns(rel)
	if len(cols) != 1 {
		return nil, b.errAt(s.Location, sqlerr.New(sqlerr.SyntaxError, "subquery must return only one column"))
	}
	d := newDependent(markScalar, rel)
	d.value = cols[0]
	return ctx.subs.add(scalarJoin{dep: d}, rel.Columns()[cols[0]].Type), nil
}

// bindMarkSubquery binds EXISTS (...), x IN (...) and x op ANY/ALL (...) as
// a boolean value, anywhere in an expression.
func (b *binder) bindMarkSubquery(ctx *exprCtx, s *pg_query.SubLink) (ir.Expr, error) {
	switch s.SubLinkType {
	case pg_query.SubLinkType_EXISTS_SUBLINK, pg_query.SubLinkType_ANY_SUBLINK, pg_query.SubLinkType_ALL_SUBLINK:
	default:
		return nil, b.errAt(s.Location, sqlerr.Unsupported("this kind of subquery"))
	}
	if ctx.subs == nil {
		return nil, b.errAt(s.Location, sqlerr.Unsupported("subqueries in %s", clauseName(ctx)))
	}
	if s.SubLinkType == pg_query.SubLinkType_EXISTS_SUBLINK {
		rel, err := b.bindDependent(s, ctx.scope)
		if err != nil {
			return nil, err
		}
		return ctx.subs.add(scalarJoin{dep: newDependent(markExists, rel)}, types.BoolT), nil
	}
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
	x, err := b.bindExpr(ctx, s.Testexpr)
	if err != nil {
		return nil, err
	}
	if hasWinRef(x) {
		return nil, b.errAt(s.Location, sqlerr.Unsupported("window functions left of IN, ANY or ALL with a subquery"))
	}
	rel, err := b.bindDependent(s, ctx.scope)
	if err != nil {
		return nil, err
	}
	cols := ir.VisibleColumns(rel)
	if len(cols) != 1 {
		return nil, b.errAt(s.Location, sqlerr.New(sqlerr.SyntaxError, "subquery has too many columns"))
	}
	kind := markAny
	if s.SubLinkType == pg_query.SubLinkType_ALL_SUBLINK {
		kind = markAll
	}
	d := newDependent(kind, rel)
	col := rel.Columns()[cols[0]]
	var y ir.Expr = &ir.InputRef{Index: cols[0], T: col.Type, Name: col.Name}
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
	xref := &ir.InputRef{Index: len(rel.Columns()) + len(d.domain), T: t, Name: "domain" + itoa(int64(len(d.domain)+1))}
	d.domain = append(d.domain, x)
	if d.cond, err = b.bindComparison(fn, xref, y, s.Location); err != nil {
		return nil, err
	}
	return ctx.subs.add(scalarJoin{dep: d}, types.BoolT), nil
}

func hasScalarRef(e ir.Expr) bool {
	found := false
	ir.Walk(e, func(x ir.Expr) bool {
		_, s := x.(*scalarRef)
		found = found || s
		return !found
	})
	return found
}

func hasWinRef(e ir.Expr) bool {
	found := false
	ir.Walk(e, func(x ir.Expr) bool {
		_, w := x.(*winRef)
		found = found || w
		return !found
	})
	return found
}

// add collects a subquery and returns the expression standing for its
// value.
func (s *subqueries) add(sj scalarJoin, t types.T) ir.Expr {
	s.joins = append(s.joins, sj)
	return &scalarRef{Index: len(s.joins) - 1, T: t}
}

// join left-joins input with the dependent subquery's value for each of
// input's rows; domain are d.domain over input's columns. It returns the
// join and the value, over the join's columns.
func (d *dependentSub) join(input ir.Rel, domain []ir.Expr) (ir.Rel, ir.Expr, error) {
	domain = withTextCompanions(domain)
	nd := len(domain)
	sub := d.rel
	if nd > 0 {
		dom := domainRel(input, domain)
		dc := &decorrelator{domain: dom, nd: nd, refs: d.refs}
		var err error
		if sub, err = dc.rel(sub); err != nil {
			return nil, nil, err
		}
	}
	width := len(d.rel.Columns())
	dcols := make([]int, nd)
	for i := range dcols {
		dcols[i] = width + i
	}
	var per ir.Rel // one row per domain value
	var value ir.Expr
	switch d.kind {
	case markScalar:
		per = sub
		value = colRef(sub, d.value)
		if !singleRow(d.rel) {
			per = singleValue(sub, d.value, dcols)
			value = colRef(per, 0)
			for i := range dcols {
				dcols[i] = 1 + i
			}
		}
	case markExists:
		agg := groupBy(sub, dcols, ir.AggCall{Func: ir.AggCountStar, T: types.Int64T})
		per, dcols = agg, seq(0, nd)
		value = &ir.Call{Fn: ir.FnGt, T: types.BoolT, Args: []ir.Expr{countOrZero(colRef(agg, nd)), int64Const(0)}}
	case markAny, markAll:
		cond := d.cond
		if d.kind == markAll {
			cond = &ir.Call{Fn: ir.FnNot, T: types.BoolT, Args: []ir.Expr{cond}}
		}
		agg := groupBy(sub, dcols, ir.AggCall{Func: ir.AggMax, Arg: truthRank(cond), T: types.Int64T})
		per, dcols = agg, seq(0, nd)
		value = anyOutcome(colRef(agg, nd), d.kind == markAll)
	}
	j := &ir.Join{Type: ir.LeftJoin, Left: input, Right: per}
	matchNullSafe(j, domain, colRefs(per, dcols))
	return j, ir.ShiftRefs(value, len(input.Columns())), nil
}

// domainRel is SELECT DISTINCT domain FROM input.
func domainRel(input ir.Rel, domain []ir.Expr) ir.Rel {
	p := &ir.Project{Input: input, Exprs: domain}
	for i, e := range domain {
		p.Cols = append(p.Cols, ir.Column{Name: "domain" + itoa(int64(i+1)), Type: e.Type(), Hidden: true})
	}
	return groupBy(p, seq(0, len(domain)))
}

// groupBy groups rel by its columns keys and computes aggs: the output is
// the keys, then the aggregates.
func groupBy(rel ir.Rel, keys []int, aggs ...ir.AggCall) *ir.Aggregate {
	cols := rel.Columns()
	a := &ir.Aggregate{Input: rel, Aggs: aggs}
	for _, k := range keys {
		a.GroupBy = append(a.GroupBy, colRef(rel, k))
		a.Cols = append(a.Cols, cols[k])
	}
	for _, c := range aggs {
		a.Cols = append(a.Cols, ir.Column{Name: c.Func, Type: c.T})
	}
	return a
}

// truthRank is 2 when cond is true, 1 when it is NULL, 0 when false: the
// maximum over a set of rows is the outcome of ANY over them.
func truthRank(cond ir.Expr) ir.Expr {
	return &ir.Case{T: types.Int64T, Else: int64Const(0), Whens: []ir.When{
		{Cond: cond, Then: int64Const(2)},
		{Cond: &ir.Call{Fn: ir.FnIsNull, T: types.BoolT, Args: []ir.Expr{cond}}, Then: int64Const(1)},
	}}
}

// anyOutcome turns the maximum truthRank m of ANY's condition into its
// outcome: true (2), NULL (1) or false (0, or NULL m: no rows); negated,
// the outcome of ALL over the negated condition.
func anyOutcome(m ir.Expr, negated bool) ir.Expr {
	t, f := types.DBool(true), types.DBool(false)
	if negated {
		t, f = f, t
	}
	eq := func(v int64) ir.Expr {
		return &ir.Call{Fn: ir.FnEq, T: types.BoolT, Args: []ir.Expr{m, int64Const(v)}}
	}
	return &ir.Case{T: types.BoolT, Else: &ir.Const{Value: f, T: types.BoolT}, Whens: []ir.When{
		{Cond: eq(2), Then: &ir.Const{Value: t, T: types.BoolT}},
		{Cond: eq(1), Then: &ir.Const{Value: types.Null, T: types.BoolT}},
	}}
}

func countOrZero(e ir.Expr) ir.Expr {
	return &ir.Call{Fn: ir.FnCoalesce, T: e.Type(), Args: []ir.Expr{e, &ir.Const{Value: types.DInt(0), T: e.Type()}}}
}

func int64Const(v int64) ir.Expr { return &ir.Const{Value: types.DInt(v), T: types.Int64T} }

func colRef(rel ir.Rel, i int) *ir.InputRef {
	c := rel.Columns()[i]
	return &ir.InputRef{Index: i, T: c.Type, Name: c.Name}
}

func colRefs(rel ir.Rel, idx []int) []ir.Expr {
	out := make([]ir.Expr, len(idx))
	for i, k := range idx {
		out[i] = colRef(rel, k)
	}
	return out
}

// seq is from, from+1, ..., from+n-1.
func seq(from, n int) []int {
	out := make([]int, n)
	for i := range out {
		out[i] = from + i
	}
	return out
}

// withTextCompanions appends to domain the text of each of its intervals.
// Equal intervals may be spelled differently ('1 mon', '30 days') and a
// domain value must be matched with exactly the outer rows it stands for:
// grouped and matched by their text too, they are.
func withTextCompanions(domain []ir.Expr) []ir.Expr {
	out := domain
	for _, e := range domain {
		if e.Type().Kind == types.Interval {
			if len(out) == len(domain) {
				out = append([]ir.Expr(nil), domain...)
			}
			out = append(out, &ir.Cast{Arg: e, T: types.TextT})
		}
	}
	return out
}

// matchNullSafe adds to j the condition that l[i] IS NOT DISTINCT FROM r[i]
// for every i (l over j's left input, r over its right input), domain
// columns: as hash keys l IS NULL = r IS NULL and coalesce(l, v) =
// coalesce(r, v) for a value v of the type. Intervals are matched by their
// text companions (withTextCompanions) instead.
func matchNullSafe(j *ir.Join, l, r []ir.Expr) {
	nl := len(j.Left.Columns())
	var rest []ir.Expr
	for i := range l {
		t := l[i].Type()
		if t.Kind == types.Interval {
			continue
		}
		if !ir.KeyCompatible(t, r[i].Type()) {
			rest = append(rest, &ir.Call{Fn: ir.FnIsNotDistinct, T: types.BoolT, Args: []ir.Expr{l[i], ir.ShiftRefs(r[i], nl)}})
			continue
		}
		if t.Kind == types.Struct {
			// ROW(s) is never NULL, and record equality holds between
			// NULL fields: one key that is exactly IS NOT DISTINCT FROM.
			j.LeftKeys = append(j.LeftKeys, wrapRow(l[i]))
			j.RightKeys = append(j.RightKeys, wrapRow(r[i]))
			continue
		}
		j.LeftKeys = append(j.LeftKeys, isNull(l[i]), orZero(l[i]))
		j.RightKeys = append(j.RightKeys, isNull(r[i]), orZero(r[i]))
	}
	if len(rest) > 0 {
		if j.Cond != nil {
			rest = append([]ir.Expr{j.Cond}, rest...)
		}
		j.Cond = conjunction(rest)
	}
}

func isNull(e ir.Expr) ir.Expr { return &ir.Call{Fn: ir.FnIsNull, T: types.BoolT, Args: []ir.Expr{e}} }

// wrapRow is ROW(e): a one-field struct around a struct e.
func wrapRow(e ir.Expr) ir.Expr {
	return &ir.Call{Fn: ir.FnRow, Args: []ir.Expr{e}, T: types.StructOf([]types.Field{{Name: "f1", Type: e.Type()}})}
}

// orZero is coalesce(e, v) for the zero value v of e's type: a valid
// value, as hash keys encode it (JSON null for jsonb). Structs are matched
// by wrapRow instead.
func orZero(e ir.Expr) ir.Expr {
	zero := types.Datum{}
	switch e.Type().Kind {
	case types.Array:
		zero = types.DArray(nil)
	case types.JSONB:
		zero = types.DText("null")
	}
	return &ir.Call{Fn: ir.FnCoalesce, T: e.Type(), Args: []ir.Expr{e, &ir.Const{Value: zero, T: e.Type()}}}
}

// walkRelExprs calls fn with every expression of rel and of its inputs.
func walkRelExprs(rel ir.Rel, fn func(ir.Expr)) {
	for _, e := range nodeExprs(rel) {
		if e != nil {
			fn(e)
		}
	}
	for _, in := range ir.Inputs(rel) {
		walkRelExprs(in, fn)
	}
}

// nodeExprs returns the expressions of rel itself (not of its inputs).
func nodeExprs(rel ir.Rel) []ir.Expr {
	switch r := rel.(type) {
	case *ir.Filter:
		return []ir.Expr{r.Pred}
	case *ir.Project:
		return r.Exprs
	case *ir.Aggregate:
		out := append([]ir.Expr(nil), r.GroupBy...)
		for _, a := range r.Aggs {
			out = append(out, aggExprs(a)...)
		}
		return out
	case *ir.Join:
		return append(append([]ir.Expr{r.Cond}, r.LeftKeys...), r.RightKeys...)
	case *ir.Values:
		var out []ir.Expr
		for _, row := range r.Rows {
			out = append(out, row...)
		}
		return out
	case *ir.GenerateSeries:
		return []ir.Expr{r.Start, r.Stop, r.Step}
	case *ir.Unnest:
		return r.Arrays
	case *ir.AsofJoin:
		return append(append([]ir.Expr{r.LeftTime, r.RightTime}, r.LeftKeys...), r.RightKeys...)
	case *ir.Window:
		out := append([]ir.Expr(nil), r.PartitionBy...)
		for _, k := range r.OrderBy {
			out = append(out, k.Expr)
		}
		for _, c := range r.Calls {
			out = append(append(out, c.Filter), c.Args...)
		}
		return out
	}
	return nil
}

func aggExprs(a ir.AggCall) []ir.Expr {
	out := append([]ir.Expr{a.Arg, a.Filter}, a.ExtraArgs...)
	for _, o := range a.OrderBy {
		out = append(out, o.Expr)
	}
	return out
}

func relHasOuterRef(rel ir.Rel) bool {
	found := false
	walkRelExprs(rel, func(e ir.Expr) { found = found || hasOuterRef(e) })
	return found
}

func exprsHaveOuterRef(es ...ir.Expr) bool {
	for _, e := range es {
		if e != nil && hasOuterRef(e) {
			return true
		}
	}
	return false
}
