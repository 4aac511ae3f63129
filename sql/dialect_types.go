package sql

import (
	"strconv"

	pg_query "github.com/pganalyze/pg_query_go/v6"
	"github.com/streamsql/streamsql/ir"
)

// RisingWave's spellings of composite types and map literals:
//
//	STRUCT<a int, b varchar>, STRUCT<a STRUCT<b int>[]>[]
//	MAP(varchar, int)
//	MAP {'a': 1, 'b': 2}
//
// A type is cut out of the text and replaced by a placeholder type name of
// the same length (typePlaceholder and a number, padded with spaces), kept
// as a clauseType clause holding the type's text, which the binder parses
// when it resolves the placeholder (parseDialectType). A map literal is
// rewritten in place, byte for byte: MAP becomes FnMapLiteral, its braces
// parentheses and its colons commas, a call PostgreSQL's grammar reads.

// typePlaceholder starts the names that stand for cut-out types.
const typePlaceholder = "_sqt"

// dialectType cuts the type or map literal starting at token i, if there
// is one, and returns the index of its last token.
func (c *clauseCutter) dialectType(i int) (int, bool) {
	w := c.word(i)
	if (w != "struct" && w != "map") || i+1 >= len(c.toks) {
		return 0, false
	}
	next := c.toks[i+1].Token
	switch {
	case w == "struct" && next == pg_query.Token_ASCII_60: // <
		return c.cutType(i, '<', '>')
	case w == "map" && next == pg_query.Token_ASCII_40: // (
		return c.cutType(i, '(', ')')
	case w == "map" && c.text[c.toks[i+1].Start] == '{':
		return c.mapLiteral(i)
	}
	return 0, false
}

// cutType blanks the type whose name is token i and whose parameters open
// with the token after it, replacing it by a placeholder name.
func (c *clauseCutter) cutType(i int, open, close byte) (int, bool) {
	start := int(c.toks[i].Start)
	depth, end := 0, -1
	inQuote := false
	for p := int(c.toks[i+1].Start); p < len(c.text) && end < 0; p++ {
		switch ch := c.text[p]; {
		case ch == '"':
			inQuote = !inQuote
		case inQuote:
		case ch == open:
			depth++
		case ch == close:
			depth--
			if depth == 0 {
				end = p + 1
			}
		}
	}
	if end < 0 {
		return 0, false // the parser reports the syntax error
	}
	name := typePlaceholder + strconv.Itoa(len(c.typeNames))
	if len(name) > end-start {
		return 0, false
	}
	c.typeNames = append(c.typeNames, name)
	c.clauses = append(c.clauses, &dialectClause{kind: clauseType, start: start, column: name,
		expr: c.text[start:end], exprOff: start})
	for p := start; p < end; p++ {
		if c.out[p] != '\n' {
			c.out[p] = ' '
		}
	}
	copy(c.out[start:], name)
	last := i
	for last+1 < len(c.toks) && int(c.toks[last+1].Start) < end {
		last++
	}
	return last, true
}

// mapLiteral rewrites MAP {k: v, ...} starting at token i into a call of
// FnMapLiteral with the keys and values alternating, and returns the index
// of its brace.
func (c *clauseCutter) mapLiteral(i int) (int, bool) {
	depth := 0
	for j := i + 1; j < len(c.toks); j++ {
		t := c.toks[j]
		switch ch := c.text[t.Start]; {
		case t.End-t.Start != 1:
		case ch == '{' || ch == '(' || ch == '[':
			depth++
			if ch == '{' && depth == 1 {
				c.out[t.Start] = '('
			}
		case ch == '}' || ch == ')' || ch == ']':
			depth--
			if depth == 0 {
				c.out[t.Start] = ')'
				copy(c.out[c.toks[i].Start:], ir.FnMapLiteral)
				c.rewrote = true
				return i + 1, true // scan on inside: it may hold types
			}
		case ch == ':' && depth == 1:
			c.out[t.Start] = ','
		}
	}
	return 0, false
}
