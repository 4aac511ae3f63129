package sql

import (
	pg_query "github.com/pganalyze/pg_query_go/v6"
	"github.com/streamsql/streamsql/catalog"
	"github.com/streamsql/streamsql/ir"
)

// dmlRows binds the rows UPDATE or DELETE changes as a query: the rows of
// table (alias the name sc gives it) that the WHERE clause keeps, with its
// subqueries joined in as in SELECT, projected to the table's columns (all
// of them, hidden included) and, for UPDATE (set non-nil), followed by their
// new values, one column per table column. set's expressions are over sc;
// their scalar subqueries are in subs. from, if set, is UPDATE ... FROM's
// or DELETE ... USING's relation, joined to the table's rows (sc then
// covers both); a row it matches more than once is changed once (the
// engine keeps the first).
func (b *binder) dmlRows(table *catalog.Relation, alias string, sc *scope, from ir.Rel, where *pg_query.Node, set map[int]ir.Expr, subs *subqueries) (ir.Rel, error) {
	var input ir.Rel = &ir.Scan{Relation: table, Alias: alias}
	if from != nil {
		input = &ir.Join{Type: ir.InnerJoin, Left: input, Right: from}
	}
	if where != nil {
		var err error
		if input, err = b.bindWhereClause(input, sc, where); err != nil {
			return nil, err
		}
	}
	resolve := func(e ir.Expr) ir.Expr { return e }
	if subs != nil && len(subs.joins) > 0 {
		var err error
		if input, resolve, err = joinScalarSubqueries(input, subs, nil); err != nil {
			return nil, err
		}
	}
	cols := input.Columns()
	n := len(table.Columns)
	if set == nil && len(cols) == n {
		return input, nil
	}
	p := &ir.Project{Input: input}
	for i := 0; i < n; i++ {
		p.Exprs = append(p.Exprs, &ir.InputRef{Index: i, T: cols[i].Type, Name: cols[i].Name})
		p.Cols = append(p.Cols, cols[i])
	}
	if set != nil {
		for i := 0; i < n; i++ {
			e, ok := set[i]
			if ok {
				e = resolve(e)
			} else {
				e = p.Exprs[i]
			}
			p.Exprs = append(p.Exprs, e)
			p.Cols = append(p.Cols, ir.Column{Name: cols[i].Name, Type: cols[i].Type, Hidden: true})
		}
	}
	return p, nil
}

// dmlAlias is the name UPDATE or DELETE gives its table, if any.
func dmlAlias(rv *pg_query.RangeVar) string {
	if rv.Alias != nil {
		return rv.Alias.Aliasname
	}
	return ""
}
