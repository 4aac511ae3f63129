package difftest

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// jsonb: columns of objects (a few keys holding integers, text, booleans,
// null and nested arrays), arrays, scalars and NULL; the operators -> ->>
// #> #>> @> <@ ? || and - (key), jsonb_typeof, jsonb_array_length (of
// arrays only), jsonb_build_object and jsonb_build_array over columns,
// to_jsonb of integers, text and booleans, casts to integer guarded by
// jsonb_typeof, jsonb_agg and jsonb_object_agg, and
// jsonb_array_elements_text in FROM.
//
// Every JSON number is an integer spelled without fraction or exponent:
// streamsql groups numbers spelled differently (1.0 and 1) apart where
// PostgreSQL merges them (docs/sql.md "jsonb"), so with integers only, equal
// values have one text, and jsonb may be grouped, joined, made distinct and
// compared. expr.bound of a jsonb value bounds the length of its text and
// so the integers in it (well below integer's range); expressions that
// could fail on a value of the wrong kind (- of a scalar,
// jsonb_array_length of a non-array, a cast of a non-number) are guarded
// with CASE on jsonb_typeof, as a failing expression would abort a view on
// one side.

func init() {
	registerType(tJsonb, jsonbType())
}

const (
	jsonbColumnBound = 120  // the text of a column's value
	jsonbLimit       = 1000 // as text's
	// jsonbNumberBound bounds the integers in jsonb values: those of the
	// value domain, primary keys and the numbers to_jsonb is given.
	jsonbNumberBound = keyLimit
)

var (
	jsonKeys    = []string{"a", "b", "c", "k", "a b"}
	jsonStrings = []string{"", "a", "b", "ab", "A", "x y", "o'k", "€x", "日本", "null", "1"}
	// jsonPaths are #> and #>> paths.
	jsonPaths = []string{"{a}", "{b}", "{a,0}", "{c,1}", "{0}", "{k}", "{a,b}", "{}"}
)

func jsonbType() *extType {
	s := &extType{limit: jsonbLimit, maxLen: math.Inf(1), greatest: true}
	s.column = func(e *expr) { e.bound = jsonbColumnBound }
	s.value = func(g *gen) string { return quote(g.jsonValue(2)) }
	s.series = func(g *gen) string {
		m := pick(g, []int{2, 3, 5, 7})
		return pick(g, []string{
			fmt.Sprintf("jsonb_build_object('a', i %% %d, 'b', substr('abcab', 1 + i %% %d, 2))", m, m),
			fmt.Sprintf("to_jsonb(i %% %d)", m),
			fmt.Sprintf("jsonb_build_array(i %% %d, 'x', i %% 2 = 0)", m),
			fmt.Sprintf("CASE WHEN i %% %d = 0 THEN CAST('{\"a\": [1, 2], \"c\": null}' AS jsonb) ELSE CAST('[]' AS jsonb) END", m),
		})
	}
	s.literal = func(g *gen) expr {
		v := g.jsonValue(2)
		return expr{sql: "CAST(" + quote(v) + " AS jsonb)", t: tJsonb, bound: float64(len(v))}
	}
	s.make = func(g *gen, c, x *ectx, depth int) (expr, bool) { return g.jsonbExpr(x, depth) }
	s.use = func(g *gen, x *ectx, want typ, depth int) (expr, bool) { return g.jsonbUse(x, want, depth) }
	return s
}

// jsonValue returns the text of a random JSON value, nested at most depth
// levels.
func (g *gen) jsonValue(depth int) string {
	switch k := g.intn(10); {
	case k < 4 && depth > 0:
		n := g.intn(4)
		var pairs []string
		for range n {
			pairs = append(pairs, jsonString(pick(g, jsonKeys))+": "+g.jsonValue(depth-1))
		}
		return "{" + strings.Join(pairs, ", ") + "}"
	case k < 6 && depth > 0:
		n := g.intn(4)
		var elems []string
		for range n {
			elems = append(elems, g.jsonValue(depth-1))
		}
		return "[" + strings.Join(elems, ", ") + "]"
	}
	return g.jsonScalar()
}

func (g *gen) jsonScalar() string {
	switch g.intn(6) {
	case 0, 1:
		return strconv.Itoa(pick(g, intDomain))
	case 2, 3:
		return jsonString(pick(g, jsonStrings))
	case 4:
		return pick(g, []string{"true", "false"})
	}
	return "null"
}

// jsonString returns s as a JSON string (s has nothing to escape).
func jsonString(s string) string { return `"` + s + `"` }

// jsonbOperand returns a jsonb operand over x.
func (g *gen) jsonbOperand(x *ectx, depth int) expr {
	return g.expr(x, tJsonb, depth)
}

// jsonbKey returns a key or an array position for -> and ->>.
func (g *gen) jsonbKey() string {
	if g.chance(0.3) {
		return g.smallInt(-2, 3)
	}
	return quote(pick(g, jsonKeys))
}

// guarded returns CASE WHEN jsonb_typeof(j) IN (kinds) THEN then END.
func guarded(j string, then string, kinds ...string) string {
	var ks []string
	for _, k := range kinds {
		ks = append(ks, quote(k))
	}
	return "CASE WHEN jsonb_typeof(" + j + ") IN (" + strings.Join(ks, ", ") + ") THEN " + then + " END"
}

// jsonArg returns an expression of a type to_jsonb and jsonb_build_object
// take here (integers, text, booleans, jsonb), within the bounds of jsonb
// numbers, and a bound of the length of its JSON text.
func (g *gen) jsonArg(x *ectx, depth int) expr {
	for range 5 {
		t := g.someType(x, []typ{tSmallint, tInt, tBigint, tText, tBool, tJsonb})
		a := g.expr(x, t, depth)
		if a.lit && t == tText {
			a.sql = "CAST(" + a.sql + " AS text)"
		}
		switch {
		case t.isInt():
			if a.bound > jsonbNumberBound {
				continue
			}
			a.bound = 20
		case t == tText:
			// Escapes may double the length.
			a.bound = 2*a.bound + 2
		case t == tBool:
			a.bound = 5
		}
		return a
	}
	return expr{sql: "to_jsonb(1)", t: tJsonb, bound: 1}
}

// jsonbExpr returns a jsonb expression with an operator at the top over
// operands in x.
func (g *gen) jsonbExpr(x *ectx, depth int) (expr, bool) {
	e := expr{t: tJsonb, dyadic: true}
	switch g.intn(10) {
	case 0, 1:
		a := g.jsonbOperand(x, depth)
		e.bound = a.bound
		if g.chance(0.7) {
			e.sql = "(" + a.sql + " -> " + g.jsonbKey() + ")"
		} else {
			e.sql = "(" + a.sql + " #> " + quote(pick(g, jsonPaths)) + ")"
		}
	case 2:
		a, b := g.jsonbOperand(x, depth), g.jsonbOperand(x, depth)
		e.bound = a.bound + b.bound + 4
		e.sql = "(" + a.sql + " || " + b.sql + ")"
	case 3:
		a := g.jsonbOperand(x, depth)
		e.bound = a.bound
		k := quote(pick(g, jsonKeys))
		if g.chance(0.3) {
			k = "CAST(" + k + " AS text)"
		}
		// Of a scalar: cannot delete from scalar.
		e.sql = guarded(a.sql, "("+a.sql+" - "+k+")", "object", "array")
	case 4, 5:
		a := g.jsonArg(x, depth)
		e.bound = a.bound
		e.sql = "to_jsonb(" + a.sql + ")"
	case 6, 7:
		n := 1 + g.intn(3)
		var parts []string
		keys := map[string]bool{}
		e.bound = 2
		for range n {
			k := pick(g, jsonKeys)
			if keys[k] {
				continue
			}
			keys[k] = true
			v := g.jsonArg(x, depth)
			parts = append(parts, quote(k), v.sql)
			e.bound += float64(len(k)) + 6 + v.bound
		}
		e.sql = "jsonb_build_object(" + strings.Join(parts, ", ") + ")"
	case 8:
		n := 1 + g.intn(3)
		var parts []string
		e.bound = 2
		for range n {
			v := g.jsonArg(x, depth)
			parts = append(parts, v.sql)
			e.bound += v.bound + 2
		}
		e.sql = "jsonb_build_array(" + strings.Join(parts, ", ") + ")"
	default:
		return expr{}, false
	}
	return e, true
}

// jsonbUse returns an expression of scalar type want over jsonb values, or
// ok false if there is none.
func (g *gen) jsonbUse(x *ectx, want typ, depth int) (expr, bool) {
	a := g.jsonbOperand(x, depth)
	switch {
	case want.isInt() || want == tNumeric || want == tFloat:
		var e expr
		if g.chance(0.5) {
			e = expr{sql: guarded(a.sql, "jsonb_array_length("+a.sql+")", "array"), t: tInt, bound: a.bound}
		} else {
			// A number's integer, guarded: a cast of another kind fails.
			var f, ft string
			if g.chance(0.7) {
				k := g.jsonbKey()
				f, ft = "("+a.sql+" -> "+k+")", "("+a.sql+" ->> "+k+")"
			} else {
				p := quote(pick(g, jsonPaths))
				f, ft = "("+a.sql+" #> "+p+")", "("+a.sql+" #>> "+p+")"
			}
			cast := "CAST(" + f + " AS integer)"
			if g.chance(0.5) {
				cast = "CAST(" + ft + " AS integer)"
			}
			e = expr{sql: guarded(f, cast, "number"), t: tInt, bound: jsonbNumberBound}
		}
		e.dyadic = true
		if want == tInt {
			return e, true
		}
		return g.castNumber(e, want), true
	case want == tText:
		e := expr{t: tText, bound: a.bound}
		switch g.intn(5) {
		case 0, 1:
			e.sql = "(" + a.sql + " ->> " + g.jsonbKey() + ")"
		case 2:
			e.sql = "(" + a.sql + " #>> " + quote(pick(g, jsonPaths)) + ")"
		case 3:
			e.sql = "jsonb_typeof(" + a.sql + ")"
			e.bound = 7
		default:
			e.sql = "CAST(" + a.sql + " AS text)"
		}
		return e, true
	case want == tBool:
		e := expr{t: tBool, dyadic: true}
		switch g.intn(4) {
		case 0, 1:
			b := g.jsonbOperand(x, depth)
			e.sql = "(" + a.sql + pick(g, []string{" @> ", " <@ "}) + b.sql + ")"
		case 2:
			e.sql = "(" + a.sql + " ? " + quote(pick(g, jsonKeys)) + ")"
		default:
			e.sql = "(jsonb_typeof(" + a.sql + ") = " + quote(pick(g, []string{"object", "array", "string", "number", "boolean", "null"})) + ")"
		}
		return e, true
	}
	return expr{}, false
}

// jsonbAggChance is the chance that an aggregate is a jsonb_agg or a
// jsonb_object_agg.
const jsonbAggChance = 0.08

// jsonbAgg returns jsonb_agg over an integer, text, boolean or jsonb
// expression ordered by the expression itself last, so that rows tying on
// the ORDER BY have equal values, or jsonb_object_agg(k, v) ordered by the
// key and then the value, so that the last value of a duplicate key is
// the same on both sides; ok false if c has no column to aggregate.
func (g *gen) jsonbAgg(c *ectx, filter string) (expr, bool) {
	kc := &ectx{cols: c.cols, exact: true, grouping: true}
	v := g.jsonArg(kc, 1)
	if v.lit {
		return expr{}, false
	}
	dir := func() string {
		return pick(g, []string{"", " DESC", " NULLS FIRST", " DESC NULLS LAST"})
	}
	e := expr{t: tJsonb, bound: math.Inf(1), dyadic: true}
	if g.chance(0.6) {
		var keys []string
		if cols := kc.usable(); len(cols) > 0 && g.chance(0.5) {
			keys = append(keys, pick(g, cols).sql+dir())
		}
		keys = append(keys, v.sql+dir())
		e.sql = "jsonb_agg(" + v.sql + " ORDER BY " + strings.Join(keys, ", ") + ")" + filter
		return e, true
	}
	kt := g.someType(kc, []typ{tSmallint, tInt, tBigint, tText})
	k := g.expr(kc, kt, 1)
	if k.lit {
		return expr{}, false
	}
	// A NULL key is an error (22004).
	ks := "COALESCE(CAST(" + k.sql + " AS text), 'none')"
	e.sql = "jsonb_object_agg(" + ks + ", " + v.sql + " ORDER BY " + ks + dir() + ", " + v.sql + dir() + ")" + filter
	return e, true
}

// jsonbElementsView returns a view over src with
// jsonb_array_elements_text of one of src's jsonb columns in FROM (only of
// arrays: of other values it fails), or ok false if src has no jsonb
// column; see view for named.
func (g *gen) jsonbElementsView(name string, src *relation, named bool) (*relation, bool) {
	l := qualified("l", src.cols)
	var js []expr
	for _, c := range l {
		if c.t == tJsonb && c.bound <= jsonbLimit {
			js = append(js, c)
		}
	}
	if len(js) == 0 {
		return nil, false
	}
	j := pick(g, js)
	arg := guarded(j.sql, j.sql, "array")
	cols := append([]expr{}, l...)
	cols = append(cols, expr{sql: "u.x1", t: tText, bound: j.bound, dyadic: true})
	fn := pick(g, []string{"jsonb_array_elements_text", "jsonb_array_elements"}) + "(" + arg + ")"
	if strings.HasPrefix(fn, "jsonb_array_elements(") {
		cols[len(cols)-1].t = tJsonb
	}
	names := "x1"
	if g.chance(0.3) {
		fn += " WITH ORDINALITY"
		names += ", n"
		cols = append(cols, expr{sql: "u.n", t: tBigint, bound: arrayMaxLen, dyadic: true})
	}
	return g.lateralView(name, src, fn+" AS u("+names+")", cols, named), true
}
