package planner

import (
	"fmt"
	"strings"

	"github.com/streamsql/streamsql/ir"
	"github.com/streamsql/streamsql/types"
)

// Window computes window function calls over its input (ir.Window): its
// output is the input's columns, then one column per call. Every partition
// and order key and every argument that varies by row is an input column
// (the planner projects expressions before the Window).
//
// In a streaming plan the rows of every partition are kept in state table
// Table, keyed by the partition key, the ORDER BY key and the input's stream
// key, which is also the output's stream key; a batch plan has no table
// (Table -1) and sorts its input in memory.
type Window struct {
	Input          Node
	PartitionCols  []int
	PartitionTypes []types.T
	Order          []WindowOrder
	Calls          []WindowCall
	Cols           []ir.Column
	Table          int
	// InputKey is the input's stream key (streaming plans), of types
	// InputKeyTypes.
	InputKey      []int
	InputKeyTypes []types.T
	// PassWatermarks is set, for EMIT ON WINDOW CLOSE, when the first ORDER
	// BY column carries a watermark w, ascending, no call's result can
	// change once w has passed its row (frames end at the current row or
	// before; no lead, ntile, percent_rank or cume_dist), and a LateFilter
	// keeps late rows out: later rows sort after every row below w, so the
	// output's changes after w are all at or above it, and the column's
	// watermark passes (after the epoch's rows).
	PassWatermarks bool
}

// WindowOrder is one ORDER BY key of a Window: an input column.
type WindowOrder struct {
	Col        int
	T          types.T
	Desc       bool
	NullsFirst bool
}

// WindowCall is one call of a Window; see ir.WindowCall for the functions
// and their arguments.
type WindowCall struct {
	Func string
	// ArgCol is the column of the value argument (of type ArgType); -1 for
	// the ranking functions and count(*).
	ArgCol  int
	ArgType types.T
	// DefaultCol is the column of lag's and lead's default; -1 otherwise.
	DefaultCol int
	// Param is the constant argument: lag's and lead's offset, ntile's
	// buckets, nth_value's n; nil for the other functions.
	Param ir.Expr
	// FilterCol is the boolean column of an aggregate's FILTER, or -1.
	FilterCol   int
	Frame       ir.WindowFrame
	IgnoreNulls bool
	T           types.T
}

func (n *Window) Columns() []ir.Column { return n.Cols }
func (n *Window) StreamKey() []int     { return n.InputKey }
func (n *Window) Inputs() []Node       { return []Node{n.Input} }

// window builds a Window, with a Project before it when keys or arguments
// are expressions, and one after it dropping them again.
func (b *builder) window(r *ir.Window) (Node, error) {
	if r.SessionGap > 0 {
		return b.sessionOver(r)
	}
	in, err := b.build(r.Input)
	if err != nil {
		return nil, err
	}
	inCols := in.Columns()
	exprs := make([]ir.Expr, len(inCols))
	for i, c := range inCols {
		exprs[i] = &ir.InputRef{Index: i, T: c.Type, Name: c.Name}
	}
	var check []ir.Expr
	col := func(e ir.Expr) int {
		check = append(check, e)
		if ref, ok := e.(*ir.InputRef); ok {
			return ref.Index
		}
		exprs = append(exprs, e)
		return len(exprs) - 1
	}
	n := &Window{Table: -1}
	for _, e := range r.PartitionBy {
		n.PartitionCols = append(n.PartitionCols, col(e))
		n.PartitionTypes = append(n.PartitionTypes, e.Type())
	}
	for _, k := range r.OrderBy {
		n.Order = append(n.Order, WindowOrder{Col: col(k.Expr), T: k.Expr.Type(), Desc: k.Desc, NullsFirst: k.NullsFirst})
	}
	for _, c := range r.Calls {
		wc := WindowCall{Func: c.Func, ArgCol: -1, DefaultCol: -1, FilterCol: -1, Frame: c.Frame, IgnoreNulls: c.IgnoreNulls, T: c.T}
		switch c.Func {
		case ir.WinNtile:
			wc.Param = c.Args[0]
		case ir.WinLag, ir.WinLead:
			wc.ArgCol, wc.ArgType = col(c.Args[0]), c.Args[0].Type()
			wc.Param = c.Args[1]
			if !isNullConst(c.Args[2]) {
				wc.DefaultCol = col(c.Args[2])
			}
		case ir.WinNthValue, ir.AggStringAgg:
			wc.ArgCol, wc.ArgType = col(c.Args[0]), c.Args[0].Type()
			wc.Param = c.Args[1]
		default:
			if len(c.Args) > 0 {
				wc.ArgCol, wc.ArgType = col(c.Args[0]), c.Args[0].Type()
			}
		}
		if c.Filter != nil {
			wc.FilterCol = col(c.Filter)
		}
		n.Calls = append(n.Calls, wc)
	}
	if err := b.checkExprs(check...); err != nil {
		return nil, err
	}
	if len(exprs) > len(inCols) {
		cols := append([]ir.Column(nil), inCols...)
		for i := len(inCols); i < len(exprs); i++ {
			cols = append(cols, ir.Column{Name: fmt.Sprintf("$win%d", i-len(inCols)), Type: exprs[i].Type(), Hidden: true})
		}
		in = b.project(in, exprs, cols)
	}
	// The Rel's output is its input's columns, then the calls; the planned
	// input may have more columns (projected keys and arguments, hidden
	// stream key columns), which come before the calls here.
	relIn := len(r.Input.Columns())
	n.Input = in
	n.Cols = append([]ir.Column(nil), in.Columns()...)
	n.Cols = append(n.Cols, r.Cols[relIn:]...)
	if b.stream {
		n.Table = b.table()
		n.InputKey = in.StreamKey()
		cols := in.Columns()
		for _, k := range n.InputKey {
			n.InputKeyTypes = append(n.InputKeyTypes, cols[k].Type)
		}
	}
	width := len(in.Columns())
	if width == relIn {
		return n, nil
	}
	// Back to the Rel's columns (a streaming plan keeps the stream key's,
	// hidden).
	var out []ir.Expr
	for i, c := range in.Columns()[:relIn] {
		out = append(out, &ir.InputRef{Index: i, T: c.Type, Name: c.Name})
	}
	for i := range r.Calls {
		c := n.Cols[width+i]
		out = append(out, &ir.InputRef{Index: width + i, T: c.Type, Name: c.Name})
	}
	return b.project(n, out, r.Cols), nil
}

func isNullConst(e ir.Expr) bool {
	c, ok := e.(*ir.Const)
	return ok && c.Value.Null
}

// window renders a Window for EXPLAIN.
func (e *explainer) window(depth int, n *Window) {
	in := n.Input.Columns()
	parts := make([]string, len(n.PartitionCols))
	for i, c := range n.PartitionCols {
		parts[i] = colName(in, c)
	}
	orders := make([]string, len(n.Order))
	for i, o := range n.Order {
		orders[i] = colName(in, o.Col) + " " + ir.OrderWords(o.Desc, o.NullsFirst)
	}
	calls := make([]string, len(n.Calls))
	for i, c := range n.Calls {
		calls[i] = windowCallString(c, in)
	}
	detail := fmt.Sprintf("partition_by: [%s], order_by: [%s], calls: [%s]",
		strings.Join(parts, ", "), strings.Join(orders, ", "), strings.Join(calls, ", "))
	if e.stream {
		detail += fmt.Sprintf(", stream_key: %s, state_table: %s", e.key(n), e.name(n.Table))
	}
	e.line(depth, "OverWindow", "%s", detail)
}

// windowCallString renders a call with its frame, e.g.
// "sum(v) ROWS BETWEEN 1 PRECEDING AND CURRENT ROW".
func windowCallString(c WindowCall, in []ir.Column) string {
	var args []string
	if c.ArgCol >= 0 {
		args = append(args, colName(in, c.ArgCol))
	}
	if c.Param != nil {
		args = append(args, c.Param.String())
	}
	if c.DefaultCol >= 0 {
		args = append(args, colName(in, c.DefaultCol))
	}
	name := c.Func
	if name == ir.AggCountStar {
		name, args = "count", []string{"*"}
	}
	s := fmt.Sprintf("%s(%s)", name, strings.Join(args, ", "))
	if c.IgnoreNulls {
		s += " IGNORE NULLS"
	}
	if c.FilterCol >= 0 {
		s += fmt.Sprintf(" FILTER (WHERE %s)", colName(in, c.FilterCol))
	}
	if !ir.IsRanking(c.Func) && c.Func != ir.WinLag && c.Func != ir.WinLead {
		s += " " + c.Frame.String()
	}
	return s
}

// passesWatermark reports whether the watermark of n's first ORDER BY
// column (of in) may pass n: see Window.PassWatermarks.
func passesWatermark(in Node, n *Window) bool {
	if len(n.Order) == 0 || n.Order[0].Desc || !hasWatermark(in, n.Order[0].Col) {
		return false
	}
	for _, c := range n.Calls {
		switch c.Func {
		case ir.WinLead, ir.WinNtile, ir.WinPercentRank, ir.WinCumeDist:
			return false
		case ir.WinRowNumber, ir.WinRank, ir.WinDenseRank, ir.WinLag:
			continue
		}
		switch c.Frame.End.Kind {
		case ir.BoundFollowing, ir.BoundUnboundedFollowing:
			return false
		}
	}
	return true
}
