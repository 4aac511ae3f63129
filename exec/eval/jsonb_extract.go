package eval

import (
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/streamsql/streamsql/ir"
	"github.com/streamsql/streamsql/types"
)

// jsonbFieldNode is jsonb -> 'key', ->> 'key', -> n and ->> n with a
// constant key or position, over a column: it scans each row's canonical
// text for the field without parsing it into a tree, and copies the
// field's text (canonical itself) or, for ->> of a string, its unescaped
// value into the result.
type jsonbFieldNode struct {
	arg     node
	key     string
	index   int64
	byIndex bool
	asText  bool
}

// compileJSONBFast returns the vectorized node of a jsonb call, or nil.
func compileJSONBFast(fn string, _ scalarFn, args []node, argTypes []types.T, _ types.T) node {
	if len(args) != 2 || argTypes[0].Kind != types.JSONB {
		return nil
	}
	k, ok := asConst(args[1])
	if !ok || k.d.Null {
		return nil
	}
	switch fn {
	case ir.FnJSONBField, ir.FnJSONBFieldText:
		return &jsonbFieldNode{arg: args[0], key: k.d.S, asText: fn == ir.FnJSONBFieldText}
	case ir.FnJSONBElem, ir.FnJSONBElemText:
		return &jsonbFieldNode{arg: args[0], index: k.d.I, byIndex: true, asText: fn == ir.FnJSONBElemText}
	}
	return nil
}

func (n *jsonbFieldNode) typ() types.T {
	if n.asText {
		return types.TextT
	}
	return types.JSONBT
}

func (n *jsonbFieldNode) eval(c *ectx, rec arrow.RecordBatch) (arrow.Array, error) {
	col, err := n.arg.eval(c, rec)
	if err != nil {
		return nil, err
	}
	defer col.Release()
	v := viewOf(col)
	nulls := hasNulls(col)
	out := newStrOut(c.mem, c.n, 16*c.n)
	for i := 0; i < c.n; i++ {
		if (nulls && col.IsNull(i)) || !c.isActive(i) {
			out.appendNull(c.mem)
			continue
		}
		s := v.at(i)
		var f string
		var ok bool
		if n.byIndex {
			f, ok = jsonElemText(s, n.index)
		} else {
			f, ok = jsonFieldText(s, n.key)
		}
		switch {
		case !ok, n.asText && f == "null":
			out.appendNull(c.mem)
		case n.asText && f[0] == '"':
			out.appendUnquoted(f)
		default:
			out.appendString(f)
		}
	}
	return out.finish(), nil
}

// appendUnquoted appends the value of JSON string literal q.
func (o *strOut) appendUnquoted(q string) {
	body := q[1 : len(q)-1]
	if strings.IndexByte(body, '\\') < 0 {
		o.appendString(body)
		return
	}
	v, err := types.ParseJSON(q)
	if err != nil {
		panic("eval: corrupt jsonb string " + q)
	}
	o.appendString(v.Str)
}

// skipJSON returns the end of the canonical JSON value starting at s[i].
func skipJSON(s string, i int) int {
	switch s[i] {
	case '"':
		for i++; ; {
			q := i + strings.IndexByte(s[i:], '"')
			// The quote ends the string unless an odd number of
			// backslashes escapes it.
			bs := 0
			for j := q - 1; j >= i && s[j] == '\\'; j-- {
				bs++
			}
			if bs%2 == 0 {
				return q + 1
			}
			i = q + 1
		}
	case '{', '[':
		depth := 0
		for ; ; i++ {
			switch s[i] {
			case '"':
				i = skipJSON(s, i) - 1
			case '{', '[':
				depth++
			case '}', ']':
				if depth--; depth == 0 {
					return i + 1
				}
			}
		}
	}
	for i < len(s) && s[i] != ',' && s[i] != '}' && s[i] != ']' {
		i++
	}
	return i
}

// jsonFieldText returns the text of field key of canonical object s.
func jsonFieldText(s, key string) (string, bool) {
	if len(s) < 2 || s[0] != '{' || s[1] == '}' {
		return "", false
	}
	for i := 1; ; {
		ke := skipJSON(s, i)
		raw := s[i+1 : ke-1]
		match := raw == key
		if !match && strings.IndexByte(raw, '\\') >= 0 {
			k, _ := types.ParseJSON(s[i:ke])
			match = k.Str == key
		}
		ve := skipJSON(s, ke+2)
		if match {
			return s[ke+2 : ve], true
		}
		if s[ve] == '}' {
			return "", false
		}
		i = ve + 2
	}
}

// jsonElemText returns the text of element idx (negative from the end) of
// canonical array s.
// s is never empty: the shortest jsonb text is 0.
func jsonElemText(s string, idx int64) (string, bool) {
	if s[0] != '[' && s[0] != '{' {
		// A top-level scalar is an array of one element.
		return s, idx == 0 || idx == -1
	}
	if len(s) < 2 || s[0] != '[' || s[1] == ']' {
		return "", false
	}
	if idx < 0 {
		n := int64(0)
		for i := 1; ; n++ {
			e := skipJSON(s, i)
			if s[e] == ']' {
				n++
				break
			}
			i = e + 2
		}
		if idx += n; idx < 0 {
			return "", false
		}
	}
	for i, k := 1, int64(0); ; k++ {
		e := skipJSON(s, i)
		if k == idx {
			return s[i:e], true
		}
		if s[e] == ']' {
			return "", false
		}
		i = e + 2
	}
}

// compileJSONBIn compiles x IN (a, b, ...) over jsonb as x = a OR x = b
// ..., the same in three-valued logic: jsonb equality is not bytewise
// (1.0 = 1), so the hashed constant set of other types does not apply.
func compileJSONBIn(e *ir.InList) (node, error) {
	eqs := make([]ir.Expr, len(e.List))
	for i, el := range e.List {
		eqs[i] = &ir.Call{Fn: ir.FnEq, Args: []ir.Expr{e.Arg, el}, T: types.BoolT}
	}
	var x ir.Expr = &ir.Call{Fn: ir.FnOr, Args: eqs, T: types.BoolT}
	if e.Negate {
		x = &ir.Call{Fn: ir.FnNot, Args: []ir.Expr{x}, T: types.BoolT}
	}
	return compile(x)
}
