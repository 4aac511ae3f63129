package sql

import (
	"strings"

	pg_query "github.com/pganalyze/pg_query_go/v6"
	"github.com/streamsql/streamsql/catalog"
	"github.com/streamsql/streamsql/ir"
	"github.com/streamsql/streamsql/sqlerr"
	"github.com/streamsql/streamsql/types"
)

// bindTableClauses applies the dialect clauses of CREATE TABLE and CREATE
// SOURCE (WATERMARK FOR, APPEND ONLY) to ct.
func (b *binder) bindTableClauses(ct *ir.CreateTable) error {
	ct.AppendOnly = b.takeClause(clauseAppendOnly) != nil
	c := b.takeClause(clauseWatermark)
	if c == nil {
		return nil
	}
	if again := b.takeClause(clauseWatermark); again != nil {
		return sqlerr.New(sqlerr.InvalidTableDefinition, "a table has at most one watermark").At(charPosition(b.full, again.start))
	}
	col := -1
	for i, cc := range ct.Columns {
		if cc.Name == c.column {
			col = i
		}
	}
	if col < 0 {
		return sqlerr.New(sqlerr.UndefinedColumn, "column \"%s\" named in WATERMARK FOR does not exist", c.column).At(charPosition(b.full, c.start))
	}
	if k := ct.Columns[col].Type.Kind; k != types.Timestamp && k != types.TimestampTZ {
		return sqlerr.New(sqlerr.DatatypeMismatch, "watermark column \"%s\" is %s; a watermark needs a timestamp or timestamp with time zone column",
			c.column, ct.Columns[col].Type).At(charPosition(b.full, c.start))
	}
	rel := &catalog.Relation{Name: ct.Name, Columns: ct.Columns}
	if _, err := b.bindWatermarkExpr(rel, col, c.expr, c.exprOff); err != nil {
		return err
	}
	ct.Watermark = &catalog.Watermark{Column: col, Expr: c.expr}
	return nil
}

// BindWatermark binds the watermark expression of rel (rel.Watermark must be
// set): an expression over rel's columns of the watermark column's type.
func BindWatermark(rel *catalog.Relation) (ir.Expr, error) {
	b := &binder{full: rel.Watermark.Expr}
	return b.bindWatermarkExpr(rel, rel.Watermark.Column, rel.Watermark.Expr, 0)
}

// bindWatermarkExpr binds text, found at byte offset off of b.full, as the
// watermark expression of column col of rel.
func (b *binder) bindWatermarkExpr(rel *catalog.Relation, col int, text string, off int) (ir.Expr, error) {
	const prefix = "SELECT "
	res, err := pg_query.Parse(prefix + text)
	if err != nil {
		return nil, syntaxError(b.full, off-len(prefix), err)
	}
	sel := res.Stmts[0].Stmt.GetSelectStmt()
	if len(res.Stmts) != 1 || sel == nil || len(sel.TargetList) != 1 || sel.FromClause != nil || sel.WhereClause != nil {
		return nil, sqlerr.New(sqlerr.SyntaxError, "malformed watermark expression").At(charPosition(b.full, off))
	}
	sub := &binder{cat: b.cat, full: b.full, base: off - len(prefix)}
	target := sel.TargetList[0].GetResTarget()
	if target.Name != "" {
		// "ts - INTERVAL '1' x" reads as ts - INTERVAL '1' AS x.
		at := off + max(0, strings.LastIndex(strings.ToLower(text), target.Name))
		return nil, sqlerr.New(sqlerr.SyntaxError, "syntax error at or near \"%s\"", target.Name).At(charPosition(b.full, at))
	}
	ctx := &exprCtx{scope: sub.tableScope(rel, ""), clause: "WATERMARK FOR"}
	e, err := sub.bindExpr(ctx, target.Val)
	if err != nil {
		return nil, err
	}
	want := rel.Columns[col].Type
	if e.Type().Kind == types.Unknown {
		if e, err = sub.coerce(e, want, exprLocation(target.Val)); err != nil {
			return nil, err
		}
	}
	if e.Type().Kind != want.Kind {
		return nil, sqlerr.New(sqlerr.DatatypeMismatch, "watermark expression is %s; it must be %s like column \"%s\"",
			e.Type(), want, rel.Columns[col].Name).At(charPosition(b.full, off))
	}
	var bad error
	ir.Walk(e, func(x ir.Expr) bool {
		switch x := x.(type) {
		case *ir.InputRef:
			if x.Index != col {
				bad = sqlerr.New(sqlerr.InvalidColumnReference, "a watermark expression may use only its column \"%s\", not \"%s\"",
					rel.Columns[col].Name, rel.Columns[x.Index].Name).At(charPosition(b.full, off))
			}
		case *ir.Call:
			if x.Fn == ir.FnNow {
				bad = sqlerr.New(sqlerr.FeatureNotSupported, "now() in a watermark expression").At(charPosition(b.full, off))
			}
		}
		return bad == nil
	})
	if bad != nil {
		return nil, bad
	}
	return e, nil
}
