package difftest

import (
	"slices"
	"strings"
)

// Correlated subqueries anywhere an expression may be: in the select list,
// inside CASE and COALESCE, under OR and NOT in WHERE, in HAVING (on group
// keys), scalar ones of any type and boolean ones (EXISTS, IN, ANY/ALL),
// correlated by any comparison with functions of the outer columns, by OR,
// and two levels deep. gen.go's subquery and subqueryItem make the simpler
// shapes; these come from the expression generator itself (see compound)
// wherever its ectx has corr set.
//
// Not generated, as streamsql refuses them (docs/sql.md "Subqueries"):
// subqueries in GROUP BY, aggregate arguments, FILTER and the ON of outer
// joins (no ectx there has corr); NOT IN over a correlated subquery inside
// a correlated subquery; aggregates of outer columns in a subquery; LATERAL
// subqueries in FROM.

// subqueryChance is the chance that a compound expression where corr is set
// is a correlated subquery, and subqueriesPerView bounds their number in
// one view definition (each is a join to maintain).
const (
	subqueryChance    = 0.04
	subqueriesPerView = 2
)

// outerColumns returns src's columns as a subquery sees them: qualified by
// src's name, unless src is a join, whose columns are qualified already.
func outerColumns(src *relation) []expr {
	return outerScope(src)
}

// outerScope returns src's columns as a subquery refers to them.
func outerScope(src *relation) []expr {
	if strings.Contains(src.name, " ") {
		return src.cols
	}
	return qualified(src.name, src.cols)
}

// withCorr returns c with subqueries correlated with outer allowed.
func withCorr(c *ectx, outer []expr) *ectx {
	d := *c
	d.corr = outer
	return &d
}

// corrSubquery returns an expression of type t that is, or compares, a
// subquery over one of g.others correlated with c.corr, or ok false.
func (g *gen) corrSubquery(c *ectx, t typ) (expr, bool) {
	if len(c.corr) == 0 || !g.chance(subqueryChance) {
		return expr{}, false
	}
	return g.makeSubquery(c, t)
}

// makeSubquery is corrSubquery without the chance.
func (g *gen) makeSubquery(c *ectx, t typ) (expr, bool) {
	if len(g.others) == 0 || g.subqueries >= subqueriesPerView {
		return expr{}, false
	}
	o := pick(g, g.others)
	inner := qualified("s", o.cols)
	corr, ok := g.correlation(c.corr, inner, 1)
	if !ok {
		return expr{}, false
	}
	from := " FROM " + o.name + " AS s WHERE " + corr
	var e expr
	if t == tBool {
		e, ok = g.boolSubquery(c.corr, inner, from)
	} else {
		e, ok = g.scalarSubquery(inner, from, t)
	}
	if !ok {
		return expr{}, false
	}
	g.subqueries++
	g.refs = append(g.refs, o.name)
	return e, true
}

// correlation returns a condition linking the columns inner of a subquery
// with the columns outer around it: one or two comparisons of an inner
// column with a function of an outer one, AND-ed or OR-ed, maybe with a
// condition on inner alone and, at level 1, maybe a subquery one level
// deeper that sees both.
func (g *gen) correlation(outer, inner []expr, level int) (string, bool) {
	term := func() (string, bool) {
		a, b, ok := g.joinKeys(outer, inner)
		if !ok {
			return "", false
		}
		if g.chance(0.4) && a.t != tBool {
			// A function of the outer column.
			a = g.expr(&ectx{cols: []expr{a}, exact: true, grouping: true}, a.t, 1)
		}
		op := pick(g, []string{" = ", " = ", " < ", " <= ", " > ", " <> ", " >= "})
		return "(" + b.sql + op + a.sql + ")", true
	}
	cond, ok := term()
	if !ok {
		return "", false
	}
	if g.chance(0.35) {
		if t2, ok := term(); ok {
			cond = "(" + cond + pick(g, []string{" OR ", " AND "}) + t2 + ")"
		}
	}
	if g.chance(0.3) {
		f := g.expr(&ectx{cols: inner, exact: true}, tBool, 1).sql
		cond = "(" + cond + pick(g, []string{" AND ", " AND ", " OR "}) + f + ")"
	}
	if level == 1 && g.chance(0.25) {
		if nested, ok := g.nestedSubquery(outer, inner); ok {
			cond = "(" + cond + pick(g, []string{" AND ", " OR "}) + nested + ")"
		}
	}
	return cond, true
}

// nestedSubquery returns a boolean subquery with alias s2 inside a
// subquery over inner, correlated with inner and maybe with outer too.
func (g *gen) nestedSubquery(outer, inner []expr) (string, bool) {
	o := pick(g, g.others)
	inner2 := qualified("s2", o.cols)
	seen := inner
	if g.chance(0.5) {
		seen = append(append([]expr{}, inner...), outer...)
	}
	corr, ok := g.correlation(seen, inner2, 2)
	if !ok {
		return "", false
	}
	g.refs = append(g.refs, o.name)
	from := " FROM " + o.name + " AS s2 WHERE " + corr
	if a, b, ok := g.joinKeys(inner, inner2); ok && g.chance(0.4) {
		// IN, not NOT IN: NOT IN over a correlated subquery inside a
		// correlated subquery is 0A000.
		return "(" + a.sql + " IN (SELECT " + b.sql + from + "))", true
	}
	return "(" + pick(g, []string{"EXISTS", "NOT EXISTS"}) + " (SELECT 1" + from + "))", true
}

// boolSubquery returns EXISTS, NOT EXISTS, [NOT] IN or a comparison with
// ANY or ALL over the subquery from (" FROM ... WHERE ...").
func (g *gen) boolSubquery(outer, inner []expr, from string) (expr, bool) {
	e := expr{t: tBool, dyadic: true}
	switch g.intn(4) {
	case 0, 1:
		e.sql = "(" + pick(g, []string{"EXISTS", "NOT EXISTS"}) + " (SELECT 1" + from + "))"
	default:
		a, b, ok := g.joinKeys(outer, inner)
		if !ok {
			return expr{}, false
		}
		op := pick(g, []string{" IN ", " NOT IN ", " = ANY ", " <> ALL ", " > ALL ", " <= ANY ", " < ALL ", " = ALL "})
		e.sql = "(" + a.sql + op + "(SELECT " + b.sql + from + "))"
	}
	return e, true
}

// scalarSubquery returns a subquery of type t over from: an aggregate of an
// inner column, or the first value in a total order of the inner rows.
func (g *gen) scalarSubquery(inner []expr, from string, t typ) (expr, bool) {
	kc := &ectx{exact: true, grouping: true}
	var cols []expr
	for _, b := range inner {
		if b.t == t && kc.ok(b) {
			cols = append(cols, b)
		}
	}
	if t == tBigint && (len(cols) == 0 || g.chance(0.4)) {
		return expr{sql: "(SELECT count(*)" + from + ")", t: tBigint, bound: maxRows, dyadic: true}, true
	}
	if len(cols) == 0 {
		return expr{}, false
	}
	b := pick(g, cols)
	e := b
	e.lit = false
	total := true
	for _, c := range inner {
		total = total && kc.ok(c)
	}
	if total && g.chance(0.4) {
		// Rows that tie on every column are alike: the value is the same
		// whichever comes first.
		var keys []string
		for _, i := range g.rng.Perm(len(inner)) {
			keys = append(keys, inner[i].sql+pick(g, []string{"", " DESC", " NULLS FIRST", " DESC NULLS LAST"}))
		}
		e.sql = "(SELECT " + b.sql + from + " ORDER BY " + strings.Join(keys, ", ") + " LIMIT 1)"
		return e, true
	}
	if b.t == tBool || b.t == tInterval && b.ambiguous || b.t == tJsonb || b.t == tStruct {
		// PostgreSQL has no min or max of booleans, jsonb or records
		// (42883; streamsql has them of jsonb).
		return expr{}, false
	}
	e.sql = "(SELECT " + pick(g, []string{"min", "max"}) + "(" + b.sql + ")" + from + ")"
	return e, true
}

// keySubquery returns, now and then, a subquery correlated with the plain
// column keys of a grouped query over src (PostgreSQL accepts only grouped
// columns, not grouped expressions, in a subquery), for its select list or
// HAVING.
func (g *gen) keySubquery(src *relation, keys []expr, t typ) (expr, bool) {
	var plain []expr
	outer := outerScope(src)
	for _, k := range keys {
		for i, col := range src.cols {
			if col.sql == k.sql && col.t != tStruct {
				plain = append(plain, outer[i])
			}
		}
	}
	if len(plain) == 0 {
		return expr{}, false
	}
	return g.makeSubquery(&ectx{cols: plain, exact: true, corr: plain}, t)
}

// usedRefs returns the relations of refs that def reads in a subquery (as
// "FROM name AS s" or "AS s2"): a subquery generated into an expression
// that the generator then discarded leaves its relation in g.refs, and a
// view must not be thought to depend on what it does not read (a DROP
// CASCADE would then forget a view that PostgreSQL keeps).
func usedRefs(def string, refs []string) []string {
	var out []string
	for _, r := range refs {
		if slices.Contains(out, r) {
			continue
		}
		for _, alias := range []string{" AS s ", " AS s)", " AS s2 "} {
			if strings.Contains(def, "FROM "+r+alias) {
				out = append(out, r)
				break
			}
		}
	}
	return out
}
