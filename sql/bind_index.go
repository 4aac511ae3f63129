package sql

import (
	pg_query "github.com/pganalyze/pg_query_go/v6"
	"github.com/streamsql/streamsql/ir"
	"github.com/streamsql/streamsql/sqlerr"
)

// bindCreateIndex binds CREATE INDEX over plain columns of a relation.
// Unique, partial and expression indexes are not supported.
func (b *binder) bindCreateIndex(s *pg_query.IndexStmt) (ir.Statement, error) {
	switch {
	case s.NullsNotDistinct:
		return nil, sqlerr.Unsupported("UNIQUE NULLS NOT DISTINCT")
	case s.WhereClause != nil:
		return nil, sqlerr.Unsupported("partial indexes (CREATE INDEX ... WHERE)")
	case s.Concurrent:
		return nil, sqlerr.Unsupported("CREATE INDEX CONCURRENTLY")
	case s.AccessMethod != "" && s.AccessMethod != "btree":
		return nil, sqlerr.Unsupported("index access method \"%s\"", s.AccessMethod)
	case len(s.Options) > 0:
		return nil, sqlerr.Unsupported("CREATE INDEX ... WITH (...)")
	case s.TableSpace != "":
		return nil, sqlerr.Unsupported("tablespaces")
	}
	rel, err := b.lookup(s.Relation)
	if err != nil {
		return nil, err
	}
	ci := &ir.CreateIndex{Name: s.Idxname, IfNotExists: s.IfNotExists, Table: rel, Unique: s.Unique}
	column := func(name string) (int, error) {
		i := rel.ColumnIndex(name)
		if i < 0 || rel.Columns[i].Hidden {
			return 0, sqlerr.New(sqlerr.UndefinedColumn, "column \"%s\" does not exist", name)
		}
		return i, nil
	}
	for _, p := range s.IndexParams {
		el := p.GetIndexElem()
		if el == nil || el.Name == "" {
			return nil, sqlerr.Unsupported("indexes on expressions")
		}
		if len(el.Collation) > 0 || len(el.Opclass) > 0 {
			return nil, sqlerr.Unsupported("index collations and operator classes")
		}
		c, err := column(el.Name)
		if err != nil {
			return nil, err
		}
		ci.Columns = append(ci.Columns, c)
		ci.Desc = append(ci.Desc, el.Ordering == pg_query.SortByDir_SORTBY_DESC)
	}
	for _, p := range s.IndexIncludingParams {
		el := p.GetIndexElem()
		if el == nil || el.Name == "" {
			return nil, sqlerr.Unsupported("expressions in INCLUDE")
		}
		c, err := column(el.Name)
		if err != nil {
			return nil, err
		}
		ci.Include = append(ci.Include, c)
	}
	return ci, nil
}
