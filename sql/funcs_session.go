package sql

import (
	pg_query "github.com/pganalyze/pg_query_go/v6"
	"github.com/streamsql/streamsql/ir"
	"github.com/streamsql/streamsql/types"
)

// ServerVersion is what version() returns: PostgreSQL's form, so that
// tools which parse it see the protocol level streamsql speaks.
const ServerVersion = "PostgreSQL 15.0 (streamsql) on x86_64-pc-linux-gnu, compiled by Go"

// bindSessionFunc binds the functions whose value is known when the
// statement is bound: the session's database and schema, the server's
// version, the type of an expression. In a materialized view they keep the
// value they had when the view was created. ok is false for other names.
func (b *binder) bindSessionFunc(name string, args []ir.Expr) (ir.Expr, bool) {
	switch {
	case name == "current_database" && len(args) == 0:
		return textConst(b.cat.DatabaseName()), true
	case name == "current_schema" && len(args) == 0:
		return b.currentSchema(), true
	case name == "version" && len(args) == 0:
		return textConst(ServerVersion), true
	case name == "pg_typeof" && len(args) == 1:
		return textConst(types.WithoutTypmod(args[0].Type()).String()), true
	}
	return nil, false
}

// bindSessionValue binds CURRENT_CATALOG and CURRENT_SCHEMA.
func (b *binder) bindSessionValue(op pg_query.SQLValueFunctionOp) (ir.Expr, bool) {
	switch op {
	case pg_query.SQLValueFunctionOp_SVFOP_CURRENT_CATALOG:
		return textConst(b.cat.DatabaseName()), true
	case pg_query.SQLValueFunctionOp_SVFOP_CURRENT_SCHEMA:
		return b.currentSchema(), true
	}
	return nil, false
}

// currentSchema is the first schema of the search path that exists, or
// NULL.
func (b *binder) currentSchema() ir.Expr {
	if s := b.cat.CreationSchema(b.path); s != "" {
		return textConst(s)
	}
	return &ir.Const{Value: types.Null, T: types.TextT}
}

func textConst(s string) *ir.Const { return &ir.Const{Value: types.DText(s), T: types.TextT} }
