package sql

import (
	"strings"

	pg_query "github.com/pganalyze/pg_query_go/v6"
	"github.com/streamsql/streamsql/sqlerr"
)

// The streaming dialect adds clauses to PostgreSQL's grammar:
//
//	CREATE TABLE t (..., WATERMARK FOR col AS expr) [APPEND ONLY]
//	CREATE SOURCE s (..., WATERMARK FOR col AS expr) [APPEND ONLY] WITH (...)
//	CREATE MATERIALIZED VIEW v AS SELECT ... EMIT ON WINDOW CLOSE
//	... FROM a ASOF [LEFT [OUTER]] JOIN b ON ...
//	lag(x) IGNORE NULLS OVER (...), first_value(x) RESPECT NULLS OVER w
//	f(...) OVER (PARTITION BY k ORDER BY ts SESSION WITH GAP INTERVAL '5 minutes')
//	SELECT ... ORDER BY ... LIMIT n WITH TIES   (PostgreSQL: FETCH FIRST n ROWS WITH TIES)
//
// Parse cuts them out of the text before PostgreSQL's parser sees it: each
// clause is replaced by spaces of the same length, so that every position
// pg_query reports still points into the user's text, and is kept as a
// dialectClause that the binder consumes. A clause the statement it sits in
// cannot take is a syntax error at its position.

// clauseKind is the kind of a dialect clause.
type clauseKind uint8

const (
	clauseWatermark clauseKind = iota
	clauseAppendOnly
	clauseEmitOnWindowClose
	clauseAsof
	clauseIgnoreNulls
	clauseRespectNulls
	clauseSessionGap
	clauseType // STRUCT<...> or MAP(...), see dialect_types.go
	clauseLimitWithTies
)

func (k clauseKind) String() string {
	switch k {
	case clauseWatermark:
		return "WATERMARK FOR"
	case clauseAppendOnly:
		return "APPEND ONLY"
	case clauseAsof:
		return "ASOF"
	case clauseIgnoreNulls:
		return "IGNORE NULLS"
	case clauseRespectNulls:
		return "RESPECT NULLS"
	case clauseSessionGap:
		return "SESSION WITH GAP"
	case clauseType:
		return "STRUCT and MAP types"
	case clauseLimitWithTies:
		return "WITH TIES"
	}
	return "EMIT ON WINDOW CLOSE"
}

// dialectClause is one clause cut out of a statement.
type dialectClause struct {
	kind clauseKind
	// start is the clause's byte offset in the whole query string.
	start int
	// For WATERMARK FOR: the column's name and the expression's text with
	// its byte offset in the whole query string.
	column  string
	expr    string
	exprOff int
	// For ASOF: the byte offset of the join's right input; for IGNORE
	// NULLS and RESPECT NULLS, of the window after OVER; for SESSION WITH
	// GAP (whose gap is expr), of the parenthesis opening its window; for
	// LIMIT ... WITH TIES, the end of the LIMIT keyword.
	rightOff int
	// used is set by the binder once it has taken the clause.
	used bool
}

// cutDialectClauses returns text with the dialect clauses blanked out, and
// the clauses in text order. Text without them is returned unchanged.
func cutDialectClauses(text string) (string, []*dialectClause, error) {
	lower := strings.ToLower(text)
	if !strings.Contains(lower, "watermark") && !strings.Contains(lower, "append") && !strings.Contains(lower, "emit") &&
		!strings.Contains(lower, "asof") && !strings.Contains(lower, "nulls") && !strings.Contains(lower, "gap") &&
		!strings.Contains(lower, "struct") && !strings.Contains(lower, "map") && !strings.Contains(lower, "ties") {
		return text, nil, nil
	}
	res, err := pg_query.Scan(text)
	if err != nil {
		return text, nil, nil // the parser reports the syntax error
	}
	var toks []*pg_query.ScanToken
	for _, t := range res.Tokens {
		if t.Token != pg_query.Token_SQL_COMMENT && t.Token != pg_query.Token_C_COMMENT {
			toks = append(toks, t)
		}
	}
	c := &clauseCutter{text: text, toks: toks, out: []byte(text), cutComma: map[int]bool{}}
	if err := c.run(); err != nil {
		return "", nil, err
	}
	if len(c.clauses) == 0 && !c.rewrote {
		return text, nil, nil
	}
	return string(c.out), c.clauses, nil
}

// clauseCutter walks the tokens of a query string statement by statement.
type clauseCutter struct {
	text    string
	toks    []*pg_query.ScanToken
	out     []byte
	clauses []*dialectClause
	// cutComma marks the comma tokens blanked with a clause.
	cutComma map[int]bool
	// typeNames are the placeholders of the cut-out types.
	typeNames []string
	// rewrote is set when a map literal was rewritten in place.
	rewrote bool
}

func (c *clauseCutter) word(i int) string {
	if i < 0 || i >= len(c.toks) {
		return ""
	}
	t := c.toks[i]
	return strings.ToLower(c.text[t.Start:t.End])
}

func (c *clauseCutter) is(i int, words ...string) bool {
	for k, w := range words {
		if c.word(i+k) != w {
			return false
		}
	}
	return true
}

// blank replaces tokens [from, to] by spaces.
func (c *clauseCutter) blank(from, to int) {
	for i := c.toks[from].Start; i < c.toks[to].End; i++ {
		if c.out[i] != '\n' {
			c.out[i] = ' '
		}
	}
}

func (c *clauseCutter) run() error {
	stmtStart := 0
	depth := 0
	var open []int // the byte offsets of the open parentheses
	for i := 0; i < len(c.toks); i++ {
		switch c.toks[i].Token {
		case pg_query.Token_ASCII_59: // ;
			if depth == 0 {
				stmtStart = i + 1
			}
			continue
		case pg_query.Token_ASCII_40:
			depth++
			open = append(open, int(c.toks[i].Start))
			continue
		case pg_query.Token_ASCII_41:
			depth--
			if len(open) > 0 {
				open = open[:len(open)-1]
			}
			continue
		}
		createsRelation := c.is(stmtStart, "create", "table") || c.is(stmtStart, "create", "source")
		if end, ok := c.dialectType(i); ok {
			i = end
			continue
		}
		switch {
		case createsRelation && depth == 1 && c.is(i, "watermark", "for") && c.is(i+3, "as"):
			end, err := c.watermark(i)
			if err != nil {
				return err
			}
			i = end
		case createsRelation && depth == 0 && c.is(i, "append", "only"):
			c.clauses = append(c.clauses, &dialectClause{kind: clauseAppendOnly, start: int(c.toks[i].Start)})
			c.blank(i, i+1)
			i++
		case c.is(i, "asof", "join") || c.is(i, "asof", "left", "join") || c.is(i, "asof", "left", "outer", "join"):
			j := i + 1
			for c.word(j) != "join" {
				j++
			}
			if j+1 < len(c.toks) {
				c.clauses = append(c.clauses, &dialectClause{kind: clauseAsof, start: int(c.toks[i].Start), rightOff: int(c.toks[j+1].Start)})
				c.blank(i, i)
			}
			i = j
		case (c.is(i, "ignore", "nulls", "over") || c.is(i, "respect", "nulls", "over")) && i+3 < len(c.toks):
			kind := clauseIgnoreNulls
			if c.word(i) == "respect" {
				kind = clauseRespectNulls
			}
			c.clauses = append(c.clauses, &dialectClause{kind: kind, start: int(c.toks[i].Start), rightOff: int(c.toks[i+3].Start)})
			c.blank(i, i+1)
			i++
		case depth > 0 && c.is(i, "session", "with", "gap"):
			end, err := c.sessionGap(i, open[len(open)-1])
			if err != nil {
				return err
			}
			i = end
		case c.is(i, "with", "ties") && c.word(i-1) != "row" && c.word(i-1) != "rows":
			if limit := c.limitBefore(i); limit >= 0 {
				c.clauses = append(c.clauses, &dialectClause{kind: clauseLimitWithTies, start: int(c.toks[i].Start), rightOff: int(c.toks[limit].End)})
				c.blank(i, i+1)
				i++
			}
		case depth == 0 && c.is(i, "emit", "on", "window", "close"):
			c.clauses = append(c.clauses, &dialectClause{kind: clauseEmitOnWindowClose, start: int(c.toks[i].Start)})
			c.blank(i, i+3)
			i += 3
		}
	}
	return nil
}

// limitBefore returns the index of the LIMIT keyword whose row count ends
// just before token i, at the same parenthesis depth, or -1.
func (c *clauseCutter) limitBefore(i int) int {
	depth := 0
	for j := i - 1; j >= 0; j-- {
		switch c.toks[j].Token {
		case pg_query.Token_ASCII_41:
			depth++
		case pg_query.Token_ASCII_40:
			if depth--; depth < 0 {
				return -1
			}
		case pg_query.Token_ASCII_59:
			return -1
		case pg_query.Token_LIMIT:
			if depth == 0 {
				return j
			}
		}
	}
	return -1
}

// watermark cuts WATERMARK FOR col AS expr starting at token i, with the
// comma that separates it from its neighbours in the column list, and
// returns the index of its last token.
func (c *clauseCutter) watermark(i int) (int, error) {
	colTok := c.toks[i+2]
	if colTok.Token != pg_query.Token_IDENT && colTok.KeywordKind == pg_query.KeywordKind_RESERVED_KEYWORD {
		return 0, sqlerr.New(sqlerr.SyntaxError, "syntax error at or near \"%s\"", c.text[colTok.Start:colTok.End]).
			At(charPosition(c.text, int(colTok.Start)))
	}
	// The expression runs to the comma or parenthesis that ends the element.
	depth, end := 0, i+4
	for ; end < len(c.toks); end++ {
		t := c.toks[end].Token
		if depth == 0 && (t == pg_query.Token_ASCII_44 || t == pg_query.Token_ASCII_41) {
			break
		}
		if t == pg_query.Token_ASCII_40 {
			depth++
		} else if t == pg_query.Token_ASCII_41 {
			depth--
		}
	}
	if end == i+4 || end >= len(c.toks) {
		at := c.toks[min(end, len(c.toks)-1)]
		return 0, sqlerr.New(sqlerr.SyntaxError, "WATERMARK FOR %s AS needs an expression", c.text[colTok.Start:colTok.End]).
			At(charPosition(c.text, int(at.Start)))
	}
	cl := &dialectClause{
		kind:    clauseWatermark,
		start:   int(c.toks[i].Start),
		column:  identName(c.text[colTok.Start:colTok.End]),
		expr:    c.text[c.toks[i+4].Start:c.toks[end-1].End],
		exprOff: int(c.toks[i+4].Start),
	}
	c.clauses = append(c.clauses, cl)
	// Cut the comma that separates the clause from the element before it,
	// or else the one after it (the first element has none before).
	last := end - 1
	switch {
	case c.toks[i-1].Token == pg_query.Token_ASCII_44 && !c.cutComma[i-1]:
		c.cutComma[i-1] = true
		c.blank(i-1, last)
	case c.toks[end].Token == pg_query.Token_ASCII_44:
		c.cutComma[end] = true
		c.blank(i, end)
	default:
		c.blank(i, last)
	}
	return last, nil
}

// sessionGap cuts SESSION WITH GAP expr, from token i to the parenthesis
// that closes its window (which opened at byte offset paren), and returns
// the index of its last token.
func (c *clauseCutter) sessionGap(i, paren int) (int, error) {
	depth, end := 0, i+3
	for ; end < len(c.toks); end++ {
		t := c.toks[end].Token
		if depth == 0 && t == pg_query.Token_ASCII_41 {
			break
		}
		if t == pg_query.Token_ASCII_40 {
			depth++
		} else if t == pg_query.Token_ASCII_41 {
			depth--
		}
	}
	if end == i+3 || end >= len(c.toks) {
		return 0, sqlerr.New(sqlerr.SyntaxError, "SESSION WITH GAP needs an interval").At(charPosition(c.text, int(c.toks[i].Start)))
	}
	c.clauses = append(c.clauses, &dialectClause{kind: clauseSessionGap, start: int(c.toks[i].Start), rightOff: paren,
		expr: c.text[c.toks[i+3].Start:c.toks[end-1].End], exprOff: int(c.toks[i+3].Start)})
	c.blank(i, end-1)
	return end - 1, nil
}

// identName folds an identifier as PostgreSQL does: quoted names keep their
// case, others are lower-cased.
func identName(s string) string {
	if len(s) >= 2 && s[0] == '"' && s[len(s)-1] == '"' {
		return strings.ReplaceAll(s[1:len(s)-1], `""`, `"`)
	}
	return strings.ToLower(s)
}

// takeClause returns the binder's unused clause of kind k, marking it used,
// or nil.
func (b *binder) takeClause(k clauseKind) *dialectClause {
	for _, c := range b.clauses {
		if c.kind == k && !c.used {
			c.used = true
			return c
		}
	}
	return nil
}

// takeAsof returns whether the join whose right input starts at byte
// offset loc of the statement (relative to b.base) is an ASOF join.
func (b *binder) takeAsof(loc int32) bool {
	for _, c := range b.clauses {
		if c.kind == clauseAsof && !c.used && c.rightOff == b.base+int(loc) {
			c.used = true
			return true
		}
	}
	return false
}

// takeSessionGap returns the SESSION WITH GAP clause of the window
// definition whose parenthesis is at byte offset loc (relative to b.base),
// or nil.
func (b *binder) takeSessionGap(loc int32) *dialectClause {
	for _, c := range b.clauses {
		if c.kind == clauseSessionGap && !c.used && c.rightOff == b.base+int(loc) {
			c.used = true
			return c
		}
	}
	return nil
}

// takeNullTreatment returns whether the window function call whose window
// (after OVER) starts at byte offset loc says IGNORE NULLS.
func (b *binder) takeNullTreatment(loc int32) (ignore bool) {
	for _, c := range b.clauses {
		if (c.kind == clauseIgnoreNulls || c.kind == clauseRespectNulls) && !c.used && c.rightOff == b.base+int(loc) {
			c.used = true
			return c.kind == clauseIgnoreNulls
		}
	}
	return false
}

// takeLimitWithTies returns whether the LIMIT whose row count is at byte
// offset loc (relative to b.base) is followed by WITH TIES.
func (b *binder) takeLimitWithTies(loc int32) bool {
	at := b.base + int(loc)
	for _, c := range b.clauses {
		if c.kind == clauseLimitWithTies && !c.used && loc >= 0 && c.rightOff <= at && at < c.start {
			c.used = true
			return true
		}
	}
	return false
}

// checkClausesUsed fails with a syntax error at the first clause the
// statement did not take.
func (b *binder) checkClausesUsed() error {
	for _, c := range b.clauses {
		if !c.used {
			where := "here"
			switch c.kind {
			case clauseEmitOnWindowClose:
				where = "only after the query of CREATE MATERIALIZED VIEW"
			case clauseAsof:
				where = "only before JOIN or LEFT JOIN of a table, view, source or CTE"
			case clauseIgnoreNulls, clauseRespectNulls:
				where = "only between a window function call and its OVER"
			case clauseSessionGap:
				where = "only at the end of a window definition"
			case clauseLimitWithTies:
				where = "only after the row count of LIMIT"
			default:
				where = "only in CREATE TABLE and CREATE SOURCE"
			}
			return sqlerr.New(sqlerr.SyntaxError, "%s is allowed %s", c.kind, where).At(charPosition(b.full, c.start))
		}
	}
	return nil
}
