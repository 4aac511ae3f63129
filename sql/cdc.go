package sql

import (
	"strings"

	pg_query "github.com/pganalyze/pg_query_go/v6"
	"github.com/streamsql/streamsql/ir"
	"github.com/streamsql/streamsql/sqlerr"
)

// createCDCTableSyntax is a parsed CREATE TABLE ... FROM source TABLE '...'
// awaiting binding: the statement without its FROM clause, parsed as a
// CREATE TABLE.
type createCDCTableSyntax struct {
	table *pg_query.Node
	from  ir.CDCFrom
}

func (*createCDCTableSyntax) Tag() string { return "CREATE TABLE" }

// parseCreateCDCTable parses src, a CREATE TABLE statement, if it ends with
// FROM source TABLE 'name' at parenthesis depth 0; ok is false otherwise (the
// statement is then parsed as usual).
func parseCreateCDCTable(src string) (st ir.Statement, ok bool, err error) {
	res, err := pg_query.Scan(src)
	if err != nil {
		return nil, false, nil
	}
	toks := res.Tokens
	depth := 0
	for i := 2; i < len(toks); i++ {
		switch toks[i].Token {
		case pg_query.Token_ASCII_40:
			depth++
		case pg_query.Token_ASCII_41:
			depth--
		case pg_query.Token_FROM:
			if depth != 0 || i+3 != len(toks)-1 || toks[i+2].Token != pg_query.Token_TABLE || toks[i+3].Token != pg_query.Token_SCONST {
				continue
			}
			name := src[toks[i+1].Start:toks[i+1].End]
			if toks[i+1].Token == pg_query.Token_IDENT && strings.HasPrefix(name, `"`) {
				name = strings.ReplaceAll(name[1:len(name)-1], `""`, `"`)
			} else {
				name = strings.ToLower(name)
			}
			lit := src[toks[i+3].Start:toks[i+3].End]
			if len(lit) < 2 || lit[0] != '\'' {
				return nil, true, sqlerr.New(sqlerr.SyntaxError, "FROM %s TABLE needs a string literal", name)
			}
			upstream := strings.ReplaceAll(lit[1:len(lit)-1], "''", "'")
			if !strings.Contains(upstream, ".") {
				upstream = "public." + upstream
			}
			parsed, err := pg_query.Parse(src[:toks[i].Start])
			if err != nil {
				return nil, true, syntaxError(src[:toks[i].Start], 0, err)
			}
			if len(parsed.Stmts) != 1 || parsed.Stmts[0].Stmt.GetCreateStmt() == nil {
				return nil, true, sqlerr.New(sqlerr.SyntaxError, "malformed CREATE TABLE ... FROM")
			}
			return &createCDCTableSyntax{table: parsed.Stmts[0].Stmt, from: ir.CDCFrom{Source: name, Table: upstream}}, true, nil
		}
	}
	return nil, false, nil
}

// bindCreateCDCTable binds CREATE TABLE ... FROM source TABLE '...': a table
// with a primary key, without defaults or a watermark.
func (b *binder) bindCreateCDCTable(s *createCDCTableSyntax) (ir.Statement, error) {
	st, err := b.bindCreateTable(s.table.GetCreateStmt())
	if err != nil {
		return nil, err
	}
	ct := st.(*ir.CreateTable)
	if len(ct.PrimaryKey) == 0 {
		return nil, sqlerr.New(sqlerr.InvalidObjectDefinition, "a table fed by source %s needs a PRIMARY KEY (the upstream table's)", s.from.Source)
	}
	if ct.Watermark != nil || ct.AppendOnly {
		return nil, sqlerr.Unsupported("WATERMARK FOR and APPEND ONLY on a table fed by a CDC source")
	}
	if err := noDefaults(ct.Columns); err != nil {
		return nil, err
	}
	from := s.from
	ct.CDC = &from
	return ct, nil
}
