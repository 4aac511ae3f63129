package sql

import (
	"slices"

	pg_query "github.com/pganalyze/pg_query_go/v6"
	"github.com/streamsql/streamsql/catalog"
	"github.com/streamsql/streamsql/ir"
	"github.com/streamsql/streamsql/sqlerr"
	"github.com/streamsql/streamsql/types"
	"google.golang.org/protobuf/proto"
)

// bindInsertClauses binds INSERT's RETURNING and ON CONFLICT clauses.
func (b *binder) bindInsertClauses(ins *ir.Insert, s *pg_query.InsertStmt) error {
	alias := dmlAlias(s.Relation)
	var err error
	if ins.Returning, err = b.bindReturning(ins.Table, alias, s.ReturningList); err != nil {
		return err
	}
	if s.OnConflictClause != nil {
		ins.OnConflict, err = b.bindOnConflict(ins.Table, alias, s.OnConflictClause)
	}
	return err
}

func (b *binder) bindOnConflict(table *catalog.Relation, alias string, c *pg_query.OnConflictClause) (*ir.OnConflict, error) {
	oc := &ir.OnConflict{Update: c.Action == pg_query.OnConflictAction_ONCONFLICT_UPDATE}
	if c.Infer == nil && oc.Update {
		return nil, b.errAt(c.Location, sqlerr.New(sqlerr.SyntaxError, "ON CONFLICT DO UPDATE requires inference specification or constraint name").
			WithHint("For example, ON CONFLICT (column_name)."))
	}
	if c.Infer != nil {
		if err := b.checkConflictTarget(table, c.Infer); err != nil {
			return nil, err
		}
	}
	if !oc.Update {
		return oc, nil
	}
	sc := b.tableScope(table, alias)
	in := &ir.CopyInput{}
	for _, side := range []string{"", "excluded"} {
		for _, col := range table.Columns {
			in.Cols = append(in.Cols, ir.Column{Name: col.Name, Type: col.Type, Hidden: col.Hidden})
			if side != "" {
				sc.cols = append(sc.cols, scopeCol{table: side, name: col.Name, t: col.Type, hidden: col.Hidden})
			}
		}
	}
	set, err := b.bindSetList(table, sc, c.TargetList, nil, "ON CONFLICT DO UPDATE")
	if err != nil {
		return nil, err
	}
	for ci := range set {
		if slices.Contains(table.Key, ci) {
			return nil, sqlerr.Unsupported("ON CONFLICT DO UPDATE SET of a primary key column (\"%s\")", table.Columns[ci].Name)
		}
	}
	p := &ir.Project{Input: in}
	for i, col := range table.Columns {
		e, ok := set[i]
		if !ok {
			e = &ir.InputRef{Index: i, T: col.Type, Name: col.Name}
		}
		p.Exprs = append(p.Exprs, e)
		p.Cols = append(p.Cols, ir.Column{Name: col.Name, Type: col.Type, Hidden: col.Hidden})
	}
	var cond ir.Expr = &ir.Const{Value: types.DBool(true), T: types.BoolT}
	if c.WhereClause != nil {
		if cond, err = b.bindExpr(&exprCtx{scope: sc, clause: "WHERE"}, c.WhereClause); err != nil {
			return nil, err
		}
		if cond.Type().Kind != types.Bool && cond.Type().Kind != types.Unknown {
			return nil, b.errAt(exprLocation(c.WhereClause), sqlerr.New(sqlerr.DatatypeMismatch, "argument of WHERE must be type boolean, not type %s", cond.Type()))
		}
		if cond, err = b.castTo(cond, types.BoolT, exprLocation(c.WhereClause), false); err != nil {
			return nil, err
		}
	}
	p.Exprs = append(p.Exprs, cond)
	p.Cols = append(p.Cols, ir.Column{Name: "?update?", Type: types.BoolT, Hidden: true})
	oc.Set = p
	return oc, nil
}

// checkConflictTarget accepts an ON CONFLICT target that names the table's
// primary key: its columns in any order, or its constraint's name.
func (b *binder) checkConflictTarget(table *catalog.Relation, inf *pg_query.InferClause) error {
	noMatch := b.errAt(inf.Location, sqlerr.New("42P10", "there is no unique or exclusion constraint matching the ON CONFLICT specification"))
	if inf.Conname != "" {
		name := table.PrimaryKeyName
		if name == "" {
			name = table.Name + "_pkey"
		}
		if !table.PrimaryKey || inf.Conname != name {
			return b.errAt(inf.Location, sqlerr.New(sqlerr.UndefinedObject, "constraint \"%s\" for table \"%s\" does not exist", inf.Conname, table.Name))
		}
		return nil
	}
	if inf.WhereClause != nil {
		return b.errAt(inf.Location, sqlerr.Unsupported("ON CONFLICT with a WHERE on its target"))
	}
	var cols []int
	for _, n := range inf.IndexElems {
		el := n.GetIndexElem()
		if el == nil || el.Name == "" {
			return b.errAt(inf.Location, sqlerr.Unsupported("ON CONFLICT on an expression"))
		}
		ci := table.ColumnIndex(el.Name)
		if ci < 0 || table.Columns[ci].Hidden {
			return b.errAt(inf.Location, sqlerr.New(sqlerr.UndefinedColumn, "column \"%s\" does not exist", el.Name))
		}
		if !slices.Contains(cols, ci) {
			cols = append(cols, ci)
		}
	}
	if !table.PrimaryKey || len(cols) != len(table.Key) {
		return noMatch
	}
	for _, k := range table.Key {
		if !slices.Contains(cols, k) {
			return noMatch
		}
	}
	return nil
}

// bindSetList binds the assignments of UPDATE SET or ON CONFLICT DO UPDATE
// SET over sc: col = expr, col = DEFAULT, and (a, b) = (x, y) or
// (a, b) = (SELECT x, y ...), each value cast to its column's type, by
// column index. subs receives scalar subqueries (nil: none allowed).
func (b *binder) bindSetList(table *catalog.Relation, sc *scope, list []*pg_query.Node, subs *subqueries, clause string) (map[int]ir.Expr, error) {
	set := map[int]ir.Expr{}
	for _, t := range list {
		rt := t.GetResTarget()
		if len(rt.Indirection) > 0 {
			return nil, b.errAt(rt.Location, sqlerr.Unsupported("assignment to a field or subscript"))
		}
		idx := table.ColumnIndex(rt.Name)
		if idx < 0 || table.Columns[idx].Hidden {
			return nil, b.errAt(rt.Location, sqlerr.New(sqlerr.UndefinedColumn, "column \"%s\" of relation \"%s\" does not exist", rt.Name, table.Name))
		}
		if _, dup := set[idx]; dup {
			return nil, b.errAt(rt.Location, sqlerr.New(sqlerr.DuplicateColumn, "multiple assignments to same column \"%s\"", rt.Name))
		}
		b.noteColumn(table.ID, rt.Name, catalog.PrivUpdate)
		val, err := b.multiAssignValue(rt)
		if err != nil {
			return nil, err
		}
		var e ir.Expr
		_, isDefault := val.Node.(*pg_query.Node_SetToDefault)
		if c := table.Columns[idx]; c.Identity == "always" && !isDefault {
			return nil, b.errAt(rt.Location, sqlerr.New("428C9", "column \"%s\" can only be updated to DEFAULT", c.Name).
				WithDetail("Column \""+c.Name+"\" is an identity column defined as GENERATED ALWAYS."))
		}
		if isDefault {
			if table.Columns[idx].Serial {
				return nil, b.errAt(rt.Location, sqlerr.Unsupported("SET %s = DEFAULT on a serial column", rt.Name))
			}
			if e, err = b.columnDefault(table.Columns[idx]); err != nil {
				return nil, err
			}
		} else if e, err = b.bindExpr(&exprCtx{scope: sc, clause: clause, subs: subs}, val); err != nil {
			return nil, err
		}
		if set[idx], err = b.assign(e, table.Columns[idx], rt.Location); err != nil {
			return nil, err
		}
	}
	return set, nil
}

// multiAssignValue returns the value a SET target assigns: its own, or for
// one column of (a, b) = (x, y) its item of the row, and of (a, b) =
// (SELECT x, y ...) the subquery reduced to that column's output (the
// subquery is evaluated once per column).
func (b *binder) multiAssignValue(rt *pg_query.ResTarget) (*pg_query.Node, error) {
	m, ok := rt.Val.Node.(*pg_query.Node_MultiAssignRef)
	if !ok {
		return rt.Val, nil
	}
	ref := m.MultiAssignRef
	mismatch := b.errAt(rt.Location, sqlerr.New(sqlerr.SyntaxError, "number of columns does not match number of values"))
	switch src := ref.Source.Node.(type) {
	case *pg_query.Node_RowExpr:
		if len(src.RowExpr.Args) != int(ref.Ncolumns) {
			return nil, mismatch
		}
		return src.RowExpr.Args[ref.Colno-1], nil
	case *pg_query.Node_SubLink:
		if t := src.SubLink.SubLinkType; t != pg_query.SubLinkType_EXPR_SUBLINK && t != pg_query.SubLinkType_MULTIEXPR_SUBLINK {
			break
		}
		sel := src.SubLink.Subselect.GetSelectStmt()
		if sel == nil || len(sel.TargetList) == 0 || sel.Op != pg_query.SetOperation_SETOP_NONE {
			return nil, b.errAt(rt.Location, sqlerr.Unsupported("this subquery in a multiple-column assignment"))
		}
		if len(sel.TargetList) != int(ref.Ncolumns) {
			return nil, mismatch
		}
		one := proto.Clone(src.SubLink).(*pg_query.SubLink)
		one.SubLinkType = pg_query.SubLinkType_EXPR_SUBLINK
		s := one.Subselect.GetSelectStmt()
		s.TargetList = []*pg_query.Node{s.TargetList[ref.Colno-1]}
		return &pg_query.Node{Node: &pg_query.Node_SubLink{SubLink: one}}, nil
	}
	return nil, b.errAt(rt.Location, sqlerr.New(sqlerr.SyntaxError, "source for a multiple-column UPDATE item must be a sub-SELECT or ROW() expression"))
}

// bindDMLFrom binds UPDATE ... FROM's or DELETE ... USING's items (nil
// when there are none), returning them and sc extended with their columns.
func (b *binder) bindDMLFrom(sc *scope, items []*pg_query.Node) (ir.Rel, *scope, error) {
	if len(items) == 0 {
		return nil, sc, nil
	}
	from, fsc, err := b.bindFrom(items)
	if err != nil {
		return nil, nil, err
	}
	return from, concatScopes(sc, fsc), nil
}
