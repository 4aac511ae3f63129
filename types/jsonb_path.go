package types

import (
	"strconv"
	"strings"

	"github.com/streamsql/streamsql/sqlerr"
)

// A subset of SQL/JSON path (PostgreSQL's jsonpath) in lax mode: $ and @,
// .key, ."key", .*, [*], [n], and filters ? (predicate) with ==, !=, <>, <,
// <=, >, >= between paths and literals (numbers, strings, true, false,
// null), &&, || and !, with parentheses. As in lax mode, member accessors
// and filters unwrap arrays, [*] and [n] wrap non-arrays, missing members
// give nothing and comparisons of mismatched kinds are unknown. strict mode,
// arithmetic, item methods (.size() ...), last, like_regex, starts with,
// exists and $variables are 0A000.

// JSONPath is a parsed path.
type JSONPath struct{ p jpPath }

type jpPath struct {
	root  byte // '$' or '@'
	steps []jpStep
}

type jpStepKind uint8

const (
	jpMember jpStepKind = iota
	jpAnyMember
	jpAnyElem
	jpIndex
	jpFilter
)

type jpStep struct {
	kind  jpStepKind
	key   string
	index int
	pred  *jpExpr
}

type jpExprKind uint8

const (
	jpLit jpExprKind = iota
	jpPathExpr
	jpCmp
	jpAnd
	jpOr
	jpNot
)

type jpExpr struct {
	kind        jpExprKind
	lit         JSON
	path        jpPath
	op          string
	left, right *jpExpr
}

func jpSyntax(tok string) error {
	if tok == "" {
		return sqlerr.New(sqlerr.SyntaxError, "syntax error at end of jsonpath input")
	}
	return sqlerr.New(sqlerr.SyntaxError, "syntax error at or near \"%s\" of jsonpath input", tok)
}

func jpUnsupported(what string) error { return sqlerr.Unsupported("jsonpath %s", what) }

// ParseJSONPath parses a jsonpath.
func ParseJSONPath(s string) (JSONPath, error) {
	p := &jpParser{s: s}
	p.lex()
	if p.err != nil {
		return JSONPath{}, p.err
	}
	if len(p.toks) > 0 && (p.toks[0] == "lax" || p.toks[0] == "strict") {
		if p.toks[0] == "strict" {
			return JSONPath{}, jpUnsupported("strict mode")
		}
		p.pos++
	}
	path, err := p.path()
	if err != nil {
		return JSONPath{}, err
	}
	if path.root != '$' {
		return JSONPath{}, sqlerr.New(sqlerr.SyntaxError, "@ is not allowed in root expressions")
	}
	if p.pos < len(p.toks) {
		return JSONPath{}, p.unexpected()
	}
	return JSONPath{p: path}, nil
}

type jpParser struct {
	s    string
	toks []string
	pos  int
	err  error
}

func (p *jpParser) lex() {
	s := p.s
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
			i++
		case c == '"':
			j := i + 1
			for j < len(s) && s[j] != '"' {
				if s[j] == '\\' {
					j++
				}
				j++
			}
			if j >= len(s) {
				p.err = jpSyntax("")
				return
			}
			p.toks = append(p.toks, s[i:j+1])
			i = j + 1
		case strings.HasPrefix(s[i:], "==") || strings.HasPrefix(s[i:], "!=") || strings.HasPrefix(s[i:], "<>") ||
			strings.HasPrefix(s[i:], "<=") || strings.HasPrefix(s[i:], ">=") || strings.HasPrefix(s[i:], "&&") ||
			strings.HasPrefix(s[i:], "||"):
			p.toks = append(p.toks, s[i:i+2])
			i += 2
		case c == '$' && i+1 < len(s) && (jsonAlnum(s[i+1]) || s[i+1] == '"'):
			// A variable: $name.
			j := i + 1
			for j < len(s) && jsonAlnum(s[j]) {
				j++
			}
			p.toks = append(p.toks, s[i:max(j, i+2)])
			i = max(j, i+2)
		case strings.IndexByte("$@.[]*?()<>!,+-/%", c) >= 0:
			if c == '-' && i+1 < len(s) && isDigit(s[i+1]) && p.expectsOperand() {
				j := scanNumber(s, i+1)
				p.toks = append(p.toks, s[i:j])
				i = j
				continue
			}
			p.toks = append(p.toks, s[i:i+1])
			i++
		case isDigit(c):
			j := scanNumber(s, i)
			p.toks = append(p.toks, s[i:j])
			i = j
		case jsonAlnum(c):
			j := i
			for j < len(s) && jsonAlnum(s[j]) {
				j++
			}
			p.toks = append(p.toks, s[i:j])
			i = j
		default:
			p.err = jpSyntax(s[i : i+1])
			return
		}
	}
}

// expectsOperand reports whether a minus sign here starts a number.
func (p *jpParser) expectsOperand() bool {
	if len(p.toks) == 0 {
		return true
	}
	switch p.toks[len(p.toks)-1] {
	case "(", "==", "!=", "<>", "<", "<=", ">", ">=", "&&", "||", "!", "[", ",":
		return true
	}
	return false
}

func scanNumber(s string, i int) int {
	for i < len(s) && isDigit(s[i]) {
		i++
	}
	if i+1 < len(s) && s[i] == '.' && isDigit(s[i+1]) {
		i++
		for i < len(s) && isDigit(s[i]) {
			i++
		}
	}
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		j := i + 1
		if j < len(s) && (s[j] == '+' || s[j] == '-') {
			j++
		}
		if j < len(s) && isDigit(s[j]) {
			for i = j; i < len(s) && isDigit(s[i]); i++ {
			}
		}
	}
	return i
}

func (p *jpParser) peek() string {
	if p.pos < len(p.toks) {
		return p.toks[p.pos]
	}
	return ""
}

func (p *jpParser) unexpected() error { return jpSyntax(p.peek()) }

func (p *jpParser) expect(t string) error {
	if p.peek() != t {
		return p.unexpected()
	}
	p.pos++
	return nil
}

func (p *jpParser) path() (jpPath, error) {
	root := p.peek()
	switch {
	case root == "$" || root == "@":
	case strings.HasPrefix(root, "$"):
		return jpPath{}, jpUnsupported("variables")
	default:
		return jpPath{}, p.unexpected()
	}
	p.pos++
	path := jpPath{root: root[0]}
	for {
		switch p.peek() {
		case ".":
			p.pos++
			t := p.peek()
			switch {
			case t == "*":
				p.pos++
				path.steps = append(path.steps, jpStep{kind: jpAnyMember})
			case strings.HasPrefix(t, "\""):
				v, err := ParseJSON(t)
				if err != nil {
					return jpPath{}, jpSyntax(t)
				}
				p.pos++
				path.steps = append(path.steps, jpStep{kind: jpMember, key: v.Str})
			case t != "" && jsonAlnum(t[0]) && !isDigit(t[0]):
				p.pos++
				if p.peek() == "(" {
					return jpPath{}, jpUnsupported("item methods")
				}
				path.steps = append(path.steps, jpStep{kind: jpMember, key: t})
			default:
				return jpPath{}, p.unexpected()
			}
		case "[":
			p.pos++
			t := p.peek()
			switch {
			case t == "*":
				p.pos++
				path.steps = append(path.steps, jpStep{kind: jpAnyElem})
			case t == "last":
				return jpPath{}, jpUnsupported("last")
			case t != "" && (isDigit(t[0]) || t[0] == '-'):
				n, err := strconv.Atoi(t)
				if err != nil {
					return jpPath{}, jpUnsupported("array subscripts other than integers")
				}
				p.pos++
				path.steps = append(path.steps, jpStep{kind: jpIndex, index: n})
			default:
				return jpPath{}, p.unexpected()
			}
			if p.peek() != "]" {
				if p.peek() == "," || p.peek() == "to" {
					return jpPath{}, jpUnsupported("subscript lists and ranges")
				}
				return jpPath{}, p.unexpected()
			}
			p.pos++
		case "?":
			p.pos++
			if err := p.expect("("); err != nil {
				return jpPath{}, err
			}
			e, err := p.or()
			if err != nil {
				return jpPath{}, err
			}
			if err := p.expect(")"); err != nil {
				return jpPath{}, err
			}
			path.steps = append(path.steps, jpStep{kind: jpFilter, pred: e})
		default:
			return path, nil
		}
	}
}

func (p *jpParser) or() (*jpExpr, error) {
	l, err := p.and()
	for err == nil && p.peek() == "||" {
		p.pos++
		var r *jpExpr
		if r, err = p.and(); err == nil {
			l = &jpExpr{kind: jpOr, left: l, right: r}
		}
	}
	return l, err
}

func (p *jpParser) and() (*jpExpr, error) {
	l, err := p.unary()
	for err == nil && p.peek() == "&&" {
		p.pos++
		var r *jpExpr
		if r, err = p.unary(); err == nil {
			l = &jpExpr{kind: jpAnd, left: l, right: r}
		}
	}
	return l, err
}

func (p *jpParser) unary() (*jpExpr, error) {
	switch p.peek() {
	case "!":
		p.pos++
		if p.peek() != "(" {
			return nil, p.unexpected()
		}
		e, err := p.unary()
		if err != nil {
			return nil, err
		}
		return &jpExpr{kind: jpNot, left: e}, nil
	case "(":
		p.pos++
		e, err := p.or()
		if err != nil {
			return nil, err
		}
		return e, p.expect(")")
	case "exists":
		return nil, jpUnsupported("exists")
	}
	l, err := p.operand()
	if err != nil {
		return nil, err
	}
	switch op := p.peek(); op {
	case "==", "!=", "<>", "<", "<=", ">", ">=":
		p.pos++
		r, err := p.operand()
		if err != nil {
			return nil, err
		}
		if op == "<>" {
			op = "!="
		}
		return &jpExpr{kind: jpCmp, op: op, left: l, right: r}, nil
	case "like_regex", "starts", "is":
		return nil, jpUnsupported(op)
	case "+", "-", "*", "/", "%":
		return nil, jpUnsupported("arithmetic")
	}
	return nil, jpUnsupported("predicates other than comparisons")
}

func (p *jpParser) operand() (*jpExpr, error) {
	t := p.peek()
	switch {
	case t == "$" || t == "@" || strings.HasPrefix(t, "$"):
		path, err := p.path()
		if err != nil {
			return nil, err
		}
		switch p.peek() {
		case "+", "-", "*", "/", "%":
			return nil, jpUnsupported("arithmetic")
		}
		return &jpExpr{kind: jpPathExpr, path: path}, nil
	case t == "true" || t == "false" || t == "null":
		p.pos++
		v, _ := ParseJSON(t)
		return &jpExpr{kind: jpLit, lit: v}, nil
	case strings.HasPrefix(t, "\""):
		v, err := ParseJSON(t)
		if err != nil {
			return nil, jpSyntax(t)
		}
		p.pos++
		return &jpExpr{kind: jpLit, lit: v}, nil
	case t != "" && (isDigit(t[0]) || t[0] == '-'):
		v, err := ParseJSON(t)
		if err != nil || v.Kind != JSONNumber {
			return nil, jpSyntax(t)
		}
		p.pos++
		switch p.peek() {
		case "+", "-", "*", "/", "%":
			return nil, jpUnsupported("arithmetic")
		}
		return &jpExpr{kind: jpLit, lit: v}, nil
	}
	return nil, p.unexpected()
}

// Query returns the items path selects from v, in order.
func (jp JSONPath) Query(v JSON) []JSON {
	return jpEval(jp.p, v, v, nil)
}

// jpEval evaluates path from root $ (and @ = cur).
func jpEval(path jpPath, root, cur JSON, out []JSON) []JSON {
	start := root
	if path.root == '@' {
		start = cur
	}
	items := []JSON{start}
	for _, st := range path.steps {
		var next []JSON
		for _, it := range items {
			next = jpStepOn(st, root, it, next)
		}
		items = next
	}
	return append(out, items...)
}

func jpStepOn(st jpStep, root, it JSON, out []JSON) []JSON {
	switch st.kind {
	case jpMember, jpAnyMember:
		if it.Kind == JSONArray { // lax: unwrap
			for _, e := range it.Elems {
				out = jpStepOn(st, root, e, out)
			}
			return out
		}
		if it.Kind != JSONObject {
			return out
		}
		if st.kind == jpAnyMember {
			return append(out, it.Elems...)
		}
		if v, ok := it.Get(st.key); ok {
			out = append(out, v)
		}
		return out
	case jpAnyElem:
		if it.Kind != JSONArray {
			return append(out, it) // lax: wrap
		}
		return append(out, it.Elems...)
	case jpIndex:
		elems := []JSON{it}
		if it.Kind == JSONArray {
			elems = it.Elems
		}
		if st.index >= 0 && st.index < len(elems) {
			out = append(out, elems[st.index])
		}
		return out
	}
	// A filter: lax mode unwraps an array and filters its elements.
	if it.Kind == JSONArray {
		for _, e := range it.Elems {
			if jpPred(st.pred, root, e) == jpTrue {
				out = append(out, e)
			}
		}
		return out
	}
	if jpPred(st.pred, root, it) == jpTrue {
		out = append(out, it)
	}
	return out
}

type jpBool uint8

const (
	jpFalse jpBool = iota
	jpTrue
	jpUnknown
)

func jpPred(e *jpExpr, root, cur JSON) jpBool {
	switch e.kind {
	case jpAnd:
		l := jpPred(e.left, root, cur)
		if l == jpFalse {
			return jpFalse
		}
		r := jpPred(e.right, root, cur)
		if r == jpTrue {
			return l
		}
		return r
	case jpOr:
		l := jpPred(e.left, root, cur)
		if l == jpTrue {
			return jpTrue
		}
		r := jpPred(e.right, root, cur)
		if r == jpFalse {
			return l
		}
		return r
	case jpNot:
		switch jpPred(e.left, root, cur) {
		case jpTrue:
			return jpFalse
		case jpFalse:
			return jpTrue
		}
		return jpUnknown
	}
	// A comparison: true if any pair of items compares true, unknown if
	// some pair cannot be compared and none is true.
	ls, rs := jpOperand(e.left, root, cur), jpOperand(e.right, root, cur)
	res := jpFalse
	for _, l := range ls {
		for _, r := range rs {
			switch jpCompare(e.op, l, r) {
			case jpTrue:
				return jpTrue
			case jpUnknown:
				res = jpUnknown
			}
		}
	}
	return res
}

// jpOperand is the items of an operand, arrays unwrapped (lax mode).
func jpOperand(e *jpExpr, root, cur JSON) []JSON {
	if e.kind == jpLit {
		return []JSON{e.lit}
	}
	var out []JSON
	for _, v := range jpEval(e.path, root, cur, nil) {
		if v.Kind == JSONArray {
			out = append(out, v.Elems...)
		} else {
			out = append(out, v)
		}
	}
	return out
}

func jpCompare(op string, a, b JSON) jpBool {
	if a.Kind != b.Kind {
		if a.Kind == JSONNull || b.Kind == JSONNull {
			if op == "!=" {
				return jpTrue
			}
			return jpFalse
		}
		return jpUnknown
	}
	var c int
	switch a.Kind {
	case JSONNull:
	case JSONString:
		c = strings.Compare(a.Str, b.Str)
	case JSONNumber:
		c = CompareNumericText(a.Str, b.Str)
	case JSONBool:
		c = cmpInt(b2i(a.Bool), b2i(b.Bool))
	default:
		return jpUnknown
	}
	var ok bool
	switch op {
	case "==":
		ok = c == 0
	case "!=":
		ok = c != 0
	case "<":
		ok = c < 0
	case "<=":
		ok = c <= 0
	case ">":
		ok = c > 0
	case ">=":
		ok = c >= 0
	}
	if ok {
		return jpTrue
	}
	return jpFalse
}
