package difftest

import (
	"fmt"
	"maps"
	"math"
	"math/rand/v2"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// typ is a SQL type the generator produces values of.
type typ uint8

const (
	tSmallint typ = iota
	tInt
	tBigint
	tNumeric // numeric(10,2) as a column type; numeric in expressions
	tFloat   // double precision
	tText
	tBool
	tDate
	tTimestamp
	tInterval
	// Non-scalar types, described by extTypes (gen_types.go).
	tIntArray  // integer[] (gen_array.go)
	tTextArray // text[]
	tJsonb     // jsonb (gen_jsonb.go)
	tStruct    // STRUCT<a integer, b text> (gen_struct.go)
)

// columnTypes are the types a table column can have; interval is rarer.
var columnTypes = []typ{tSmallint, tInt, tBigint, tNumeric, tFloat, tText, tBool, tDate, tTimestamp,
	tSmallint, tInt, tBigint, tNumeric, tFloat, tText, tBool, tDate, tTimestamp, tInterval,
	tIntArray, tTextArray, tJsonb, tStruct}

// comparableTypes are the types comparisons (= <> < ...) are generated for.
var comparableTypes = []typ{tSmallint, tInt, tBigint, tNumeric, tFloat, tText, tText, tBool, tDate, tTimestamp, tInterval,
	tIntArray, tTextArray, tJsonb, tStruct}

// keyTypes are the types a primary key column can have.
var keyTypes = []typ{tSmallint, tInt, tBigint, tText, tDate}

func (t typ) isInt() bool    { return t <= tBigint }
func (t typ) isNumber() bool { return t <= tFloat }

// castName is the name of t in CAST expressions.
func (t typ) castName() string { return typeNames[t] }

var typeNames = [...]string{"smallint", "integer", "bigint", "numeric", "double precision", "text",
	"boolean", "date", "timestamp", "interval", "integer[]", "text[]", "jsonb", structSpelling}

// declName is the name of t in CREATE TABLE.
func (t typ) declName() string {
	if t == tNumeric {
		return "numeric(10,2)"
	}
	return t.castName()
}

// limit bounds the magnitude of numbers (the length of text) an expression
// of type t may produce: integers must not overflow, numerics must stay well
// inside streamsql's Decimal128 with 12 fractional digits, floats small
// enough that sums of dyadic values stay exact.
func (t typ) limit() float64 {
	switch t {
	case tSmallint:
		return math.MaxInt16
	case tInt:
		return math.MaxInt32
	case tBigint:
		return 1e18
	case tNumeric:
		return 1e15
	case tFloat:
		return 1e12 // dyadic values with up to 13 fractional bits stay exact
	case tText:
		return 1000
	case tInterval:
		return 1e7 // days
	}
	if s := extTypes[t]; s != nil {
		return s.limit
	}
	return math.Inf(1)
}

// expr is a generated SQL expression and what is known about its values.
type expr struct {
	sql string
	t   typ
	// bound is an upper bound of |value| for numbers, of the length for
	// text, and of the number of days from 2000-01-01 for dates and
	// timestamps; the generator keeps it below t.limit() so that nothing
	// overflows.
	bound float64
	// approx marks values the two systems compute only approximately alike
	// (numeric division and avg, kept terminal; sums of floats, whose
	// rounding depends on the order; transcendental functions). They are
	// terminal: they may be output, aggregated with sum/avg/min/max and
	// tested for NULL, but are never computed with, grouped on or compared
	// with each other. Approximate numerics may be compared with literals:
	// they are rationals with small denominators, equal to a short literal
	// exactly (and then exact in both systems too) or far from it. Floats
	// may not (see comparableApprox).
	approx bool
	// scale is the number of fractional digits of an exact numeric.
	scale int
	// dyadic marks floats that are multiples of a small power of two of
	// moderate size: sums of them are exact in any order, so retractions
	// cannot make streamsql's running sums differ from PostgreSQL's.
	dyadic bool
	// special marks floats that may be Infinity, -Infinity or NaN. They
	// are never cast to other number types (PostgreSQL's numeric has
	// infinities, streamsql's has not).
	special bool
	// ambiguous marks intervals whose equal values may be spelled
	// differently (1 day and 24:00:00 are equal). Only the difference of
	// two timestamps is always spelled one way (days and a time of day).
	ambiguous bool
	// lit marks literals.
	lit bool
	// length bounds the number of elements of arrays.
	length float64
}

// Value domains. They are small so that groups, duplicates and DISTINCT
// collide often. Non-key numbers stay within valueBound and text within
// textBound characters, and every UPDATE keeps them there, which is what
// makes the overflow bounds above sound.
const (
	valueBound = 100
	textBound  = 300 // a few long values among short ones
	// keyRange is the range of primary key values of rows inserted with
	// VALUES; bulk inserts use keys above it.
	keyRange = 400
	// maxRows bounds the rows of any table, for the bounds of aggregates.
	maxRows = 10000
	// maxScale bounds the fractional digits of exact numerics the generator
	// builds, far below streamsql's 36 significant digits.
	maxScale = 12
)

var (
	intDomain = []int{-99, -3, -2, -1, 0, 0, 1, 1, 2, 2, 3, 4, 5, 7, 10, 42, 99}
	// Some numerics have three digits: the column rounds them half away
	// from zero.
	numericDomain = []string{"-2.50", "-1.00", "0.00", "0.01", "0.50", "1.00", "1.25", "2.50", "3.33", "10.00", "99.99", "1.005", "-0.125", "2.675"}
	floatDomain   = []string{"-2.5", "-0.25", "0", "0.125", "0.5", "1", "1.5", "3", "10", "64"}
	// Non-ASCII text has no case: PostgreSQL's C locale (the test cluster's)
	// leaves É alone in lower(), streamsql lowers it as a UTF-8 locale would.
	textDomain = []string{"", "a", "b", "ab", "ba", "A", "B", "abc", " a ", "a_b", "a%b", "x y", "o'k", "Ab", "€x", "日本", `a\b`}
	dateDomain = []string{"1999-12-31", "2000-01-01", "2000-02-29", "2023-12-31", "2024-01-01", "2024-01-31", "2024-02-29", "2024-03-01",
		"1900-02-28", "0044-03-15 BC"}
	timestampDomain = []string{"2000-01-01 00:00:00", "2000-02-29 12:30:00", "2023-12-31 23:59:59", "2024-01-01 00:00:00",
		"2024-01-01 10:00:00", "2024-01-31 23:00:00.5", "2024-02-29 06:15:00", "2024-03-01 00:00:00", "2024-03-01 00:00:00.000001",
		"1969-12-31 23:59:59.5", "0001-01-01 00:00:00 BC"}
	intervalDomain = []string{"1 day", "2 hours", "30 minutes", "1 mon", "-1 days", "1 day 02:00:00", "00:01:30",
		"24:00:00", "30 days", "-1 days +02:00:00", "1 year 2 mons 3 days 04:05:06.5"}
	likePatterns = []string{"a%", "%b", "_", "__", "%a%", "A%", "%", "", "ab", "a_b", "%_%", "_b%"}
	truncUnits   = []string{"millennium", "century", "decade", "year", "quarter", "month", "week", "day", "hour", "minute", "second"}
	dateFields   = []string{"millennium", "century", "decade", "year", "isoyear", "quarter", "month", "week", "day", "dow", "isodow", "doy", "epoch"}
	timeFields   = []string{"hour", "minute", "second", "millisecond", "microsecond", "epoch"}
	// dateDays bounds dates and timestamps as days from 2000-01-01.
	dateDays = 8e5
	// epochBound bounds the fields of dates and timestamps: the epoch of
	// 0044-03-15 BC is -63517824000.
	epochBound = 1e11
)

// quote returns s as a SQL string literal.
func quote(s string) string { return "'" + strings.ReplaceAll(s, "'", "''") + "'" }

// gen generates random SQL from one seeded source. It is deterministic: the
// same seed and the same answers from PostgreSQL give the same statements.
type gen struct {
	rng *rand.Rand
	// named says that every output column of the view being generated
	// gets an alias; unnamed is set when one did not.
	named, unnamed bool
	// others are the relations subqueries of the view being generated may
	// read; refs collects those they do.
	others []*relation
	refs   []string
	// subqueries counts the subqueries made by corrSubquery in the view
	// being generated.
	subqueries int
}

func newGen(seed int64) *gen {
	return &gen{rng: rand.New(rand.NewPCG(uint64(seed), 0x9e3779b97f4a7c15))}
}

func (g *gen) intn(n int) int        { return g.rng.IntN(n) }
func (g *gen) chance(p float64) bool { return g.rng.Float64() < p }
func pick[T any](g *gen, xs []T) T   { return xs[g.rng.IntN(len(xs))] }

// ectx is what an expression may use.
type ectx struct {
	// cols are the columns in scope.
	cols []expr
	// exact forbids approximate results.
	exact bool
	// dyadic requires float results to be dyadic.
	dyadic bool
	// grouping marks values that are grouped or made distinct: they
	// compare by hashing.
	grouping bool
	// corr are the outer columns a correlated subquery in the expression
	// may refer to; nil where no subquery may be (see gen_subquery.go).
	corr []expr
}

// strict returns c for operands of computations: exact, and dyadic when c
// is.
func (c *ectx) strict() *ectx {
	if c.exact {
		return c
	}
	return &ectx{cols: c.cols, exact: true, dyadic: c.dyadic, corr: c.corr}
}

func (c *ectx) ok(e expr) bool {
	if e.bound > e.t.limit() {
		return false
	}
	if s := extTypes[e.t]; s != nil && e.length > s.maxLen {
		return false
	}
	if c.exact && e.approx {
		return false
	}
	if c.dyadic && e.t == tFloat && !e.dyadic {
		return false
	}
	if e.special && e.t != tFloat {
		return false
	}
	// Equal intervals spelled two ways ('1 day', '24:00:00') are one
	// group, but which spelling a group outputs differs: PostgreSQL's
	// query prints the first it reads, a view the one with the most
	// months, then days (docs/decisions.md). Only intervals spelled one
	// way are grouped or made distinct in the output; count(DISTINCT) and
	// join keys, which output no key, take any.
	if c.grouping && e.t == tInterval && e.ambiguous {
		return false
	}
	return true
}

// columnsOf returns the columns in scope of type t that c allows.
func (c *ectx) columnsOf(t typ) []expr {
	var out []expr
	for _, col := range c.cols {
		if col.t == t && c.ok(col) {
			out = append(out, col)
		}
	}
	return out
}

// literal returns a random literal of type t, or NULL of type t.
func (g *gen) literal(t typ) expr {
	if g.chance(0.04) {
		return expr{sql: "CAST(NULL AS " + t.castName() + ")", t: t, lit: true, dyadic: true}
	}
	return g.nonNullLiteral(t)
}

func (g *gen) nonNullLiteral(t typ) expr {
	e := expr{t: t, lit: true, dyadic: true}
	switch t {
	case tSmallint, tInt, tBigint:
		v := pick(g, intDomain)
		e.bound = math.Abs(float64(v))
		e.sql = strconv.Itoa(v)
		if v < 0 {
			e.sql = "(" + e.sql + ")"
		}
		if t != tInt {
			e.sql = "CAST(" + strconv.Itoa(v) + " AS " + t.castName() + ")"
		}
	case tNumeric:
		s := pick(g, []string{"0.5", "1.25", "2", "0.01", "-1.5", "3.75", "10.0", "0.333"})
		f, _ := strconv.ParseFloat(s, 64)
		e.bound = math.Abs(f)
		if i := strings.IndexByte(s, '.'); i >= 0 {
			e.scale = len(s) - i - 1
		}
		if !strings.Contains(s, ".") {
			s = "CAST(" + s + " AS numeric)"
		} else if f < 0 {
			s = "(" + s + ")"
		}
		e.sql = s
	case tFloat:
		s := pick(g, floatDomain)
		f, _ := strconv.ParseFloat(s, 64)
		e.bound = math.Abs(f)
		e.sql = "CAST(" + s + " AS double precision)"
	case tText:
		s := pick(g, textDomain)
		e.bound = float64(len(s))
		e.sql = quote(s)
	case tBool:
		e.sql = pick(g, []string{"TRUE", "FALSE"})
	case tDate:
		e.sql = "DATE " + quote(pick(g, dateDomain))
		e.bound = dateDays
	case tTimestamp:
		e.sql = "TIMESTAMP " + quote(pick(g, timestampDomain))
		e.bound = dateDays
	case tInterval:
		e.sql = "INTERVAL " + quote(pick(g, intervalDomain))
		e.bound = 40
		e.ambiguous = true
	default:
		e = extTypes[t].literal(g)
		e.lit, e.dyadic = true, true
	}
	return e
}

// expr returns a random expression of type t of at most depth levels of
// operators.
func (g *gen) expr(c *ectx, t typ, depth int) expr {
	for try := 0; try < 12; try++ {
		var e expr
		ok := true
		if depth <= 0 || g.chance(0.3) {
			e = g.leaf(c, t)
		} else {
			e, ok = g.compound(c, t, depth-1)
		}
		if ok && c.ok(e) {
			return e
		}
	}
	return g.literal(t)
}

// leaf returns a column of type t (usually), a value of type t made from a
// column of another type, or a literal.
func (g *gen) leaf(c *ectx, t typ) expr {
	if cols := c.columnsOf(t); len(cols) > 0 && g.chance(0.8) {
		return pick(g, cols)
	}
	if g.chance(0.6) {
		if e, ok := g.fromColumn(c, t); ok && c.ok(e) {
			return e
		}
	}
	return g.literal(t)
}

// someType returns the type of a random column in scope, mostly, so that
// expressions read the data; else a random type of ts.
func (g *gen) someType(c *ectx, ts []typ) typ {
	if g.chance(0.75) {
		var have []typ
		for _, col := range c.cols {
			if slices.Contains(ts, col.t) {
				have = append(have, col.t)
			}
		}
		if len(have) > 0 {
			return pick(g, have)
		}
	}
	return pick(g, ts)
}

// fromColumn returns a value of type t computed from a column of another
// type in scope, by a cast or a comparison.
func (g *gen) fromColumn(c *ectx, t typ) (expr, bool) {
	x := c.strict()
	var from []typ
	switch t {
	case tSmallint, tInt, tBigint, tNumeric, tFloat:
		from = []typ{tSmallint, tInt, tBigint, tNumeric, tFloat}
	case tText:
		from = []typ{tSmallint, tInt, tBigint, tDate, tTimestamp, tBool}
	case tBool:
		from = columnTypes
	case tDate:
		from = []typ{tTimestamp}
	case tTimestamp:
		from = []typ{tDate}
	default:
		return expr{}, false
	}
	var cols []expr
	for _, col := range x.cols {
		if col.t != t && slices.Contains(from, col.t) && x.ok(col) {
			cols = append(cols, col)
		}
	}
	if len(cols) == 0 {
		return expr{}, false
	}
	a := pick(g, cols)
	if t == tBool {
		if a.t == tBool {
			return expr{}, false
		}
		if g.chance(0.2) {
			return expr{sql: "(" + a.sql + " IS NOT NULL)", t: tBool, dyadic: true}, true
		}
		return expr{sql: "(" + a.sql + " " + pick(g, []string{"=", "<>", "<", "<=", ">", ">="}) + " " + g.nonNullLiteral(a.t).sql + ")", t: tBool, dyadic: true}, true
	}
	if t.isNumber() {
		return g.castNumber(a, t), true
	}
	e := expr{sql: "CAST(" + a.sql + " AS " + t.castName() + ")", t: t, bound: a.bound}
	if t == tText {
		e.bound = 26
	}
	return e, true
}

// compound returns an expression with an operator at the top whose
// operands have at most depth levels. ok is false when the production picked
// does not apply.
func (g *gen) compound(c *ectx, t typ, depth int) (expr, bool) {
	x := c.strict()
	if e, ok := g.corrSubquery(c, t); ok {
		return e, true
	}
	switch g.intn(13) {
	case 0:
		return g.caseExpr(c, t, depth), true
	case 1:
		return g.coalesce(c, t, depth), true
	case 2:
		if s := extTypes[t]; t != tInterval && (s == nil || s.greatest) {
			return g.nullifOrGreatest(c, t, depth), true
		}
	case 3:
		return g.viaText(x, t, depth)
	}
	if e, ok := g.fromExt(x, t, depth); ok {
		return e, true
	}
	switch t {
	case tSmallint, tInt, tBigint, tNumeric, tFloat:
		return g.number(c, x, t, depth)
	case tText:
		return g.text(x, depth)
	case tBool:
		return g.boolean(c, depth), true
	case tDate:
		return g.date(x, depth)
	case tTimestamp:
		return g.timestamp(x, depth)
	case tInterval:
		return g.interval(x, depth)
	}
	if s := extTypes[t]; s != nil {
		return s.make(g, c, x, depth)
	}
	return expr{}, false
}

// viaText returns a value of type t cast to text and back: each system must
// read what it writes. Numerics do not go through text as other values:
// their spelling differs (see textable).
func (g *gen) viaText(x *ectx, t typ, depth int) (expr, bool) {
	if t == tText || t == tNumeric {
		return expr{}, false
	}
	from := t
	if t.isNumber() {
		from = g.someType(x, []typ{tSmallint, tInt, tBigint, tNumeric, tFloat})
	}
	a := g.expr(x, from, depth)
	if a.special && t != tFloat {
		return expr{}, false
	}
	var e expr
	if from == t {
		e = a
	} else {
		e = g.castNumber(a, t)
	}
	e.lit = false
	e.sql = "CAST(CAST(" + a.sql + " AS text) AS " + t.castName() + ")"
	if from != t && from != tNumeric && t.isInt() && from.isInt() {
		// Integer text casts to any integer type that can hold it.
		return e, true
	}
	if from != t {
		// Text of a float or numeric does not cast to an integer type.
		if t.isInt() {
			return expr{}, false
		}
	}
	return e, true
}

// interval returns an interval expression over operands in x.
func (g *gen) interval(x *ectx, depth int) (expr, bool) {
	switch g.intn(5) {
	case 0, 1:
		a, b := g.expr(x, tTimestamp, depth), g.expr(x, tTimestamp, depth)
		return expr{sql: "(" + a.sql + " - " + b.sql + ")", t: tInterval, bound: a.bound + b.bound}, true
	case 2:
		a, b := g.expr(x, tInterval, depth), g.expr(x, tInterval, depth)
		e := merge(tInterval, a, b)
		e.bound = a.bound + b.bound
		e.ambiguous = true
		e.sql = "(" + a.sql + pick(g, []string{" + ", " - "}) + b.sql + ")"
		return e, true
	case 3:
		a := g.expr(x, tInterval, depth)
		e := a
		e.lit, e.ambiguous = false, true
		// Multiplying or dividing by a float spills fractions of months
		// into days and of days into the time.
		n := pick(g, []string{"2", "(-1)", "0.5", "1.5", "3"})
		if g.chance(0.5) {
			e.sql = "(" + a.sql + " * " + n + ")"
			e.bound = 3 * a.bound
		} else {
			e.sql = "(" + a.sql + " / " + n + ")"
			e.bound = 2 * a.bound
		}
		return e, true
	}
	a := g.expr(x, tInterval, depth)
	e := a
	e.lit, e.ambiguous = false, true
	e.sql = "(-" + a.sql + ")"
	return e, true
}

// merge combines what is known about values that may come from any of es.
func merge(t typ, es ...expr) expr {
	m := expr{t: t, dyadic: true}
	for _, e := range es {
		m.bound = math.Max(m.bound, e.bound)
		m.approx = m.approx || e.approx
		m.scale = max(m.scale, e.scale)
		m.dyadic = m.dyadic && e.dyadic
		m.special = m.special || e.special
		m.ambiguous = m.ambiguous || e.ambiguous
		m.length = math.Max(m.length, e.length)
	}
	return m
}

func (g *gen) caseExpr(c *ectx, t typ, depth int) expr {
	n := 1 + g.intn(2)
	var parts []expr
	var sb strings.Builder
	sb.WriteString("CASE")
	if g.chance(0.3) && t != tBool {
		// Simple CASE: compare an operand with literals.
		st := g.someType(c, []typ{tSmallint, tInt, tBigint, tText, tBool, tDate})
		op := g.expr(c.strict(), st, depth)
		sb.WriteString(" " + op.sql)
		for range n {
			r := g.expr(c, t, depth)
			parts = append(parts, r)
			sb.WriteString(" WHEN " + g.nonNullLiteral(st).sql + " THEN " + r.sql)
		}
	} else {
		for range n {
			cond := g.expr(c.strict(), tBool, depth)
			r := g.expr(c, t, depth)
			parts = append(parts, r)
			sb.WriteString(" WHEN " + cond.sql + " THEN " + r.sql)
		}
	}
	if g.chance(0.8) {
		r := g.expr(c, t, depth)
		parts = append(parts, r)
		sb.WriteString(" ELSE " + r.sql)
	}
	sb.WriteString(" END")
	e := merge(t, parts...)
	e.sql = sb.String()
	return e
}

func (g *gen) coalesce(c *ectx, t typ, depth int) expr {
	parts := []expr{g.expr(c, t, depth), g.expr(c, t, depth)}
	if g.chance(0.3) {
		parts = append(parts, g.literal(t))
	}
	e := merge(t, parts...)
	var ss []string
	for _, p := range parts {
		ss = append(ss, p.sql)
	}
	e.sql = "COALESCE(" + strings.Join(ss, ", ") + ")"
	return e
}

// nullifOrGreatest returns NULLIF, GREATEST or LEAST over t; they compare
// their arguments, so these are exact or compared with a literal.
func (g *gen) nullifOrGreatest(c *ectx, t typ, depth int) expr {
	a := g.expr(c, t, depth)
	if !comparableApprox(a) {
		a = g.expr(c.strict(), t, depth)
	}
	var b expr
	if a.approx {
		b = g.nonNullLiteral(t)
	} else {
		b = g.expr(c.strict(), t, depth)
	}
	switch g.intn(3) {
	case 0:
		e := a
		e.lit = false
		e.sql = "NULLIF(" + a.sql + ", " + b.sql + ")"
		return e
	case 1:
		e := merge(t, a, b)
		e.sql = "GREATEST(" + a.sql + ", " + b.sql + ")"
		return e
	}
	e := merge(t, a, b)
	e.sql = "LEAST(" + a.sql + ", " + b.sql + ")"
	return e
}

// number returns a numeric expression of type t; c says whether the result
// may be approximate, x is the context of operands.
func (g *gen) number(c, x *ectx, t typ, depth int) (expr, bool) {
	switch g.intn(14) {
	case 0, 1: // + and -
		a, b := g.expr(x, t, depth), g.expr(x, t, depth)
		e := merge(t, a, b)
		e.bound = a.bound + b.bound
		e.sql = "(" + a.sql + pick(g, []string{" + ", " - "}) + b.sql + ")"
		return e, true
	case 2: // *
		a, b := g.expr(x, t, depth), g.expr(x, t, depth)
		e := merge(t, a, b)
		e.bound = a.bound * b.bound
		e.scale = a.scale + b.scale
		if t == tNumeric && e.scale > maxScale {
			return expr{}, false
		}
		e.sql = "(" + a.sql + " * " + b.sql + ")"
		return e, true
	case 3: // division, denominators made safe
		a, b := g.expr(x, t, depth), g.expr(x, t, depth)
		e := merge(t, a, b)
		e.bound = a.bound
		e.sql = "(" + a.sql + " / " + g.nullifZero(b) + ")"
		switch t {
		case tNumeric:
			// Both pick PostgreSQL's result scale (select_div_scale) and
			// compare exactly; the quotient stays terminal, as further
			// products could pass streamsql's 36 significant digits.
			e.approx, e.scale = true, maxScale
			e.bound = a.bound * math.Pow(10, float64(b.scale))
		case tFloat:
			e.dyadic = false
			e.bound = a.bound * 1e3
		}
		return e, true
	case 4: // %
		if t == tFloat {
			return expr{}, false
		}
		a, b := g.expr(x, t, depth), g.expr(x, t, depth)
		e := merge(t, a, b)
		e.bound = math.Min(a.bound, b.bound)
		e.sql = "(" + a.sql + " % " + g.nullifZero(b) + ")"
		return e, true
	case 5:
		a := g.expr(x, t, depth)
		e := a
		e.lit = false
		if g.chance(0.5) {
			e.sql = "(-" + a.sql + ")"
		} else {
			e.sql = "abs(" + a.sql + ")"
		}
		return e, true
	case 6, 7: // a cast from another number type
		return g.numberCast(x, t, depth)
	case 8: // rounding functions
		if t.isInt() {
			return g.intFromOther(x, t, depth)
		}
		a := g.expr(x, t, depth)
		e := a
		e.lit = false
		fn := pick(g, []string{"round", "trunc", "floor", "ceil", "sign"})
		e.bound = a.bound + 1
		e.scale = 0
		if fn == "sign" {
			e.bound = 1
		}
		if t == tNumeric && (fn == "round" || fn == "trunc") && g.chance(0.5) {
			k := g.intn(3)
			e.scale = min(a.scale, k)
			e.sql = fn + "(" + a.sql + ", " + strconv.Itoa(k) + ")"
			return e, true
		}
		e.sql = fn + "(" + a.sql + ")"
		return e, true
	case 9, 10:
		if t.isInt() {
			return g.intFromOther(x, t, depth)
		}
		if t == tNumeric {
			// extract(field FROM date/timestamp) is numeric.
			if g.chance(0.5) {
				d := g.expr(x, tDate, depth)
				return expr{sql: "EXTRACT(" + pick(g, dateFields) + " FROM " + d.sql + ")", t: tNumeric, bound: epochBound}, true
			}
			ts := g.expr(x, tTimestamp, depth)
			return expr{sql: "EXTRACT(" + pick(g, append(dateFields, timeFields...)) + " FROM " + ts.sql + ")", t: tNumeric, bound: epochBound, scale: 6}, true
		}
		// Floats: date_part, sqrt and friends.
		switch g.intn(4) {
		case 0:
			ts := g.expr(x, tTimestamp, depth)
			return expr{sql: "date_part(" + quote(pick(g, append(dateFields, timeFields...))) + ", " + ts.sql + ")", t: tFloat, bound: epochBound, dyadic: true}, true
		case 1:
			a := g.expr(x, tFloat, depth)
			return expr{sql: "sqrt(abs(" + a.sql + "))", t: tFloat, bound: math.Sqrt(a.bound) + 1, special: a.special}, true
		case 2:
			a := g.expr(x, tFloat, depth)
			return expr{sql: "ln(abs(" + a.sql + ") + 1)", t: tFloat, bound: math.Log(a.bound+1) + 1, approx: true, special: a.special}, true
		}
		a := g.expr(x, tFloat, depth)
		if a.bound > 20 || a.special {
			return expr{}, false
		}
		return expr{sql: "exp(" + a.sql + ")", t: tFloat, bound: math.Exp(a.bound) + 1, approx: true}, true
	}
	// Mixed-type arithmetic: an integer operand with a numeric or float.
	if t == tNumeric || t == tFloat {
		a := g.expr(x, t, depth)
		b := g.expr(x, g.someType(x, []typ{tSmallint, tInt, tBigint}), depth)
		e := merge(t, a, b)
		e.bound = a.bound + b.bound
		e.sql = "(" + a.sql + pick(g, []string{" + ", " - "}) + b.sql + ")"
		if g.chance(0.5) {
			e.sql = "(" + b.sql + pick(g, []string{" + ", " - "}) + a.sql + ")"
		}
		return e, true
	}
	a := g.expr(x, t, depth)
	return a, true
}

// nullifZero returns NULLIF(b, 0). The zero is an integer literal, or of
// b's type cast, or of another type of b's family, so that NULLIF keeps its
// first argument's type across a cross-type comparison as PostgreSQL does.
func (g *gen) nullifZero(b expr) string {
	zero := "0"
	switch b.t {
	case tSmallint, tInt, tBigint:
		zero = pick(g, []string{"0", "CAST(0 AS smallint)", "CAST(0 AS bigint)"})
	case tFloat:
		zero = pick(g, []string{"0", "CAST(0 AS real)", "CAST(0 AS double precision)"})
	case tNumeric:
	default:
		zero = "CAST(0 AS " + b.t.castName() + ")"
	}
	return "NULLIF(" + b.sql + ", " + zero + ")"
}

// numberCast returns CAST(e AS t) for a number e of another type.
func (g *gen) numberCast(x *ectx, t typ, depth int) (expr, bool) {
	from := g.someType(x, []typ{tSmallint, tInt, tBigint, tNumeric, tFloat})
	if from == t {
		return expr{}, false
	}
	return g.castNumber(g.expr(x, from, depth), t), true
}

// castNumber returns CAST(a AS t) for numbers a and t of different types.
func (g *gen) castNumber(a expr, t typ) expr {
	from := a.t
	e := a
	e.t, e.lit = t, false
	e.sql = "CAST(" + a.sql + " AS " + t.castName() + ")"
	switch {
	case t.isInt():
		// Numeric rounds half away from zero, float half to even.
		e.bound = a.bound + 1
		e.scale, e.dyadic = 0, true
	case t == tNumeric:
		e.scale = a.scale
		if from == tFloat {
			// PostgreSQL converts with 15 significant digits: exact only
			// for dyadic values.
			e.scale = 8
			if !a.dyadic {
				e.approx = true
			}
		}
	case t == tFloat:
		e.dyadic = from != tNumeric || a.scale == 0
		e.scale = 0
	}
	return e
}

// intFromOther returns an integer computed from a value of another kind.
func (g *gen) intFromOther(x *ectx, t typ, depth int) (expr, bool) {
	var e expr
	switch g.intn(4) {
	case 0:
		s := g.expr(x, tText, depth)
		e = expr{sql: "length(" + s.sql + ")", t: tInt, bound: s.bound}
	case 1:
		s := g.expr(x, tText, depth)
		e = expr{sql: "strpos(" + s.sql + ", " + g.nonNullLiteral(tText).sql + ")", t: tInt, bound: s.bound}
	case 2:
		a, b := g.expr(x, tDate, depth), g.expr(x, tDate, depth)
		e = expr{sql: "(" + a.sql + " - " + b.sql + ")", t: tInt, bound: a.bound + b.bound}
	default:
		b := g.expr(x, tBool, depth)
		e = expr{sql: "CAST(" + b.sql + " AS integer)", t: tInt, bound: 1}
	}
	e.dyadic = true
	if t != tInt {
		e.sql = "CAST(" + e.sql + " AS " + t.castName() + ")"
		e.t = t
	}
	return e, true
}

// text returns a text expression over operands in x.
func (g *gen) text(x *ectx, depth int) (expr, bool) {
	a := g.expr(x, tText, depth)
	e := expr{t: tText, bound: a.bound}
	small := func(lo, hi int) string {
		v := lo + g.intn(hi-lo+1)
		if v < 0 {
			return "(" + strconv.Itoa(v) + ")"
		}
		return strconv.Itoa(v)
	}
	switch g.intn(14) {
	case 0:
		e.sql = pick(g, []string{"lower", "upper", "initcap", "reverse"}) + "(" + a.sql + ")"
	case 1:
		fn := pick(g, []string{"trim", "ltrim", "rtrim", "btrim"})
		if g.chance(0.5) {
			e.sql = fn + "(" + a.sql + ", " + quote(pick(g, []string{" ", "a", "ab", "b "})) + ")"
		} else {
			e.sql = fn + "(" + a.sql + ")"
		}
	case 2:
		if g.chance(0.5) {
			e.sql = "substr(" + a.sql + ", " + small(-2, 4) + ")"
		} else {
			e.sql = "substr(" + a.sql + ", " + small(-2, 4) + ", " + small(0, 4) + ")"
		}
	case 3:
		e.sql = pick(g, []string{"left", "right"}) + "(" + a.sql + ", " + small(-2, 4) + ")"
	case 4:
		n := g.intn(8) - 1
		e.bound = float64(max(n, 0))
		fn := pick(g, []string{"lpad", "rpad"})
		if g.chance(0.5) {
			e.sql = fn + "(" + a.sql + ", " + small(n, n) + ", " + quote(pick(g, []string{"*", "xy", "", " "})) + ")"
		} else {
			e.sql = fn + "(" + a.sql + ", " + small(n, n) + ")"
		}
	case 5:
		to := pick(g, []string{"", "x", "yz"})
		e.bound = a.bound * float64(max(len(to), 1))
		e.sql = "replace(" + a.sql + ", " + quote(pick(g, []string{"a", "b", "ab", " "})) + ", " + quote(to) + ")"
	case 6:
		e.sql = "split_part(" + a.sql + ", " + quote(pick(g, []string{"a", "b", " ", "_"})) + ", " + pick(g, []string{"1", "2", "3", "(-1)"}) + ")"
	case 7:
		n := g.intn(4) - 1
		e.bound = a.bound * float64(max(n, 0))
		e.sql = "repeat(" + a.sql + ", " + small(n, n) + ")"
	case 8, 9:
		b := g.textable(x, depth, true)
		e.bound = a.bound + b.bound
		if g.chance(0.5) {
			e.sql = "(" + a.sql + " || " + b.sql + ")"
		} else {
			e.sql = "(" + b.sql + " || " + a.sql + ")"
		}
	case 10:
		parts := []expr{a, g.textable(x, depth, true)}
		if g.chance(0.5) {
			parts = append(parts, g.textable(x, depth, true))
		}
		var ss []string
		e.bound = 0
		for _, p := range parts {
			ss = append(ss, p.sql)
			e.bound += p.bound
		}
		e.sql = "concat(" + strings.Join(ss, ", ") + ")"
	default:
		b := g.textable(x, depth, true)
		if b.t == tText {
			return expr{}, false
		}
		e.bound = b.bound
		e.sql = "CAST(" + b.sql + " AS text)"
	}
	return e, true
}

// textable returns an expression whose text form both systems spell the
// same, with its bound set to a bound of that text's length. Numerics are
// left out: PostgreSQL keeps the scale of numeric values (1.50), streamsql's
// numeric without a type modifier does not (1.5).
func (g *gen) textable(x *ectx, depth int, withBool bool) expr {
	ts := []typ{tText, tText, tInt, tBigint, tDate, tTimestamp, tFloat, tInterval}
	if withBool {
		ts = append(ts, tBool)
	}
	t := pick(g, ts)
	e := g.expr(x, t, depth)
	switch t {
	case tBool:
		e.bound = 5
	case tInt, tBigint:
		e.bound = 20
	case tDate:
		e.bound = 13
	case tTimestamp:
		e.bound = 26
	case tFloat:
		// x + 0 turns -0 into 0: which of two equal keys 0 and -0 a group
		// shows, and so its text, depends on the order rows came in.
		e.sql = "(" + e.sql + " + CAST(0 AS double precision))"
		e.bound = 25
	case tInterval:
		e.bound = 40
	}
	return e
}

// boolean returns a boolean expression; comparisons may have an approximate
// side only against a literal.
func (g *gen) boolean(c *ectx, depth int) expr {
	x := c.strict()
	e := expr{t: tBool, dyadic: true}
	switch g.intn(13) {
	case 0, 1, 2, 3:
		a, b := g.comparable(c, depth)
		e.sql = "(" + a.sql + " " + pick(g, []string{"=", "<>", "<", "<=", ">", ">=", "!="}) + " " + b.sql + ")"
	case 4:
		a := g.expr(x, tText, depth)
		op := pick(g, []string{"LIKE", "NOT LIKE", "ILIKE", "NOT ILIKE"})
		if g.chance(0.8) {
			e.sql = "(" + a.sql + " " + op + " " + quote(pick(g, likePatterns)) + ")"
		} else {
			// A pattern must not end in the escape character \.
			e.sql = "(" + a.sql + " " + op + " replace(" + g.expr(x, tText, 0).sql + ", '\\', '/'))"
		}
	case 5:
		t := g.someType(c, columnTypes)
		a := g.expr(c, t, depth)
		e.sql = "(" + a.sql + pick(g, []string{" IS NULL", " IS NOT NULL"}) + ")"
	case 6:
		a, b := g.comparable(x, depth)
		e.sql = "(" + a.sql + pick(g, []string{" IS DISTINCT FROM ", " IS NOT DISTINCT FROM "}) + b.sql + ")"
	case 7:
		args := []expr{g.expr(x, tBool, depth), g.expr(x, tBool, depth)}
		if g.chance(0.3) {
			args = append(args, g.expr(x, tBool, depth))
		}
		var ss []string
		for _, a := range args {
			ss = append(ss, a.sql)
		}
		e.sql = "(" + strings.Join(ss, pick(g, []string{" AND ", " OR "})) + ")"
	case 8:
		e.sql = "(NOT " + g.expr(x, tBool, depth).sql + ")"
	case 9:
		e.sql = "(" + g.expr(x, tBool, depth).sql + pick(g, []string{" IS TRUE", " IS NOT TRUE", " IS FALSE", " IS NOT FALSE", " IS UNKNOWN", " IS NOT UNKNOWN"}) + ")"
	case 10:
		t := g.someType(c, []typ{tInt, tSmallint, tBigint, tNumeric, tText, tDate})
		a := g.expr(x, t, depth)
		n := 1 + g.intn(3)
		var items []string
		for range n {
			items = append(items, g.literal(t).sql)
		}
		op := pick(g, []string{" IN (", " NOT IN ("})
		e.sql = "(" + a.sql + op + strings.Join(items, ", ") + "))"
	case 11:
		t := g.someType(c, []typ{tInt, tNumeric, tFloat, tText, tDate, tTimestamp})
		a := g.expr(c, t, depth)
		if !comparableApprox(a) {
			a = g.expr(x, t, depth)
		}
		lo, hi := g.nonNullLiteral(t), g.nonNullLiteral(t)
		e.sql = "(" + a.sql + pick(g, []string{" BETWEEN ", " NOT BETWEEN ", " BETWEEN SYMMETRIC "}) + lo.sql + " AND " + hi.sql + ")"
	default:
		a := g.expr(x, tText, depth)
		e.sql = "starts_with(" + a.sql + ", " + quote(pick(g, []string{"a", "A", "", "ab"})) + ")"
	}
	return e
}

// comparableApprox reports whether e may be compared with a literal: it is
// exact, or an approximate numeric. An approximate float (a sum in another
// order: 0.30000000000000004 or 0.3) may land on either side of a literal.
func comparableApprox(e expr) bool { return !e.approx || e.t != tFloat }

// comparable returns two expressions that can be compared: both exact, or
// one approximate and the other a literal.
func (g *gen) comparable(c *ectx, depth int) (expr, expr) {
	x := c.strict()
	ta := g.someType(c, comparableTypes)
	tb := ta
	switch {
	case ta.isNumber() && g.chance(0.4):
		tb = g.someType(c, []typ{tSmallint, tInt, tBigint, tNumeric, tFloat})
	case ta == tDate && g.chance(0.3):
		tb = tTimestamp
	}
	a := g.expr(c, ta, depth)
	if !comparableApprox(a) {
		a = g.expr(x, ta, depth)
	}
	if a.approx {
		return a, g.nonNullLiteral(tb)
	}
	if g.chance(0.4) {
		return a, g.nonNullLiteral(tb)
	}
	return a, g.expr(x, tb, depth)
}

func (g *gen) date(x *ectx, depth int) (expr, bool) {
	switch g.intn(3) {
	case 0:
		a := g.expr(x, tDate, depth)
		n := g.expr(x, tInt, min(depth, 1))
		if n.bound > 1000 {
			return expr{}, false
		}
		return expr{sql: "(" + a.sql + pick(g, []string{" + ", " - "}) + n.sql + ")", t: tDate, bound: a.bound + n.bound}, true
	case 1:
		ts := g.expr(x, tTimestamp, depth)
		return expr{sql: "CAST(" + ts.sql + " AS date)", t: tDate, bound: ts.bound}, true
	}
	a := g.expr(x, tDate, depth)
	n := g.nonNullLiteral(tInt)
	return expr{sql: "(" + n.sql + " + " + a.sql + ")", t: tDate, bound: a.bound + n.bound}, true
}

func (g *gen) timestamp(x *ectx, depth int) (expr, bool) {
	switch g.intn(4) {
	case 0:
		a := g.expr(x, tTimestamp, depth)
		return expr{sql: "(" + a.sql + pick(g, []string{" + ", " - "}) + g.nonNullLiteral(tInterval).sql + ")", t: tTimestamp, bound: a.bound + 40}, true
	case 1:
		d := g.expr(x, tDate, depth)
		if g.chance(0.5) {
			return expr{sql: "CAST(" + d.sql + " AS timestamp)", t: tTimestamp, bound: d.bound}, true
		}
		return expr{sql: "(" + d.sql + " + " + g.nonNullLiteral(tInterval).sql + ")", t: tTimestamp, bound: d.bound + 40}, true
	case 2:
		a := g.expr(x, tTimestamp, depth)
		return expr{sql: "date_trunc(" + quote(pick(g, truncUnits)) + ", " + a.sql + ")", t: tTimestamp, bound: a.bound}, true
	}
	a := g.expr(x, tTimestamp, depth)
	return expr{sql: "(" + g.nonNullLiteral(tInterval).sql + " + " + a.sql + ")", t: tTimestamp, bound: a.bound + 40}, true
}

// column is a table column.
type column struct {
	name string
	t    typ
	key  bool
}

// relation is a table or a view as the generator knows it.
type relation struct {
	name string
	// cols are the output columns as expressions (their names).
	cols []expr
	// Tables only.
	columns []column
	key     []int // primary key columns; nil if none
	bulks   int   // bulk inserts so far, for their key ranges
	// Views only.
	view bool
	// unnamed says that PostgreSQL names some of the columns.
	unnamed bool
	// nullableKey says that the key identifying the view's rows in
	// streamsql may hold NULL: group keys, DISTINCT rows, outer joins.
	nullableKey bool
	def         string   // the defining SELECT
	sources     []string // the relations the view reads
	// multiplies marks views with several rows per input row (unnest):
	// their inputs stay small, as a join's do.
	multiplies bool
	// where is set on the FROM list of a comma join (see gen_join.go):
	// the conditions every query over it must have in its WHERE.
	where string
}

// table returns a random table definition named name.
func (g *gen) table(name string) *relation {
	r := &relation{name: name}
	n := 2 + g.intn(5)
	if g.chance(0.5) {
		nk := 1
		if g.chance(0.25) {
			nk = 2
		}
		for i := range nk {
			r.columns = append(r.columns, column{name: fmt.Sprintf("k%d", i+1), t: pick(g, keyTypes), key: true})
			r.key = append(r.key, i)
		}
	}
	for i := range n {
		name := fmt.Sprintf("c%d", i+1)
		if g.chance(0.1) {
			// A name that must be quoted: spaces, capitals, a quote, a
			// reserved word (once).
			name = fmt.Sprintf(pick(g, []string{`"C %d"`, `"x""y%d"`, `"Ab%d"`, `"order"`}), i+1)
			if strings.HasPrefix(name, `"order"`) {
				name = `"order"`
				if slices.ContainsFunc(r.columns, func(c column) bool { return c.name == name }) {
					name = fmt.Sprintf("c%d", i+1)
				}
			}
		}
		r.columns = append(r.columns, column{name: name, t: pick(g, columnTypes)})
	}
	for _, c := range r.columns {
		e := expr{sql: c.name, t: c.t, dyadic: true}
		switch {
		case c.t == tNumeric:
			e.bound, e.scale = valueBound, 2
		case c.t == tText:
			e.bound = textBound
			if c.key {
				e.bound = 12
			}
		case c.t.isNumber():
			e.bound = valueBound
			if c.key {
				e.bound = math.Min(keyLimit, c.t.limit())
			}
			e.special = c.t == tFloat
		case c.t == tDate || c.t == tTimestamp:
			e.bound = dateDays
			if c.key {
				e.bound = 1e5
			}
		case c.t == tInterval:
			e.bound, e.ambiguous = 1e3, true
		case extTypes[c.t] != nil:
			extTypes[c.t].column(&e)
		}
		r.cols = append(r.cols, e)
	}
	return r
}

// createTable returns the CREATE TABLE statement for r.
func (r *relation) createTable() string {
	var defs []string
	for _, c := range r.columns {
		d := c.name + " " + c.t.declName()
		if c.key && len(r.key) == 1 {
			d += " PRIMARY KEY"
		}
		defs = append(defs, d)
	}
	if len(r.key) > 1 {
		var ks []string
		for _, k := range r.key {
			ks = append(ks, r.columns[k].name)
		}
		defs = append(defs, "PRIMARY KEY ("+strings.Join(ks, ", ")+")")
	}
	return "CREATE TABLE " + r.name + " (" + strings.Join(defs, ", ") + ")"
}

// value returns a random value literal for a non-key column of type t, NULL
// often.
func (g *gen) value(t typ) string {
	if g.chance(0.2) {
		return "NULL"
	}
	switch t {
	case tSmallint, tInt, tBigint:
		return strconv.Itoa(pick(g, intDomain))
	case tNumeric:
		return pick(g, numericDomain)
	case tFloat:
		if g.chance(0.05) {
			return pick(g, []string{"'Infinity'", "'-Infinity'", "'NaN'"})
		}
		return pick(g, floatDomain)
	case tText:
		if g.chance(0.02) {
			return "repeat('ab', 150)"
		}
		return quote(pick(g, textDomain))
	case tBool:
		return pick(g, []string{"TRUE", "FALSE"})
	case tDate:
		return quote(pick(g, dateDomain))
	case tTimestamp:
		return quote(pick(g, timestampDomain))
	case tInterval:
		return quote(pick(g, intervalDomain))
	}
	if s := extTypes[t]; s != nil {
		return s.value(g)
	}
	panic("no values of type " + t.castName())
}

// keyValue returns a random value of a key column, and its text as
// PostgreSQL prints it.
func (g *gen) keyValue(t typ) (lit, text string) {
	switch t {
	case tText:
		// Text keys sort differently from the numbers in them.
		s := fmt.Sprintf(pick(g, []string{"k%d", "K%d", "%d", "日%d"}), g.intn(keyRange))
		return quote(s), s
	case tDate:
		s := fmt.Sprintf("2024-%02d-%02d", 1+g.intn(12), 1+g.intn(28))
		return quote(s), s
	case tSmallint, tInt, tBigint:
		s := strconv.Itoa(g.intn(keyRange))
		return s, s
	}
	panic("no key values of type " + t.castName())
}

// insert returns an INSERT of 1 to 8 rows into r. taken holds the keys
// present (each the key columns' text joined by "|"); rows avoid them, and
// their keys are added to it. With dup the first row is repeated, which
// violates the key on purpose.
func (g *gen) insert(r *relation, taken map[string]bool, dup bool) string {
	var cols []column
	for _, c := range r.columns {
		if c.key || g.chance(0.9) {
			cols = append(cols, c)
		}
	}
	if len(cols) == 0 {
		cols = slices.Clone(r.columns)
	}
	if g.chance(0.3) {
		// Columns in another order.
		g.rng.Shuffle(len(cols), func(i, j int) { cols[i], cols[j] = cols[j], cols[i] })
	}
	n := 1 + g.intn(8)
	var rows []string
	for len(rows) < n {
		var vals []string
		var key []string
		for _, c := range cols {
			if c.key {
				lit, text := g.keyValue(c.t)
				vals = append(vals, lit)
				key = append(key, text)
				continue
			}
			vals = append(vals, g.value(c.t))
		}
		if len(r.key) > 0 {
			// Key text in key order, whatever the column order.
			k := g.keyText(r, cols, key)
			if taken[k] {
				continue
			}
			taken[k] = true
		}
		rows = append(rows, "("+strings.Join(vals, ", ")+")")
	}
	if dup {
		rows = append(rows, rows[0])
	}
	var names []string
	for _, c := range cols {
		names = append(names, c.name)
	}
	return "INSERT INTO " + r.name + " (" + strings.Join(names, ", ") + ") VALUES " + strings.Join(rows, ", ")
}

// keyText joins the key values of a row (given in the order of cols) in key
// order.
func (g *gen) keyText(r *relation, cols []column, vals []string) string {
	var parts []string
	for _, k := range r.key {
		name := r.columns[k].name
		i := 0
		for _, c := range cols {
			if !c.key {
				continue
			}
			if c.name == name {
				parts = append(parts, vals[i])
				break
			}
			i++
		}
	}
	return strings.Join(parts, "|")
}

// keyLimit bounds integer primary keys, bulk inserted ones included.
const keyLimit = 1e6

// bulkInsert returns an INSERT of n rows into r from generate_series, for
// batches larger than VALUES lists make, or ok false if r's keys cannot take
// n more rows. Keys come from a range of their own for each bulk insert.
func (g *gen) bulkInsert(r *relation, n int) (sql string, ok bool) {
	seq := r.bulks
	base := 1000 + 5000*seq
	if n > 5000 || base+n > keyLimit {
		return "", false
	}
	var names, vals []string
	for _, c := range r.columns {
		names = append(names, c.name)
		if !c.key {
			vals = append(vals, g.seriesValue(c.t))
			continue
		}
		switch c.t {
		case tSmallint:
			if base+n > math.MaxInt16 {
				return "", false
			}
			vals = append(vals, fmt.Sprintf("%d + i", base))
		case tInt, tBigint:
			vals = append(vals, fmt.Sprintf("%d + i", base))
		case tText:
			vals = append(vals, fmt.Sprintf("'b%d_' || i", seq))
		case tDate:
			vals = append(vals, fmt.Sprintf("DATE '2100-01-01' + (%d + i)", 5000*seq))
		default:
			return "", false
		}
	}
	r.bulks++
	return fmt.Sprintf("INSERT INTO %s (%s) SELECT %s FROM generate_series(1, %d) AS g(i)",
		r.name, strings.Join(names, ", "), strings.Join(vals, ", "), n), true
}

// seriesValue returns a value of type t computed from the series number i,
// within the column bounds, NULL now and then.
func (g *gen) seriesValue(t typ) string {
	m := pick(g, []int{2, 3, 5, 7, 11})
	var e string
	switch t {
	case tSmallint, tInt, tBigint:
		e = fmt.Sprintf("(i %% %d) - %d", m, g.intn(3))
	case tNumeric:
		e = fmt.Sprintf("CAST(i %% %d AS numeric) / 4", m)
	case tFloat:
		e = fmt.Sprintf("CAST(i %% %d AS double precision) / 4", m)
	case tText:
		e = fmt.Sprintf("substr('abcab', 1 + i %% %d, 2)", m)
	case tBool:
		e = fmt.Sprintf("(i %% %d = 0)", m)
	case tDate:
		e = fmt.Sprintf("DATE '2024-01-01' + (i %% %d)", 5*m)
	case tTimestamp:
		e = fmt.Sprintf("TIMESTAMP '2024-01-01 00:00:00' + (i %% %d) * INTERVAL '90 minutes'", 3*m)
	case tInterval:
		e = fmt.Sprintf("(i %% %d) * INTERVAL '5 hours'", m)
	default:
		s := extTypes[t]
		if s == nil {
			panic("no series values of type " + t.castName())
		}
		e = s.series(g)
	}
	if g.chance(0.5) {
		e = fmt.Sprintf("CASE WHEN i %% %d = 0 THEN NULL ELSE %s END", pick(g, []int{3, 4, 10}), e)
	}
	return e
}

// insertSelect returns INSERT INTO r SELECT ... FROM src, for tables
// without a primary key (a copy would collide with its keys).
func (g *gen) insertSelect(r, src *relation) string {
	c := &ectx{cols: src.cols, exact: true, dyadic: true}
	var names, exprs []string
	for i, col := range r.columns {
		names = append(names, col.name)
		exprs = append(exprs, g.assignment(c, col, r.cols[i], 1).sql)
	}
	q := "INSERT INTO " + r.name + " (" + strings.Join(names, ", ") + ") SELECT " + strings.Join(exprs, ", ") + " FROM " + src.name
	if g.chance(0.8) {
		q += " WHERE " + g.expr(c, tBool, 2).sql
	}
	return q
}

// assignment returns an expression to store in column col (whose bounds are
// in bound): exact, dyadic, within the column's bounds, of the column's
// type or, now and then, of another number type that PostgreSQL assigns
// with a cast (rounding).
func (g *gen) assignment(c *ectx, col column, bound expr, depth int) expr {
	t := col.t
	if t.isNumber() && g.chance(0.15) {
		t = pick(g, []typ{tSmallint, tInt, tBigint, tNumeric, tFloat})
	}
	for range 10 {
		e := g.expr(c, t, depth)
		if e.bound > bound.bound || e.length > bound.length || t == tFloat && strings.Contains(e.sql, "*") {
			// Too large for the column, or a float product (which would,
			// repeated, make values lose their dyadic exactness).
			continue
		}
		if e.special && col.t != tFloat {
			// PostgreSQL's numeric holds NaN and infinities; streamsql's
			// refuses them (0A000), and integers fail in both.
			continue
		}
		return e
	}
	return g.literal(col.t)
}

// update returns an UPDATE of r's non-key columns.
func (g *gen) update(r *relation) string {
	c := &ectx{cols: r.cols, exact: true, dyadic: true}
	var sets []string
	for i, col := range r.columns {
		if col.key || !g.chance(0.4) {
			continue
		}
		sets = append(sets, col.name+" = "+g.assignment(c, col, r.cols[i], 2).sql)
	}
	if len(sets) == 0 {
		for i, col := range r.columns {
			if !col.key {
				sets = append(sets, col.name+" = "+g.assignment(c, col, r.cols[i], 1).sql)
				break
			}
		}
	}
	q := "UPDATE " + r.name + " SET " + strings.Join(sets, ", ")
	if g.chance(0.9) {
		q += " WHERE " + g.expr(c, tBool, 2).sql
	}
	return q
}

// rekey returns an UPDATE that moves one row of r to a primary key not in
// taken (and maybe changes a column too), or ok false if r has no key or
// no rows. taken is updated.
func (g *gen) rekey(r *relation, taken map[string]bool) (sql string, ok bool) {
	if len(r.key) == 0 || len(taken) == 0 {
		return "", false
	}
	keys := slices.Sorted(maps.Keys(taken))
	old := strings.Split(pick(g, keys), "|")
	for range 20 {
		var sets, conds, texts []string
		for i, k := range r.key {
			col := r.columns[k]
			oldLit := old[i]
			if col.t == tText || col.t == tDate {
				oldLit = quote(oldLit)
			}
			conds = append(conds, col.name+" = "+oldLit)
			lit, text := g.keyValue(col.t)
			if len(r.key) > 1 && g.chance(0.5) {
				// Keep this part of a composite key.
				lit, text = oldLit, old[i]
			}
			sets = append(sets, col.name+" = "+lit)
			texts = append(texts, text)
		}
		nk := strings.Join(texts, "|")
		if taken[nk] {
			continue
		}
		delete(taken, strings.Join(old, "|"))
		taken[nk] = true
		if g.chance(0.5) {
			c := &ectx{cols: r.cols, exact: true, dyadic: true}
			for i, col := range r.columns {
				if !col.key {
					sets = append(sets, col.name+" = "+g.assignment(c, col, r.cols[i], 1).sql)
					break
				}
			}
		}
		return "UPDATE " + r.name + " SET " + strings.Join(sets, ", ") + " WHERE " + strings.Join(conds, " AND "), true
	}
	return "", false
}

// delete returns a DELETE from r.
func (g *gen) delete(r *relation) string {
	c := &ectx{cols: r.cols, exact: true, dyadic: true}
	if g.chance(0.03) {
		return "DELETE FROM " + r.name
	}
	return "DELETE FROM " + r.name + " WHERE " + g.expr(c, tBool, 2).sql
}

// view returns a random view named name over src.
//
// Unless named, some output columns have no alias, and the view's column
// names are PostgreSQL's to choose: the caller must ask it and set them with
// nameColumns.
func (g *gen) view(name string, src *relation, named bool) *relation {
	v := &relation{name: name, view: true}
	g.named, g.unnamed, g.refs, g.subqueries = named, false, nil, 0
	var sel string
	var outs []expr
	switch g.intn(6) {
	case 0, 1:
		sel, outs = g.projection(src, false)
		v.nullableKey = src.nullableKey
	case 2:
		sel, outs = g.projection(src, true)
		v.nullableKey = true
	case 3:
		sel, outs = g.windowed(src)
		v.nullableKey = src.nullableKey
	case 4:
		sel, outs = g.ranked(src)
		v.nullableKey = src.nullableKey
	default:
		sel, outs = g.aggregation(src)
		v.nullableKey = true
	}
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

// joinView returns a view over a join of a and b (which may be the same
// relation), inner or outer, on equalities between columns of the two and
// maybe a condition more, projected or aggregated; see view for named.
func (g *gen) joinView(name string, a, b *relation, named bool) *relation {
	l, r := qualified("l", a.cols), qualified("r", b.cols)
	var eqs []string
	// PostgreSQL runs a FULL JOIN only with an equality it can hash or
	// merge: not date = timestamp.
	hashable := false
	for range 1 + g.intn(2) {
		x, y, ok := g.joinKeys(l, r)
		if !ok {
			break
		}
		eqs = append(eqs, x.sql+" = "+y.sql)
		hashable = hashable || x.t == y.t || x.t.isNumber() && y.t.isNumber()
	}
	if len(eqs) == 0 {
		// Nothing to join on: a view over a alone.
		return g.view(name, a, named)
	}
	both := append(slices.Clone(l), r...)
	if g.chance(0.3) {
		// One more condition: for outer joins, in ON it decides which rows
		// match, not which rows are kept.
		eqs = append(eqs, g.expr(&ectx{cols: both}, tBool, 1).sql)
	}
	kinds := []string{"JOIN", "JOIN", "LEFT JOIN", "RIGHT JOIN", "INNER JOIN", "LEFT OUTER JOIN"}
	if hashable {
		kinds = append(kinds, "FULL JOIN", "FULL OUTER JOIN")
	}
	kind := pick(g, kinds)
	from := &relation{
		name: fmt.Sprintf("%s AS l %s %s AS r ON %s", a.name, kind, b.name, strings.Join(eqs, " AND ")),
		cols: both,
	}
	v := g.view(name, from, named)
	v.sources = append([]string{a.name, b.name}, v.sources[1:]...)
	v.nullableKey = true
	return v
}

// setView returns a view that combines rows of a and of b with UNION [ALL],
// INTERSECT or EXCEPT; see view for named.
func (g *gen) setView(name string, a, b *relation, named bool) *relation {
	g.named, g.unnamed, g.refs = named, false, nil
	// Set operations compare whole rows: exact values that hash alike.
	ca := &ectx{cols: a.cols, exact: true, grouping: true}
	cb := &ectx{cols: b.cols, exact: true, grouping: true}
	var left, right []string
	var outs []expr
	for i := range 1 + g.intn(3) {
		t := g.someType(ca, columnTypes)
		x, y := g.expr(ca, t, 1), g.expr(cb, t, 1)
		left = append(left, g.item(x, i+1))
		right = append(right, y.sql)
		outs = append(outs, merge(t, x, y))
	}
	side := func(items []string, r *relation, c *ectx) string {
		q := "SELECT " + strings.Join(items, ", ") + " FROM " + r.name
		if g.chance(0.5) {
			q += " WHERE " + g.expr(&ectx{cols: c.cols}, tBool, 1).sql
		}
		return q
	}
	op := pick(g, []string{"UNION", "UNION ALL", "INTERSECT", "EXCEPT", "INTERSECT ALL", "EXCEPT ALL"})
	v := &relation{name: name, view: true, sources: []string{a.name, b.name}, nullableKey: true}
	v.def = side(left, a, ca) + " " + op + " " + side(right, b, cb)
	v.unnamed = g.unnamed
	for i, o := range outs {
		col := o
		col.sql = fmt.Sprintf("c%d", i+1)
		col.lit = false
		v.cols = append(v.cols, col)
	}
	return v
}

// where returns a WHERE condition over c for a query reading src; now and
// then it is or has a subquery over one of g.others (see subquery), alone,
// AND-ed, OR-ed or negated.
func (g *gen) where(c *ectx, src *relation) string {
	cond := g.expr(withCorr(c, outerColumns(src)), tBool, 2).sql
	if len(g.others) == 0 || !g.chance(0.3) {
		return cond
	}
	sub, ok := g.subquery(src)
	if !ok {
		return cond
	}
	switch g.intn(5) {
	case 0, 1:
		return sub
	case 2:
		return "(" + cond + " OR " + sub + ")"
	case 3:
		return "(NOT " + sub + " AND " + cond + ")"
	}
	return "(" + cond + " AND " + sub + ")"
}

// subqueryItem returns, now and then, a select-list item with a subquery
// over one of g.others for a query reading src: a boolean subquery (see
// subquery) or a count correlated by any comparison.
func (g *gen) subqueryItem(src *relation) (expr, bool) {
	if len(g.others) == 0 || !g.chance(0.15) {
		return expr{}, false
	}
	if g.chance(0.5) {
		if q, ok := g.subquery(src); ok {
			return expr{sql: q, t: tBool}, true
		}
		return expr{}, false
	}
	o, outer, inner := g.subqueryScopes(src)
	a, b, ok := g.joinKeys(outer, inner)
	if !ok {
		return expr{}, false
	}
	q := "(SELECT count(*) FROM " + o.name + " AS s WHERE " + b.sql + pick(g, []string{" < ", " >= ", " <> ", " = "}) + a.sql + ")"
	g.refs = append(g.refs, o.name)
	return expr{sql: q, t: tBigint, bound: 1e9}, true
}

// subqueryScopes picks the relation a subquery reads and returns it with
// the columns of the outer relation src and of the subquery, qualified.
func (g *gen) subqueryScopes(src *relation) (o *relation, outer, inner []expr) {
	o = pick(g, g.others)
	// Qualified, so that the subquery's columns do not hide them.
	return o, outerColumns(src), qualified("s", o.cols)
}

// subquery returns a boolean subquery over one of g.others for a query
// reading src: [NOT] IN, [NOT] EXISTS correlated on an equality or another
// comparison, a comparison with an uncorrelated scalar subquery, a count
// correlated by a comparison, or ANY/ALL correlated by a comparison.
func (g *gen) subquery(src *relation) (string, bool) {
	o, outer, inner := g.subqueryScopes(src)
	a, b, ok := g.joinKeys(outer, inner)
	if !ok {
		return "", false
	}
	filter := ""
	if g.chance(0.5) {
		filter = g.expr(&ectx{cols: inner}, tBool, 1).sql
	}
	where := func(conds ...string) string {
		var cs []string
		for _, c := range conds {
			if c != "" {
				cs = append(cs, c)
			}
		}
		if len(cs) == 0 {
			return ""
		}
		return " WHERE " + strings.Join(cs, " AND ")
	}
	from := " FROM " + o.name + " AS s"
	var q string
	cmp := func() string { return pick(g, []string{" < ", " <= ", " > ", " <> "}) }
	form := g.intn(6)
	if (a.t == tStruct || a.t == tJsonb) && form == 5 {
		// PostgreSQL has no min or max of records or jsonb (42883).
		return "", false
	}
	switch form {
	case 0:
		q = "(" + a.sql + pick(g, []string{" IN ", " NOT IN "}) + "(SELECT " + b.sql + from + where(filter) + "))"
	case 1:
		q = "(" + pick(g, []string{"EXISTS", "NOT EXISTS"}) + " (SELECT 1" + from + where(b.sql+" = "+a.sql, filter) + "))"
	case 2:
		q = "(" + pick(g, []string{"EXISTS", "NOT EXISTS"}) + " (SELECT 1" + from + where(b.sql+cmp()+a.sql, filter) + "))"
	case 3:
		q = "((SELECT count(*)" + from + where(b.sql+cmp()+a.sql, filter) + ") " + pick(g, []string{"> 0", ">= 2", "= 0"}) + ")"
	case 4:
		// x op ANY/ALL over rows correlated by another comparison: the
		// x IN/NOT IN of case 0 with NULLs on either side, per outer row.
		q = "(" + a.sql + cmp() + pick(g, []string{"ANY", "ALL"}) + " (SELECT " + b.sql + from + where(b.sql+cmp()+a.sql, filter) + "))"
	default:
		agg := pick(g, []string{"min", "max"})
		if b.t == tBool || b.t == tStruct || b.t == tJsonb {
			return "", false
		}
		q = "(" + a.sql + " " + pick(g, []string{"=", "<", ">=", "<>"}) + " (SELECT " + agg + "(" + b.sql + ")" + from + where(filter) + "))"
	}
	g.refs = append(g.refs, o.name)
	return q, true
}

// qualified returns cols as columns of the relation named alias.
func qualified(alias string, cols []expr) []expr {
	out := make([]expr, len(cols))
	for i, c := range cols {
		out[i] = c
		out[i].sql = alias + "." + c.sql
	}
	return out
}

// joinKeys picks a column of l and a column of r to join on: exact values
// of types the = operator compares.
func (g *gen) joinKeys(l, r []expr) (x, y expr, ok bool) {
	// Intervals spelled two ways match by span, as in PostgreSQL.
	kc := &ectx{exact: true}
	var pairs [][2]expr
	for _, a := range l {
		for _, b := range r {
			// Not on booleans: two values multiply rows too much.
			if kc.ok(a) && kc.ok(b) && joinable(a.t, b.t) && a.t != tBool {
				pairs = append(pairs, [2]expr{a, b})
			}
		}
	}
	if len(pairs) == 0 {
		return expr{}, expr{}, false
	}
	p := pick(g, pairs)
	return p[0], p[1], true
}

// joinable reports whether values of types a and b can be joined with =.
func joinable(a, b typ) bool {
	switch {
	case a == b:
		return true
	case a.isNumber() && b.isNumber():
		return true
	case (a == tDate || a == tTimestamp) && (b == tDate || b == tTimestamp):
		return true
	}
	return false
}

// item returns output column i of a view being generated: e AS ci, or
// now and then, unless all are named, e alone.
func (g *gen) item(e expr, i int) string {
	if g.named || g.chance(0.5) {
		return fmt.Sprintf("%s AS c%d", e.sql, i)
	}
	g.unnamed = true
	return e.sql
}

// nameColumns sets the names of v's columns as PostgreSQL chose them. It
// reports false if two are the same, which PostgreSQL refuses in a view.
func (v *relation) nameColumns(names []string) bool {
	seen := map[string]bool{}
	for i, n := range names {
		if seen[n] {
			return false
		}
		seen[n] = true
		v.cols[i].sql = `"` + strings.ReplaceAll(n, `"`, `""`) + `"`
	}
	return true
}

// projection returns SELECT [DISTINCT] exprs FROM src [WHERE ...].
func (g *gen) projection(src *relation, distinct bool) (string, []expr) {
	c := &ectx{cols: src.cols, exact: distinct, grouping: distinct, corr: outerColumns(src)}
	n := 1 + g.intn(4)
	var outs []expr
	var items []string
	for i := range n {
		var e expr
		if g.chance(0.35) {
			e = pick(g, c.cols)
			if !c.ok(e) {
				e = g.expr(c, e.t, 1)
			}
		} else {
			e = g.expr(c, g.someType(c, columnTypes), 1+g.intn(3))
		}
		outs = append(outs, e)
		items = append(items, g.item(e, i+1))
	}
	if e, ok := g.subqueryItem(src); ok {
		// Named: PostgreSQL names a subquery after its select list.
		outs = append(outs, e)
		items = append(items, fmt.Sprintf("%s AS c%d", e.sql, len(outs)))
	}
	q := "SELECT "
	if distinct {
		q += "DISTINCT "
	}
	cond := ""
	if g.chance(0.6) {
		cond = g.where(&ectx{cols: c.cols}, src)
	}
	q += strings.Join(items, ", ") + " FROM " + src.name + whereOf(src, cond)
	return q, outs
}

// aggregation returns SELECT keys, aggregates FROM src [WHERE] [GROUP BY]
// [HAVING].
func (g *gen) aggregation(src *relation) (string, []expr) {
	c := &ectx{cols: src.cols}
	kc := &ectx{cols: c.cols, exact: true, grouping: true}
	nk := g.intn(3)
	var keys []expr
	for len(keys) < nk {
		if g.chance(0.6) {
			if cols := kc.usable(); len(cols) > 0 {
				keys = append(keys, pick(g, cols))
				continue
			}
		}
		// Not a literal: PostgreSQL reads an integer literal in GROUP BY as
		// an output ordinal (-(10) is one too) and rejects other constants.
		if k := g.expr(kc, g.someType(c, columnTypes), 1); !k.lit && !intConstant.MatchString(k.sql) {
			keys = append(keys, k)
		}
	}
	var outs []expr
	var items []string
	for _, k := range keys {
		if g.chance(0.1) && len(keys) > 1 {
			continue // a group key that is not output
		}
		outs = append(outs, k)
		items = append(items, g.item(k, len(outs)))
	}
	na := 1 + g.intn(4)
	for range na {
		a := g.aggregate(c)
		outs = append(outs, a)
		items = append(items, g.item(a, len(outs)))
	}
	if g.chance(0.1) {
		t := g.someType(c, []typ{tBool, tBigint, tInt, tText})
		if e, ok := g.keySubquery(src, keys, t); ok {
			// Named: PostgreSQL names a subquery after its select list.
			outs = append(outs, e)
			items = append(items, fmt.Sprintf("%s AS c%d", e.sql, len(outs)))
		}
	}
	cond := ""
	if g.chance(0.4) {
		cond = g.where(c, src)
	}
	q := "SELECT " + strings.Join(items, ", ") + " FROM " + src.name + whereOf(src, cond)
	if len(keys) > 0 && g.chance(0.25) {
		q += " GROUP BY " + g.groupingSets(keys)
	} else if len(keys) > 0 {
		var gs []string
		for i, k := range keys {
			// Some keys by output ordinal.
			if i < len(outs) && outs[i].sql == k.sql && g.chance(0.2) {
				gs = append(gs, strconv.Itoa(i+1))
				continue
			}
			gs = append(gs, k.sql)
		}
		q += " GROUP BY " + strings.Join(gs, ", ")
	}
	if g.chance(0.35) {
		q += " HAVING " + g.having(c, keys, src)
	}
	return q, outs
}

// groupingSets returns a GROUP BY of GROUPING SETS, ROLLUP or CUBE over
// keys: each set's rows have the keys outside the set NULL.
func (g *gen) groupingSets(keys []expr) string {
	ks := make([]string, len(keys))
	for i, k := range keys {
		ks[i] = k.sql
	}
	all := strings.Join(ks, ", ")
	switch g.intn(4) {
	case 0:
		return "ROLLUP (" + all + ")"
	case 1:
		return "CUBE (" + all + ")"
	case 2:
		if len(ks) > 1 {
			return ks[0] + ", ROLLUP (" + strings.Join(ks[1:], ", ") + ")"
		}
		return "GROUPING SETS ((" + all + "), ())"
	}
	return "GROUPING SETS ((" + all + "), (" + ks[len(ks)-1] + "), ())"
}

// intConstant matches what PostgreSQL's grammar folds into an integer
// constant.
var intConstant = regexp.MustCompile(`^[()]*-?[()]*[0-9]+[()]*$`)

// usable returns the columns in scope that c allows.
func (c *ectx) usable() []expr {
	var out []expr
	for _, col := range c.cols {
		if c.ok(col) {
			out = append(out, col)
		}
	}
	return out
}

// aggregate returns a random aggregate call (maybe with FILTER, maybe inside
// an expression) and what is known of its values.
func (g *gen) aggregate(c *ectx) expr {
	filter := ""
	if g.chance(0.25) {
		filter = " FILTER (WHERE " + g.expr(c, tBool, 1).sql + ")"
	}
	if g.chance(arrayAggChance) {
		return g.arrayAgg(c, filter)
	}
	if g.chance(jsonbAggChance) {
		if e, ok := g.jsonbAgg(c, filter); ok {
			return e
		}
	}
	var e expr
	switch g.intn(9) {
	case 7:
		// bit_and, bit_or and bit_xor, exact and of their argument's type.
		a := g.expr(c, g.someType(c, []typ{tSmallint, tInt, tBigint}), 1)
		e = a
		e.lit = false
		e.sql = pick(g, []string{"bit_and", "bit_or", "bit_xor"}) + "(" + a.sql + ")" + filter
		// Setting bits can at most double the magnitude.
		e.bound = math.Min(2*a.bound, a.t.limit())
	case 8:
		// The ordered-set aggregates over exact values (text would sort by
		// PostgreSQL's collation).
		t := g.someType(c, []typ{tSmallint, tInt, tBigint, tNumeric, tDate, tTimestamp})
		a := g.expr(c, t, 1)
		e = a
		e.lit = false
		if g.chance(0.5) {
			e.sql = "mode() WITHIN GROUP (ORDER BY " + a.sql + pick(g, []string{"", " DESC"}) + ")" + filter
		} else {
			e.sql = "percentile_disc(" + pick(g, []string{"0", "0.25", "0.5", "1"}) + ") WITHIN GROUP (ORDER BY " + a.sql + pick(g, []string{"", " DESC"}) + ")" + filter
		}
	case 0:
		e = expr{sql: "count(*)" + filter, t: tBigint, bound: maxRows}
	case 1:
		a := g.expr(c, g.someType(c, columnTypes), 1)
		e = expr{sql: "count(" + a.sql + ")" + filter, t: tBigint, bound: maxRows}
	case 2:
		a := g.expr(&ectx{cols: c.cols, exact: true}, g.someType(c, columnTypes), 1)
		e = expr{sql: "count(DISTINCT " + a.sql + ")" + filter, t: tBigint, bound: maxRows}
	case 3:
		t := g.someType(c, []typ{tSmallint, tInt, tBigint, tNumeric, tFloat})
		a := g.expr(c, t, 1)
		e = a
		e.sql = "sum(" + g.distinct(a) + a.sql + ")" + filter
		e.bound = a.bound * maxRows
		switch t {
		case tSmallint, tInt:
			e.t = tBigint
		case tBigint:
			e.t = tNumeric
		case tFloat:
			// Sums of floats that are not dyadic depend on the order of
			// additions and retractions.
			e.approx = a.approx || !a.dyadic
		}
	case 4:
		t := g.someType(c, []typ{tSmallint, tInt, tBigint, tNumeric, tFloat})
		a := g.expr(c, t, 1)
		e = a
		e.sql = "avg(" + g.distinct(a) + a.sql + ")" + filter
		if t == tFloat {
			e.approx = a.approx || !a.dyadic
			e.dyadic = false
		} else {
			e.t, e.approx, e.scale = tNumeric, true, maxScale
		}
	default:
		// min and max exist for every type here but boolean.
		t := g.someType(c, []typ{tSmallint, tInt, tBigint, tNumeric, tFloat, tText, tDate, tTimestamp, tInterval})
		a := g.expr(c, t, 1)
		e = a
		e.lit = false
		if a.ambiguous {
			// Which of several equal intervals is the least depends on
			// the order rows came in.
			e.approx = true
		}
		e.sql = pick(g, []string{"min", "max"}) + "(" + a.sql + ")" + filter
	}
	if !e.approx && g.chance(0.15) {
		// An expression over the aggregate.
		switch {
		case e.t.isInt():
			lit := g.nonNullLiteral(e.t)
			e.sql = "(" + e.sql + " + " + lit.sql + ")"
			e.bound += lit.bound
		default:
			lit := g.nonNullLiteral(e.t)
			e.sql = "COALESCE(" + e.sql + ", " + lit.sql + ")"
			e.bound = math.Max(e.bound, lit.bound)
		}
	}
	return e
}

// distinct returns "DISTINCT " now and then for an aggregate over a, when a
// is exact.
func (g *gen) distinct(a expr) string {
	if !a.approx && g.chance(0.15) {
		return "DISTINCT "
	}
	return ""
}

// having returns a HAVING condition over aggregates and the group keys.
func (g *gen) having(c *ectx, keys []expr, src *relation) string {
	cond := func() string {
		if g.chance(0.2) {
			if e, ok := g.keySubquery(src, keys, tBool); ok {
				return e.sql
			}
		}
		if len(keys) > 0 && g.chance(0.3) {
			k := pick(g, keys)
			if k.t == tBool {
				// IS TRUE keeps the key whole: PostgreSQL's grammar would
				// merge a key a OR b into an enclosing OR, where it is no
				// longer the grouped expression (42803).
				return "(" + k.sql + " IS TRUE)"
			}
			return "(" + k.sql + " " + pick(g, []string{"=", "<>", "<", ">="}) + " " + g.nonNullLiteral(k.t).sql + ")"
		}
		a := g.aggregate(c)
		if !comparableApprox(a) {
			return "(" + a.sql + " IS NOT NULL)"
		}
		return "(" + a.sql + " " + pick(g, []string{"=", "<>", "<", ">", "<=", ">="}) + " " + g.nonNullLiteral(a.t).sql + ")"
	}
	s := cond()
	if g.chance(0.3) {
		s = "(" + s + pick(g, []string{" AND ", " OR "}) + cond() + ")"
	}
	return s
}
