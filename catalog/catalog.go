// Package catalog describes the relations streamsql knows: tables and
// materialized views, their columns and keys, the state tables that hold
// them, and how views depend on each other.
//
// The Catalog is an in-memory index guarded by a lock; the engine persists
// every Relation (as JSON, see Encode) in the catalog state table inside the
// same epoch commit as the state it describes, so that after a restart the
// catalog and the state always agree.
package catalog

import (
	"encoding/json"
	"fmt"
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

// Relation is a table or a materialized view.
type Relation struct {
	ID      uint32   `json:"id"`
	Name    string   `json:"name"`
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
	// SQL is the text of a view's defining query.
	SQL string `json:"sql,omitempty"`
	// OperatorTables are the state tables of a view's operators in plan order
	// (excluding StateTable); rebuilding the same plan on restart assigns them
	// to the same operators.
	OperatorTables []uint32 `json:"operator_tables,omitempty"`
	// DependsOn lists the relations a view reads.
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
	return r, nil
}

// Catalog indexes relations by name and id. It is safe for concurrent use.
// Relations are immutable once added: a change replaces the entry.
type Catalog struct {
	mu     sync.RWMutex
	byName map[string]*Relation
	byID   map[uint32]*Relation
}

// New returns an empty catalog.
func New() *Catalog {
	return &Catalog{byName: map[string]*Relation{}, byID: map[uint32]*Relation{}}
}

// NormalizeName folds a possibly schema-qualified name to the catalog's key:
// the public schema is the only schema, so "public.t" is "t".
func NormalizeName(name string) string {
	return strings.TrimPrefix(name, "public.")
}

// Lookup returns the relation named name, or nil.
func (c *Catalog) Lookup(name string) *Relation {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.byName[NormalizeName(name)]
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

// Add adds or replaces r.
func (c *Catalog) Add(r *Relation) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if old := c.byID[r.ID]; old != nil {
		delete(c.byName, old.Name)
	}
	c.byName[r.Name] = r
	c.byID[r.ID] = r
}

// Remove removes the relation with id.
func (c *Catalog) Remove(id uint32) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if r := c.byID[id]; r != nil {
		delete(c.byName, r.Name)
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

// Dependents returns the views that read relation id directly.
func (c *Catalog) Dependents(id uint32) []*Relation {
	var deps []*Relation
	for _, r := range c.All() {
		for _, d := range r.DependsOn {
			if d == id {
				deps = append(deps, r)
				break
			}
		}
	}
	return deps
}
