package planner

import (
	"fmt"
	"strings"

	"github.com/streamsql/streamsql/ir"
	"github.com/streamsql/streamsql/sqlerr"
	"github.com/streamsql/streamsql/types"
)

// HopWindow repeats every input row once per hopping window that holds its
// time column (HOP in FROM), appending window_start and window_end. Sizes
// are in microseconds; Size is a multiple of Slide.
type HopWindow struct {
	Input               Node
	TimeCol             int
	Slide, Size, Offset int64
	Cols                []ir.Column
	// Key is the input's stream key plus window_start (streaming plans).
	Key []int
	// Watermarks map the time column's watermark to the window columns and
	// pass the input's other watermarks on.
	Watermarks []WatermarkMap
}

func (n *HopWindow) Columns() []ir.Column { return n.Cols }
func (n *HopWindow) StreamKey() []int     { return n.Key }
func (n *HopWindow) Inputs() []Node       { return []Node{n.Input} }

// TemporalFilter keeps the input rows for which every bound holds at the
// epoch's now() (streaming plans only): a row enters the output when time,
// advancing with barriers, makes its bounds true, and is retracted when it
// makes them false.
type TemporalFilter struct {
	Input  Node
	Bounds []TemporalBound
	// Table is the state table slot of the rows that are or will become
	// visible, and of the time the operator has reached.
	Table int
}

// TemporalBound is Col Op now() + Delta, Col being an input column of type
// timestamp with time zone, Op one of ir.FnLt, FnLe, FnGt, FnGe, and Delta
// in microseconds.
type TemporalBound struct {
	Col   int
	Op    string
	Delta int64
}

func (n *TemporalFilter) Columns() []ir.Column { return n.Input.Columns() }
func (n *TemporalFilter) StreamKey() []int     { return n.Input.StreamKey() }
func (n *TemporalFilter) Inputs() []Node       { return []Node{n.Input} }

// hopWindow builds a HopWindow.
func (b *builder) hopWindow(r *ir.HopWindow) (Node, error) {
	in, err := b.build(r.Input)
	if err != nil {
		return nil, err
	}
	n := &HopWindow{Input: in, TimeCol: r.TimeCol, Slide: r.Slide, Size: r.Size, Offset: r.Offset, Cols: r.Cols}
	if !b.stream {
		return n, nil
	}
	width := len(in.Columns())
	n.Key = append(append([]int{}, in.StreamKey()...), width)
	for _, c := range Watermarks(in) {
		n.Watermarks = append(n.Watermarks, WatermarkMap{In: c, Out: c, InType: in.Columns()[c].Type})
		if c != r.TimeCol {
			continue
		}
		// The earliest window a later row can fall in starts size - slide
		// before the window of the watermark itself.
		t := in.Columns()[c].Type
		ts := &ir.InputRef{Index: 0, T: t}
		start := &ir.Call{Fn: ir.FnSub, T: t, Args: []ir.Expr{
			&ir.Call{Fn: ir.FnTumbleStart, T: t, Args: []ir.Expr{ts, micros(r.Slide), micros(r.Offset)}},
			micros(r.Size - r.Slide)}}
		end := &ir.Call{Fn: ir.FnAdd, T: t, Args: []ir.Expr{start, micros(r.Size)}}
		n.Watermarks = append(n.Watermarks,
			WatermarkMap{In: c, Out: width, InType: t, Expr: start},
			WatermarkMap{In: c, Out: width + 1, InType: t, Expr: end})
	}
	if m := len(r.Input.Columns()); width > m {
		return b.hopOverHiddenKey(n, m, r.Cols), nil
	}
	return n, nil
}

// hopOverHiddenKey places the window columns of n, a HopWindow whose input
// has stream key columns the query does not see after its first m columns
// (a subquery's or view's row ids), where the query sees them: right after
// those m columns, the hidden ones after the window columns.
func (b *builder) hopOverHiddenKey(n *HopWindow, m int, cols []ir.Column) Node {
	width := len(n.Input.Columns())
	n.Cols = append(append([]ir.Column(nil), n.Input.Columns()...), cols[m:]...)
	exprs := make([]ir.Expr, 0, m+2)
	for i, c := range n.Cols {
		if i < m || i >= width {
			exprs = append(exprs, &ir.InputRef{Index: i, T: c.Type, Name: c.Name})
		}
	}
	return b.project(n, exprs, cols)
}

func micros(us int64) *ir.Const {
	return &ir.Const{Value: types.DInterval(types.IntervalValue{Micros: us}), T: types.IntervalT}
}

// emitOnWindowClose makes the aggregation at the top of root emit on
// window close, or explains why it cannot.
func emitOnWindowClose(b *builder, root Node) (Node, error) {
	n := root
	var parent Node // the Project or Filter above n, nil at the root
	for {
		switch x := n.(type) {
		case *Project:
			parent, n = x, x.Input
			continue
		case *Filter:
			parent, n = x, x.Input
			continue
		case *HashAgg:
			if x.WatermarkGroup < 0 {
				return nil, sqlerr.New(sqlerr.FeatureNotSupported,
					"EMIT ON WINDOW CLOSE needs a GROUP BY column that carries a watermark: %s", noWatermark(x)).
					WithHint("Declare a watermark with WATERMARK FOR in CREATE TABLE or CREATE SOURCE, and group by window_start of TUMBLE or HOP, or window_end of SESSION, over its column.")
			}
			x.EmitOnWindowClose = true
			return root, nil
		case *TopN:
			if x.WatermarkTable < 0 {
				return nil, sqlerr.New(sqlerr.FeatureNotSupported,
					"EMIT ON WINDOW CLOSE needs a PARTITION BY (or DISTINCT ON) column that carries a watermark: %s", noWatermark(x))
			}
			x.EmitOnWindowClose = true
			return root, nil
		case *Window:
			if !passesWatermark(x.Input, x) {
				return nil, sqlerr.New(sqlerr.FeatureNotSupported,
					"EMIT ON WINDOW CLOSE on window functions needs an ascending first ORDER BY column that carries a watermark, "+
						"and frames that end at the current row (no lead, ntile, percent_rank, cume_dist or FOLLOWING): %s", noWatermark(x))
			}
			// Late rows must not reach the window: they would change the
			// results of rows already emitted.
			x.Input = &LateFilter{Input: x.Input, TimeCol: x.Order[0].Col, Table: b.table()}
			x.PassWatermarks = true
			gate := b.eowcGate(x, x.Order[0].Col)
			switch p := parent.(type) {
			case nil:
				return gate, nil
			case *Project:
				p.Input = gate
			case *Filter:
				p.Input = gate
			}
			return root, nil
		}
		return nil, sqlerr.Unsupported("EMIT ON WINDOW CLOSE on a query whose result is not a windowed aggregation, window function or TopN")
	}
}

// noWatermark names the inputs under n that carry no watermark.
func noWatermark(n Node) string {
	var names []string
	var walk func(Node)
	walk = func(n Node) {
		if s, ok := n.(*Scan); ok && len(relationWatermarks(s.Relation)) == 0 {
			names = append(names, s.Relation.Name)
		}
		for _, in := range n.Inputs() {
			walk(in)
		}
	}
	walk(n)
	switch len(names) {
	case 0:
		return "no GROUP BY column is derived from a watermark column"
	case 1:
		return fmt.Sprintf("input %s has no watermark", names[0])
	}
	return fmt.Sprintf("inputs %s have no watermark", strings.Join(names, ", "))
}

// EowcGate holds its input's rows until the watermark of column TimeCol
// passes them, then emits each once, as it is then, as an Insert: the output
// of an operator whose rows are final once the watermark has passed them
// (window functions over frames ending at the current row), emitted on
// window close. Its state table Table keeps the pending rows keyed by time
// and stream key, and the watermark reached.
type EowcGate struct {
	Input   Node
	TimeCol int
	Table   int
}

func (n *EowcGate) Columns() []ir.Column { return n.Input.Columns() }
func (n *EowcGate) StreamKey() []int     { return n.Input.StreamKey() }
func (n *EowcGate) Inputs() []Node       { return []Node{n.Input} }

func (b *builder) eowcGate(in Node, col int) *EowcGate {
	return &EowcGate{Input: in, TimeCol: col, Table: b.table()}
}

// LateFilter drops the rows whose time column is behind its watermark (or
// NULL) and passes the watermark on; Table keeps the watermark reached.
type LateFilter struct {
	Input   Node
	TimeCol int
	Table   int
}

func (n *LateFilter) Columns() []ir.Column { return n.Input.Columns() }
func (n *LateFilter) StreamKey() []int     { return n.Input.StreamKey() }
func (n *LateFilter) Inputs() []Node       { return []Node{n.Input} }
