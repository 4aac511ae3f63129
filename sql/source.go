package sql

import (
	pg_query "github.com/pganalyze/pg_query_go/v6"
	"github.com/streamsql/streamsql/catalog"
	"github.com/streamsql/streamsql/ir"
	"github.com/streamsql/streamsql/sqlerr"
)

// CreateSource is CREATE SOURCE [IF NOT EXISTS] name (columns) WITH
// (connector = '...', option = value, ...): a relation whose rows come from a
// connector instead of DML. Option names may be dotted (fields.id.kind).
type CreateSource struct {
	Schema      string
	Name        string
	IfNotExists bool
	Columns     []catalog.Column
	Options     map[string]string
	// Watermark is the WATERMARK FOR clause, or nil. Sources only insert
	// rows; AppendOnly records that it was declared.
	Watermark  *catalog.Watermark
	AppendOnly bool
}

// DropSource is DROP SOURCE [IF EXISTS] name [CASCADE].
type DropSource struct {
	Name     ir.ObjectName
	IfExists bool
	Cascade  bool
	// Path is the session's search path.
	Path []string
}

func (*CreateSource) Tag() string { return "CREATE SOURCE" }
func (*DropSource) Tag() string   { return "DROP SOURCE" }

// createSourceSyntax is a parsed CREATE SOURCE awaiting binding: the column
// list, parsed as a CREATE TABLE, and the options.
type createSourceSyntax struct {
	table   *pg_query.Node
	options map[string]string
	// noColumns: the statement has no column list (table has a placeholder).
	noColumns bool
}

func (*createSourceSyntax) Tag() string { return "CREATE SOURCE" }

// parseCreateSource parses src, a CREATE SOURCE statement. PostgreSQL's
// grammar has no CREATE SOURCE and does not allow dotted option names, so the
// WITH clause is read from the scanner's tokens and the rest is parsed as a
// CREATE TABLE.
func parseCreateSource(src string) (ir.Statement, error) {
	res, err := pg_query.Scan(src)
	if err != nil {
		return nil, sqlerr.New(sqlerr.SyntaxError, "%v", err)
	}
	toks := res.Tokens
	text := func(t *pg_query.ScanToken) string { return src[t.Start:t.End] }
	// toks[0] is CREATE, toks[1] SOURCE; the options follow the first WITH
	// at parenthesis depth 0.
	depth, with := 0, -1
	for i := 2; i < len(toks); i++ {
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
		if with >= 0 {
			break
		}
	}
	if with < 0 {
		return nil, sqlerr.New(sqlerr.SyntaxError, "CREATE SOURCE needs WITH (connector = '...')")
	}
	opts, i, err := withOptions(src, toks, with+2, "CREATE SOURCE")
	if err != nil {
		return nil, err
	}
	if i, err = sinkFormat(src, toks, i+1, opts); err != nil {
		return nil, err
	}
	if i < len(toks) {
		return nil, sqlerr.New(sqlerr.SyntaxError, "syntax error at or near \"%s\"", text(toks[i]))
	}
	end, err := sourceIncludes(src, toks, with, opts)
	if err != nil {
		return nil, err
	}
	table := "CREATE TABLE " + src[toks[1].End:toks[end].Start]
	noColumns := !hasColumnList(toks[2:end])
	if noColumns {
		// A connector with a fixed schema (nexmark) may go without a column
		// list; the engine declares its columns. The placeholder column
		// lets the rest bind as a CREATE TABLE and is dropped there.
		table += " (placeholder int)"
	}
	parsed, err := pg_query.Parse(table)
	if err != nil {
		return nil, syntaxError(table, 0, err)
	}
	if len(parsed.Stmts) != 1 || parsed.Stmts[0].Stmt.GetCreateStmt() == nil {
		return nil, sqlerr.New(sqlerr.SyntaxError, "malformed CREATE SOURCE")
	}
	return &createSourceSyntax{table: parsed.Stmts[0].Stmt, options: opts, noColumns: noColumns}, nil
}

// hasColumnList reports whether toks, the tokens between SOURCE and WITH,
// hold a parenthesised column list.
func hasColumnList(toks []*pg_query.ScanToken) bool {
	for _, t := range toks {
		if t.Token == pg_query.Token_ASCII_40 {
			return true
		}
	}
	return false
}

// bindCreateSource binds a parsed CREATE SOURCE: its columns as for CREATE
// TABLE (no keys: a source's rows are identified by their position).
func (b *binder) bindCreateSource(s *createSourceSyntax) (ir.Statement, error) {
	st, err := b.bindCreateTable(s.table.GetCreateStmt())
	if err != nil {
		return nil, err
	}
	ct := st.(*ir.CreateTable)
	if len(ct.PrimaryKey) > 0 {
		return nil, sqlerr.Unsupported("PRIMARY KEY on a source")
	}
	if err := noDefaults(ct.Columns); err != nil {
		return nil, err
	}
	if s.options["connector"] == "" {
		return nil, sqlerr.New(sqlerr.InvalidParameterValue, "CREATE SOURCE needs the option connector")
	}
	if s.noColumns {
		ct.Columns = nil
	}
	return &CreateSource{Schema: ct.Schema, Name: ct.Name, IfNotExists: ct.IfNotExists, Columns: ct.Columns, Options: s.options,
		Watermark: ct.Watermark, AppendOnly: ct.AppendOnly}, nil
}

// parseDropSource parses DROP SOURCE [IF EXISTS] name [CASCADE | RESTRICT].
func parseDropSource(words []string) (ir.Statement, error) {
	name, ifExists, cascade, err := parseDropNamed(words, "SOURCE")
	if err != nil {
		return nil, err
	}
	return &DropSource{Name: name, IfExists: ifExists, Cascade: cascade}, nil
}

// parseDropNamed parses DROP what [IF EXISTS] name [CASCADE | RESTRICT],
// whose words are given.
func parseDropNamed(words []string, what string) (name ir.ObjectName, ifExists, cascade bool, err error) {
	w := words[2:]
	if len(w) >= 2 && w[0] == "if" && w[1] == "exists" {
		ifExists = true
		w = w[2:]
	}
	if len(w) == 0 {
		return name, false, false, sqlerr.New(sqlerr.SyntaxError, "DROP %s needs a name", what)
	}
	name, w = customName(w)
	switch {
	case len(w) == 0:
	case len(w) == 1 && w[0] == "cascade":
		cascade = true
	case len(w) == 1 && w[0] == "restrict":
	default:
		return name, false, false, sqlerr.New(sqlerr.SyntaxError, "syntax error at or near \"%s\"", w[0])
	}
	return name, ifExists, cascade, nil
}
