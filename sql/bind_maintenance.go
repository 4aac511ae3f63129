package sql

import (
	"strings"

	pg_query "github.com/pganalyze/pg_query_go/v6"
	"github.com/streamsql/streamsql/catalog"
	"github.com/streamsql/streamsql/ir"
	"github.com/streamsql/streamsql/sqlerr"
)

// Truncate is TRUNCATE [TABLE] t [, ...]: every row of each table is
// deleted, as a DELETE without WHERE would (views see the deletes).
type Truncate struct {
	Tables []*catalog.Relation
}

// Vacuum is VACUUM [ANALYZE] and ANALYZE [t, ...]. Tables hold no dead rows
// to reclaim (Pebble compacts them away), and batch queries count rows
// when planned (engine/row_counts.go): both only check the tables named.
type Vacuum struct {
	// Analyze is ANALYZE, or VACUUM with its ANALYZE option; isVacuum is
	// VACUUM (the command tag).
	Analyze, isVacuum bool
	Tables            []*catalog.Relation
}

// CommentOn is COMMENT ON TABLE|VIEW|MATERIALIZED VIEW|SOURCE|COLUMN ... IS
// '...' | NULL: Comment is kept in the relation's (or column's) catalog
// entry; NULL or ” removes it, as in PostgreSQL.
type CommentOn struct {
	Rel *catalog.Relation
	// Column is the column commented on, or -1 for the relation.
	Column  int
	Comment string
}

func (*Truncate) Tag() string { return "TRUNCATE TABLE" }
func (s *Vacuum) Tag() string {
	if s.isVacuum {
		return "VACUUM"
	}
	return "ANALYZE"
}
func (*CommentOn) Tag() string { return "COMMENT" }

func (b *binder) bindTruncate(s *pg_query.TruncateStmt) (ir.Statement, error) {
	if s.RestartSeqs {
		return nil, sqlerr.Unsupported("TRUNCATE ... RESTART IDENTITY")
	}
	t := &Truncate{}
	for _, n := range s.Relations {
		rv := n.GetRangeVar()
		rel, err := b.lookup(rv)
		if err != nil {
			return nil, err
		}
		if rel.Kind != catalog.Table {
			return nil, b.errAt(rv.Location, sqlerr.New(sqlerr.WrongObjectType, "\"%s\" is not a table", rel.Name))
		}
		if rel.AppendOnly {
			return nil, b.errAt(rv.Location, sqlerr.New(sqlerr.WrongObjectType, "cannot truncate append-only table \"%s\"", rel.Name).
				WithHint("An APPEND ONLY table accepts INSERT only."))
		}
		t.Tables = append(t.Tables, rel)
	}
	return t, nil
}

func (b *binder) bindVacuum(s *pg_query.VacuumStmt) (ir.Statement, error) {
	v := &Vacuum{Analyze: !s.IsVacuumcmd, isVacuum: s.IsVacuumcmd}
	for _, o := range s.Options {
		d := o.GetDefElem()
		if d == nil {
			continue
		}
		switch d.Defname {
		case "analyze":
			v.Analyze = true
		case "verbose", "full", "freeze", "skip_locked", "disable_page_skipping", "index_cleanup",
			"process_toast", "process_main", "truncate", "parallel", "skip_database_stats", "only_database_stats":
		default:
			return nil, b.errAt(d.Location, sqlerr.New(sqlerr.SyntaxError, "unrecognized %s option \"%s\"", v.Tag(), d.Defname))
		}
	}
	for _, n := range s.Rels {
		rv := n.GetVacuumRelation().Relation
		rel, err := b.lookup(rv)
		if err != nil {
			return nil, err
		}
		v.Tables = append(v.Tables, rel)
	}
	return v, nil
}

func (b *binder) bindComment(s *pg_query.CommentStmt) (ir.Statement, error) {
	c := &CommentOn{Comment: s.Comment, Column: -1}
	switch s.Objtype {
	case pg_query.ObjectType_OBJECT_TABLE, pg_query.ObjectType_OBJECT_VIEW, pg_query.ObjectType_OBJECT_MATVIEW:
		names := nameStrings(s.Object)
		rel, err := b.lookupNames(names)
		if err != nil {
			return nil, err
		}
		want := alterKind(s.Objtype)
		if rel.Kind != want && !(want == catalog.Table && rel.Kind == catalog.Source) {
			return nil, sqlerr.New(sqlerr.WrongObjectType, "\"%s\" is not a %s", rel.Name, want)
		}
		c.Rel = rel
	case pg_query.ObjectType_OBJECT_COLUMN:
		names := nameStrings(s.Object)
		if len(names) < 2 {
			return nil, sqlerr.New(sqlerr.SyntaxError, "column name must be qualified")
		}
		rel, err := b.lookupNames(names[:len(names)-1])
		if err != nil {
			return nil, err
		}
		col := names[len(names)-1]
		ci := rel.ColumnIndex(col)
		if ci < 0 || rel.Columns[ci].Hidden {
			return nil, sqlerr.New(sqlerr.UndefinedColumn, "column \"%s\" of relation \"%s\" does not exist", col, rel.Name)
		}
		c.Rel, c.Column = rel, ci
	default:
		return nil, sqlerr.Unsupported("COMMENT ON %s", objectTypeName(s.Objtype))
	}
	return c, nil
}

// nameStrings returns the parts of a qualified name node (a List of
// String).
func nameStrings(n *pg_query.Node) []string {
	var out []string
	for _, item := range n.GetList().GetItems() {
		out = append(out, item.GetString_().Sval)
	}
	return out
}

// lookupNames looks up a relation named [[db.]schema.]name.
func (b *binder) lookupNames(names []string) (*catalog.Relation, error) {
	rv := &pg_query.RangeVar{Location: -1}
	switch len(names) {
	case 1:
		rv.Relname = names[0]
	case 2:
		rv.Schemaname, rv.Relname = names[0], names[1]
	case 3:
		rv.Catalogname, rv.Schemaname, rv.Relname = names[0], names[1], names[2]
	default:
		return nil, sqlerr.New(sqlerr.SyntaxError, "improper qualified name (too many dotted names): %s", strings.Join(names, "."))
	}
	return b.lookup(rv)
}
