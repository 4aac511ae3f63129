package sql

import (
	"slices"
	"strings"

	pg_query "github.com/pganalyze/pg_query_go/v6"
	"github.com/streamsql/streamsql/catalog"
	"github.com/streamsql/streamsql/ir"
	"github.com/streamsql/streamsql/sqlerr"
)

// RewriteTable is an ALTER TABLE that changes how a table's rows are stored
// (ADD COLUMN, DROP COLUMN, ADD PRIMARY KEY): the engine writes every row
// again, as Rows computes it, into a new state table keyed by Key, and
// replaces the table's catalog entry with one of Columns in the same epoch.
type RewriteTable struct {
	Table *catalog.Relation
	// Columns are the table's new columns (the hidden row id included, last,
	// when the table has no primary key), Key the new key, as indices into
	// Columns, and PrimaryKey whether it is a declared primary key.
	Columns    []catalog.Column
	Key        []int
	PrimaryKey bool
	// Rows computes each stored row's new version from the old one (a
	// projection of a scan of Table), one column per new column.
	Rows ir.Rel
	// KeyName is the primary key constraint's name ("": table_pkey), which
	// a duplicate key is reported under.
	KeyName string
	// What names the change for errors ("add column", ...).
	What string
}

// RenameRelation is ALTER TABLE|MATERIALIZED VIEW|VIEW ... RENAME TO.
type RenameRelation struct {
	Rel     *catalog.Relation
	NewName string
	// Tag is the statement's command tag.
	tag string
}

// AlterColumn is ALTER TABLE ... ALTER [COLUMN] c SET DEFAULT expr | DROP
// DEFAULT | DROP NOT NULL: Column is the column as it becomes, which only
// the catalog holds (SET NOT NULL, which must check the rows, is a
// RewriteTable).
type AlterColumn struct {
	Rel    *catalog.Relation
	Index  int
	Column catalog.Column
}

func (*AlterColumn) Tag() string { return "ALTER TABLE" }

// RenameColumn is ALTER TABLE ... RENAME [COLUMN] a TO b.
type RenameColumn struct {
	Rel     *catalog.Relation
	Column  int
	NewName string
	tag     string
}

// AlterNoop is an ALTER TABLE that needs no change (ADD COLUMN IF NOT EXISTS
// of an existing column, DROP COLUMN IF EXISTS of a missing one): its
// notice is sent and nothing else is done.
type AlterNoop struct {
	Notice string
	Code   string
	// tag is the command tag ("": ALTER TABLE).
	tag string
}

func (*RewriteTable) Tag() string     { return "ALTER TABLE" }
func (s *RenameRelation) Tag() string { return s.tag }
func (s *RenameColumn) Tag() string   { return s.tag }
func (s *AlterNoop) Tag() string {
	if s.tag != "" {
		return s.tag
	}
	return "ALTER TABLE"
}

// alterTag is the command tag of ALTER of objtype.
func alterTag(objtype pg_query.ObjectType) string {
	switch objtype {
	case pg_query.ObjectType_OBJECT_MATVIEW:
		return "ALTER MATERIALIZED VIEW"
	case pg_query.ObjectType_OBJECT_VIEW:
		return "ALTER VIEW"
	}
	return "ALTER TABLE"
}

// alterKind is the relation kind ALTER of objtype expects.
func alterKind(objtype pg_query.ObjectType) catalog.Kind {
	switch objtype {
	case pg_query.ObjectType_OBJECT_MATVIEW:
		return catalog.MaterializedView
	case pg_query.ObjectType_OBJECT_VIEW:
		return catalog.View
	}
	return catalog.Table
}

// alterTarget looks up the relation ALTER names and checks its kind, with
// PostgreSQL's 42809 "is not a table" otherwise.
func (b *binder) alterTarget(rv *pg_query.RangeVar, objtype pg_query.ObjectType) (*catalog.Relation, error) {
	rel, err := b.lookup(rv)
	if err != nil {
		return nil, err
	}
	want := alterKind(objtype)
	if rel.Kind != want && !(want == catalog.Table && rel.Kind == catalog.Source) {
		return nil, b.errAt(rv.Location, sqlerr.New(sqlerr.WrongObjectType, "\"%s\" is not a %s", rel.Name, want))
	}
	return rel, nil
}

func (b *binder) bindRename(s *pg_query.RenameStmt) (ir.Statement, error) {
	switch s.RenameType {
	case pg_query.ObjectType_OBJECT_TABLE, pg_query.ObjectType_OBJECT_MATVIEW, pg_query.ObjectType_OBJECT_VIEW:
		rel, err := b.alterTarget(s.Relation, s.RenameType)
		if err != nil {
			return nil, err
		}
		return &RenameRelation{Rel: rel, NewName: s.Newname, tag: alterTag(s.RenameType)}, nil
	case pg_query.ObjectType_OBJECT_COLUMN:
		rel, err := b.alterTarget(s.Relation, s.RelationType)
		if err != nil {
			return nil, err
		}
		ci := rel.ColumnIndex(s.Subname)
		if ci < 0 || rel.Columns[ci].Hidden {
			return nil, sqlerr.New(sqlerr.UndefinedColumn, "column \"%s\" does not exist", s.Subname)
		}
		if other := rel.ColumnIndex(s.Newname); other >= 0 {
			return nil, sqlerr.New(sqlerr.DuplicateColumn, "column \"%s\" of relation \"%s\" already exists", s.Newname, rel.Name)
		}
		return &RenameColumn{Rel: rel, Column: ci, NewName: s.Newname, tag: alterTag(s.RelationType)}, nil
	}
	return nil, sqlerr.Unsupported("ALTER %s ... RENAME", objectTypeName(s.RenameType))
}

// objectTypeName renders OBJECT_FOREIGN_TABLE as "FOREIGN TABLE".
func objectTypeName(t pg_query.ObjectType) string {
	return strings.ReplaceAll(strings.TrimPrefix(t.String(), "OBJECT_"), "_", " ")
}

func (b *binder) bindAlterTable(s *pg_query.AlterTableStmt) (ir.Statement, error) {
	if len(s.Cmds) == 1 && (s.Objtype == pg_query.ObjectType_OBJECT_TABLE || s.Objtype == pg_query.ObjectType_OBJECT_MATVIEW) {
		cmd := s.Cmds[0].GetAlterTableCmd()
		if cmd.Subtype == pg_query.AlterTableType_AT_SetRelOptions || cmd.Subtype == pg_query.AlterTableType_AT_ResetRelOptions {
			return b.bindAlterRelOptions(s, cmd)
		}
	}
	if s.Objtype != pg_query.ObjectType_OBJECT_TABLE {
		return nil, sqlerr.Unsupported("%s with these options", alterTag(s.Objtype))
	}
	if len(s.Cmds) != 1 {
		return nil, sqlerr.Unsupported("ALTER TABLE with more than one action")
	}
	table, err := b.alterTarget(s.Relation, s.Objtype)
	if err != nil {
		return nil, err
	}
	if table.Kind != catalog.Table {
		return nil, b.errAt(s.Relation.Location, sqlerr.New(sqlerr.WrongObjectType, "\"%s\" is not a table", table.Name))
	}
	cmd := s.Cmds[0].GetAlterTableCmd()
	switch cmd.Subtype {
	case pg_query.AlterTableType_AT_AddColumn:
		return b.bindAddColumn(table, cmd)
	case pg_query.AlterTableType_AT_DropColumn:
		return b.bindDropColumn(table, cmd)
	case pg_query.AlterTableType_AT_ColumnDefault, pg_query.AlterTableType_AT_DropNotNull, pg_query.AlterTableType_AT_SetNotNull:
		return b.bindAlterColumn(table, cmd)
	case pg_query.AlterTableType_AT_AddConstraint:
		c := cmd.Def.GetConstraint()
		if c != nil && c.Contype == pg_query.ConstrType_CONSTR_PRIMARY {
			return b.bindAddPrimaryKey(table, c)
		}
		if c != nil && c.Contype == pg_query.ConstrType_CONSTR_UNIQUE {
			var names []string
			for _, k := range c.Keys {
				names = append(names, k.GetString_().Sval)
			}
			def, err := b.uniqueIndex(c, names, func(name string) int {
				if i := table.ColumnIndex(name); i >= 0 && !table.Columns[i].Hidden {
					return i
				}
				return -1
			})
			if err != nil {
				return nil, err
			}
			return &ir.CreateIndex{Name: def.Name, Table: table, Columns: def.Columns, Unique: true, Constraint: true}, nil
		}
		if c != nil && c.Contype == pg_query.ConstrType_CONSTR_FOREIGN {
			return b.bindAddForeignKey(table, c)
		}
		if c != nil {
			return nil, b.errAt(c.Location, sqlerr.Unsupported("ALTER TABLE ... ADD constraint %s", strings.TrimPrefix(c.Contype.String(), "CONSTR_")))
		}
	}
	return nil, sqlerr.Unsupported("ALTER TABLE ... %s", alterCommandName(cmd.Subtype))
}

// alterCommandName renders AT_SetNotNull as "SET NOT NULL"-like words
// ("SETNOTNULL" is split at capitals: "SET NOT NULL").
func alterCommandName(t pg_query.AlterTableType) string {
	name := strings.TrimPrefix(t.String(), "AT_")
	var words []string
	start := 0
	for i := 1; i <= len(name); i++ {
		if i == len(name) || (name[i] >= 'A' && name[i] <= 'Z') {
			words = append(words, strings.ToUpper(name[start:i]))
			start = i
		}
	}
	return strings.Join(words, " ")
}

// rewriteOf starts the rewrite of table: its rows projected to the columns
// keep lists (indices into table.Columns), in that order.
func rewriteOf(table *catalog.Relation, keep []int) (*RewriteTable, *ir.Project) {
	rw := &RewriteTable{Table: table, PrimaryKey: table.PrimaryKey}
	p := &ir.Project{Input: &ir.Scan{Relation: table}}
	for _, ci := range keep {
		c := table.Columns[ci]
		rw.Columns = append(rw.Columns, c)
		p.Exprs = append(p.Exprs, &ir.InputRef{Index: ci, T: c.Type, Name: c.Name})
		p.Cols = append(p.Cols, ir.Column{Name: c.Name, Type: c.Type, Hidden: c.Hidden})
	}
	rw.Rows = p
	return rw, p
}

// keyAfter maps table's key to the columns of a rewrite that keeps keep.
func keyAfter(table *catalog.Relation, keep []int) []int {
	var key []int
	for _, k := range table.Key {
		key = append(key, slices.Index(keep, k))
	}
	return key
}

// visibleThenRowID lists table's visible columns, then its row id if any.
func visibleThenRowID(table *catalog.Relation) (vis []int, rowID int) {
	rowID = -1
	for i, c := range table.Columns {
		if c.Name == catalog.RowIDColumn && c.Hidden && !table.PrimaryKey {
			rowID = i
			continue
		}
		vis = append(vis, i)
	}
	return vis, rowID
}

func (b *binder) bindAddColumn(table *catalog.Relation, cmd *pg_query.AlterTableCmd) (ir.Statement, error) {
	cd := cmd.Def.GetColumnDef()
	if table.ColumnIndex(cd.Colname) >= 0 {
		if cmd.MissingOk {
			return &AlterNoop{Code: sqlerr.DuplicateColumn, Notice: "column \"" + cd.Colname + "\" of relation \"" + table.Name + "\" already exists, skipping"}, nil
		}
		return nil, b.errAt(cd.Location, sqlerr.New(sqlerr.DuplicateColumn, "column \"%s\" of relation \"%s\" already exists", cd.Colname, table.Name))
	}
	t, serial, err := b.columnType(cd.TypeName)
	if err != nil {
		return nil, err
	}
	if serial {
		return nil, b.errAt(cd.Location, sqlerr.Unsupported("ALTER TABLE ... ADD COLUMN of a serial column"))
	}
	col := catalog.Column{Name: cd.Colname, Type: t, NotNull: cd.IsNotNull}
	if cd.RawDefault != nil {
		if err := b.setDefault(&col, table.Name, cd.RawDefault, cd.Location); err != nil {
			return nil, err
		}
	}
	for _, cn := range cd.Constraints {
		c := cn.GetConstraint()
		switch c.Contype {
		case pg_query.ConstrType_CONSTR_NOTNULL:
			col.NotNull = true
		case pg_query.ConstrType_CONSTR_NULL:
		case pg_query.ConstrType_CONSTR_DEFAULT:
			if err := b.setDefault(&col, table.Name, c.RawExpr, c.Location); err != nil {
				return nil, err
			}
		case pg_query.ConstrType_CONSTR_PRIMARY:
			return nil, b.errAt(c.Location, sqlerr.Unsupported("ADD COLUMN ... PRIMARY KEY (add the column, then ADD PRIMARY KEY)"))
		default:
			return nil, b.errAt(c.Location, sqlerr.Unsupported("constraint %s in ADD COLUMN", strings.TrimPrefix(c.Contype.String(), "CONSTR_")))
		}
	}
	def, err := b.columnDefault(col)
	if err != nil {
		return nil, err
	}
	vis, rowID := visibleThenRowID(table)
	rw, p := rewriteOf(table, vis)
	rw.What = "add column"
	rw.Columns = append(rw.Columns, col)
	p.Exprs = append(p.Exprs, def)
	p.Cols = append(p.Cols, ir.Column{Name: col.Name, Type: col.Type})
	keep := vis
	if rowID >= 0 {
		c := table.Columns[rowID]
		rw.Columns = append(rw.Columns, c)
		p.Exprs = append(p.Exprs, &ir.InputRef{Index: rowID, T: c.Type, Name: c.Name})
		p.Cols = append(p.Cols, ir.Column{Name: c.Name, Type: c.Type, Hidden: true})
		keep = append(slices.Clip(vis), -1, rowID) // -1: the new column
	}
	rw.Key = keyAfter(table, keep)
	return rw, nil
}

func (b *binder) bindDropColumn(table *catalog.Relation, cmd *pg_query.AlterTableCmd) (ir.Statement, error) {
	ci := table.ColumnIndex(cmd.Name)
	if ci < 0 || table.Columns[ci].Hidden {
		if cmd.MissingOk {
			return &AlterNoop{Code: sqlerr.UndefinedColumn, Notice: "column \"" + cmd.Name + "\" of relation \"" + table.Name + "\" does not exist, skipping"}, nil
		}
		return nil, sqlerr.New(sqlerr.UndefinedColumn, "column \"%s\" of relation \"%s\" does not exist", cmd.Name, table.Name)
	}
	if len(table.VisibleColumns()) == 1 {
		return nil, sqlerr.Unsupported("dropping the last column of a table")
	}
	var keep []int
	for i := range table.Columns {
		if i != ci {
			keep = append(keep, i)
		}
	}
	if slices.Contains(table.Key, ci) {
		// PostgreSQL drops the primary key with its column; streamsql would
		// have to give every row a new row id.
		return nil, sqlerr.Unsupported("dropping a primary key column (\"%s\")", cmd.Name)
	}
	rw, _ := rewriteOf(table, keep)
	rw.What = "drop column"
	rw.Key = keyAfter(table, keep)
	return rw, nil
}

func (b *binder) bindAddPrimaryKey(table *catalog.Relation, c *pg_query.Constraint) (ir.Statement, error) {
	if table.PrimaryKey {
		return nil, b.errAt(c.Location, sqlerr.New(sqlerr.InvalidTableDefinition, "multiple primary keys for table \"%s\" are not allowed", table.Name))
	}
	vis, _ := visibleThenRowID(table)
	rw, _ := rewriteOf(table, vis)
	rw.What = "add primary key"
	rw.PrimaryKey = true
	rw.KeyName = c.Conname
	for _, k := range c.Keys {
		name := k.GetString_().Sval
		ci := slices.IndexFunc(rw.Columns, func(col catalog.Column) bool { return col.Name == name })
		if ci < 0 {
			return nil, b.errAt(c.Location, sqlerr.New(sqlerr.UndefinedColumn, "column \"%s\" of relation \"%s\" does not exist", name, table.Name))
		}
		if slices.Contains(rw.Key, ci) {
			return nil, b.errAt(c.Location, sqlerr.New(sqlerr.DuplicateColumn, "column \"%s\" appears twice in primary key constraint", name))
		}
		rw.Columns[ci].NotNull = true
		rw.Key = append(rw.Key, ci)
	}
	if len(c.Including) > 0 || len(c.Options) > 0 || c.Indexname != "" {
		return nil, b.errAt(c.Location, sqlerr.Unsupported("PRIMARY KEY options"))
	}
	return rw, nil
}

// renameSource is ALTER SOURCE name RENAME TO new_name, recognised from its
// tokens (PostgreSQL's grammar has no sources).
type renameSource struct {
	Name    ir.ObjectName
	NewName string
}

func (*renameSource) Tag() string { return "ALTER SOURCE" }

func (b *binder) bindRenameSource(s *renameSource) (ir.Statement, error) {
	names := []string{s.Name.Name}
	if s.Name.Schema != "" {
		names = []string{s.Name.Schema, s.Name.Name}
	}
	rel, err := b.lookupNames(names)
	if err != nil {
		return nil, err
	}
	if rel.Kind != catalog.Source {
		return nil, sqlerr.New(sqlerr.WrongObjectType, "\"%s\" is not a source", rel.Name)
	}
	return &RenameRelation{Rel: rel, NewName: s.NewName, tag: "ALTER SOURCE"}, nil
}

func (b *binder) bindAlterColumn(table *catalog.Relation, cmd *pg_query.AlterTableCmd) (ir.Statement, error) {
	ci := table.ColumnIndex(cmd.Name)
	if ci < 0 || table.Columns[ci].Hidden {
		return nil, sqlerr.New(sqlerr.UndefinedColumn, "column \"%s\" of relation \"%s\" does not exist", cmd.Name, table.Name)
	}
	col := table.Columns[ci]
	switch cmd.Subtype {
	case pg_query.AlterTableType_AT_ColumnDefault:
		if col.Serial {
			return nil, sqlerr.Unsupported("changing the default of a serial or identity column")
		}
		col.Default = ""
		if cmd.Def != nil {
			if err := b.setDefault(&col, table.Name, cmd.Def, -1); err != nil {
				return nil, err
			}
		}
	case pg_query.AlterTableType_AT_DropNotNull:
		if slices.Contains(table.Key, ci) && table.PrimaryKey {
			return nil, sqlerr.New(sqlerr.InvalidTableDefinition, "column \"%s\" is in a primary key", col.Name)
		}
		if col.Serial && col.Identity != "" {
			return nil, sqlerr.New(sqlerr.InvalidTableDefinition, "column \"%s\" of relation \"%s\" is an identity column", col.Name, table.Name)
		}
		col.NotNull = false
	case pg_query.AlterTableType_AT_SetNotNull:
		if col.NotNull {
			return &AlterNoop{}, nil
		}
		rw, _ := rewriteOf(table, seq(0, len(table.Columns)))
		rw.What = "set not null"
		rw.Key = slices.Clone(table.Key)
		rw.Columns[ci].NotNull = true
		return rw, nil
	}
	return &AlterColumn{Rel: table, Index: ci, Column: col}, nil
}

// bindAddForeignKey binds ALTER TABLE ... ADD [CONSTRAINT name] FOREIGN KEY
// (cols) REFERENCES other (cols), as pg_dump emits it after the tables:
// streamsql does not enforce foreign keys, so the statement checks that
// the tables and columns exist and then does nothing but say so (a NOTICE
// with 0A000), which lets a dump's replay go on.
func (b *binder) bindAddForeignKey(table *catalog.Relation, c *pg_query.Constraint) (ir.Statement, error) {
	ref, err := b.lookup(c.Pktable)
	if err != nil {
		return nil, err
	}
	if ref.Kind != catalog.Table {
		return nil, b.errAt(c.Pktable.Location, sqlerr.New(sqlerr.WrongObjectType, "referenced relation \"%s\" is not a table", ref.Name))
	}
	for _, side := range []struct {
		rel   *catalog.Relation
		names []*pg_query.Node
	}{{table, c.FkAttrs}, {ref, c.PkAttrs}} {
		for _, n := range side.names {
			name := n.GetString_().Sval
			if i := side.rel.ColumnIndex(name); i < 0 || side.rel.Columns[i].Hidden {
				return nil, b.errAt(c.Location, sqlerr.New(sqlerr.UndefinedColumn, "column \"%s\" referenced in foreign key constraint does not exist", name))
			}
		}
	}
	name := c.Conname
	if name == "" {
		name = table.Name + "_fkey"
	}
	return &AlterNoop{Code: sqlerr.FeatureNotSupported,
		Notice: "foreign key constraint \"" + name + "\" on table \"" + table.Name + "\" is not enforced and not recorded: streamsql does not support foreign keys"}, nil
}
