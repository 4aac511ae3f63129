package planner

import (
	"github.com/streamsql/streamsql/ir"
	"github.com/streamsql/streamsql/types"
)

// Join is a hash join on equality keys, with an optional residual
// condition; in a streaming plan both inputs' rows are kept in state tables.
type Join struct {
	Type        ir.JoinType
	Left, Right Node
	// LeftKeys and RightKeys are key columns of each input, of types KeyTypes.
	LeftKeys, RightKeys []int
	KeyTypes            []types.T
	// Cond is over the left columns followed by the right columns.
	Cond ir.Expr
	Cols []ir.Column
	Key  []int
	// LeftTable and RightTable are the state table slots of the inputs' rows.
	LeftTable, RightTable int
	// WatermarkKeys are the key pairs (indices into LeftKeys/RightKeys) whose
	// columns carry watermarks on both inputs: the output columns that are
	// never NULL-padded (both for an inner join, the preserved side's for a
	// left or right join) carry the smaller one (a join on window_start).
	WatermarkKeys []int
	// CleanFirstKey is set for a join (inner or outer, see cleansState)
	// whose first key pair carries watermarks (the planner moves such a
	// pair first): the rows whose first key is below both inputs'
	// watermarks can never match again, so they are dropped from state, and
	// later ones are late. WatermarkTable (>= 0
	// with CleanFirstKey or IntervalBounds) keeps the watermarks reached.
	CleanFirstKey  bool
	WatermarkTable int
	// IntervalBounds are the conjuncts of a join's condition that bound one
	// input's time by the other's (interval joins); IndexTables[s] is the
	// state table slot indexing input s's rows by time (-1 if no bound
	// cleans it). They need WatermarkTable.
	IntervalBounds []IntervalBound
	IndexTables    [2]int
	// InputKeys identify a stored row of each input (streaming plans): its
	// stream key, plus the time columns of interval bounds. A row's
	// versions at different times are then distinct rows: an update whose
	// old version is late (dropped, so the old one stays) and whose new
	// version is not must not overwrite the old one, in the join's state
	// or in the output, whose stream key is made of these keys.
	InputKeys [2][]int
}

// Union merges inputs with identical columns (UNION ALL). In a streaming
// plan every input carries a branch column so that stream keys stay unique.
type Union struct {
	Ins  []Node
	Cols []ir.Column
	Key  []int
	// Watermarks are the columns with a watermark on every input; each
	// carries the minimum over the inputs.
	Watermarks []int
}

func (n *Join) Columns() []ir.Column  { return n.Cols }
func (n *Union) Columns() []ir.Column { return n.Cols }
func (n *Join) StreamKey() []int      { return n.Key }
func (n *Union) StreamKey() []int     { return n.Key }
func (n *Join) Inputs() []Node        { return []Node{n.Left, n.Right} }
func (n *Union) Inputs() []Node       { return n.Ins }

// Consolidate nets out the inserts and deletes of its input and emits the
// remaining rows at the end (batch plans whose joins emit retractions).
type Consolidate struct {
	Input Node
}

func (n *Consolidate) Columns() []ir.Column { return n.Input.Columns() }
func (n *Consolidate) StreamKey() []int     { return nil }
func (n *Consolidate) Inputs() []Node       { return []Node{n.Input} }

// Expand repeats each input row as many times as its column Count says,
// appending the copy's ordinal (1..n); in a streaming plan the ordinal
// extends the input's stream key.
type Expand struct {
	Input Node
	Count int
	Cols  []ir.Column
	Key   []int
}

func (n *Expand) Columns() []ir.Column { return n.Cols }
func (n *Expand) StreamKey() []int     { return n.Key }
func (n *Expand) Inputs() []Node       { return []Node{n.Input} }

// WatermarkOutputs returns the output columns that carry the watermark of
// key pair p (one of WatermarkKeys).
func (n *Join) WatermarkOutputs(p int) []int {
	l, r := n.LeftKeys[p], len(n.Left.Columns())+n.RightKeys[p]
	switch n.Type {
	case ir.LeftJoin:
		return []int{l}
	case ir.RightJoin:
		return []int{r}
	}
	return []int{l, r}
}
