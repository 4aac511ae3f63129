package difftest

import (
	"math"
	"strings"
)

// Structs: columns of STRUCT<a integer, b text> holding ROW(...) values,
// NULL structs and structs with NULL fields; field access (s).a and (s).b,
// typed ROW constructors, struct comparisons and IS NULL, and the text of
// a struct. Structs are exact and compare field by field, so they may be
// grouped, joined, made distinct and compared.
//
// streamsql spells the type STRUCT<...>; PostgreSQL needs a named
// composite type. The generator writes streamsql's spelling, and pgSpell
// turns it into the composite type's name, which newHarness creates in
// every PostgreSQL database (pgTypes). A ROW(...) in a view's select list
// is always cast: PostgreSQL refuses an anonymous record column in a view.
// expr.bound of a struct bounds both fields, the integer's magnitude and
// the text's length.

func init() {
	registerType(tStruct, structType())
}

// structSpelling is the struct type as streamsql spells it, and
// structPGType PostgreSQL's composite type.
const (
	structSpelling = "STRUCT<a integer, b text>"
	structPGType   = "difftest_ab"
)

// pgTypes creates the composite types pgSpell names.
const pgTypes = "CREATE TYPE " + structPGType + " AS (a integer, b text)"

// pgSpell returns sql as PostgreSQL spells it: struct types by the name of
// their composite types.
func pgSpell(sql string) string {
	return strings.ReplaceAll(sql, structSpelling, structPGType)
}

const (
	structColumnBound = textBound
	structLimit       = 1000 // as text's
)

func structType() *extType {
	s := &extType{limit: structLimit, maxLen: math.Inf(1)}
	s.column = func(e *expr) { e.bound = structColumnBound }
	s.value = func(g *gen) string {
		return "ROW(" + g.value(tInt) + ", " + g.value(tText) + ")"
	}
	s.series = func(g *gen) string {
		// Cast: a ROW in a CASE is a record, which PostgreSQL does not
		// assign to a composite column.
		return "CAST(" + pick(g, []string{
			"ROW(i % 5, substr('abcab', 1 + i % 3, 2))",
			"ROW(NULLIF(i % 3, 0), CAST(i % 2 AS text))",
			"ROW(i % 4, NULL)",
		}) + " AS " + structSpelling + ")"
	}
	s.literal = func(g *gen) expr {
		a, b := g.value(tInt), g.value(tText)
		return expr{sql: "CAST(ROW(" + a + ", " + b + ") AS " + structSpelling + ")", t: tStruct, bound: textBound}
	}
	s.make = func(g *gen, c, x *ectx, depth int) (expr, bool) { return g.structExpr(x, depth) }
	s.use = func(g *gen, x *ectx, want typ, depth int) (expr, bool) { return g.structUse(x, want, depth) }
	return s
}

// structExpr returns a typed ROW constructor over operands in x.
func (g *gen) structExpr(x *ectx, depth int) (expr, bool) {
	a := g.expr(x, tInt, depth)
	b := g.expr(x, tText, depth)
	if a.bound > structLimit {
		return expr{}, false
	}
	if b.lit {
		b.sql = "CAST(" + b.sql + " AS text)"
	}
	row := "ROW("
	if g.chance(0.3) {
		row = "("
	}
	return expr{
		sql:    "CAST(" + row + a.sql + ", " + b.sql + ") AS " + structSpelling + ")",
		t:      tStruct,
		bound:  math.Max(a.bound, b.bound),
		dyadic: true,
	}, true
}

// field returns the field access (s).f.
func field(s expr, f string) string { return "(" + s.sql + ")." + f }

// structUse returns an expression of scalar type want over structs, or ok
// false if there is none.
func (g *gen) structUse(x *ectx, want typ, depth int) (expr, bool) {
	s := g.expr(x, tStruct, depth)
	switch {
	case want.isInt() || want == tNumeric || want == tFloat:
		e := expr{sql: field(s, "a"), t: tInt, bound: s.bound, dyadic: true}
		if want == tInt {
			return e, true
		}
		return g.castNumber(e, want), true
	case want == tText:
		if g.chance(0.7) {
			return expr{sql: field(s, "b"), t: tText, bound: s.bound}, true
		}
		// (a,b) with b quoted and its quotes doubled.
		return expr{sql: "CAST(" + s.sql + " AS text)", t: tText, bound: 2*s.bound + 16}, true
	case want == tBool:
		e := expr{t: tBool, dyadic: true}
		switch g.intn(4) {
		case 0, 1:
			o := g.expr(x, tStruct, depth)
			e.sql = "(" + s.sql + pick(g, []string{" = ", " <> ", " IS DISTINCT FROM ", " IS NOT DISTINCT FROM "}) + o.sql + ")"
		case 2:
			e.sql = "(" + s.sql + pick(g, []string{" IS NULL", " IS NOT NULL"}) + ")"
		default:
			e.sql = "(" + field(s, pick(g, []string{"a", "b"})) + pick(g, []string{" IS NULL", " IS NOT NULL"}) + ")"
		}
		return e, true
	}
	return expr{}, false
}
