// Package sql parses SQL text with PostgreSQL's own grammar (pg_query) and
// binds it against the catalog: names are resolved, types are checked and
// coerced, and queries become trees of Rel nodes over Expr expressions. Errors
// are *sqlerr.Error values carrying a SQLSTATE and, where the problem is in the
// text, a 1-based character position into the whole query string, as
// PostgreSQL reports them.
package sql

import (
	"errors"
	"strings"
	"unicode/utf8"

	pg_query "github.com/pganalyze/pg_query_go/v6"
	"github.com/pganalyze/pg_query_go/v6/parser"
	"github.com/streamsql/streamsql/catalog"
	"github.com/streamsql/streamsql/ir"
	"github.com/streamsql/streamsql/sqlerr"
)

// Parsed is one statement of a query string.
type Parsed struct {
	// Text is the statement's own text, without the trailing semicolon.
	Text string
	// node is the parse tree; nil for statements pg_query does not know, which
	// are then in custom.
	node   *pg_query.Node
	custom ir.Statement
	// base is the byte offset in the whole query string that node locations
	// are relative to.
	base int
	// full is the whole query string, for positions.
	full string
	// start and end are the statement's byte range in full.
	start, end int
	// clauses are the streaming dialect's clauses cut out of the statement.
	clauses []*dialectClause
	// session is the session the statement is bound in (SetSession).
	session Session
}

// Parse splits a query string into statements and parses each. It fails,
// before anything runs, if any statement has a syntax error, as PostgreSQL
// does for a multi-statement simple query. The streaming dialect's clauses
// (see dialect.go) are cut out first and attached to their statements.
func Parse(text string) ([]*Parsed, error) {
	src, clauses, err := cutDialectClauses(text)
	if err != nil {
		return nil, err
	}
	out, err := parseStatements(text, src)
	if err != nil {
		return nil, err
	}
	for _, c := range clauses {
		for _, p := range out {
			if c.start >= p.start && c.start < p.end {
				p.clauses = append(p.clauses, c)
				break
			}
		}
	}
	return out, nil
}

// parseStatements parses src, which is text with the dialect clauses
// blanked out (the same length); statement texts are taken from text.
func parseStatements(text, src string) ([]*Parsed, error) {
	if res, err := pg_query.Parse(src); err == nil {
		var out []*Parsed
		for _, raw := range res.Stmts {
			start := int(raw.StmtLocation)
			end := len(src)
			if raw.StmtLen > 0 {
				end = start + int(raw.StmtLen)
			}
			out = append(out, &Parsed{Text: strings.TrimSpace(text[start:end]), node: raw.Stmt, full: text, start: start, end: end})
		}
		return out, nil
	}
	// Some statement is not PostgreSQL grammar: split at the top-level
	// semicolons the scanner finds and look for streamsql's own statements.
	// (pg_query's SplitWithScanner is not used: it drops pieces without a
	// PostgreSQL keyword, such as FLUSH or a misspelt SELECT.)
	pieces, err := splitStatements(src)
	if err != nil {
		return nil, syntaxError(text, 0, err)
	}
	var out []*Parsed
	for _, piece := range pieces {
		if len(piece.words) == 0 {
			continue
		}
		p := &Parsed{Text: strings.TrimSpace(text[piece.start:piece.end]), full: text, start: piece.start, end: piece.end}
		switch {
		case len(piece.words) >= 3 && piece.words[0] == "create" && piece.words[1] == "source":
			if p.custom, err = parseCreateSource(src[piece.start:piece.end]); err != nil {
				return nil, err
			}
		case len(piece.words) >= 3 && piece.words[0] == "drop" && piece.words[1] == "source":
			if p.custom, err = parseDropSource(piece.words); err != nil {
				return nil, err
			}
		case len(piece.words) >= 3 && piece.words[0] == "create" && piece.words[1] == "sink":
			if p.custom, err = parseCreateSink(src[piece.start:piece.end]); err != nil {
				return nil, err
			}
		case len(piece.words) >= 3 && piece.words[0] == "drop" && piece.words[1] == "sink":
			if p.custom, err = parseDropSink(piece.words); err != nil {
				return nil, err
			}
		case isSubscriptionStatement(piece.words):
			if p.custom, err = parseSubscriptionStatement(src[piece.start:piece.end], piece.words); err != nil {
				return nil, err
			}
		case isSubscribe(piece.words):
			if p.custom, err = parseSubscribe(src[piece.start:piece.end]); err != nil {
				return nil, err
			}
		case isAlterViewQuery(piece.words):
			if p.custom, err = parseAlterViewQuery(text[piece.start:piece.end], src[piece.start:piece.end], piece.words); err != nil {
				return nil, err
			}
		case len(piece.words) >= 3 && piece.words[0] == "create" && piece.words[1] == "table":
			var ok bool
			if p.custom, ok, err = parseCreateCDCTable(src[piece.start:piece.end]); err != nil {
				return nil, err
			} else if ok {
				break
			}
			if p.custom, ok, err = parseCreateConnectorTable(src[piece.start:piece.end]); err != nil {
				return nil, err
			} else if !ok {
				p.custom = parseCustom(piece.words)
			}
		default:
			p.custom = parseCustom(piece.words)
		}
		if p.custom != nil {
			out = append(out, p)
			continue
		}
		res, err := pg_query.Parse(src[piece.start:piece.end])
		if err != nil {
			return nil, syntaxError(text, piece.start, err)
		}
		for _, raw := range res.Stmts {
			out = append(out, &Parsed{Text: p.Text, node: raw.Stmt, base: piece.start, full: text, start: piece.start, end: piece.end})
		}
	}
	return out, nil
}

// piece is one statement of a query string: its byte range and its tokens'
// text, lower-cased except for quoted names, without comments.
type piece struct {
	start, end int
	words      []string
}

// splitStatements splits text at the semicolons that are tokens (not inside
// literals, quoted names or comments).
func splitStatements(text string) ([]piece, error) {
	res, err := pg_query.Scan(text)
	if err != nil {
		return nil, err
	}
	var out []piece
	cur := piece{}
	for _, tok := range res.Tokens {
		switch tok.Token {
		case pg_query.Token_ASCII_59:
			cur.end = int(tok.Start)
			out = append(out, cur)
			cur = piece{start: int(tok.End)}
		case pg_query.Token_SQL_COMMENT, pg_query.Token_C_COMMENT:
		default:
			w := text[tok.Start:tok.End]
			if !strings.HasPrefix(w, `"`) {
				// Quoted names keep their case, as identifiers do.
				w = strings.ToLower(w)
			}
			cur.words = append(cur.words, w)
		}
	}
	cur.end = len(text)
	return append(out, cur), nil
}

// parseCustom recognises the statements streamsql adds to PostgreSQL's
// grammar from their lower-cased tokens.
func parseCustom(words []string) ir.Statement {
	if st := parseShowCatalog(words); st != nil {
		return st
	}
	switch {
	case len(words) == 1 && words[0] == "flush":
		return &ir.Flush{}
	case len(words) >= 4 && words[0] == "explain":
		return parseExplainView(words)
	case len(words) >= 4 && words[0] == "verify":
		return parseVerifyView(words)
	case len(words) == 2 && words[0] == "show" && words[1] == "tables":
		return &ir.ShowRelations{Kind: catalog.Table}
	case len(words) == 3 && words[0] == "show" && words[1] == "materialized" && words[2] == "views":
		return &ir.ShowRelations{Kind: catalog.MaterializedView}
	case len(words) >= 5 && words[0] == "alter" && words[1] == "materialized" && words[2] == "view":
		name, rest := customName(words[3:])
		if len(rest) == 1 && (rest[0] == "pause" || rest[0] == "resume") {
			return &AlterViewPause{Name: name, Pause: rest[0] == "pause"}
		}
		if st := parseSetParallelism(name, rest); st != nil {
			return st
		}
	case len(words) >= 6 && words[0] == "alter" && words[1] == "source":
		name, rest := customName(words[2:])
		if len(rest) == 3 && rest[0] == "rename" && rest[1] == "to" {
			to, _ := customName(rest[2:])
			return &renameSource{Name: name, NewName: to.Name}
		}
	}
	return nil
}

// customName reads a possibly schema-qualified name from the start of the
// tokens of a custom statement, and returns the tokens after it.
func customName(words []string) (ir.ObjectName, []string) {
	if len(words) == 0 {
		return ir.ObjectName{}, nil
	}
	unquote := func(w string) string { return strings.ReplaceAll(strings.Trim(w, `"`), `""`, `"`) }
	if len(words) >= 3 && words[1] == "." {
		return ir.ObjectName{Schema: unquote(words[0]), Name: unquote(words[2])}, words[3:]
	}
	return ir.ObjectName{Name: unquote(words[0])}, words[1:]
}

// syntaxError converts a pg_query error into a 42601 error positioned in the
// whole query string; base is the byte offset of the text pg_query parsed.
func syntaxError(full string, base int, err error) error {
	e := &sqlerr.Error{Code: sqlerr.SyntaxError, Message: err.Error()}
	var pe *parser.Error
	if errors.As(err, &pe) {
		e.Message = pe.Message
		if strings.HasPrefix(pe.Message, "frame ") {
			// The grammar's checks of window frame bounds.
			e.Code = windowingError
		}
		if pe.Cursorpos > 0 {
			e.Position = charPosition(full, base+pe.Cursorpos-1)
		}
	}
	return e
}

// charPosition converts a byte offset into a 1-based character position.
func charPosition(text string, byteOff int) int {
	if byteOff < 0 {
		return 0
	}
	if byteOff > len(text) {
		byteOff = len(text)
	}
	return utf8.RuneCountInString(text[:byteOff]) + 1
}
