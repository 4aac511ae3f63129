package sql

import (
	"errors"
	"strings"

	pg_query "github.com/pganalyze/pg_query_go/v6"
	"github.com/streamsql/streamsql/catalog"
	"github.com/streamsql/streamsql/ir"
	"github.com/streamsql/streamsql/sqlerr"
)

// AlterViewQuery is ALTER MATERIALIZED VIEW [IF EXISTS] name AS query: the
// view's query is replaced in place (see engine/alter_view_query.go). View
// is the new definition bound as the CREATE MATERIALIZED VIEW the catalog
// stores for it.
type AlterViewQuery struct {
	Rel  *catalog.Relation
	View *ir.CreateMaterializedView
}

func (*AlterViewQuery) Tag() string { return "ALTER MATERIALIZED VIEW" }

// alterViewQuerySyntax is ALTER MATERIALIZED VIEW ... AS query as parsed:
// PostgreSQL's grammar has no such statement, so it is recognised from its
// tokens and its query is parsed as the text of the CREATE MATERIALIZED
// VIEW it becomes (Create).
type alterViewQuerySyntax struct {
	Name     ir.ObjectName
	IfExists bool
	Create   string
	// asAt and createAS are the byte offsets of AS in the statement's text
	// and in Create, to report positions in the new query as the user
	// wrote it.
	asAt, createAS int
}

func (*alterViewQuerySyntax) Tag() string { return "ALTER MATERIALIZED VIEW" }

// isAlterViewQuery reports whether words (lower-cased tokens) are ALTER
// MATERIALIZED VIEW [IF EXISTS] name AS ...
func isAlterViewQuery(words []string) bool {
	if len(words) < 6 || words[0] != "alter" || words[1] != "materialized" || words[2] != "view" {
		return false
	}
	rest := words[3:]
	if len(rest) >= 2 && rest[0] == "if" && rest[1] == "exists" {
		rest = rest[2:]
	}
	_, rest = customName(rest)
	return len(rest) >= 2 && rest[0] == "as"
}

// parseAlterViewQuery reads ALTER MATERIALIZED VIEW ... AS query from
// text, the statement's text, and src, the same with the dialect clauses
// blanked out (for the tokens); the CREATE it builds keeps the clauses,
// which are parsed again with it.
func parseAlterViewQuery(text, src string, words []string) (ir.Statement, error) {
	res, err := pg_query.Scan(src)
	if err != nil {
		return nil, err
	}
	var toks []*pg_query.ScanToken
	for _, t := range res.Tokens {
		if t.Token != pg_query.Token_SQL_COMMENT && t.Token != pg_query.Token_C_COMMENT {
			toks = append(toks, t)
		}
	}
	st := &alterViewQuerySyntax{}
	i := 3
	if words[3] == "if" && words[4] == "exists" {
		st.IfExists, i = true, 5
	}
	name, rest := customName(words[i:])
	st.Name = name
	as := len(words) - len(rest) // the index of AS
	head := "CREATE MATERIALIZED VIEW " + text[toks[i].Start:toks[as-1].End] + " "
	st.asAt, st.createAS = int(toks[as].Start), len(head)
	st.Create = head + strings.TrimSpace(text[toks[as].Start:])
	return st, nil
}

// bindAlterViewQuery binds the view ALTER names and the new query, as
// CREATE MATERIALIZED VIEW binds it (the same privileges and checks).
func (b *binder) bindAlterViewQuery(s *alterViewQuerySyntax, p *Parsed) (ir.Statement, error) {
	names := []string{s.Name.Name}
	if s.Name.Schema != "" {
		names = []string{s.Name.Schema, s.Name.Name}
	}
	// The view ALTER names is not a reference of the new query (nor read
	// by it: its owner alters it).
	refs := len(b.refs)
	rel, err := b.lookupNames(names)
	b.refs = b.refs[:refs]
	if err != nil {
		if se, ok := err.(*sqlerr.Error); ok && se.Code == sqlerr.UndefinedTable && s.IfExists {
			return &AlterNoop{Code: "00000", Notice: "relation \"" + s.Name.Name + "\" does not exist, skipping", tag: "ALTER MATERIALIZED VIEW"}, nil
		}
		return nil, err
	}
	if rel.Kind != catalog.MaterializedView {
		return nil, sqlerr.New(sqlerr.WrongObjectType, "\"%s\" is not a materialized view", rel.Name)
	}
	parsed, err := Parse(s.Create)
	if err != nil {
		return nil, err
	}
	if len(parsed) != 1 {
		return nil, sqlerr.New(sqlerr.SyntaxError, "ALTER MATERIALIZED VIEW ... AS takes one query")
	}
	parsed[0].session = p.session
	st, err := bind(b, parsed[0])
	if err != nil {
		// A position in the query is moved to where the ALTER has it.
		var se *sqlerr.Error
		if from := charPosition(s.Create, s.createAS); errors.As(err, &se) && se.Position >= from {
			se.Position += charPosition(p.full, p.start+s.asAt) - from
		}
		return nil, err
	}
	cmv, ok := st.(*ir.CreateMaterializedView)
	if !ok {
		return nil, sqlerr.New(sqlerr.SyntaxError, "ALTER MATERIALIZED VIEW ... AS takes a query")
	}
	return &AlterViewQuery{Rel: rel, View: cmv}, nil
}
