package difftest

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// Arrays: integer[] and text[] columns, with NULL elements, empty arrays
// and NULL arrays; ARRAY[...], subscripts and slices, the array functions
// and operators, ANY/ALL over arrays, array_agg, and unnest in FROM.
//
// Arrays are exact and compare and hash element by element, so they may be
// grouped, joined, made distinct and compared. Their expr.bound bounds the
// elements (as it would an element expression) and expr.length the number
// of elements. Not generated: GREATEST and LEAST over arrays (streamsql has
// no overload, 42883, where PostgreSQL has), and LATERAL subqueries, which
// streamsql refuses (0A000, docs/sql.md "Joins").

func init() {
	registerType(tIntArray, arrayType(tIntArray))
	registerType(tTextArray, arrayType(tTextArray))
}

// Bounds of array columns: elements and lengths. Text elements are short,
// so that array_to_string of a column stays within text's limit.
const (
	arrayColumnLen     = 8
	intElemBound       = valueBound
	textElemBound      = 20
	arrayMaxLen        = maxRows
	arrayElemTextBound = 11 // the text of an integer element
)

// arrayTextDomain adds elements to textDomain that an array's text form
// must quote.
var arrayTextDomain = append([]string{"NULL", "a,b", "{x}", `q"`, "null"}, textDomain...)

func (t typ) isArray() bool { return t == tIntArray || t == tTextArray }

// elem returns the element type of array type t.
func (t typ) elem() typ {
	if t == tIntArray {
		return tInt
	}
	return tText
}

// arrayOf returns the array type of element type t: integer or text.
func arrayOf(t typ) typ {
	if t == tInt {
		return tIntArray
	}
	return tTextArray
}

func arrayType(t typ) *extType {
	s := &extType{maxLen: arrayMaxLen}
	s.limit = t.elem().limit()
	s.column = func(e *expr) {
		e.length = arrayColumnLen
		e.bound = intElemBound
		if t == tTextArray {
			e.bound = textElemBound
		}
	}
	s.value = func(g *gen) string { return g.arrayValue(t) }
	s.series = func(g *gen) string { return g.arraySeries(t) }
	s.literal = func(g *gen) expr {
		v := g.arrayValue(t)
		e := expr{t: t, length: 4, bound: intElemBound}
		if t == tTextArray {
			e.bound = textElemBound
		}
		if strings.HasPrefix(v, "ARRAY[") {
			e.sql = v
		} else {
			e.sql = "CAST(" + v + " AS " + t.castName() + ")"
		}
		return e
	}
	s.make = func(g *gen, c, x *ectx, depth int) (expr, bool) { return g.arrayExpr(x, t, depth) }
	s.use = func(g *gen, x *ectx, want typ, depth int) (expr, bool) { return g.arrayUse(x, t, want, depth) }
	return s
}

// arrayValue returns a random non-NULL array value of type t as a literal
// that INSERT takes: '{...}' or ARRAY[...] (never an empty ARRAY[], which
// needs a cast).
func (g *gen) arrayValue(t typ) string {
	n := g.intn(5)
	var elems []string
	for range n {
		if g.chance(0.15) {
			elems = append(elems, "NULL")
			continue
		}
		if t == tIntArray {
			elems = append(elems, strconv.Itoa(pick(g, intDomain)))
		} else {
			elems = append(elems, pick(g, arrayTextDomain))
		}
	}
	if n > 0 && g.chance(0.5) {
		vals := make([]string, n)
		for i, e := range elems {
			switch {
			case e == "NULL":
				vals[i] = "NULL"
			case t == tIntArray:
				vals[i] = e
				if strings.HasPrefix(e, "-") {
					vals[i] = "(" + e + ")"
				}
			default:
				vals[i] = quote(e)
			}
		}
		if strings.Trim(strings.Join(vals, ""), "NUL") != "" {
			// Not all NULL: ARRAY[NULL] is text[].
			return "ARRAY[" + strings.Join(vals, ", ") + "]"
		}
	}
	for i, e := range elems {
		if t == tTextArray && e != "NULL" {
			elems[i] = arrayQuote(e)
		}
	}
	return quote("{" + strings.Join(elems, ",") + "}")
}

// arrayQuote returns s as an element of an array literal, double-quoted
// with backslash escapes.
func arrayQuote(s string) string {
	s = strings.ReplaceAll(s, `\`, `\\`)
	s = strings.ReplaceAll(s, `"`, `\"`)
	return `"` + s + `"`
}

// arraySeries returns an array of type t computed from the series number i.
func (g *gen) arraySeries(t typ) string {
	m := pick(g, []int{2, 3, 5, 7})
	if t == tIntArray {
		return pick(g, []string{
			fmt.Sprintf("ARRAY[i %% %d, NULLIF(i %% 3, 0)]", m),
			fmt.Sprintf("CASE WHEN i %% %d = 0 THEN CAST('{}' AS integer[]) ELSE ARRAY[i %% 4 - 1] END", m),
		})
	}
	return pick(g, []string{
		fmt.Sprintf("ARRAY[substr('abcab', 1 + i %% %d, 2), NULL]", m),
		fmt.Sprintf("string_to_array(substr('a,b,,c', 1 + i %% %d), ',')", m),
	})
}

// element returns an expression of t's element type for an array
// operation, cast when it is an untyped literal ('a' next to a text[] may
// read as an array literal).
func (g *gen) element(x *ectx, t typ, depth int) expr {
	e := g.expr(x, t.elem(), depth)
	if e.lit && t == tTextArray && strings.HasPrefix(e.sql, "'") {
		e.sql = "CAST(" + e.sql + " AS text)"
	}
	return e
}

// small returns an integer literal from lo to hi.
func (g *gen) smallInt(lo, hi int) string {
	v := lo + g.intn(hi-lo+1)
	if v < 0 {
		return "(" + strconv.Itoa(v) + ")"
	}
	return strconv.Itoa(v)
}

// arrayExpr returns an expression of array type t with an operator at the
// top over operands in x.
func (g *gen) arrayExpr(x *ectx, t typ, depth int) (expr, bool) {
	e := expr{t: t, dyadic: true}
	switch g.intn(9) {
	case 0, 1:
		n := 1 + g.intn(3)
		var ss []string
		for range n {
			el := g.expr(x, t.elem(), depth)
			e.bound = math.Max(e.bound, el.bound)
			ss = append(ss, el.sql)
		}
		e.length = float64(n)
		e.sql = "ARRAY[" + strings.Join(ss, ", ") + "]"
	case 2:
		a, b := g.expr(x, t, depth), g.expr(x, t, depth)
		e = merge(t, a, b)
		e.length = a.length + b.length
		if g.chance(0.5) {
			e.sql = "(" + a.sql + " || " + b.sql + ")"
		} else {
			e.sql = "array_cat(" + a.sql + ", " + b.sql + ")"
		}
	case 3:
		a, el := g.expr(x, t, depth), g.element(x, t, depth)
		e = merge(t, a, el)
		e.length = a.length + 1
		switch g.intn(4) {
		case 0:
			e.sql = "(" + a.sql + " || " + el.sql + ")"
		case 1:
			e.sql = "(" + el.sql + " || " + a.sql + ")"
		case 2:
			e.sql = "array_append(" + a.sql + ", " + el.sql + ")"
		default:
			e.sql = "array_prepend(" + el.sql + ", " + a.sql + ")"
		}
	case 4:
		a, el := g.expr(x, t, depth), g.element(x, t, depth)
		e = a
		e.sql = "array_remove(" + a.sql + ", " + el.sql + ")"
	case 5:
		a, from, to := g.expr(x, t, depth), g.element(x, t, depth), g.element(x, t, depth)
		e = merge(t, a, to)
		e.length = a.length
		e.sql = "array_replace(" + a.sql + ", " + from.sql + ", " + to.sql + ")"
	case 6, 7:
		a := g.expr(x, t, depth)
		e = a
		lo, hi := g.smallInt(-1, 4), g.smallInt(0, 5)
		switch g.intn(3) {
		case 0:
			e.sql = "(" + a.sql + ")[" + lo + ":" + hi + "]"
		case 1:
			e.sql = "(" + a.sql + ")[:" + hi + "]"
		default:
			e.sql = "(" + a.sql + ")[" + lo + ":]"
		}
	default:
		if t != tTextArray {
			return expr{}, false
		}
		s := g.expr(x, tText, depth)
		e.bound, e.length = s.bound, s.bound+1
		sep := quote(pick(g, []string{",", " ", "a", ""}))
		if g.chance(0.4) {
			e.sql = "string_to_array(" + s.sql + ", " + sep + ", " + quote(pick(g, []string{"", "b", "NULL"})) + ")"
		} else {
			e.sql = "string_to_array(" + s.sql + ", " + sep + ")"
		}
	}
	e.lit = false
	return e, true
}

// arrayUse returns an expression of scalar type want over values of array
// type t, or ok false if there is none.
func (g *gen) arrayUse(x *ectx, t, want typ, depth int) (expr, bool) {
	a := g.expr(x, t, depth)
	switch {
	case want.isInt() || want == tNumeric || want == tFloat:
		var e expr
		switch k := g.intn(6); {
		case k < 2 && t == tIntArray:
			e = expr{sql: "(" + a.sql + ")[" + g.subscript(x) + "]", t: tInt, bound: a.bound}
		case k < 3:
			e = expr{sql: pick(g, []string{"cardinality(", "array_length(", "array_upper("}) + a.sql, t: tInt, bound: a.length}
			if strings.HasPrefix(e.sql, "cardinality") {
				e.sql += ")"
			} else {
				e.sql += ", 1)"
			}
		default:
			el := g.element(x, t, depth)
			e = expr{sql: "array_position(" + a.sql + ", " + el.sql + ")", t: tInt, bound: a.length}
			if g.chance(0.3) {
				e.sql = "array_position(" + a.sql + ", " + el.sql + ", " + g.smallInt(1, 3) + ")"
			}
		}
		e.dyadic = true
		if want == tInt {
			return e, true
		}
		return g.castNumber(e, want), true
	case want == tText:
		if t == tTextArray && g.chance(0.4) {
			return expr{sql: "(" + a.sql + ")[" + g.subscript(x) + "]", t: tText, bound: a.bound}, true
		}
		eb := a.bound
		if t == tIntArray {
			eb = arrayElemTextBound
		}
		sep := pick(g, []string{",", "", " | "})
		bound := a.length * (eb + float64(len(sep)) + 1)
		if g.chance(0.5) {
			return expr{sql: "array_to_string(" + a.sql + ", " + quote(sep) + ", " + quote(pick(g, []string{"*", "", "NULL"})) + ")", t: tText, bound: bound}, true
		}
		return expr{sql: "array_to_string(" + a.sql + ", " + quote(sep) + ")", t: tText, bound: bound}, true
	case want == tBool:
		e := expr{t: tBool, dyadic: true}
		switch g.intn(4) {
		case 0, 1:
			el := g.element(x, t, depth)
			op := pick(g, []string{" = ANY", " <> ALL", " = ALL", " <> ANY", " < ANY", " >= ALL"})
			arr := a.sql
			if strings.HasPrefix(arr, "(SELECT") {
				// ANY ((SELECT ...)) reads as ANY over the subquery's rows.
				arr = "CAST(" + arr + " AS " + t.castName() + ")"
			}
			e.sql = "(" + el.sql + op + " (" + arr + "))"
		case 2:
			b := g.expr(x, t, depth)
			e.sql = "(" + a.sql + pick(g, []string{" @> ", " <@ ", " && "}) + b.sql + ")"
		default:
			e.sql = "(cardinality(" + a.sql + ") " + pick(g, []string{"= 0", "> 1", "IS NULL"}) + ")"
		}
		return e, true
	}
	return expr{}, false
}

// subscript returns an array index: a small literal or an integer column.
func (g *gen) subscript(x *ectx) string {
	if cols := x.columnsOf(tInt); len(cols) > 0 && g.chance(0.2) {
		return pick(g, cols).sql
	}
	return g.smallInt(-1, 5)
}

// arrayAggChance is the chance that an aggregate is an array_agg.
const arrayAggChance = 0.12

// arrayAgg returns array_agg over an integer or text expression, ordered
// by the expression itself last so that rows tying on the ORDER BY have
// equal values (integers and text that are equal are the same), or
// DISTINCT (sorted by the value).
func (g *gen) arrayAgg(c *ectx, filter string) expr {
	kc := &ectx{cols: c.cols, exact: true, grouping: true}
	et := g.someType(c, []typ{tInt, tText})
	x := g.expr(kc, et, 1)
	if x.lit {
		x.sql = "CAST(" + x.sql + " AS " + et.castName() + ")"
	}
	dir := func() string {
		return pick(g, []string{"", " DESC", " NULLS FIRST", " DESC NULLS LAST", " ASC NULLS LAST"})
	}
	e := expr{t: arrayOf(et), bound: x.bound, length: maxRows, dyadic: true}
	if g.chance(0.3) {
		order := ""
		if g.chance(0.4) {
			order = " ORDER BY " + x.sql + dir()
		}
		e.sql = "array_agg(DISTINCT " + x.sql + order + ")" + filter
		return e
	}
	var keys []string
	if cols := kc.usable(); len(cols) > 0 {
		for n := g.intn(3); n > 0; n-- {
			keys = append(keys, pick(g, cols).sql+dir())
		}
	}
	keys = append(keys, x.sql+dir())
	e.sql = "array_agg(" + x.sql + " ORDER BY " + strings.Join(keys, ", ") + ")" + filter
	return e
}

// unnestView returns a view over src with unnest of src's arrays in FROM
// (comma, CROSS JOIN LATERAL, LEFT JOIN LATERAL ... ON true, maybe WITH
// ORDINALITY, maybe two arrays zipped), or ok false if src has no array
// column; see view for named.
func (g *gen) unnestView(name string, src *relation, named bool) (*relation, bool) {
	l := qualified("l", src.cols)
	var arrays []expr
	for _, c := range l {
		if c.t.isArray() {
			arrays = append(arrays, c)
		}
	}
	if len(arrays) == 0 {
		return nil, false
	}
	a := pick(g, arrays)
	args := []expr{a}
	if len(arrays) > 1 && g.chance(0.3) {
		args = append(args, pick(g, arrays))
	}
	cols := append([]expr{}, l...)
	var names, argSQL []string
	for i, arg := range args {
		n := fmt.Sprintf("x%d", i+1)
		names = append(names, n)
		argSQL = append(argSQL, arg.sql)
		cols = append(cols, expr{sql: "u." + n, t: arg.t.elem(), bound: arg.bound, dyadic: true})
	}
	fn := "unnest(" + strings.Join(argSQL, ", ") + ")"
	if g.chance(0.4) {
		fn += " WITH ORDINALITY"
		names = append(names, "n")
		cols = append(cols, expr{sql: "u.n", t: tBigint, bound: arrayMaxLen, dyadic: true})
	}
	item := fn + " AS u(" + strings.Join(names, ", ") + ")"
	if g.chance(0.25) {
		// A function in FROM sees the items before it without LATERAL.
		return g.functionView(name, src, src.name+" AS l, "+item, cols, named), true
	}
	return g.lateralView(name, src, item, cols, named), true
}

// lateralView returns a view over src (as l) joined laterally with the
// set-returning function item, whose columns with l's are cols.
func (g *gen) lateralView(name string, src *relation, item string, cols []expr, named bool) *relation {
	var from string
	switch g.intn(3) {
	case 0:
		from = src.name + " AS l, LATERAL " + item
	case 1:
		from = src.name + " AS l CROSS JOIN LATERAL " + item
	default:
		from = src.name + " AS l LEFT JOIN LATERAL " + item + " ON true"
	}
	return g.functionView(name, src, from, cols, named)
}

// functionView returns a view over from, src joined with a set-returning
// function: its rows multiply src's, and src is what it reads.
func (g *gen) functionView(name string, src *relation, from string, cols []expr, named bool) *relation {
	v := g.view(name, &relation{name: from, cols: cols}, named)
	v.sources = append([]string{src.name}, v.sources[1:]...)
	v.multiplies = true
	return v
}
