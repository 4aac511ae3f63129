// Package catalog describes the relations streamsql knows: tables, views and
// materialized views, their columns and keys, the state tables that hold
// them, the schemas they are in, and how views depend on each other.
//
// The Catalog is an in-memory index guarded by a lock; the engine persists
// every Relation (as JSON, see Encode) in the catalog state table inside the
// same epoch commit as the state it describes, so that after a restart the
// catalog and the state always agree.
package catalog

import (
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync"

	"github.com/streamsql/streamsql/types"
)

// Kind is the kind of a relation.
type Kind uint8

const (
	// Table is a relation fed by INSERT, UPDATE and DELETE.
	Table Kind = iota + 1
	// MaterializedView is a relation maintained by a dataflow.
	MaterializedView
	// SystemTable is a read-only relation computed by the engine when read
	// (streamsql_views, ...). System tables are not persisted.
	SystemTable
	// Source is a relation whose rows come from a connector. Every view that
	// reads it runs its own reader, which records its position in the view's
	// state at each checkpoint and resumes from it after a restart.
	Source
	// View is a plain view: a stored query, bound in place of its name
	// wherever it is read. It has no state and no dataflow of its own.
	View
	// Sink is a dataflow like a materialized view's whose change stream goes
	// to a connector (Options) instead of into stored rows. It cannot be
	// read.
	Sink
)

func (k Kind) String() string {
	switch k {
	case Table:
		return "table"
	case MaterializedView:
		return "materialized view"
	case SystemTable:
		return "system table"
	case Source:
		return "source"
	case View:
		return "view"
	case Sink:
		return "sink"
	}
	return fmt.Sprintf("kind(%d)", k)
}

// RowIDColumn is the name of the hidden key column of tables declared
// without a primary key, and of views whose rows have no natural key.
const RowIDColumn = "_row_id"

// Column is one column of a relation.
type Column struct {
	Name string  `json:"name"`
	Type types.T `json:"type"`
	// Hidden columns (row ids, stream key columns a view does not project) are
	// stored but not shown by SELECT *.
	Hidden  bool `json:"hidden,omitempty"`
	NotNull bool `json:"not_null,omitempty"`
	// Default is the SQL text of a table column's DEFAULT expression.
	Default string `json:"default,omitempty"`
	// Serial columns (serial, bigserial, smallserial) take the next value of
	// the table's sequence for that column by default (see SequenceTable).
	Serial bool `json:"serial,omitempty"`
	// Comment is the column's COMMENT ON COLUMN text ("": none).
	Comment string `json:"comment,omitempty"`
	// Identity is "always" or "by default" for an identity column (GENERATED
	// ... AS IDENTITY), which is also Serial; "" otherwise.
	Identity string `json:"identity,omitempty"`
}

// Check is a table's CHECK constraint: a row whose Expr (SQL text over the
// table's columns) is false is refused; NULL passes.
type Check struct {
	Name string `json:"name"`
	Expr string `json:"expr"`
}

// Relation is a table, view, materialized view, source or system table.
type Relation struct {
	ID   uint32 `json:"id"`
	Name string `json:"name"`
	// Database is the database the relation is in; entries stored before
	// databases existed have none and are in DefaultDatabase (see Decode).
	// System tables have none: they are in every database.
	Database string `json:"database,omitempty"`
	// Schema is the schema the relation is in. Entries stored before
	// schemas existed have none and are in Public (see Decode).
	Schema  string   `json:"schema,omitempty"`
	Kind    Kind     `json:"kind"`
	Columns []Column `json:"columns"`
	// Key lists the columns that identify a row (the primary key, the hidden
	// row id, or a view's stream key), as indices into Columns.
	Key []int `json:"key"`
	// PrimaryKey is true if Key is a declared primary key (inserting a
	// duplicate is an error) rather than a generated row id.
	PrimaryKey bool `json:"primary_key,omitempty"`
	// StateTable holds the relation's rows, keyed by Key.
	StateTable uint32 `json:"state_table"`
	// SQL is the text of a view's defining statement.
	SQL string `json:"sql,omitempty"`
	// Refs are the relations a view's defining statement names, each with
	// the position of its name in SQL: binding the statement again (at a
	// restart, or a plain view where it is read) resolves each name to the
	// same relation, whatever the search path or the relations created since.
	// Views stored before Refs existed have none; their names are resolved
	// in Public, and their DependsOn are their references.
	Refs []Ref `json:"refs,omitempty"`
	// OperatorTables are the state tables of a view's operators in plan order
	// (excluding StateTable); rebuilding the same plan on restart assigns them
	// to the same operators.
	OperatorTables []uint32 `json:"operator_tables,omitempty"`
	// DependsOn lists the relations a materialized view's dataflow reads
	// (plain views it names are replaced by what they read).
	DependsOn []uint32 `json:"depends_on,omitempty"`
	// Options are a source's or a sink's connector options (WITH (...)),
	// and a table's or materialized view's retain_history.
	Options map[string]string `json:"options,omitempty"`
	// PauseTable keeps a view's input changes while it is paused; Paused says
	// whether it is (ALTER MATERIALIZED VIEW ... PAUSE).
	PauseTable uint32 `json:"pause_table,omitempty"`
	Paused     bool   `json:"paused,omitempty"`
	// BackfillTable holds the positions of a materialized view's backfills
	// (one per input from a table or view; see exec.Backfill). Views created
	// before backfills existed have none: they were filled when created.
	BackfillTable uint32 `json:"backfill_table,omitempty"`
	// Watermark is the WATERMARK FOR clause of a table or source, or nil.
	Watermark *Watermark `json:"watermark,omitempty"`
	// AppendOnly tables and sources only ever insert rows (UPDATE and DELETE
	// are refused), so operators over them keep no retraction state.
	AppendOnly bool `json:"append_only,omitempty"`
	// WatermarkColumns are the columns of a materialized view that carry
	// watermarks (derived from its query's inputs).
	WatermarkColumns []int `json:"watermark_columns,omitempty"`
	// WatermarkTable holds the watermark a table has reached, so that it
	// never goes back after a restart (tables with a Watermark only).
	WatermarkTable uint32 `json:"watermark_table,omitempty"`
	// SequenceTable holds the counters of a table's serial columns, written
	// in the epochs of the rows that used them.
	SequenceTable uint32 `json:"sequence_table,omitempty"`
	// HistoryTable holds the retained history of a table or materialized
	// view (its change log, engine/retain_history.go), written with its rows;
	// 0 for relations created without a retention (none set, and the
	// server's default none), until ALTER ... SET (retain_history) gives
	// them one. Options[retain_history] is
	// its retention as written ("": the server's default).
	HistoryTable uint32 `json:"history_table,omitempty"`
	// CDCOffsetTable holds the position of the connector feeding a table,
	// written with its rows: the last applied upstream LSN of a table fed by
	// a CDC source (Options cdc.source, cdc.table), or the next offset of
	// each partition of a table fed by Kafka (Options connector = 'kafka').
	CDCOffsetTable uint32 `json:"cdc_offset_table,omitempty"`
	// AtLeastOnce is set for views created with checkpoint_mode =
	// 'at_least_once': their multi-input operators do not align barriers.
	AtLeastOnce bool `json:"at_least_once,omitempty"`
	// JoinOrder is set for views whose inner joins the planner orders by
	// their predicates and whose interval joins key their rows with their
	// time columns (every view created since join ordering exists); older
	// views keep the plan their operator state was built for.
	JoinOrder bool `json:"join_order,omitempty"`
	// Parallelism is the number of actors the partitioned fragment of a
	// view's or sink's dataflow runs on (streaming_parallelism at CREATE;
	// 0 for views created before parallel dataflows: one).
	Parallelism int `json:"parallelism,omitempty"`
	// IntervalSpans is set for views that group, make distinct and count
	// distinct intervals by their span ('1 mon' = '30 days'; every view
	// created since); older views keep intervals apart by spelling, as
	// their operator state was built.
	IntervalSpans bool `json:"interval_spans,omitempty"`
	// Indexes are a table's secondary indexes (CREATE INDEX).
	Indexes []Index `json:"indexes,omitempty"`
	// TimeZone is the TimeZone of the session that created a materialized
	// view ("": UTC): its zone-dependent expressions are bound in it, also
	// when a restart rebuilds its plan.
	TimeZone string `json:"time_zone,omitempty"`
	// Functions are the SQL functions a view's defining statement calls,
	// each with the position of its name in SQL, pinned as Refs are.
	// CallsFunctions are all the functions inlined into the view, also
	// through other functions, and ReadsThrough the relations their bodies
	// read: the view depends on them for DROP.
	Functions      []Ref    `json:"functions,omitempty"`
	CallsFunctions []uint32 `json:"calls_functions,omitempty"`
	ReadsThrough   []uint32 `json:"reads_through,omitempty"`
	// Checks are a table's CHECK constraints.
	Checks []Check `json:"checks,omitempty"`
	// Comment is the relation's COMMENT ON text ("": none).
	Comment string `json:"comment,omitempty"`
	// PrimaryKeyName is the name of a table's primary key constraint when
	// one was given (ADD CONSTRAINT name PRIMARY KEY); "" is name_pkey.
	PrimaryKeyName string `json:"primary_key_name,omitempty"`
	// Replaces is set on the entry of a materialized view's new query while
	// ALTER MATERIALIZED VIEW ... AS backfills it: the id of the view it
	// will replace. Such an entry is not a relation of its own (it is never
	// in a Catalog); a restart finding one drops it and its state, so the
	// view keeps its old query.
	Replaces uint32 `json:"replaces,omitempty"`
}

// Index is a secondary index of a table: its state table holds one entry
// per row, keyed by the index columns then the table's key (so entries are
// unique and lead back to their row), valued by the INCLUDE columns. The
// table writes a row's entries in the same epoch as the row.
type Index struct {
	Name    string `json:"name"`
	Columns []int  `json:"columns"`
	// Desc records DESC columns. Entries are stored in ascending order
	// whatever the direction: lookups do not depend on it.
	Desc       []bool `json:"desc,omitempty"`
	Include    []int  `json:"include,omitempty"`
	StateTable uint32 `json:"state_table"`
	// Unique indexes refuse a second row with the same non-NULL index
	// columns (UNIQUE constraints, CREATE UNIQUE INDEX); the index's name
	// is the constraint's.
	Unique bool `json:"unique,omitempty"`
}

// WithIndexes returns a copy of r with the given indexes.
func (r *Relation) WithIndexes(idx []Index) *Relation {
	c := *r
	c.Indexes = idx
	return &c
}

// Ref is a relation named in a view's defining statement: the byte offset
// of the name in the statement's text, and the relation's id.
type Ref struct {
	Loc int32  `json:"loc"`
	ID  uint32 `json:"id"`
}

// Uses returns the ids of the relations a view's definition names directly:
// the relations it depends on for DROP.
// Relations read by the bodies of the functions it calls count too.
func (r *Relation) Uses() []uint32 {
	if len(r.Refs) == 0 && len(r.ReadsThrough) == 0 {
		return r.DependsOn
	}
	ids := make([]uint32, 0, len(r.Refs)+len(r.ReadsThrough))
	for _, ref := range r.Refs {
		if !slices.Contains(ids, ref.ID) {
			ids = append(ids, ref.ID)
		}
	}
	for _, id := range r.ReadsThrough {
		if !slices.Contains(ids, id) {
			ids = append(ids, id)
		}
	}
	return ids
}

// QualifiedName is the relation's name with its schema: "s.t".
func (r *Relation) QualifiedName() string { return r.Schema + "." + r.Name }

// Watermark is a relation's event-time watermark: rows whose Column is below
// the largest value of Expr seen so far are late. Expr is SQL text over the
// relation's columns (it uses only Column), bound again when the relation is
// loaded (sql.BindWatermark).
type Watermark struct {
	Column int    `json:"column"`
	Expr   string `json:"expr"`
}

// VisibleColumns returns the indices of the columns SELECT * shows.
func (r *Relation) VisibleColumns() []int {
	var idx []int
	for i, c := range r.Columns {
		if !c.Hidden {
			idx = append(idx, i)
		}
	}
	return idx
}

// ColumnIndex returns the index of the column named name, or -1.
func (r *Relation) ColumnIndex(name string) int {
	for i, c := range r.Columns {
		if c.Name == name {
			return i
		}
	}
	return -1
}

// Types returns the types of all columns.
func (r *Relation) Types() []types.T {
	ts := make([]types.T, len(r.Columns))
	for i, c := range r.Columns {
		ts[i] = c.Type
	}
	return ts
}

// Encode returns the persistent form of r.
func (r *Relation) Encode() ([]byte, error) { return json.Marshal(r) }

// Decode parses the persistent form of a relation.
func Decode(b []byte) (*Relation, error) {
	r := &Relation{}
	if err := json.Unmarshal(b, r); err != nil {
		return nil, fmt.Errorf("catalog: corrupt relation entry: %w", err)
	}
	if r.Schema == "" {
		r.Schema = Public
	}
	if r.Database == "" {
		r.Database = DefaultDatabase
	}
	return r, nil
}

// Schema is a namespace of relations (CREATE SCHEMA). Public and PgCatalog
// always exist and are not stored.
type Schema struct {
	ID   uint32 `json:"id"`
	Name string `json:"name"`
	// Database is the database the schema is in (DefaultDatabase for
	// entries stored before databases existed).
	Database string `json:"database,omitempty"`
}

const (
	// Public is the default schema: where names are created and found
	// unless the search path says otherwise, and where the relations of
	// catalogs from before schemas live.
	Public = "public"
	// PgCatalog holds the system tables. It is searched before the search
	// path unless the path names it, as in PostgreSQL.
	PgCatalog = "pg_catalog"
)

// Encode returns the persistent form of s.
func (s *Schema) Encode() ([]byte, error) { return json.Marshal(s) }

// DecodeSchema parses the persistent form of a schema.
func DecodeSchema(b []byte) (*Schema, error) {
	s := &Schema{}
	if err := json.Unmarshal(b, s); err != nil {
		return nil, fmt.Errorf("catalog: corrupt schema entry: %w", err)
	}
	if s.Database == "" {
		s.Database = DefaultDatabase
	}
	return s, nil
}

// Catalog indexes relations by database, schema and name, and by id, and
// holds the databases and schemas. A Catalog value is a handle on one
// database (In returns a handle on another): names are created and found in
// its database, while ids, All and Dependents span every database. Handles
// are safe for concurrent use; they share one index. Relations are
// immutable once added: a change replaces the entry.
type Catalog struct {
	idx *index
	db  string
}

type index struct {
	mu        sync.RWMutex
	byName    map[qualName]*Relation
	byID      map[uint32]*Relation
	schemas   map[schemaName]*Schema
	databases map[string]*Database
	funcs     map[uint32]*Function
}

// qualName is a relation's name in its database. System tables have no
// database: they are in every database's pg_catalog.
type qualName struct{ db, schema, name string }

type schemaName struct{ db, name string }

// New returns a catalog holding only the default database and its built-in
// schemas, as a handle on the default database.
func New() *Catalog {
	c := &Catalog{idx: &index{
		byName:    map[qualName]*Relation{},
		byID:      map[uint32]*Relation{},
		schemas:   map[schemaName]*Schema{},
		databases: map[string]*Database{},
		funcs:     map[uint32]*Function{},
	}, db: DefaultDatabase}
	c.AddDatabase(&Database{Name: DefaultDatabase})
	return c
}

// In returns a handle on database db (which need not exist).
func (c *Catalog) In(db string) *Catalog { return &Catalog{idx: c.idx, db: db} }

// DatabaseName is the name of the handle's database.
func (c *Catalog) DatabaseName() string { return c.db }

// Lookup returns the relation named name, or nil. name is "schema.name" or
// an unqualified name, looked up in pg_catalog and then public.
func (c *Catalog) Lookup(name string) *Relation {
	if schema, rel, ok := strings.Cut(name, "."); ok {
		return c.LookupIn(schema, rel)
	}
	return c.Resolve(nil, name)
}

// LookupIn returns the relation name in schema, or nil.
func (c *Catalog) LookupIn(schema, name string) *Relation {
	c.idx.mu.RLock()
	defer c.idx.mu.RUnlock()
	return c.lookupLocked(schema, name)
}

func (c *Catalog) lookupLocked(schema, name string) *Relation {
	if r := c.idx.byName[qualName{c.db, schema, name}]; r != nil {
		return r
	}
	if schema == PgCatalog || schema == InformationSchema {
		return c.idx.byName[qualName{"", schema, name}]
	}
	return nil
}

// Resolve returns the relation an unqualified name means under a search
// path: the first found in pg_catalog (unless the path names it) and then
// in each schema of path in order; nil if there is none. A nil path is
// public alone.
func (c *Catalog) Resolve(path []string, name string) *Relation {
	c.idx.mu.RLock()
	defer c.idx.mu.RUnlock()
	for _, schema := range effectivePath(path) {
		if r := c.lookupLocked(schema, name); r != nil {
			return r
		}
	}
	return nil
}

// effectivePath is the list of schemas an unqualified name is looked up in.
func effectivePath(path []string) []string {
	if path == nil {
		path = []string{Public}
	}
	if slices.Contains(path, PgCatalog) {
		return path
	}
	return append([]string{PgCatalog}, path...)
}

// CreationSchema returns the schema unqualified names are created in under
// a search path: its first schema that exists; "" if none does.
func (c *Catalog) CreationSchema(path []string) string {
	if path == nil {
		path = []string{Public}
	}
	c.idx.mu.RLock()
	defer c.idx.mu.RUnlock()
	for _, s := range path {
		if c.idx.schemas[schemaName{c.db, s}] != nil {
			return s
		}
	}
	return ""
}

// Visible reports whether r is what its unqualified name means under path.
func (c *Catalog) Visible(path []string, r *Relation) bool {
	return c.Resolve(path, r.Name) == r
}

// Schema returns the schema named name, or nil.
func (c *Catalog) Schema(name string) *Schema {
	c.idx.mu.RLock()
	defer c.idx.mu.RUnlock()
	return c.idx.schemas[schemaName{c.db, name}]
}

// AddSchema adds s; a schema without a database goes to the handle's.
func (c *Catalog) AddSchema(s *Schema) {
	if s.Database == "" {
		s.Database = c.db
	}
	c.idx.mu.Lock()
	defer c.idx.mu.Unlock()
	c.idx.schemas[schemaName{s.Database, s.Name}] = s
}

// RemoveSchema removes the schema named name. Its relations must have been
// removed.
func (c *Catalog) RemoveSchema(name string) {
	c.idx.mu.Lock()
	defer c.idx.mu.Unlock()
	delete(c.idx.schemas, schemaName{c.db, name})
}

// Schemas returns the schemas of the handle's database, ordered by name.
func (c *Catalog) Schemas() []*Schema {
	c.idx.mu.RLock()
	defer c.idx.mu.RUnlock()
	var out []*Schema
	for k, s := range c.idx.schemas {
		if k.db == c.db {
			out = append(out, s)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// InSchema returns the relations in schema, ordered by id.
func (c *Catalog) InSchema(schema string) []*Relation {
	var out []*Relation
	for _, r := range c.All() {
		if r.Database == c.db && r.Schema == schema {
			out = append(out, r)
		}
	}
	return out
}

// NormalizeName is the name an index is known by: indexes are not in
// schemas yet (one namespace), and public.i names i.
func NormalizeName(name string) string {
	return strings.TrimPrefix(name, "public.")
}

// LookupIndex returns the index named name and its table, or nils.
func (c *Catalog) LookupIndex(name string) (*Relation, *Index) {
	name = NormalizeName(name)
	c.idx.mu.RLock()
	defer c.idx.mu.RUnlock()
	for _, r := range c.idx.byID {
		if r.Database != c.db {
			continue
		}
		for i := range r.Indexes {
			if r.Indexes[i].Name == name {
				return r, &r.Indexes[i]
			}
		}
	}
	return nil, nil
}

// ByID returns the relation with id, or nil.
func (c *Catalog) ByID(id uint32) *Relation {
	c.idx.mu.RLock()
	defer c.idx.mu.RUnlock()
	return c.idx.byID[id]
}

// Add adds or replaces r. A relation without a schema goes to public; one
// without a database to the handle's, except system tables, which are in
// every database.
func (c *Catalog) Add(r *Relation) {
	if r.Schema == "" {
		r.Schema = Public
	}
	if r.Database == "" && r.Kind != SystemTable {
		r.Database = c.db
	}
	c.idx.mu.Lock()
	defer c.idx.mu.Unlock()
	if old := c.idx.byID[r.ID]; old != nil {
		delete(c.idx.byName, old.qualName())
	}
	c.idx.byName[r.qualName()] = r
	c.idx.byID[r.ID] = r
}

func (r *Relation) qualName() qualName { return qualName{r.Database, r.Schema, r.Name} }

// Remove removes the relation with id.
func (c *Catalog) Remove(id uint32) {
	c.idx.mu.Lock()
	defer c.idx.mu.Unlock()
	if r := c.idx.byID[id]; r != nil {
		delete(c.idx.byName, r.qualName())
		delete(c.idx.byID, id)
	}
}

// All returns every relation of every database ordered by id (creation
// order), so that views come after the relations they depend on.
func (c *Catalog) All() []*Relation {
	c.idx.mu.RLock()
	defer c.idx.mu.RUnlock()
	rs := make([]*Relation, 0, len(c.idx.byID))
	for _, r := range c.idx.byID {
		rs = append(rs, r)
	}
	sort.Slice(rs, func(i, j int) bool { return rs[i].ID < rs[j].ID })
	return rs
}

// Dependents returns the views whose definitions name relation id.
func (c *Catalog) Dependents(id uint32) []*Relation {
	var deps []*Relation
	for _, r := range c.All() {
		if slices.Contains(r.Uses(), id) {
			deps = append(deps, r)
		}
	}
	return deps
}
