package ir

import "github.com/streamsql/streamsql/catalog"

// Statement is a bound statement, ready for the engine to execute.
type Statement interface {
	// Tag is the command tag of a successful execution (without row counts).
	Tag() string
}

// CreateTable is CREATE TABLE.
type CreateTable struct {
	// Schema is the schema the table is created in (the search path's
	// choice for an unqualified name).
	Schema      string
	Name        string
	IfNotExists bool
	Columns     []catalog.Column
	// PrimaryKey lists the key columns; empty if none was declared.
	PrimaryKey []int
	// Watermark is the table's WATERMARK FOR clause, or nil.
	Watermark *catalog.Watermark
	// AppendOnly tables refuse UPDATE and DELETE.
	AppendOnly bool
	// Checks are the table's CHECK constraints.
	Checks []catalog.Check
	// Unique are the table's UNIQUE constraints, each a unique index
	// (StateTable is left for the engine to allocate).
	Unique []catalog.Index
	// CDC is set for a table fed by a change-data-capture source (FROM
	// source TABLE '...'), which refuses DML.
	CDC *CDCFrom
	// Connector holds the WITH and FORMAT options of a table fed by a
	// connector (CREATE TABLE ... WITH (connector = 'kafka', ...)), as for
	// CREATE SOURCE; nil for other tables.
	Connector map[string]string
	// RetainHistory is the WITH (retain_history = ...) value, or "" (the
	// server's default); see retain_history.go.
	RetainHistory string
}

// CreateMaterializedView is CREATE MATERIALIZED VIEW name AS query.
type CreateMaterializedView struct {
	Schema      string
	Name        string
	IfNotExists bool
	Query       Rel
	// SQL is the statement's text, kept in the catalog to rebuild the view.
	SQL string
	// EmitOnWindowClose: each window's row is emitted once, final, when the
	// watermark passes the window's end.
	EmitOnWindowClose bool
	// Refs are the relations the query names (see catalog.Relation.Refs).
	Refs []catalog.Ref
	// TimeZone is the zone the query was bound in ("": UTC), which a
	// restart binds it in again (see sql/bind_timezone.go).
	TimeZone string
	// Functions, CallsFunctions and ReadsThrough are the SQL functions the
	// query calls (see catalog.Relation.Functions).
	Functions                    []catalog.Ref
	CallsFunctions, ReadsThrough []uint32
	// RetainHistory is the WITH (retain_history = ...) value, or "" (the
	// server's default); see retain_history.go.
	RetainHistory string
}

// Drop is DROP TABLE, VIEW, MATERIALIZED VIEW or SOURCE.
type Drop struct {
	Kind     catalog.Kind
	Names    []ObjectName
	IfExists bool
	Cascade  bool
	// Path is the session's search path, in which unqualified names are
	// looked up.
	Path []string
}

// CreateIndex is CREATE INDEX [IF NOT EXISTS] [name] ON table (columns)
// [INCLUDE (columns)].
type CreateIndex struct {
	// Name is empty when the statement names no index (the engine then
	// chooses one as PostgreSQL does).
	Name        string
	IfNotExists bool
	Table       *catalog.Relation
	Columns     []int
	Desc        []bool
	Include     []int
	// Unique is CREATE UNIQUE INDEX or ADD CONSTRAINT ... UNIQUE;
	// Constraint names an unnamed index as a constraint (table_cols_key).
	Unique, Constraint bool
}

// DropIndex is DROP INDEX [IF EXISTS] names.
type DropIndex struct {
	Names    []string
	IfExists bool
}

// Insert is INSERT INTO table [(columns)] VALUES ... | SELECT ...
type Insert struct {
	Table *catalog.Relation
	// Source produces exactly the table's visible columns, in catalog order,
	// already cast to the column types (missing columns take their DEFAULT,
	// or NULL), followed by one boolean column per serial column of the
	// table, in catalog order: true where the row takes the column's next
	// sequence value (the column was omitted or given DEFAULT).
	Source Rel
	// Returning is the RETURNING list, or nil (see ReturningOf).
	Returning Rel
	// OnConflict is the ON CONFLICT clause, or nil.
	OnConflict *OnConflict
}

// Update is UPDATE table SET ... WHERE ...
type Update struct {
	Table *catalog.Relation
	// Rows selects the rows to change and computes their new versions: the
	// table's columns (all of them, hidden included), then one new value
	// per table column, cast to the column's type (the old value where SET
	// does not assign it). WHERE subqueries and SET subqueries are joins.
	Rows Rel
	// Returning is the RETURNING list, or nil (see ReturningOf).
	Returning Rel
}

// Delete is DELETE FROM table WHERE ...
type Delete struct {
	Table *catalog.Relation
	// Rows selects the rows to delete: the table's columns, hidden included.
	Rows Rel
	// Returning is the RETURNING list, or nil (see ReturningOf).
	Returning Rel
}

// Select is a query returning rows to the client.
type Select struct {
	Query Rel
}

// Explain is EXPLAIN of a query or of CREATE MATERIALIZED VIEW.
type Explain struct {
	Stmt Statement
	// Analyze runs the query and reports each operator's rows and time;
	// Format is ExplainText or ExplainJSON.
	Analyze bool
	Format  string
}

// Flush waits until every write made before it is committed and visible in
// every view.
type Flush struct{}

// ShowRelations is SHOW TABLES or SHOW MATERIALIZED VIEWS.
type ShowRelations struct {
	Kind catalog.Kind
}

// SetVar is SET name = value, SET name TO DEFAULT, RESET name and RESET ALL
// (Name "all").
type SetVar struct {
	Name  string
	Value string
	Reset bool
	// Local is SET LOCAL: the value lasts until the transaction ends.
	Local bool
}

// ShowVar is SHOW name (Name "all" for every parameter).
type ShowVar struct {
	Name string
}

// TransactionKind is the kind of a transaction control statement.
type TransactionKind uint8

const (
	Begin TransactionKind = iota
	Commit
	Rollback
	// TxSavepoint, TxRelease and TxRollbackTo are SAVEPOINT name, RELEASE
	// [SAVEPOINT] name and ROLLBACK TO [SAVEPOINT] name inside a
	// transaction block (not the database savepoints of sql.Savepoint).
	TxSavepoint
	TxRelease
	TxRollbackTo
)

// Transaction is BEGIN, COMMIT or ROLLBACK (and their spellings), or a
// savepoint of a transaction block.
type Transaction struct {
	Kind TransactionKind
	// Name is the savepoint's name (TxSavepoint, TxRelease, TxRollbackTo).
	Name string
	// Isolation is BEGIN's ISOLATION LEVEL, lower case ("" if not given),
	// and ReadOnly its READ ONLY or READ WRITE (nil if neither).
	Isolation string
	ReadOnly  *bool
}

// Empty is an empty statement (only whitespace or comments).
type Empty struct{}

func (*CreateTable) Tag() string            { return "CREATE TABLE" }
func (*CreateMaterializedView) Tag() string { return "CREATE MATERIALIZED VIEW" }
func (s *Drop) Tag() string {
	switch s.Kind {
	case catalog.Table:
		return "DROP TABLE"
	case catalog.View:
		return "DROP VIEW"
	case catalog.Source:
		return "DROP SOURCE"
	case catalog.Sink:
		return "DROP SINK"
	}
	return "DROP MATERIALIZED VIEW"
}
func (s *CreateIndex) Tag() string {
	if s.Constraint {
		return "ALTER TABLE" // ADD CONSTRAINT ... UNIQUE
	}
	return "CREATE INDEX"
}
func (*DropIndex) Tag() string     { return "DROP INDEX" }
func (*Insert) Tag() string        { return "INSERT" }
func (*Update) Tag() string        { return "UPDATE" }
func (*Delete) Tag() string        { return "DELETE" }
func (*Select) Tag() string        { return "SELECT" }
func (*Explain) Tag() string       { return "EXPLAIN" }
func (*Flush) Tag() string         { return "FLUSH" }
func (*ShowRelations) Tag() string { return "SHOW" }
func (s *SetVar) Tag() string {
	if s.Reset {
		return "RESET"
	}
	return "SET"
}
func (*ShowVar) Tag() string { return "SHOW" }
func (s *Transaction) Tag() string {
	switch s.Kind {
	case Begin:
		return "BEGIN"
	case Commit:
		return "COMMIT"
	case TxSavepoint:
		return "SAVEPOINT"
	case TxRelease:
		return "RELEASE"
	}
	return "ROLLBACK"
}
func (*Empty) Tag() string { return "" }
