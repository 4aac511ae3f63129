package sql

import (
	"sort"
	"strings"

	pg_query "github.com/pganalyze/pg_query_go/v6"
	"github.com/streamsql/streamsql/ir"
	"github.com/streamsql/streamsql/sqlerr"
	"github.com/streamsql/streamsql/types"
)

// AggGrouping is grouping(a, b, ...) while it is being bound: collected with
// the aggregates, then replaced by a per-grouping-set constant before the
// Aggregate reaches the planner.
const AggGrouping = "grouping"

// maxGroupingSets is PostgreSQL's limit on the grouping sets of a query.
const maxGroupingSets = 4096

// groupClause is a bound GROUP BY: the distinct grouping expressions and,
// with GROUPING SETS, ROLLUP or CUBE, the sets as indices into exprs.
type groupClause struct {
	exprs []ir.Expr
	names []string
	// sets is nil for a plain GROUP BY (one set, every expression).
	sets [][]int
}

// groupingCall is the argument list of a grouping() call, carried as the
// Arg of its AggCall.
type groupingCall struct {
	Args []ir.Expr
	Loc  int32
}

func (e *groupingCall) Type() types.T { return types.Int32T }
func (e *groupingCall) String() string {
	parts := make([]string, len(e.Args))
	for i, a := range e.Args {
		parts[i] = a.String()
	}
	return "grouping(" + strings.Join(parts, ", ") + ")"
}

// bindGroupClause binds the GROUP BY items. A plain list keeps every item
// as a key, as before; GROUPING SETS, ROLLUP, CUBE, () and parenthesized
// lists make the clause the cross product of each item's sets, as
// PostgreSQL defines it (GROUP BY a, ROLLUP (b, c) is (a, b, c), (a, b),
// (a)). GROUP BY DISTINCT drops repeated sets.
func (b *binder) bindGroupClause(sc *scope, targets []target, items []*pg_query.Node, distinct bool) (*groupClause, error) {
	gc := &groupClause{}
	complex := false
	for _, n := range items {
		if n.GetGroupingSet() != nil || n.GetRowExpr() != nil {
			complex = true
		}
	}
	if !complex {
		for _, n := range items {
			e, name, err := b.bindGroupItem(sc, targets, n)
			if err != nil {
				return nil, err
			}
			if err := b.checkOrderable(e, exprLocation(n)); err != nil {
				return nil, err
			}
			// A literal selected and grouped by position is text, as in
			// the select list.
			gc.exprs = append(gc.exprs, b.defaultType(e))
			gc.names = append(gc.names, name)
		}
		return gc, nil
	}
	sets := [][]int{{}}
	for _, n := range items {
		item, err := b.groupingItemSets(gc, sc, targets, n, true)
		if err != nil {
			return nil, err
		}
		var cross [][]int
		for _, s := range sets {
			for _, t := range item {
				cross = append(cross, unionSet(s, t))
				if len(cross) > maxGroupingSets {
					return nil, b.errAt(exprLocation(n), sqlerr.New(sqlerr.StatementTooComplex, "too many grouping sets present (maximum %d)", maxGroupingSets))
				}
			}
		}
		sets = cross
	}
	if distinct {
		seen := map[string]bool{}
		var kept [][]int
		for _, s := range sets {
			sorted := append([]int(nil), s...)
			sort.Ints(sorted)
			k := intsString(sorted)
			if !seen[k] {
				seen[k] = true
				kept = append(kept, s)
			}
		}
		sets = kept
	}
	if len(sets) == 1 && len(sets[0]) == len(gc.exprs) && len(gc.exprs) > 0 {
		// One set of every expression (GROUP BY (a, b)): a plain GROUP BY.
		return gc, nil
	}
	gc.sets = sets
	return gc, nil
}

func intsString(s []int) string {
	var sb strings.Builder
	for _, i := range s {
		sb.WriteString(itoa(int64(i)))
		sb.WriteByte(' ')
	}
	return sb.String()
}

// unionSet is s followed by the members of t not in s.
func unionSet(s, t []int) []int {
	out := append([]int(nil), s...)
	for _, i := range t {
		if !containsInt(out, i) {
			out = append(out, i)
		}
	}
	return out
}

func containsInt(s []int, x int) bool {
	for _, y := range s {
		if y == x {
			return true
		}
	}
	return false
}

// groupingItemSets returns the grouping sets of one GROUP BY item (or one
// element of GROUPING SETS), adding its expressions to gc.
func (b *binder) groupingItemSets(gc *groupClause, sc *scope, targets []target, n *pg_query.Node, top bool) ([][]int, error) {
	if gs := n.GetGroupingSet(); gs != nil {
		switch gs.Kind {
		case pg_query.GroupingSetKind_GROUPING_SET_EMPTY:
			return [][]int{{}}, nil
		case pg_query.GroupingSetKind_GROUPING_SET_SETS:
			var out [][]int
			for _, c := range gs.Content {
				sets, err := b.groupingItemSets(gc, sc, targets, c, false)
				if err != nil {
					return nil, err
				}
				out = append(out, sets...)
			}
			return out, nil
		case pg_query.GroupingSetKind_GROUPING_SET_ROLLUP, pg_query.GroupingSetKind_GROUPING_SET_CUBE:
			units := make([][]int, len(gs.Content))
			for i, c := range gs.Content {
				u, err := b.groupingUnit(gc, sc, targets, c)
				if err != nil {
					return nil, err
				}
				units[i] = u
			}
			if gs.Kind == pg_query.GroupingSetKind_GROUPING_SET_ROLLUP {
				return rollupSets(units), nil
			}
			if len(units) > 12 {
				return nil, b.errAt(gs.Location, sqlerr.New(sqlerr.StatementTooComplex, "CUBE is limited to 12 elements"))
			}
			return cubeSets(units), nil
		case pg_query.GroupingSetKind_GROUPING_SET_SIMPLE:
			u, err := b.groupingUnit(gc, sc, targets, n)
			return [][]int{u}, err
		}
		return nil, b.errAt(gs.Location, sqlerr.Unsupported("this grouping set"))
	}
	u, err := b.groupingUnit(gc, sc, targets, n)
	if err != nil {
		return nil, err
	}
	return [][]int{u}, nil
}

// groupingUnit binds an expression or a parenthesized list of expressions
// that group together (one element of ROLLUP or CUBE).
func (b *binder) groupingUnit(gc *groupClause, sc *scope, targets []target, n *pg_query.Node) ([]int, error) {
	var items []*pg_query.Node
	switch {
	case n.GetRowExpr() != nil && n.GetRowExpr().RowFormat == pg_query.CoercionForm_COERCE_IMPLICIT_CAST:
		items = n.GetRowExpr().Args
	case n.GetGroupingSet() != nil && n.GetGroupingSet().Kind == pg_query.GroupingSetKind_GROUPING_SET_SIMPLE:
		items = n.GetGroupingSet().Content
	case n.GetGroupingSet() != nil:
		return nil, b.errAt(n.GetGroupingSet().Location, sqlerr.New(sqlerr.SyntaxError, "syntax error: nested grouping sets in ROLLUP or CUBE"))
	default:
		items = []*pg_query.Node{n}
	}
	var unit []int
	for _, it := range items {
		e, name, err := b.bindGroupItem(sc, targets, it)
		if err != nil {
			return nil, err
		}
		if err := b.checkOrderable(e, exprLocation(it)); err != nil {
			return nil, err
		}
		e = b.defaultType(e)
		idx := -1
		for i, x := range gc.exprs {
			if x.String() == e.String() && x.Type().Kind == e.Type().Kind {
				idx = i
				break
			}
		}
		if idx < 0 {
			gc.exprs = append(gc.exprs, e)
			gc.names = append(gc.names, name)
			idx = len(gc.exprs) - 1
		}
		if !containsInt(unit, idx) {
			unit = append(unit, idx)
		}
	}
	return unit, nil
}

// rollupSets is ROLLUP (u1, ..., un): (u1..un), (u1..un-1), ..., ().
func rollupSets(units [][]int) [][]int {
	var out [][]int
	for n := len(units); n >= 0; n-- {
		var s []int
		for _, u := range units[:n] {
			s = unionSet(s, u)
		}
		out = append(out, s)
	}
	return out
}

// cubeSets is CUBE (u1, ..., un): every subset of the units, the largest
// first.
func cubeSets(units [][]int) [][]int {
	n := len(units)
	var out [][]int
	for size := n; size >= 0; size-- {
		for mask := (1 << n) - 1; mask >= 0; mask-- {
			if popcount(mask) != size {
				continue
			}
			var s []int
			for i := 0; i < n; i++ {
				if mask&(1<<(n-1-i)) != 0 {
					s = unionSet(s, units[i])
				}
			}
			out = append(out, s)
		}
	}
	return out
}

func popcount(x int) int {
	c := 0
	for ; x != 0; x &= x - 1 {
		c++
	}
	return c
}

// bindGroupingFunc binds grouping(a, ...): its arguments must be grouping
// expressions, checked once the GROUP BY is bound (groupingSetsRel).
func (b *binder) bindGroupingFunc(ctx *exprCtx, g *pg_query.GroupingFunc) (ir.Expr, error) {
	if ctx.inAgg {
		return nil, b.errAt(g.Location, sqlerr.New(sqlerr.GroupingError, "aggregate function calls cannot be nested"))
	}
	if ctx.aggs == nil {
		clause := ctx.clause
		if clause == "" {
			clause = "this context"
		}
		return nil, b.errAt(g.Location, sqlerr.New(sqlerr.GroupingError, "grouping operations are not allowed in %s", clause))
	}
	if len(g.Args) > 31 {
		return nil, b.errAt(g.Location, sqlerr.New(sqlerr.TooManyArguments, "GROUPING must have fewer than 32 arguments"))
	}
	args, err := b.bindExprs(&exprCtx{scope: ctx.scope, clause: "GROUPING"}, g.Args)
	if err != nil {
		return nil, err
	}
	for i := range args {
		args[i] = b.defaultType(args[i])
	}
	*ctx.aggs = append(*ctx.aggs, ir.AggCall{Func: AggGrouping, Arg: &groupingCall{Args: args, Loc: g.Location}, T: types.Int32T})
	return &aggRef{Index: len(*ctx.aggs) - 1, T: types.Int32T}, nil
}

// needsGroupingSets reports whether agg must be expanded by
// groupingSetsRel: it has grouping sets or grouping() calls.
func needsGroupingSets(gc *groupClause, aggs []ir.AggCall) bool {
	if gc.sets != nil {
		return true
	}
	for _, a := range aggs {
		if a.Func == AggGrouping {
			return true
		}
	}
	return false
}

// groupingSetsRel computes agg once per grouping set and concatenates the
// results, each with agg's columns: the grouping expressions not in the
// set are NULL and each grouping() call is the set's constant bit mask
// (bit n-1-i set when argument i is not grouped). Each set is an ordinary
// Aggregate over the same input, so DISTINCT aggregates, retractions and
// the empty set's one row over empty input are those of a plain
// aggregation (see docs/decisions.md).
func (b *binder) groupingSetsRel(agg *ir.Aggregate, gc *groupClause) (ir.Rel, error) {
	keys := make([]string, len(gc.exprs))
	for i, e := range gc.exprs {
		keys[i] = e.String()
	}
	var real []ir.AggCall
	for _, a := range agg.Aggs {
		if a.Func != AggGrouping {
			real = append(real, a)
			continue
		}
		g := a.Arg.(*groupingCall)
		for _, arg := range g.Args {
			found := false
			for _, k := range keys {
				if arg.String() == k {
					found = true
				}
			}
			if !found {
				return nil, b.errAt(g.Loc, sqlerr.New(sqlerr.GroupingError, "arguments to GROUPING must be grouping expressions of the associated query level"))
			}
		}
	}
	sets := gc.sets
	if sets == nil {
		all := make([]int, len(gc.exprs))
		for i := range all {
			all[i] = i
		}
		sets = [][]int{all}
	}
	var branches []ir.Rel
	for _, set := range sets {
		branch := &ir.Aggregate{Input: agg.Input, Aggs: real}
		for _, k := range set {
			branch.GroupBy = append(branch.GroupBy, gc.exprs[k])
			branch.Cols = append(branch.Cols, agg.Cols[k])
		}
		branch.Cols = append(branch.Cols, agg.Cols[len(gc.exprs):]...)
		var exprs []ir.Expr
		for i := range gc.exprs {
			c := agg.Cols[i]
			if pos := indexOf(set, i); pos >= 0 {
				exprs = append(exprs, &ir.InputRef{Index: pos, T: c.Type, Name: c.Name})
			} else {
				exprs = append(exprs, &ir.Const{Value: types.Null, T: c.Type})
			}
		}
		// Aggregate columns: the real ones in order, the grouping() calls
		// as constants.
		cols := append([]ir.Column(nil), agg.Cols[:len(gc.exprs)]...)
		n := 0
		for j, a := range agg.Aggs {
			c := agg.Cols[len(gc.exprs)+j]
			if a.Func == AggGrouping {
				exprs = append(exprs, &ir.Const{Value: types.DInt(groupingMask(a.Arg.(*groupingCall), keys, set)), T: types.Int32T})
			} else {
				exprs = append(exprs, &ir.InputRef{Index: len(set) + n, T: c.Type, Name: c.Name})
				n++
			}
			if a.Func == AggGrouping {
				c.Name = AggGrouping
			}
			cols = append(cols, c)
		}
		branch.Cols = append(branch.Cols[:len(set)], realCols(agg, gc)...)
		branches = append(branches, &ir.Project{Input: b.intervalKeyed(branch), Exprs: exprs, Cols: cols})
	}
	if len(branches) == 1 {
		return branches[0], nil
	}
	return &ir.UnionAll{Inputs: branches, Cols: branches[0].Columns()}, nil
}

// realCols are agg's columns of the aggregates that are not grouping().
func realCols(agg *ir.Aggregate, gc *groupClause) []ir.Column {
	var cols []ir.Column
	for j, a := range agg.Aggs {
		if a.Func != AggGrouping {
			cols = append(cols, agg.Cols[len(gc.exprs)+j])
		}
	}
	return cols
}

func indexOf(s []int, x int) int {
	for i, y := range s {
		if y == x {
			return i
		}
	}
	return -1
}

// groupingMask is grouping(args) in the grouping set set: bit n-1-i is set
// when argument i is not in the set.
func groupingMask(g *groupingCall, keys []string, set []int) int64 {
	var m int64
	for _, arg := range g.Args {
		m <<= 1
		grouped := false
		for _, k := range set {
			if keys[k] == arg.String() {
				grouped = true
			}
		}
		if !grouped {
			m |= 1
		}
	}
	return m
}
