package sql

import (
	"strings"

	pg_query "github.com/pganalyze/pg_query_go/v6"
	"github.com/streamsql/streamsql/ir"
	"github.com/streamsql/streamsql/sqlerr"
)

// CreateSink is CREATE SINK [IF NOT EXISTS] name { FROM relation | AS query }
// WITH (connector = '...', ...) [FORMAT f ENCODE e [(options)]]: a dataflow
// like a materialized view's whose change stream goes to a connector
// instead of into stored rows. View holds the name, the bound query (FROM
// relation is SELECT * FROM relation) and what a restart needs, as for a
// materialized view; its SQL is the CREATE SINK text.
type CreateSink struct {
	View *ir.CreateMaterializedView
	// Options are the WITH options; a FORMAT clause adds "format" and
	// "encode", and its options as "encode.<name>".
	Options map[string]string
}

// DropSink is DROP SINK [IF EXISTS] name [CASCADE].
type DropSink struct {
	Name     ir.ObjectName
	IfExists bool
	// Path is the session's search path.
	Path []string
}

func (s *CreateSink) Tag() string {
	if s.Options["connector"] == SubscriptionConnector {
		return "CREATE SUBSCRIPTION"
	}
	return "CREATE SINK"
}
func (*DropSink) Tag() string { return "DROP SINK" }

// createSinkSyntax is a parsed CREATE SINK awaiting binding.
type createSinkSyntax struct {
	name        *pg_query.RangeVar
	ifNotExists bool
	// query is the SELECT the sink runs, parsed from the statement's text
	// with everything else blanked, so its locations are the statement's.
	query   *pg_query.Node
	options map[string]string
}

func (*createSinkSyntax) Tag() string { return "CREATE SINK" }

// parseCreateSink parses src, a CREATE SINK statement (not PostgreSQL
// grammar): the name and the WITH and FORMAT clauses from the scanner's
// tokens, the query with PostgreSQL's parser.
func parseCreateSink(src string) (ir.Statement, error) {
	res, err := pg_query.Scan(src)
	if err != nil {
		return nil, sqlerr.New(sqlerr.SyntaxError, "%v", err)
	}
	toks := res.Tokens
	syntaxAt := func(i int) error {
		if i >= len(toks) {
			return sqlerr.New(sqlerr.SyntaxError, "syntax error at end of input")
		}
		return sqlerr.New(sqlerr.SyntaxError, "syntax error at or near \"%s\"", src[toks[i].Start:toks[i].End])
	}
	s := &createSinkSyntax{}
	i := 2 // CREATE SINK
	if i+2 < len(toks) && toks[i].Token == pg_query.Token_IF_P && toks[i+1].Token == pg_query.Token_NOT && toks[i+2].Token == pg_query.Token_EXISTS {
		s.ifNotExists = true
		i += 3
	}
	var j int
	if s.name, j = sinkName(src, toks, i); s.name == nil {
		return nil, syntaxAt(i)
	}
	i = j
	if i >= len(toks) || (toks[i].Token != pg_query.Token_FROM && toks[i].Token != pg_query.Token_AS) {
		return nil, syntaxAt(i)
	}
	with := lastWithOptions(toks, i+1)
	if with < 0 {
		return nil, sqlerr.New(sqlerr.SyntaxError, "CREATE SINK needs WITH (connector = '...')")
	}
	if s.query, err = sinkQuery(src, toks, i, with); err != nil {
		return nil, err
	}
	opts, end, err := withOptions(src, toks, with+2, "CREATE SINK")
	if err != nil {
		return nil, err
	}
	s.options = opts
	if end, err = sinkFormat(src, toks, end+1, opts); err != nil {
		return nil, err
	}
	if end < len(toks) {
		return nil, syntaxAt(end)
	}
	return s, nil
}

// sinkName reads name or schema.name at toks[i]; it returns nil if there is
// none, else the name and the index after it.
func sinkName(src string, toks []*pg_query.ScanToken, i int) (*pg_query.RangeVar, int) {
	word := func(i int) (string, bool) {
		if i >= len(toks) || toks[i].Token == pg_query.Token_FROM || toks[i].Token == pg_query.Token_AS {
			return "", false
		}
		w := src[toks[i].Start:toks[i].End]
		if strings.HasPrefix(w, `"`) {
			return strings.ReplaceAll(w[1:len(w)-1], `""`, `"`), true
		}
		return strings.ToLower(w), toks[i].Token == pg_query.Token_IDENT || toks[i].KeywordKind != pg_query.KeywordKind_RESERVED_KEYWORD
	}
	name, ok := word(i)
	if !ok {
		return nil, i
	}
	rv := &pg_query.RangeVar{Relname: name, Inh: true, Relpersistence: "p", Location: toks[i].Start}
	if i+2 < len(toks) && toks[i+1].Token == pg_query.Token_ASCII_46 {
		if rel, ok := word(i + 2); ok {
			rv.Schemaname, rv.Relname = name, rel
			return rv, i + 3
		}
	}
	return rv, i + 1
}

// lastWithOptions returns the index of the last WITH at parenthesis depth 0
// from toks[from] that opens an option list, or -1.
func lastWithOptions(toks []*pg_query.ScanToken, from int) int {
	depth, with := 0, -1
	for i := from; i < len(toks); i++ {
		switch toks[i].Token {
		case pg_query.Token_ASCII_40:
			depth++
		case pg_query.Token_ASCII_41:
			depth--
		case pg_query.Token_WITH:
			if depth == 0 && i+1 < len(toks) && toks[i+1].Token == pg_query.Token_ASCII_40 {
				with = i
			}
		}
	}
	return with
}

// sinkQuery parses the sink's query: toks[kw] is FROM (FROM relation, read
// as SELECT * FROM relation) or AS (AS query), and the query ends before
// toks[with]. The text handed to PostgreSQL's parser is src with everything
// else blanked, so that locations stay those of src.
func sinkQuery(src string, toks []*pg_query.ScanToken, kw, with int) (*pg_query.Node, error) {
	buf := []byte(strings.Repeat(" ", len(src)))
	start, end := int(toks[kw].End), int(toks[with].Start)
	if toks[kw].Token == pg_query.Token_FROM {
		start = int(toks[kw].Start)
		const star = "SELECT * "
		copy(buf[start-len(star):], star) // CREATE SINK x is longer than star
	}
	copy(buf[start:end], src[start:end])
	parsed, err := pg_query.Parse(string(buf))
	if err != nil {
		return nil, syntaxError(src, 0, err)
	}
	if len(parsed.Stmts) != 1 || parsed.Stmts[0].Stmt.GetSelectStmt() == nil {
		return nil, sqlerr.New(sqlerr.SyntaxError, "CREATE SINK ... AS needs a SELECT")
	}
	return parsed.Stmts[0].Stmt, nil
}

// sinkFormat reads an optional FORMAT f ENCODE e [(options)] at toks[i]
// into opts and returns the index after it.
func sinkFormat(src string, toks []*pg_query.ScanToken, i int, opts map[string]string) (int, error) {
	word := func(i int) string { return strings.ToLower(src[toks[i].Start:toks[i].End]) }
	if i >= len(toks) || word(i) != "format" {
		return i, nil
	}
	if i+3 >= len(toks) || word(i+2) != "encode" {
		return i, sqlerr.New(sqlerr.SyntaxError, "FORMAT needs ENCODE: write FORMAT PLAIN ENCODE JSON")
	}
	opts["format"], opts["encode"] = word(i+1), word(i+3)
	i += 4
	if i < len(toks) && toks[i].Token == pg_query.Token_ASCII_40 {
		encOpts, end, err := withOptions(src, toks, i+1, "CREATE SINK")
		if err != nil {
			return i, err
		}
		for k, v := range encOpts {
			opts["encode."+k] = v
		}
		i = end + 1
	}
	return i, nil
}

// parseDropSink parses DROP SINK [IF EXISTS] name [CASCADE | RESTRICT].
func parseDropSink(words []string) (ir.Statement, error) {
	name, ifExists, _, err := parseDropNamed(words, "SINK")
	if err != nil {
		return nil, err
	}
	return &DropSink{Name: name, IfExists: ifExists}, nil
}

// bindCreateSink binds a parsed CREATE SINK: its query as a materialized
// view's of the same name.
func (b *binder) bindCreateSink(s *createSinkSyntax) (ir.Statement, error) {
	if s.options["connector"] == "" {
		return nil, sqlerr.New(sqlerr.InvalidParameterValue, "CREATE SINK needs the option connector")
	}
	st, err := b.bindCreateTableAs(&pg_query.CreateTableAsStmt{
		Query:       s.query,
		Into:        &pg_query.IntoClause{Rel: s.name},
		Objtype:     pg_query.ObjectType_OBJECT_MATVIEW,
		IfNotExists: s.ifNotExists,
	})
	if err != nil {
		return nil, err
	}
	return &CreateSink{View: st.(*ir.CreateMaterializedView), Options: s.options}, nil
}
