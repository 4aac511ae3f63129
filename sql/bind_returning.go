package sql

import (
	pg_query "github.com/pganalyze/pg_query_go/v6"
	"github.com/streamsql/streamsql/catalog"
	"github.com/streamsql/streamsql/ir"
)

// ReturningOf is the RETURNING list of an INSERT, UPDATE or DELETE: a query
// over a CopyInput of the table's columns (all of them, hidden included)
// that the engine feeds with the rows the statement wrote (for DELETE, the
// rows it deleted). It is nil for any other statement, or without
// RETURNING.
func ReturningOf(st ir.Statement) ir.Rel {
	switch st := st.(type) {
	case *ir.Insert:
		return st.Returning
	case *ir.Update:
		return st.Returning
	case *ir.Delete:
		return st.Returning
	}
	return nil
}

// bindReturning binds a RETURNING list over table (named alias, if any).
func (b *binder) bindReturning(table *catalog.Relation, alias string, list []*pg_query.Node) (ir.Rel, error) {
	if len(list) == 0 {
		return nil, nil
	}
	sc := b.tableScope(table, alias)
	targets, err := b.bindTargets(&exprCtx{scope: sc, clause: "RETURNING"}, sc, list)
	if err != nil {
		return nil, err
	}
	in := &ir.CopyInput{}
	for _, c := range table.Columns {
		in.Cols = append(in.Cols, ir.Column{Name: c.Name, Type: c.Type, Hidden: c.Hidden})
	}
	p := &ir.Project{Input: in}
	for _, t := range targets {
		if t.hidden {
			continue
		}
		p.Exprs = append(p.Exprs, t.expr)
		p.Cols = append(p.Cols, ir.Column{Name: t.name, Type: t.expr.Type()})
	}
	return p, nil
}
