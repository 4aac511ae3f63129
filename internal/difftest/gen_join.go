package difftest

import (
	"fmt"
	"slices"
	"strings"
)

// Many-way joins: views over three to six inputs (tables, views, the same
// relation more than once), inner and LEFT joins written with JOIN ... ON
// or as comma joins with their conditions in WHERE, linked by equalities
// that form a random tree over the inputs, so that the conditions often
// link inputs that are not adjacent in FROM and the planner's join order
// (planner/join_order.go) differs from the written one. On top: an
// aggregation, or any view shape (see view).

// multiJoinView returns a view over a join of ins, or ok false if some
// input has no column to join on.
func (g *gen) multiJoinView(name string, ins []*relation, named bool) (*relation, bool) {
	from, ok := g.multiJoin(ins)
	if !ok {
		return nil, false
	}
	var v *relation
	if g.chance(0.5) {
		v = g.viewOf(name, from, named, g.aggregation)
	} else {
		v = g.view(name, from, named)
	}
	var srcs []string
	for _, r := range ins {
		if !slices.Contains(srcs, r.name) {
			srcs = append(srcs, r.name)
		}
	}
	v.sources = append(srcs, v.sources[1:]...)
	v.nullableKey = true
	return v, true
}

// viewOf returns a view named name whose definition build makes over src;
// see view for named.
func (g *gen) viewOf(name string, src *relation, named bool, build func(*relation) (string, []expr)) *relation {
	v := &relation{name: name, view: true, nullableKey: true}
	g.named, g.unnamed, g.refs, g.subqueries = named, false, nil, 0
	sel, outs := build(src)
	v.def = sel
	v.unnamed = g.unnamed
	v.sources = append([]string{src.name}, usedRefs(sel, g.refs)...)
	for i, o := range outs {
		col := o
		col.sql = fmt.Sprintf("c%d", i+1)
		col.lit = false
		v.cols = append(v.cols, col)
	}
	return v
}

// multiJoin returns the FROM list of a join of ins as a relation (its
// where set for comma joins), with input i aliased j<i+1>.
func (g *gen) multiJoin(ins []*relation) (*relation, bool) {
	n := len(ins)
	cols := make([][]expr, n)
	for i, r := range ins {
		cols[i] = qualified(fmt.Sprintf("j%d", i+1), r.cols)
	}
	// conds[i] link input i with inputs before it: the edge of the tree
	// to a random earlier input, now and then one more. The edge is on
	// input i's primary key where it has a one-column key, so that each
	// row joined so far matches at most one of its rows: a join of many
	// inputs on equalities over small domains (or over columns an UPDATE
	// made all equal) would otherwise multiply into millions of rows. At
	// most one edge is on other columns.
	conds := make([][]string, n)
	free := 0
	for i := 1; i < n; i++ {
		for k := range 1 + btoi(g.chance(0.25)) {
			j := g.intn(i)
			x, y, ok := expr{}, expr{}, false
			if r := ins[i]; k == 0 && len(r.key) == 1 {
				x, y, ok = g.joinKeys(cols[j], cols[i][r.key[0]:r.key[0]+1])
			}
			if !ok && k == 0 {
				if free++; free > 1 {
					return nil, false
				}
			}
			if !ok {
				x, y, ok = g.joinKeys(cols[j], cols[i])
			}
			if !ok {
				if k == 0 {
					return nil, false
				}
				break
			}
			op := " = "
			if k > 0 && g.chance(0.5) {
				op = pick(g, []string{" <> ", " < ", " >= "})
			}
			conds[i] = append(conds[i], x.sql+op+y.sql)
		}
	}
	var all []expr
	for _, c := range cols {
		all = append(all, c...)
	}
	item := func(i int) string { return fmt.Sprintf("%s AS j%d", ins[i].name, i+1) }
	from := &relation{cols: all}
	if g.chance(0.5) {
		// Comma joins: the inputs in any order, the conditions in WHERE.
		var items, where []string
		for _, i := range g.rng.Perm(n) {
			items = append(items, item(i))
			where = append(where, conds[i]...)
		}
		g.rng.Shuffle(len(where), func(a, b int) { where[a], where[b] = where[b], where[a] })
		from.name = strings.Join(items, ", ")
		from.where = strings.Join(where, " AND ")
		return from, true
	}
	// JOIN ... ON in the order of the tree, each ON with the conditions
	// linking its input to the earlier ones, which need not be adjacent.
	var sb strings.Builder
	sb.WriteString(item(0))
	for i := 1; i < n; i++ {
		kind := pick(g, []string{" JOIN ", " JOIN ", " INNER JOIN ", " LEFT JOIN ", " LEFT JOIN "})
		on := conds[i]
		if g.chance(0.2) {
			// A condition on the new input alone, in ON: for a LEFT JOIN it
			// decides which rows match, not which are kept.
			on = append(slices.Clone(on), g.expr(&ectx{cols: cols[i], exact: true}, tBool, 1).sql)
		}
		sb.WriteString(kind + item(i) + " ON " + strings.Join(on, " AND "))
	}
	from.name = sb.String()
	return from, true
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

// whereOf returns the WHERE clause of a query over src with condition cond
// (none if ""): src's own conditions, for a comma join, AND-ed with cond.
func whereOf(src *relation, cond string) string {
	switch {
	case src.where == "" && cond == "":
		return ""
	case src.where == "":
		return " WHERE " + cond
	case cond == "":
		return " WHERE " + src.where
	}
	return " WHERE " + src.where + " AND (" + cond + ")"
}
