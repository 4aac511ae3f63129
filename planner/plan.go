// Package planner turns bound queries (ir.Rel trees) into executable plans:
// streaming plans for materialized views, with stream keys and state tables
// derived for every operator, and batch plans for queries. It also renders
// plans for EXPLAIN.
package planner

import (
	"github.com/streamsql/streamsql/catalog"
	"github.com/streamsql/streamsql/ir"
	"github.com/streamsql/streamsql/types"
)

// Node is an operator of a physical plan. Nodes are immutable once planned.
type Node interface {
	// Columns describes the node's output rows.
	Columns() []ir.Column
	// StreamKey lists the output columns that identify a row of the node's
	// output stream (streaming plans only; nil in batch plans).
	StreamKey() []int
	// Inputs returns the node's inputs.
	Inputs() []Node
}

// Scan reads a table or materialized view: in a streaming plan, a snapshot
// of its committed rows (backfill) followed by its change stream; in a batch
// plan, the snapshot only.
type Scan struct {
	Relation *catalog.Relation
	Alias    string
	Cols     []ir.Column
	Key      []int
	// OffsetTable is, for a scan of a source in a streaming plan, the state
	// table slot where the view's reader records its position; -1 otherwise.
	OffsetTable int
	// Lookup is, in a batch plan, what the Filter right above the scan pins
	// the first key columns to (PinnedKey): the scan reads only those keys
	// (the Filter still applies).
	Lookup [][]ir.Expr
	// Range is, in a batch plan, what that Filter says about the key column
	// after the pinned ones (RangedKey): the scan reads only the key ranges
	// it allows.
	Range *RangeCond
	// Index is, in a batch plan whose Filter pins none of the key, the
	// secondary index the scan reads the rows through (ChooseIndex), or nil.
	Index *IndexLookup
}

// Values produces constant rows (batch plans only).
type Values struct {
	Rows [][]ir.Expr
	Cols []ir.Column
}

// Series is generate_series (batch plans only).
type Series struct {
	Start, Stop, Step ir.Expr
	Col               ir.Column
	Zone              string // see ir.GenerateSeries
}

// Filter keeps the rows for which Pred is true.
type Filter struct {
	Input Node
	Pred  ir.Expr
}

// Project computes Exprs over its input.
type Project struct {
	Input Node
	Exprs []ir.Expr
	Cols  []ir.Column
	Key   []int
	// Watermarks are the output columns that carry watermarks, derived from
	// the input's (streaming plans).
	Watermarks []WatermarkMap
}

// HashAgg groups by GroupCols and computes Calls; its output is the group
// columns followed by one column per call.
type HashAgg struct {
	Input      Node
	GroupCols  []int
	GroupTypes []types.T
	Calls      []ir.AggCall // Arg and Filter are nil here: see ArgCols, FilterCols
	ArgCols    []int
	ArgTypes   []types.T
	FilterCols []int
	Cols       []ir.Column
	// ResultTable is the state table slot of the group states; ValueSets[i]
	// is the slot of call i's value set, or -1.
	ResultTable int
	ValueSets   []int
	// InputKey is the input's stream key (streaming plans), of types
	// InputKeyTypes.
	InputKey      []int
	InputKeyTypes []types.T
	// WatermarkGroup is the group column (an index into GroupCols, always
	// 0 when set: the planner puts it first so that the state is ordered by
	// it) whose input column carries a watermark, or -1. Groups below the
	// watermark are final: their state is dropped and later rows for them
	// are late. WatermarkTable is the state table slot of the watermark the
	// operator has reached.
	WatermarkGroup int
	WatermarkTable int
	// EmitOnWindowClose: a group's row is emitted once, when the watermark
	// passes it, instead of on every change (needs WatermarkGroup).
	EmitOnWindowClose bool
}

// Materialize stores its input in the view's state table, keyed by Key.
type Materialize struct {
	Input Node
	Cols  []ir.Column
	Key   []int
}

// Sort orders the rows (batch plans only).
type Sort struct {
	Input Node
	Keys  []ir.SortKey
}

// Limit skips Offset rows and keeps Count (batch plans only; Count < 0 keeps
// all).
type Limit struct {
	Input         Node
	Offset, Count int64
}

func (n *Scan) Columns() []ir.Column        { return n.Cols }
func (n *Values) Columns() []ir.Column      { return n.Cols }
func (n *Series) Columns() []ir.Column      { return []ir.Column{n.Col} }
func (n *Filter) Columns() []ir.Column      { return n.Input.Columns() }
func (n *Project) Columns() []ir.Column     { return n.Cols }
func (n *HashAgg) Columns() []ir.Column     { return n.Cols }
func (n *Materialize) Columns() []ir.Column { return n.Cols }
func (n *Sort) Columns() []ir.Column        { return n.Input.Columns() }
func (n *Limit) Columns() []ir.Column       { return n.Input.Columns() }

func (n *Scan) StreamKey() []int        { return n.Key }
func (n *Values) StreamKey() []int      { return nil }
func (n *Series) StreamKey() []int      { return nil }
func (n *Filter) StreamKey() []int      { return n.Input.StreamKey() }
func (n *Project) StreamKey() []int     { return n.Key }
func (n *HashAgg) StreamKey() []int     { return seq(len(n.GroupCols)) }
func (n *Materialize) StreamKey() []int { return n.Key }
func (n *Sort) StreamKey() []int        { return nil }
func (n *Limit) StreamKey() []int       { return nil }

func (n *Scan) Inputs() []Node        { return nil }
func (n *Values) Inputs() []Node      { return nil }
func (n *Series) Inputs() []Node      { return nil }
func (n *Filter) Inputs() []Node      { return []Node{n.Input} }
func (n *Project) Inputs() []Node     { return []Node{n.Input} }
func (n *HashAgg) Inputs() []Node     { return []Node{n.Input} }
func (n *Materialize) Inputs() []Node { return []Node{n.Input} }
func (n *Sort) Inputs() []Node        { return []Node{n.Input} }
func (n *Limit) Inputs() []Node       { return []Node{n.Input} }

func seq(n int) []int {
	s := make([]int, n)
	for i := range s {
		s[i] = i
	}
	return s
}

// Types returns the types of cols.
func Types(cols []ir.Column) []types.T {
	ts := make([]types.T, len(cols))
	for i, c := range cols {
		ts[i] = c.Type
	}
	return ts
}
