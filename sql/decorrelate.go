package sql

import "github.com/streamsql/streamsql/sqlerr"

// decorrelator pushes a domain relation down a dependent relation (see
// bind_decorrelate.go).
type decorrelator struct {
	// domain has one row per domain value and nd columns.
	domain Rel
	nd     int
	// refs maps the outer references to domain columns.
	refs map[outerKey]int
}

// rel returns r joined with the domain: for every domain value, the rows r
// has with its outer references taken from that value, followed by the
// value's nd columns. The result has no outer reference that refs maps.
func (dc *decorrelator) rel(r Rel) (Rel, error) {
	if !relHasOuterRef(r) {
		if noFrom(r) {
			// One row of no columns, for every domain value.
			return dc.domain, nil
		}
		return &Join{Type: InnerJoin, Left: r, Right: dc.domain}, nil
	}
	switch r := r.(type) {
	case *Filter:
		if noFrom(r.Input) {
			return &Filter{Input: dc.domain, Pred: dc.expr(r.Pred, 0)}, nil
		}
		if !relHasOuterRef(r.Input) {
			// A join with the domain on the condition: its equalities
			// become hash keys.
			j := &Join{Type: InnerJoin, Left: r.Input, Right: dc.domain}
			splitJoinCondition(j, width(r.Input), dc.expr(r.Pred, width(r.Input)))
			return j, nil
		}
		in, err := dc.rel(r.Input)
		if err != nil {
			return nil, err
		}
		return &Filter{Input: in, Pred: dc.expr(r.Pred, width(r.Input))}, nil
	case *Project:
		in, err := dc.rel(r.Input)
		if err != nil {
			return nil, err
		}
		w := width(r.Input)
		p := &Project{Input: in, Cols: append(append([]Column(nil), r.Cols...), dc.cols()...)}
		for _, e := range r.Exprs {
			p.Exprs = append(p.Exprs, dc.expr(e, w))
		}
		p.Exprs = append(p.Exprs, colRefs(in, seq(w, dc.nd))...)
		return p, nil
	case *Aggregate:
		return dc.aggregate(r)
	case *Join:
		return dc.join(r)
	case *Sort:
		// Without a LIMIT above it, the order does not matter.
		return dc.rel(r.Input)
	case *Limit:
		return dc.limit(r)
	case *TopN:
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
	case *UnionAll:
		u := &UnionAll{Cols: append(append([]Column(nil), r.Cols...), dc.cols()...)}
		for _, in := range r.Inputs {
			d, err := dc.rel(in)
			if err != nil {
				return nil, err
			}
			u.Inputs = append(u.Inputs, d)
		}
		return u, nil
	case *Window:
		return dc.window(r)
	case *Unnest:
		return dc.unnest(r)
	case *GenerateSeries:
		return dc.series(r)
	}
	return nil, sqlerr.Unsupported("correlated subqueries over %s", relKindName(r))
}

// noFrom reports whether r is the one row of no columns of a SELECT
// without FROM.
func noFrom(r Rel) bool {
	v, ok := r.(*Values)
	return ok && len(v.Rows) == 1 && len(v.Cols) == 0
}

func relKindName(r Rel) string {
	switch r.(type) {
	case *Expand:
		return "INTERSECT ALL or EXCEPT ALL"
	case *GenerateSeries:
		return "generate_series"
	case *Unnest:
		return "unnest"
	case *AsofJoin:
		return "ASOF joins"
	case *HopWindow, *SessionWindow:
		return "time windows"
	}
	return "this kind of query"
}

// expr replaces the outer references of e, an expression over a relation of
// w columns, with references to the domain columns that follow them.
func (dc *decorrelator) expr(e Expr, w int) Expr {
	if e == nil {
		return nil
	}
	return Rewrite(e, func(x Expr) Expr {
		if r, ok := x.(*outerRef); ok {
			if j, ok := dc.refs[outerKey{r.Depth, r.Index}]; ok {
				return &InputRef{Index: w + j, T: r.T, Name: r.Name}
			}
		}
		return x
	})
}

func (dc *decorrelator) cols() []Column { return dc.domain.Columns() }

func width(r Rel) int { return len(r.Columns()) }

// reorder projects rel's columns in the order idx.
func reorder(rel Rel, idx []int) Rel {
	p := &Project{Input: rel}
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
func (dc *decorrelator) aggregate(r *Aggregate) (Rel, error) {
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
	a := &Aggregate{Input: in}
	for _, g := range r.GroupBy {
		a.GroupBy = append(a.GroupBy, dc.expr(g, w))
	}
	a.GroupBy = append(a.GroupBy, colRefs(in, seq(w, dc.nd))...)
	a.Cols = append(append(append([]Column(nil), r.Cols[:ng]...), dc.cols()...), r.Cols[ng:]...)
	for _, c := range r.Aggs {
		c.Arg, c.Filter = dc.expr(c.Arg, w), dc.expr(c.Filter, w)
		c.ExtraArgs = append([]Expr(nil), c.ExtraArgs...)
		for i, e := range c.ExtraArgs {
			c.ExtraArgs[i] = dc.expr(e, w)
		}
		c.OrderBy = append([]AggOrder(nil), c.OrderBy...)
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
	j := &Join{Type: LeftJoin, Left: dc.domain, Right: a}
	matchNullSafe(j, colRefs(dc.domain, seq(0, dc.nd)), colRefs(a, seq(0, dc.nd)))
	p := &Project{Input: j}
	for i, c := range r.Aggs {
		ref := colRef(j, 2*dc.nd+i)
		var e Expr = ref
		if c.Func == AggCount || c.Func == AggCountStar || c.Func == AggApproxCountDistinct {
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
func (dc *decorrelator) limit(r *Limit) (Rel, error) {
	input := r.Input
	var keys []SortKey
	if s, ok := input.(*Sort); ok {
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
	t := &TopN{Input: in, Group: seq(width(input), dc.nd), Keys: keys, Offset: r.Offset, Limit: r.Count, Kind: RowNumber}
	if r.WithTies {
		t.Kind = WithTies
	}
	return t, nil
}

// join pushes the domain into the sides of r that reference it; when both
// do (or the preserved side of an outer join must carry it), into both,
// matched on the domain columns.
func (dc *decorrelator) join(r *Join) (Rel, error) {
	nl, nr := width(r.Left), width(r.Right)
	lo := relHasOuterRef(r.Left) || exprsHaveOuterRef(r.LeftKeys...)
	ro := relHasOuterRef(r.Right) || exprsHaveOuterRef(r.RightKeys...)
	switch {
	case r.Type == FullJoin:
		return nil, sqlerr.Unsupported("FULL JOIN in a correlated subquery")
	case r.Type == NullAwareAntiJoin && ro:
		return nil, sqlerr.Unsupported("NOT IN over a correlated subquery inside a correlated subquery")
	case !ro && r.Type != RightJoin:
		return dc.joinLeft(r, nl)
	case !lo && (r.Type == InnerJoin || r.Type == RightJoin):
		right, err := dc.rel(r.Right)
		if err != nil {
			return nil, err
		}
		return &Join{Type: r.Type, Left: r.Left, Right: right, LeftKeys: r.LeftKeys,
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
	j := &Join{Type: r.Type, Left: left, Right: right,
		LeftKeys: dc.exprs(r.LeftKeys, nl), RightKeys: dc.exprs(r.RightKeys, nr),
		Cond: dc.expr(dc.shiftRight(r.Cond, nl), nl)}
	matchNullSafe(j, colRefs(left, seq(nl, dc.nd)), colRefs(right, seq(nr, dc.nd)))
	if !r.Type.KeepsRight() {
		return j, nil
	}
	// left, left's domain, right, right's domain: keep the preserved side's.
	dom := seq(nl, dc.nd)
	if r.Type == RightJoin {
		dom = seq(nl+dc.nd+nr, dc.nd)
	}
	return reorder(j, append(append(seq(0, nl), seq(nl+dc.nd, nr)...), dom...)), nil
}

// joinLeft pushes the domain into the left side of r only.
func (dc *decorrelator) joinLeft(r *Join, nl int) (Rel, error) {
	left, err := dc.rel(r.Left)
	if err != nil {
		return nil, err
	}
	j := &Join{Type: r.Type, Left: left, Right: r.Right,
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
func (dc *decorrelator) shiftRight(e Expr, nl int) Expr {
	if e == nil {
		return nil
	}
	return Rewrite(e, func(x Expr) Expr {
		if ref, ok := x.(*InputRef); ok && ref.Index >= nl {
			return &InputRef{Index: ref.Index + dc.nd, T: ref.T, Name: ref.Name}
		}
		return x
	})
}

func (dc *decorrelator) exprs(es []Expr, w int) []Expr {
	out := make([]Expr, len(es))
	for i, e := range es {
		out[i] = dc.expr(e, w)
	}
	return out
}

// unnest unnests, for every domain value, the arrays of r with its outer
// references taken from that value: the input joined with the domain,
// unnested, and the domain's columns moved after the elements.
func (dc *decorrelator) unnest(r *Unnest) (Rel, error) {
	in, err := dc.rel(r.Input)
	if err != nil {
		return nil, err
	}
	w := width(r.Input)
	u := &Unnest{Input: in, Outer: r.Outer, Cols: append(append([]Column(nil), in.Columns()...), r.Cols[w:]...)}
	for _, a := range r.Arrays {
		u.Arrays = append(u.Arrays, dc.expr(a, w))
	}
	k := len(r.Cols) - w
	return reorder(u, append(append(seq(0, w), seq(w+dc.nd, k)...), seq(w, dc.nd)...)), nil
}
