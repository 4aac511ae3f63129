package sql

import (
	"github.com/streamsql/streamsql/ir"
	"github.com/streamsql/streamsql/sqlerr"
)

// decorrelator pushes a domain relation down a dependent relation (see
// bind_decorrelate.go).
type decorrelator struct {
	// domain has one row per domain value and nd columns.
	domain ir.Rel
	nd     int
	// refs maps the outer references to domain columns.
	refs map[outerKey]int
}

// rel returns r joined with the domain: for every domain value, the rows r
// has with its outer references taken from that value, followed by the
// value's nd columns. The result has no outer reference that refs maps.
func (dc *decorrelator) rel(r ir.Rel) (ir.Rel, error) {
	if !relHasOuterRef(r) {
		if noFrom(r) {
			// One row of no columns, for every domain value.
			return dc.domain, nil
		}
		return &ir.Join{Type: ir.InnerJoin, Left: r, Right: dc.domain}, nil
	}
	switch r := r.(type) {
	case *ir.Filter:
		if noFrom(r.Input) {
			return &ir.Filter{Input: dc.domain, Pred: dc.expr(r.Pred, 0)}, nil
		}
		if !relHasOuterRef(r.Input) {
			// A join with the domain on the condition: its equalities
			// become hash keys.
			j := &ir.Join{Type: ir.InnerJoin, Left: r.Input, Right: dc.domain}
			splitJoinCondition(j, width(r.Input), dc.expr(r.Pred, width(r.Input)))
			return j, nil
		}
		in, err := dc.rel(r.Input)
		if err != nil {
			return nil, err
		}
		return &ir.Filter{Input: in, Pred: dc.expr(r.Pred, width(r.Input))}, nil
	case *ir.Project:
		in, err := dc.rel(r.Input)
		if err != nil {
			return nil, err
		}
		w := width(r.Input)
		p := &ir.Project{Input: in, Cols: append(append([]ir.Column(nil), r.Cols...), dc.cols()...)}
		for _, e := range r.Exprs {
			p.Exprs = append(p.Exprs, dc.expr(e, w))
		}
		p.Exprs = append(p.Exprs, colRefs(in, seq(w, dc.nd))...)
		return p, nil
	case *ir.Aggregate:
		return dc.aggregate(r)
	case *ir.Join:
		return dc.join(r)
	case *ir.Sort:
		// Without a LIMIT above it, the order does not matter.
		return dc.rel(r.Input)
	case *ir.Limit:
		return dc.limit(r)
	case *ir.TopN:
		in, err := dc.rel(r.Input)
		if err != nil {
			return nil, err
		}
		w := width(r.Input)
		t := *r
		t.Input = in
		t.Group = append(append([]int(nil), r.Group...), seq(w, dc.nd)...)
		if r.RankName == "" {
			return &t, nil
		}
		// The rank goes before the domain's columns.
		return reorder(&t, append(append(seq(0, w), w+dc.nd), seq(w, dc.nd)...)), nil
	case *ir.UnionAll:
		u := &ir.UnionAll{Cols: append(append([]ir.Column(nil), r.Cols...), dc.cols()...)}
		for _, in := range r.Inputs {
			d, err := dc.rel(in)
			if err != nil {
				return nil, err
			}
			u.Inputs = append(u.Inputs, d)
		}
		return u, nil
	case *ir.Window:
		return dc.window(r)
	case *ir.Unnest:
		return dc.unnest(r)
	case *ir.GenerateSeries:
		return dc.series(r)
	}
	return nil, sqlerr.Unsupported("correlated subqueries over %s", relKindName(r))
}

// noFrom reports whether r is the one row of no columns of a SELECT
// without FROM.
func noFrom(r ir.Rel) bool {
	v, ok := r.(*ir.Values)
	return ok && len(v.Rows) == 1 && len(v.Cols) == 0
}

func relKindName(r ir.Rel) string {
	switch r.(type) {
	case *ir.Expand:
		return "INTERSECT ALL or EXCEPT ALL"
	case *ir.GenerateSeries:
		return "generate_series"
	case *ir.Unnest:
		return "unnest"
	case *ir.AsofJoin:
		return "ASOF joins"
	case *ir.HopWindow, *ir.SessionWindow:
		return "time windows"
	}
	return "this kind of query"
}

// expr replaces the outer references of e, an expression over a relation of
// w columns, with references to the domain columns that follow them.
func (dc *decorrelator) expr(e ir.Expr, w int) ir.Expr {
	if e == nil {
		return nil
	}
	return ir.Rewrite(e, func(x ir.Expr) ir.Expr {
		if r, ok := x.(*outerRef); ok {
			if j, ok := dc.refs[outerKey{r.Depth, r.Index}]; ok {
				return &ir.InputRef{Index: w + j, T: r.T, Name: r.Name}
			}
		}
		return x
	})
}

func (dc *decorrelator) cols() []ir.Column { return dc.domain.Columns() }

func width(r ir.Rel) int { return len(r.Columns()) }

// reorder projects rel's columns in the order idx.
func reorder(rel ir.Rel, idx []int) ir.Rel {
	p := &ir.Project{Input: rel}
	cols := rel.Columns()
	for _, i := range idx {
		p.Exprs = append(p.Exprs, colRef(rel, i))
		p.Cols = append(p.Cols, cols[i])
	}
	return p
}

// aggregate groups by the domain too. Without GROUP BY, the aggregation has
// a row for every domain value, with the values over no rows for those
// without any.
func (dc *decorrelator) aggregate(r *ir.Aggregate) (ir.Rel, error) {
	for _, a := range r.Aggs {
		if a.Arg != nil && hasOuterRef(a.Arg) && !refsOnly(a.Arg) {
			return nil, sqlerr.Unsupported("aggregates of a subquery over the outer query's columns only")
		}
	}
	in, err := dc.rel(r.Input)
	if err != nil {
		return nil, err
	}
	w, ng, na := width(r.Input), len(r.GroupBy), len(r.Aggs)
	a := &ir.Aggregate{Input: in}
	for _, g := range r.GroupBy {
		a.GroupBy = append(a.GroupBy, dc.expr(g, w))
	}
	a.GroupBy = append(a.GroupBy, colRefs(in, seq(w, dc.nd))...)
	a.Cols = append(append(append([]ir.Column(nil), r.Cols[:ng]...), dc.cols()...), r.Cols[ng:]...)
	for _, c := range r.Aggs {
		c.Arg, c.Filter = dc.expr(c.Arg, w), dc.expr(c.Filter, w)
		c.ExtraArgs = append([]ir.Expr(nil), c.ExtraArgs...)
		for i, e := range c.ExtraArgs {
			c.ExtraArgs[i] = dc.expr(e, w)
		}
		c.OrderBy = append([]ir.AggOrder(nil), c.OrderBy...)
		for i, o := range c.OrderBy {
			c.OrderBy[i].Expr = dc.expr(o.Expr, w)
		}
		a.Aggs = append(a.Aggs, c)
	}
	if ng > 0 {
		return reorder(a, append(append(seq(0, ng), seq(ng+dc.nd, na)...), seq(ng, dc.nd)...)), nil
	}
	// domain ⟕ a: domain columns, then a's (its domain columns, then the
	// aggregates).
	j := &ir.Join{Type: ir.LeftJoin, Left: dc.domain, Right: a}
	matchNullSafe(j, colRefs(dc.domain, seq(0, dc.nd)), colRefs(a, seq(0, dc.nd)))
	p := &ir.Project{Input: j}
	for i, c := range r.Aggs {
		ref := colRef(j, 2*dc.nd+i)
		var e ir.Expr = ref
		if c.Func == ir.AggCount || c.Func == ir.AggCountStar || c.Func == ir.AggApproxCountDistinct {
			e = countOrZero(ref)
		}
		p.Exprs = append(p.Exprs, e)
		p.Cols = append(p.Cols, r.Cols[i])
	}
	p.Exprs = append(p.Exprs, colRefs(j, seq(0, dc.nd))...)
	p.Cols = append(p.Cols, dc.cols()...)
	return p, nil
}

// limit keeps the first rows per domain value: a TopN grouped by the
// domain, in the order of the Sort below, if any.
func (dc *decorrelator) limit(r *ir.Limit) (ir.Rel, error) {
	input := r.Input
	var keys []ir.SortKey
	if s, ok := input.(*ir.Sort); ok {
		input, keys = s.Input, s.Keys
	}
	in, err := dc.rel(input)
	if err != nil {
		return nil, err
	}
	switch {
	case r.Count < 0 && r.Offset == 0:
		return in, nil
	case r.Count < 0:
		return nil, sqlerr.Unsupported("OFFSET without LIMIT in a correlated subquery")
	}
	t := &ir.TopN{Input: in, Group: seq(width(input), dc.nd), Keys: keys, Offset: r.Offset, Limit: r.Count, Kind: ir.RowNumber}
	if r.WithTies {
		t.Kind = ir.WithTies
	}
	return t, nil
}

// join pushes the domain into the sides of r that reference it; when both
// do (or the preserved side of an outer join must carry it), into both,
// matched on the domain columns.
func (dc *decorrelator) join(r *ir.Join) (ir.Rel, error) {
	nl, nr := width(r.Left), width(r.Right)
	lo := relHasOuterRef(r.Left) || exprsHaveOuterRef(r.LeftKeys...)
	ro := relHasOuterRef(r.Right) || exprsHaveOuterRef(r.RightKeys...)
	switch {
	case r.Type == ir.FullJoin:
		return nil, sqlerr.Unsupported("FULL JOIN in a correlated subquery")
	case r.Type == ir.NullAwareAntiJoin && ro:
		return nil, sqlerr.Unsupported("NOT IN over a correlated subquery inside a correlated subquery")
	case !ro && r.Type != ir.RightJoin:
		return dc.joinLeft(r, nl)
	case !lo && (r.Type == ir.InnerJoin || r.Type == ir.RightJoin):
		right, err := dc.rel(r.Right)
		if err != nil {
			return nil, err
		}
		return &ir.Join{Type: r.Type, Left: r.Left, Right: right, LeftKeys: r.LeftKeys,
			RightKeys: dc.exprs(r.RightKeys, nr), Cond: dc.expr(r.Cond, nl+nr)}, nil
	}
	left, err := dc.rel(r.Left)
	if err != nil {
		return nil, err
	}
	right, err := dc.rel(r.Right)
	if err != nil {
		return nil, err
	}
	j := &ir.Join{Type: r.Type, Left: left, Right: right,
		LeftKeys: dc.exprs(r.LeftKeys, nl), RightKeys: dc.exprs(r.RightKeys, nr),
		Cond: dc.expr(dc.shiftRight(r.Cond, nl), nl)}
	matchNullSafe(j, colRefs(left, seq(nl, dc.nd)), colRefs(right, seq(nr, dc.nd)))
	if !r.Type.KeepsRight() {
		return j, nil
	}
	// left, left's domain, right, right's domain: keep the preserved side's.
	dom := seq(nl, dc.nd)
	if r.Type == ir.RightJoin {
		dom = seq(nl+dc.nd+nr, dc.nd)
	}
	return reorder(j, append(append(seq(0, nl), seq(nl+dc.nd, nr)...), dom...)), nil
}

// joinLeft pushes the domain into the left side of r only.
func (dc *decorrelator) joinLeft(r *ir.Join, nl int) (ir.Rel, error) {
	left, err := dc.rel(r.Left)
	if err != nil {
		return nil, err
	}
	j := &ir.Join{Type: r.Type, Left: left, Right: r.Right,
		LeftKeys: dc.exprs(r.LeftKeys, nl), RightKeys: r.RightKeys,
		Cond: dc.expr(dc.shiftRight(r.Cond, nl), nl)}
	if !r.Type.KeepsRight() {
		return j, nil
	}
	nr := width(r.Right)
	return reorder(j, append(append(seq(0, nl), seq(nl+dc.nd, nr)...), seq(nl, dc.nd)...)), nil
}

// shiftRight moves the references of a join condition to the right input's
// columns past the domain columns inserted after the left input's nl.
func (dc *decorrelator) shiftRight(e ir.Expr, nl int) ir.Expr {
	if e == nil {
		return nil
	}
	return ir.Rewrite(e, func(x ir.Expr) ir.Expr {
		if ref, ok := x.(*ir.InputRef); ok && ref.Index >= nl {
			return &ir.InputRef{Index: ref.Index + dc.nd, T: ref.T, Name: ref.Name}
		}
		return x
	})
}

func (dc *decorrelator) exprs(es []ir.Expr, w int) []ir.Expr {
	out := make([]ir.Expr, len(es))
	for i, e := range es {
		out[i] = dc.expr(e, w)
	}
	return out
}

// unnest unnests, for every domain value, the arrays of r with its outer
// references taken from that value: the input joined with the domain,
// unnested, and the domain's columns moved after the elements.
func (dc *decorrelator) unnest(r *ir.Unnest) (ir.Rel, error) {
	in, err := dc.rel(r.Input)
	if err != nil {
		return nil, err
	}
	w := width(r.Input)
	u := &ir.Unnest{Input: in, Outer: r.Outer, Cols: append(append([]ir.Column(nil), in.Columns()...), r.Cols[w:]...)}
	for _, a := range r.Arrays {
		u.Arrays = append(u.Arrays, dc.expr(a, w))
	}
	k := len(r.Cols) - w
	return reorder(u, append(append(seq(0, w), seq(w+dc.nd, k)...), seq(w, dc.nd)...)), nil
}
