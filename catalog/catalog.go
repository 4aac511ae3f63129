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
}

// Relation is a table, view, materialized view, source or system table.
type Relation struct {
	ID   uint32 `json:"id"`
	Name string `json:"name"`
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
	// Options are a source's connector options (WITH (...)).
	Options map[string]string `json:"options,omitempty"`
	// PauseTable keeps a view's input changes while it is paused; Paused says
	// whether it is (ALTER MATERIALIZED VIEW ... PAUSE).
	PauseTable uint32 `json:"pause_table,omitempty"`
	Paused     bool   `json:"paused,omitempty"`
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
	// AtLeastOnce is set for views created with checkpoint_mode =
	// 'at_least_once': their multi-input operators do not align barriers.
	AtLeastOnce bool `json:"at_least_once,omitempty"`
	// JoinOrder is set for views whose inner joins the planner orders by
	// their predicates and whose interval joins key their rows with their
	// time columns (every view created since join ordering exists); older
	// views keep the plan their operator state was built for.
	JoinOrder bool `json:"join_order,omitempty"`
	// Indexes are a table's secondary indexes (CREATE INDEX).
	Indexes []Index `json:"indexes,omitempty"`
	// Functions are the SQL functions a view's defining statement calls,
	// each with the position of its name in SQL, pinned as Refs are.
	// CallsFunctions are all the functions inlined into the view, also
	// through other functions, and ReadsThrough the relations their bodies
	// read: the view depends on them for DROP.
	Functions      []Ref    `json:"functions,omitempty"`
	CallsFunctions []uint32 `json:"calls_functions,omitempty"`
	ReadsThrough   []uint32 `json:"reads_through,omitempty"`
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
	return r, nil
}

// Schema is a namespace of relations (CREATE SCHEMA). Public and PgCatalog
// always exist and are not stored.
type Schema struct {
	ID   uint32 `json:"id"`
	Name string `json:"name"`
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
	return s, nil
}

// Catalog indexes relations by schema and name, and by id, and holds the
// schemas. It is safe for concurrent use. Relations are immutable once
// added: a change replaces the entry.
type Catalog struct {
	mu      sync.RWMutex
	byName  map[qualName]*Relation
	byID    map[uint32]*Relation
	schemas map[string]*Schema
	funcs   map[uint32]*Function
}

type qualName struct{ schema, name string }

// New returns a catalog with only the built-in schemas.
func New() *Catalog {
	return &Catalog{
		byName: map[qualName]*Relation{},
		byID:   map[uint32]*Relation{},
		schemas: map[string]*Schema{
			Public:    {Name: Public},
			PgCatalog: {Name: PgCatalog},
		},
	}
}

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
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.byName[qualName{schema, name}]
}

// Resolve returns the relation an unqualified name means under a search
// path: the first found in pg_catalog (unless the path names it) and then
// in each schema of path in order; nil if there is none. A nil path is
// public alone.
func (c *Catalog) Resolve(path []string, name string) *Relation {
	c.mu.RLock()
	defer c.mu.RUnlock()
	for _, schema := range effectivePath(path) {
		if r := c.byName[qualName{schema, name}]; r != nil {
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
	c.mu.RLock()
	defer c.mu.RUnlock()
	for _, s := range path {
		if c.schemas[s] != nil {
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
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.schemas[name]
}

// AddSchema adds s.
func (c *Catalog) AddSchema(s *Schema) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.schemas[s.Name] = s
}

// RemoveSchema removes the schema named name. Its relations must have been
// removed.
func (c *Catalog) RemoveSchema(name string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.schemas, name)
}

// Schemas returns every schema, ordered by name.
func (c *Catalog) Schemas() []*Schema {
	c.mu.RLock()
	defer c.mu.RUnlock()
	out := make([]*Schema, 0, len(c.schemas))
	for _, s := range c.schemas {
		out = append(out, s)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// InSchema returns the relations in schema, ordered by id.
func (c *Catalog) InSchema(schema string) []*Relation {
	var out []*Relation
	for _, r := range c.All() {
		if r.Schema == schema {
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
	c.mu.RLock()
	defer c.mu.RUnlock()
	for _, r := range c.byID {
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
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.byID[id]
}

// Add adds or replaces r. A relation without a schema goes to public.
func (c *Catalog) Add(r *Relation) {
	if r.Schema == "" {
		r.Schema = Public
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if old := c.byID[r.ID]; old != nil {
		delete(c.byName, qualName{old.Schema, old.Name})
	}
	c.byName[qualName{r.Schema, r.Name}] = r
	c.byID[r.ID] = r
}

// Remove removes the relation with id.
func (c *Catalog) Remove(id uint32) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if r := c.byID[id]; r != nil {
		delete(c.byName, qualName{r.Schema, r.Name})
		delete(c.byID, id)
	}
}

// All returns every relation ordered by id (creation order), so that views
// come after the relations they depend on.
func (c *Catalog) All() []*Relation {
	c.mu.RLock()
	defer c.mu.RUnlock()
	rs := make([]*Relation, 0, len(c.byID))
	for _, r := range c.byID {
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
