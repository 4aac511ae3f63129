package sql

import (
	"sort"
	"strings"

	pg_query "github.com/pganalyze/pg_query_go/v6"
	"github.com/streamsql/streamsql/ir"
	"github.com/streamsql/streamsql/sqlerr"
)

// createConnectorTableSyntax is a parsed CREATE TABLE ... [INCLUDE ...]
// WITH (connector = '...', ...) FORMAT f ENCODE e awaiting binding: the
// statement without its INCLUDE, WITH and FORMAT clauses, parsed as a
// CREATE TABLE whose column list ends with the INCLUDE columns, and the
// options (as for CREATE SOURCE).
type createConnectorTableSyntax struct {
	table   *pg_query.Node
	options map[string]string
}

func (*createConnectorTableSyntax) Tag() string { return "CREATE TABLE" }

// includeColumnTypes are the SQL types of INCLUDE columns by kind; the
// Kafka connector checks them again (kafka.IncludeType).
var includeColumnTypes = map[string]string{
	"key": "bytea", "partition": "text", "offset": "text", "timestamp": "timestamptz", "header": "bytea",
}

// parseCreateConnectorTable parses src, a CREATE TABLE statement, if it has
// a WITH option list at parenthesis depth 0 that names a connector; ok is
// false otherwise (the statement is then parsed as usual: WITH
// (fillfactor = 70) is PostgreSQL's).
//
// The INCLUDE columns are added to the column list, after the declared
// columns in the order of their names, so that PRIMARY KEY may name them
// (FORMAT UPSERT keys the table on INCLUDE key AS column).
func parseCreateConnectorTable(src string) (st ir.Statement, ok bool, err error) {
	res, err := pg_query.Scan(src)
	if err != nil {
		return nil, false, nil
	}
	toks := res.Tokens
	with := firstWithOptions(toks, 2)
	if with < 0 {
		return nil, false, nil
	}
	opts, i, err := withOptions(src, toks, with+2, "CREATE TABLE")
	if err != nil || opts["connector"] == "" {
		return nil, false, nil
	}
	if i, err = sinkFormat(src, toks, i+1, opts); err != nil {
		return nil, true, err
	}
	if i < len(toks) {
		return nil, true, sqlerr.New(sqlerr.SyntaxError, "syntax error at or near \"%s\"", src[toks[i].Start:toks[i].End])
	}
	end, err := sourceIncludes(src, toks, with, opts)
	if err != nil {
		return nil, true, err
	}
	table := strings.TrimRight(src[:toks[end].Start], " \t\r\n")
	if !strings.HasSuffix(table, ")") {
		return nil, true, sqlerr.New(sqlerr.SyntaxError, "CREATE TABLE ... WITH (connector = '%s') needs a column list", opts["connector"])
	}
	var cols []string
	for k, v := range opts {
		if col, ok := strings.CutPrefix(k, "include."); ok {
			kind, _, _ := strings.Cut(v, ":")
			typ, ok := includeColumnTypes[kind]
			if !ok {
				return nil, true, sqlerr.New(sqlerr.InvalidParameterValue, "INCLUDE %s is not a Kafka message field (key, partition, offset, timestamp, header 'name')", kind)
			}
			cols = append(cols, `"`+strings.ReplaceAll(col, `"`, `""`)+`" `+typ)
		}
	}
	sort.Strings(cols)
	if len(cols) > 0 {
		table = table[:len(table)-1] + ", " + strings.Join(cols, ", ") + ")"
	}
	parsed, err := pg_query.Parse(table)
	if err != nil {
		return nil, true, syntaxError(table, 0, err)
	}
	if len(parsed.Stmts) != 1 || parsed.Stmts[0].Stmt.GetCreateStmt() == nil {
		return nil, true, sqlerr.New(sqlerr.SyntaxError, "malformed CREATE TABLE ... WITH (connector = ...)")
	}
	return &createConnectorTableSyntax{table: parsed.Stmts[0].Stmt, options: opts}, true, nil
}

// firstWithOptions returns the index of the first WITH at parenthesis depth
// 0 from toks[from] that opens an option list, or -1.
func firstWithOptions(toks []*pg_query.ScanToken, from int) int {
	depth := 0
	for i := from; i < len(toks); i++ {
		switch toks[i].Token {
		case pg_query.Token_ASCII_40:
			depth++
		case pg_query.Token_ASCII_41:
			depth--
		case pg_query.Token_WITH:
			if depth == 0 && i+1 < len(toks) && toks[i+1].Token == pg_query.Token_ASCII_40 {
				return i
			}
		}
	}
	return -1
}

// bindCreateConnectorTable binds CREATE TABLE ... WITH (connector = ...):
// a table whose rows the connector writes (the engine checks the options
// and the key against the format). Columns have no defaults (the connector
// writes every column), and constraints the connector's writes would not
// check are refused.
func (b *binder) bindCreateConnectorTable(s *createConnectorTableSyntax) (ir.Statement, error) {
	st, err := b.bindCreateTable(s.table.GetCreateStmt())
	if err != nil {
		return nil, err
	}
	ct := st.(*ir.CreateTable)
	for _, c := range ct.Columns {
		if c.Default != "" || c.Serial {
			return nil, sqlerr.Unsupported("DEFAULT and serial columns on a table with a connector (column \"%s\")", c.Name)
		}
	}
	switch {
	case ct.Watermark != nil:
		return nil, sqlerr.Unsupported("WATERMARK FOR on a table with a connector (declare it on a CREATE SOURCE)")
	case ct.AppendOnly:
		return nil, sqlerr.Unsupported("APPEND ONLY on a table with a connector")
	case len(ct.Checks) > 0 || len(ct.Unique) > 0:
		return nil, sqlerr.Unsupported("CHECK and UNIQUE constraints on a table with a connector (its rows are not checked)")
	}
	ct.Connector = s.options
	return ct, nil
}
