package planner

import (
	"github.com/streamsql/streamsql/ir"
	"github.com/streamsql/streamsql/types"
)

// windowTopN plans, in a streaming plan, a filter that bounds a ranking
// window function as a group TopN:
//
//	SELECT ... FROM (SELECT ..., row_number() OVER (PARTITION BY g ORDER BY k) AS rn FROM t) WHERE rn <= N
//
// (also rank() and dense_rank(), with <, <=, =, >, >= and BETWEEN against
// integer constants), so that the view keeps each partition's top rows and
// refills them from state, instead of renumbering the whole partition on
// every change. ok is false when pred and w do not have that shape (w must
// have that one call).
func (b *builder) windowTopN(w *ir.Window, pred ir.Expr) (Node, bool, error) {
	if !b.stream || len(w.Calls) != 1 {
		return nil, false, nil
	}
	var kind ir.RankKind
	switch w.Calls[0].Func {
	case ir.WinRowNumber:
		kind = ir.RowNumber
	case ir.WinRank:
		kind = ir.Rank
	case ir.WinDenseRank:
		kind = ir.DenseRank
	default:
		return nil, false, nil
	}
	rankCol := len(w.Input.Columns())
	low, high := int64(1), int64(-1) // rank numbers kept: [low, high]
	var rest []ir.Expr
	for _, c := range ir.Conjuncts(pred) {
		if l, h, ok := rankBound(c, rankCol); ok {
			low, high = max(low, l), minBound(high, h)
			continue
		}
		if refersTo(c, rankCol) {
			return nil, false, nil
		}
		rest = append(rest, c)
	}
	if high < 0 {
		return nil, false, nil // no upper bound: not a TopN
	}
	in, err := b.build(w.Input)
	if err != nil {
		return nil, true, err
	}
	exprs := append(append([]ir.Expr{}, w.PartitionBy...), windowKeyExprs(w.OrderBy)...)
	in, cols := b.keyColumns(in, exprs)
	group := cols[:len(w.PartitionBy)]
	keys := make([]ir.SortKey, len(w.OrderBy))
	for i, k := range w.OrderBy {
		keys[i] = ir.SortKey{Column: cols[len(w.PartitionBy)+i], Desc: k.Desc, NullsFirst: k.NullsFirst}
	}
	limit := max(0, high-low+1)
	t, err := b.topN(in, group, keys, low-1, limit, kind, w.Cols[rankCol].Name)
	if err != nil {
		return nil, true, err
	}
	var out Node = t
	if len(t.Columns()) != rankCol+1 {
		// Back to the Window's layout, its input's columns then the rank,
		// without the computed key columns and the hidden stream key
		// columns of the planned input (the projection keeps those it
		// needs, hidden, after the rank).
		var keep []ir.Expr
		var keepCols []ir.Column
		for i, c := range t.Columns() {
			if i < rankCol || i == len(t.Columns())-1 {
				keep = append(keep, &ir.InputRef{Index: i, T: c.Type, Name: c.Name})
				keepCols = append(keepCols, c)
			}
		}
		out = b.project(t, keep, keepCols)
	}
	if len(rest) > 0 {
		out = &Filter{Input: out, Pred: conjunction(rest)}
	}
	return out, true, nil
}

func windowKeyExprs(keys []ir.WindowKey) []ir.Expr {
	out := make([]ir.Expr, len(keys))
	for i, k := range keys {
		out[i] = k.Expr
	}
	return out
}

func minBound(a, b int64) int64 {
	if a < 0 {
		return b
	}
	return min(a, b)
}

// rankBound reads c as a bound of column col against an integer constant
// and returns the rank numbers it keeps, [low, high] (high -1: unbounded).
func rankBound(c ir.Expr, col int) (low, high int64, ok bool) {
	call, isCall := c.(*ir.Call)
	if !isCall || len(call.Args) != 2 {
		return 0, 0, false
	}
	flip := map[string]string{ir.FnLt: ir.FnGt, ir.FnLe: ir.FnGe, ir.FnGt: ir.FnLt, ir.FnGe: ir.FnLe, ir.FnEq: ir.FnEq}
	op, a, k := call.Fn, call.Args[0], call.Args[1]
	if _, known := flip[op]; !known {
		return 0, 0, false
	}
	if isRankColumn(k, col) {
		a, k, op = k, a, flip[op]
	}
	v, isInt := intConst(k)
	if !isRankColumn(a, col) || !isInt {
		return 0, 0, false
	}
	switch op {
	case ir.FnLt:
		return 1, max(v-1, 0), true
	case ir.FnLe:
		return 1, max(v, 0), true
	case ir.FnEq:
		return max(v, 1), max(v, 0), true
	case ir.FnGt:
		return v + 1, -1, true
	default: // >=
		return max(v, 1), -1, true
	}
}

// isRankColumn reports whether e is column col, or a cast of it (rank
// numbers compared with an integer of another width).
func isRankColumn(e ir.Expr, col int) bool {
	if c, ok := e.(*ir.Cast); ok {
		e = c.Arg
	}
	return isColumn(e, col)
}

func intConst(e ir.Expr) (int64, bool) {
	if c, ok := e.(*ir.Cast); ok {
		e = c.Arg
	}
	c, ok := e.(*ir.Const)
	if !ok || c.Value.Null {
		return 0, false
	}
	switch c.T.Kind {
	case types.Int16, types.Int32, types.Int64:
		return c.Value.I, true
	}
	return 0, false
}

func refersTo(e ir.Expr, col int) bool {
	found := false
	ir.Walk(e, func(x ir.Expr) bool {
		if ref, ok := x.(*ir.InputRef); ok && ref.Index == col {
			found = true
		}
		return !found
	})
	return found
}
