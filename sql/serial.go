package sql

import (
	"strings"

	pg_query "github.com/pganalyze/pg_query_go/v6"
	"github.com/streamsql/streamsql/catalog"
	"github.com/streamsql/streamsql/ir"
	"github.com/streamsql/streamsql/sqlerr"
	"github.com/streamsql/streamsql/types"
)

// Column defaults and serial columns. A DEFAULT is kept in the catalog as
// SQL text (deparsed) and bound again by each INSERT that omits the column;
// a serial column is an integer column whose default is the next value of a
// per-table counter that the table writer keeps (see Insert.Source).

// serialType returns the integer type of a serial type name (serial,
// bigserial, smallserial and their serial4/8/2 spellings).
func serialType(tn *pg_query.TypeName) (types.T, bool) {
	if tn == nil || len(tn.Names) != 1 || len(tn.ArrayBounds) > 0 {
		return types.T{}, false
	}
	switch strings.ToLower(tn.Names[0].GetString_().GetSval()) {
	case "serial", "serial4":
		return types.Int32T, true
	case "bigserial", "serial8":
		return types.Int64T, true
	case "smallserial", "serial2":
		return types.Int16T, true
	}
	return types.T{}, false
}

// columnType binds a column's type name, serial types included.
func (b *binder) columnType(tn *pg_query.TypeName) (t types.T, serial bool, err error) {
	if t, ok := serialType(tn); ok {
		return t, true, nil
	}
	t, err = b.bindTypeName(tn)
	return t, false, err
}

// setDefault gives col (of table) the DEFAULT expr, checking that it binds
// without columns and converts to the column's type.
func (b *binder) setDefault(col *catalog.Column, table string, expr *pg_query.Node, loc int32) error {
	if col.Serial || col.Default != "" {
		return b.errAt(loc, sqlerr.New(sqlerr.SyntaxError, "multiple default values specified for column \"%s\" of table \"%s\"", col.Name, table))
	}
	// Deparse SELECT expr: a parsed SELECT 1 (of the parser's version) with
	// its target replaced.
	res, err := pg_query.Parse("SELECT 1")
	if err != nil {
		return err
	}
	res.Stmts[0].Stmt.GetSelectStmt().TargetList = []*pg_query.Node{pg_query.MakeResTargetNodeWithVal(expr, 0)}
	text, err := pg_query.Deparse(res)
	if err != nil {
		return b.errAt(loc, sqlerr.New(sqlerr.SyntaxError, "malformed DEFAULT expression: %v", err))
	}
	col.Default = strings.TrimPrefix(text, "SELECT ")
	_, err = b.columnDefault(*col)
	return err
}

// columnDefault returns the value col takes when an INSERT omits it: its
// DEFAULT bound and converted to its type, or NULL (also for a serial
// column, whose value the table writer fills in).
func (b *binder) columnDefault(col catalog.Column) (ir.Expr, error) {
	if col.Default == "" {
		return &ir.Const{Value: types.Null, T: col.Type}, nil
	}
	res, err := pg_query.Parse("SELECT " + col.Default)
	if err != nil {
		return nil, sqlerr.New(sqlerr.SyntaxError, "malformed DEFAULT expression of column \"%s\": %v", col.Name, err)
	}
	target := res.Stmts[0].Stmt.GetSelectStmt().TargetList[0].GetResTarget()
	sub := &binder{cat: b.cat, full: col.Default}
	e, err := sub.bindExpr(&exprCtx{scope: &scope{}, clause: "DEFAULT"}, target.Val)
	if err != nil {
		if se, ok := err.(*sqlerr.Error); ok && se.Code == sqlerr.UndefinedColumn {
			return nil, sqlerr.New(sqlerr.FeatureNotSupported, "cannot use column reference in DEFAULT expression")
		}
		return nil, err
	}
	return sub.assign(e, col, -1)
}

// serialFlags returns the trailing boolean columns of an INSERT's source
// (see Insert.Source): for each serial column of table, whether each row
// takes the next sequence value. targets are the columns the statement
// lists (the first len(vis) of them receive source columns); flagCols, when
// the source is VALUES, are the source's columns saying which targeted
// serial columns were given DEFAULT, by target position.
func serialFlags(table *catalog.Relation, targets []int, nvis int, flagCols map[int]int) (exprs []ir.Expr, cols []ir.Column) {
	for _, ci := range table.VisibleColumns() {
		col := table.Columns[ci]
		if !col.Serial {
			continue
		}
		var e ir.Expr = &ir.Const{Value: types.DBool(true), T: types.BoolT}
		for k, ti := range targets {
			if ti != ci || k >= nvis {
				continue
			}
			e = &ir.Const{Value: types.DBool(false), T: types.BoolT}
			if fc, ok := flagCols[k]; ok {
				e = &ir.InputRef{Index: fc, T: types.BoolT}
			}
		}
		exprs = append(exprs, e)
		cols = append(cols, ir.Column{Name: col.Name + "$default", Type: types.BoolT})
	}
	return exprs, cols
}

// valuesSerialFlags appends to each row of a VALUES of an INSERT one hidden
// boolean column per targeted serial column, true where the row gives it
// DEFAULT, and returns their positions by target position.
func valuesSerialFlags(v *ir.Values, table *catalog.Relation, targets []int, defaults [][]bool) map[int]int {
	flagCols := map[int]int{}
	for k, ti := range targets {
		col := table.Columns[ti]
		if !col.Serial {
			continue
		}
		flagCols[k] = len(v.Cols)
		v.Cols = append(v.Cols, ir.Column{Name: col.Name + "$default", Type: types.BoolT, Hidden: true})
		for r := range v.Rows {
			v.Rows[r] = append(v.Rows[r], &ir.Const{Value: types.DBool(defaults[r][k]), T: types.BoolT})
		}
	}
	return flagCols
}

// noDefaults refuses DEFAULT and serial columns on a source, whose rows come
// whole from its connector.
func noDefaults(cols []catalog.Column) error {
	for _, c := range cols {
		if c.Default != "" || c.Serial {
			return sqlerr.Unsupported("DEFAULT and serial columns on a source (column \"%s\")", c.Name)
		}
	}
	return nil
}
