package planner

import (
	"math"

	"github.com/streamsql/streamsql/catalog"
	"github.com/streamsql/streamsql/ir"
	"github.com/streamsql/streamsql/types"
)

// Join ordering.
//
// The binder builds joins in FROM order: FROM a, b, c is (a × b) × c, and
// pushDown places each conjunct at the lowest join that has its columns. When
// the predicates link tables that are not adjacent in FROM (a.x = c.x AND
// b.y = c.y), a × b is a cross product that the predicates then filter.
//
// orderJoins takes every maximal tree of inner joins (comma joins, INNER
// JOIN, CROSS JOIN, and the filters between them), flattens it into its
// inputs (the relations that are not inner joins: scans, outer joins,
// aggregations, ...) and its conjuncts, and rebuilds it as a left-deep tree
// in the order chooseOrder picks, each conjunct on the lowest join that has
// all its columns. A projection above the tree restores the binder's column
// layout. Outer, semi and anti joins are inputs of such trees, never part of
// them, so nothing moves across them; their own inputs are ordered
// separately.
//
// For views the order is a function of the query and the catalog only
// (keys, not row counts), so that a view re-planned after a restart gets the
// same plan. Batch queries also weigh the row counts of the stored relations
// they read (RowCounts, cardinality.go), when the caller has them.

// defaultRows is the row count assumed for an input of unknown size.
const defaultRows = 1000

// maxDistinct caps the distinct values assumed for a column that is not a
// key (PostgreSQL assumes 200 without statistics).
const maxDistinct = 200

// orderJoins rewrites the inner-join trees of rel (see above). rel has been
// through pushDown. rc, if not nil, counts the rows of stored relations.
func orderJoins(rel ir.Rel, rc RowCounts) ir.Rel {
	switch r := rel.(type) {
	case *ir.Project:
		in := orderJoins(r.Input, rc)
		if inner, ok := in.(*ir.Project); ok && inner != r.Input && composable(r.Exprs, inner.Exprs) {
			// The projection restoring a reordered tree's layout merges with
			// the one above it.
			exprs := make([]ir.Expr, len(r.Exprs))
			for i, e := range r.Exprs {
				exprs[i], _ = substitute(e, inner.Exprs)
			}
			return &ir.Project{Input: inner.Input, Exprs: exprs, Cols: r.Cols}
		}
		if in == r.Input {
			return r
		}
		return &ir.Project{Input: in, Exprs: r.Exprs, Cols: r.Cols}
	case *ir.Filter, *ir.Join:
		if isInnerTree(rel) {
			return reorderTree(rel, rc)
		}
	}
	ins := ir.Inputs(rel)
	if len(ins) == 0 {
		return rel
	}
	out := make([]ir.Rel, len(ins))
	changed := false
	for i, in := range ins {
		out[i] = orderJoins(in, rc)
		changed = changed || out[i] != in
	}
	if !changed {
		return rel
	}
	return ir.WithInputs(rel, out)
}

// isInnerTree reports whether rel is an inner join, or filters over one.
func isInnerTree(rel ir.Rel) bool {
	for {
		switch r := rel.(type) {
		case *ir.Filter:
			rel = r.Input
			continue
		case *ir.Join:
			return r.Type == ir.InnerJoin
		}
		return false
	}
}

// joinGraph is a flattened inner-join tree: its inputs in the tree's order
// (so the tree's columns are theirs, concatenated) and its conjuncts over
// those columns.
type joinGraph struct {
	inputs    []ir.Rel
	offsets   []int // first column of each input
	conjuncts []ir.Expr
	// leftDeep: the tree joins each input in turn to the ones before it, with
	// no filter between the joins (the shape the rebuilt tree has).
	leftDeep bool
	rc       RowCounts // nil: sizes unknown
}

// flatten adds rel, whose columns start at offset, to g.
func (g *joinGraph) flatten(rel ir.Rel, offset int, top bool) {
	switch r := rel.(type) {
	case *ir.Filter:
		if isInnerTree(r.Input) {
			if !top {
				g.leftDeep = false
			}
			for _, c := range ir.Conjuncts(r.Pred) {
				if !isTrue(c) {
					g.conjuncts = append(g.conjuncts, ir.ShiftRefs(c, offset))
				}
			}
			g.flatten(r.Input, offset, top)
			return
		}
	case *ir.Join:
		if r.Type == ir.InnerJoin {
			if isInnerTree(r.Right) {
				g.leftDeep = false
			}
			nl := len(r.Left.Columns())
			g.flatten(r.Left, offset, false)
			g.flatten(r.Right, offset+nl, false)
			for i, l := range r.LeftKeys {
				eq := &ir.Call{Fn: ir.FnEq, T: types.BoolT, Args: []ir.Expr{
					ir.ShiftRefs(l, offset), ir.ShiftRefs(r.RightKeys[i], offset+nl)}}
				g.conjuncts = append(g.conjuncts, eq)
			}
			for _, c := range ir.Conjuncts(r.Cond) {
				if !isTrue(c) {
					g.conjuncts = append(g.conjuncts, ir.ShiftRefs(c, offset))
				}
			}
			return
		}
	}
	g.inputs = append(g.inputs, orderJoins(rel, g.rc))
	g.offsets = append(g.offsets, offset)
}

// reorderTree rebuilds the inner-join tree rel in the order chooseOrder
// picks. A tree whose order does not change is returned as it was.
func reorderTree(rel ir.Rel, rc RowCounts) ir.Rel {
	g := &joinGraph{leftDeep: true, rc: rc}
	g.flatten(rel, 0, true)
	e := newEstimator(g)
	order := e.chooseOrder()
	if g.leftDeep && isIdentity(order) {
		return rebuildInputs(rel, g.inputs)
	}
	return g.build(order, e.uses)
}

// rebuildInputs returns the tree rel with its inputs (in tree order)
// replaced by ins, for a tree that keeps its shape.
func rebuildInputs(rel ir.Rel, ins []ir.Rel) ir.Rel {
	next := 0
	var walk func(r ir.Rel) ir.Rel
	walk = func(r ir.Rel) ir.Rel {
		switch x := r.(type) {
		case *ir.Filter:
			if isInnerTree(x.Input) {
				c := *x
				c.Input = walk(x.Input)
				return &c
			}
		case *ir.Join:
			if x.Type == ir.InnerJoin {
				c := *x
				c.Left = walk(x.Left)
				c.Right = walk(x.Right)
				return &c
			}
		}
		next++
		return ins[next-1]
	}
	return walk(rel)
}

// isTrue reports whether c is the constant true (JOIN ... ON true).
func isTrue(c ir.Expr) bool {
	k, ok := c.(*ir.Const)
	return ok && !k.Value.Null && k.T.Kind == types.Bool && k.Value.Bool()
}

func isIdentity(order []int) bool {
	for i, v := range order {
		if v != i {
			return false
		}
	}
	return true
}

// build returns the left-deep tree joining g's inputs in order, each
// conjunct at the lowest join (or input) that has all its columns, under a
// projection restoring the original column layout. uses[c] lists the inputs
// conjunct c reads.
func (g *joinGraph) build(order []int, uses [][]int) ir.Rel {
	n := len(g.inputs)
	// pos[i] is input i's place in order; newOff its first column there.
	pos := make([]int, n)
	for p, i := range order {
		pos[i] = p
	}
	newOff := make([]int, n)
	off := 0
	for _, i := range order {
		newOff[i] = off
		off += len(g.inputs[i].Columns())
	}
	inputOf := g.columnInputs()
	remap := func(e ir.Expr, base int) ir.Expr {
		return ir.Rewrite(e, func(x ir.Expr) ir.Expr {
			if ref, ok := x.(*ir.InputRef); ok {
				i := inputOf[ref.Index]
				return &ir.InputRef{Index: newOff[i] + ref.Index - g.offsets[i] - base, T: ref.T, Name: ref.Name}
			}
			return x
		})
	}
	// Each conjunct goes to the step (place in order) of its last input.
	local := make([][]ir.Expr, n) // single-input conjuncts, by input
	steps := make([][]ir.Expr, n) // by step
	for c, conj := range g.conjuncts {
		last := 0
		for _, i := range uses[c] {
			last = max(last, pos[i])
		}
		if len(uses[c]) == 1 {
			i := uses[c][0]
			local[i] = append(local[i], remap(conj, newOff[i]))
			continue
		}
		steps[max(last, 1)] = append(steps[max(last, 1)], remap(conj, 0))
	}
	input := func(i int) ir.Rel {
		if len(local[i]) == 0 {
			return g.inputs[i]
		}
		return pushFilter(g.inputs[i], conjunction(local[i]))
	}
	acc := input(order[0])
	for p := 1; p < n; p++ {
		j := &ir.Join{Type: ir.InnerJoin, Left: acc, Right: input(order[p]), Cond: conjunction(steps[p])}
		acc = pushIntoJoin(j, nil)
	}
	// Restore the layout: original column k is at newOff[input] + local.
	cols := make([]ir.Column, 0, off)
	exprs := make([]ir.Expr, 0, off)
	for i, in := range g.inputs {
		for k, c := range in.Columns() {
			cols = append(cols, c)
			exprs = append(exprs, &ir.InputRef{Index: newOff[i] + k, T: c.Type, Name: c.Name})
		}
	}
	return &ir.Project{Input: acc, Exprs: exprs, Cols: cols}
}

// columnInputs maps each column of the tree to its input.
func (g *joinGraph) columnInputs() []int {
	var of []int
	for i, in := range g.inputs {
		for range in.Columns() {
			of = append(of, i)
		}
	}
	return of
}

// estimator holds what chooseOrder needs: which inputs each conjunct reads,
// estimated input sizes and conjunct selectivities.
type estimator struct {
	g    *joinGraph
	uses [][]int   // per conjunct, the inputs it reads (sorted)
	byIn [][]int   // per input, the conjuncts reading it and another input
	rows []float64 // per input, estimated rows after its own conjuncts
	sel  []float64 // per conjunct, estimated selectivity
	// With row counts: per input, the conjuncts through which a lookup
	// join could read it (index_join.go), and the rows a scan of it reads.
	lookups [][]int
	scanned []float64
}

func newEstimator(g *joinGraph) *estimator {
	n := len(g.inputs)
	e := &estimator{g: g, byIn: make([][]int, n), rows: make([]float64, n)}
	inputOf := g.columnInputs()
	for c, conj := range g.conjuncts {
		seen := make([]bool, n)
		var us []int
		ir.Walk(conj, func(x ir.Expr) bool {
			if ref, ok := x.(*ir.InputRef); ok && !seen[inputOf[ref.Index]] {
				seen[inputOf[ref.Index]] = true
			}
			return true
		})
		for i, s := range seen {
			if s {
				us = append(us, i)
			}
		}
		e.uses = append(e.uses, us)
		if len(us) > 1 {
			for _, i := range us {
				e.byIn[i] = append(e.byIn[i], c)
			}
		}
	}
	for i, in := range g.inputs {
		e.rows[i] = estimateRows(in, g.rc)
	}
	if g.rc != nil {
		e.findLookups(inputOf)
	}
	for c, conj := range g.conjuncts {
		s := e.selectivity(conj, inputOf)
		e.sel = append(e.sel, s)
		if len(e.uses[c]) == 1 {
			i := e.uses[c][0]
			e.rows[i] = math.Max(1, e.rows[i]*s)
		}
	}
	return e
}

// buildCost is the cost of joining input i to the inputs marked in (of
// estimated size size) as the right side of a join: its rows, which a hash
// join keeps in memory, or, if it can be read by a lookup join that pays,
// the lookups.
func (e *estimator) buildCost(in []bool, size float64, i int) float64 {
	if e.lookups == nil || size*lookupRatio > e.scanned[i] {
		return e.rows[i]
	}
	for _, c := range e.lookups[i] {
		applies := true
		for _, u := range e.uses[c] {
			if u != i && !in[u] {
				applies = false
				break
			}
		}
		if applies {
			return size
		}
	}
	return e.rows[i]
}

// chooseOrder returns the order in which to join the inputs: greedily, from
// each possible first input, the next input is the one that gives the
// smallest estimated result among those a conjunct connects to the inputs
// joined so far (any input only when none is connected: a cross product
// only when the query has no predicate linking what remains). The order
// with the smallest cost wins; ties go to the earlier order in FROM. The
// cost is the sum of the estimated intermediate results plus the rows of
// every input but the first: in a left-deep tree each later input is a
// join's right side, the one a batch run keeps in memory (its left side
// streams through), so the largest input goes first. With row counts, an
// input a lookup join can read costs its lookups instead (buildCost).
func (e *estimator) chooseOrder() []int {
	n := len(e.g.inputs)
	var best []int
	bestCost := math.Inf(1)
	for first := 0; first < n; first++ {
		order, cost := e.greedyFrom(first)
		if cost < bestCost*(1-1e-9) {
			best, bestCost = order, cost
		}
	}
	return best
}

// greedyFrom returns the greedy order starting at input first, and its cost.
func (e *estimator) greedyFrom(first int) ([]int, float64) {
	n := len(e.g.inputs)
	in := make([]bool, n)
	order := []int{first}
	in[first] = true
	size := e.rows[first]
	cost := -size
	for _, r := range e.rows {
		cost += r
	}
	for len(order) < n {
		next, nextSize, connected := -1, math.Inf(1), false
		for i := 0; i < n; i++ {
			if in[i] {
				continue
			}
			s, conn := e.joinSize(in, size, i)
			// A connected input beats any unconnected one; then the smaller
			// result; then FROM order.
			if (conn && !connected) || (conn == connected && s < nextSize*(1-1e-9)) {
				next, nextSize, connected = i, s, conn
			}
		}
		if e.lookups != nil {
			// (Views have no lookups: their costs stay the sums they were.)
			cost += e.buildCost(in, size, next) - e.rows[next]
		}
		in[next] = true
		order = append(order, next)
		size = nextSize
		cost += size
	}
	return order, cost
}

// joinSize estimates the rows of joining input i to the inputs marked in
// (of estimated size size), and reports whether a conjunct connects them.
func (e *estimator) joinSize(in []bool, size float64, i int) (float64, bool) {
	s := size * e.rows[i]
	connected := false
	for _, c := range e.byIn[i] {
		applies := true
		for _, u := range e.uses[c] {
			if u != i && !in[u] {
				applies = false
				break
			}
		}
		if applies {
			connected = true
			s *= e.sel[c]
		}
	}
	return math.Max(1, s), connected
}

// estimateRows estimates the rows of a join input: a table scan, possibly
// filtered, whose filter pins its whole key returns one row per key
// value; a filter keeps a fixed fraction of its input (filterSelectivity).
// Without row counts (rc nil) every other input counts defaultRows; with
// them, a scan counts its relation's rows and other inputs are derived from
// theirs (deriveRows).
func estimateRows(rel ir.Rel, rc RowCounts) float64 {
	switch r := rel.(type) {
	case *ir.Filter:
		if s, ok := r.Input.(*ir.Scan); ok && len(s.Relation.Key) > 0 {
			pinned := PinnedKey(r.Pred, s.Relation.Key, s.Relation.Types())
			if len(pinned) == len(s.Relation.Key) {
				n := 1.0
				for _, vals := range pinned {
					n *= float64(len(vals))
				}
				return n
			}
		}
		rows := estimateRows(r.Input, rc)
		for _, c := range ir.Conjuncts(r.Pred) {
			rows *= filterSelectivity(c)
		}
		return math.Max(1, rows)
	case *ir.Scan:
		if n, ok := rc.rows(r.Relation); ok {
			return n
		}
	}
	if rc != nil {
		return deriveRows(rel, rc)
	}
	return defaultRows
}

// filterSelectivity is the fraction of rows a conjunct over one input is
// assumed to keep.
func filterSelectivity(c ir.Expr) float64 {
	if call, ok := c.(*ir.Call); ok && call.Fn == ir.FnEq {
		return 1.0 / maxDistinct
	}
	return 1.0 / 3
}

// selectivity estimates the fraction of row combinations conjunct c keeps.
// An equality between columns keeps 1/max(distinct values of either side):
// a key column of a table has as many distinct values as rows, another
// column at most maxDistinct.
func (e *estimator) selectivity(c ir.Expr, inputOf []int) float64 {
	call, ok := c.(*ir.Call)
	if !ok || call.Fn != ir.FnEq || len(call.Args) != 2 {
		return 1.0 / 3
	}
	d := 1.0
	for _, a := range call.Args {
		ref, ok := a.(*ir.InputRef)
		if !ok {
			d = math.Max(d, maxDistinct)
			continue
		}
		i := inputOf[ref.Index]
		d = math.Max(d, e.distinct(i, ref.Index-e.g.offsets[i]))
	}
	return 1 / d
}

// distinct estimates the distinct values of column col of input i before
// its own filters.
func (e *estimator) distinct(i, col int) float64 {
	rel := e.g.inputs[i]
	if f, ok := rel.(*ir.Filter); ok {
		rel = f.Input
	}
	rows := float64(defaultRows)
	if s, ok := rel.(*ir.Scan); ok {
		if n, ok := e.g.rc.rows(s.Relation); ok {
			rows = n
		}
		if isWholeKey(s.Relation, col) {
			return rows
		}
	}
	return math.Min(rows, maxDistinct)
}

// isWholeKey reports whether col alone is the key of rel.
func isWholeKey(rel *catalog.Relation, col int) bool {
	return len(rel.Key) == 1 && rel.Key[0] == col
}
