package planner

import (
	"github.com/streamsql/streamsql/sql"
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
func (b *builder) windowTopN(w *sql.Window, pred sql.Expr) (Node, bool, error) {
	if !b.stream || len(w.Calls) != 1 {
		return nil, false, nil
	}
	var kind sql.RankKind
	switch w.Calls[0].Func {
	case sql.WinRowNumber:
		kind = sql.RowNumber
	case sql.WinRank:
		kind = sql.Rank
	case sql.WinDenseRank:
		kind = sql.DenseRank
	default:
		return nil, false, nil
	}
	rankCol := len(w.Input.Columns())
	low, high := int64(1), int64(-1) // rank numbers kept: [low, high]
	var rest []sql.Expr
	for _, c := range sql.Conjuncts(pred) {
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
	exprs := append(append([]sql.Expr{}, w.PartitionBy...), windowKeyExprs(w.OrderBy)...)
	in, cols := b.keyColumns(in, exprs)
	group := cols[:len(w.PartitionBy)]
	keys := make([]sql.SortKey, len(w.OrderBy))
	for i, k := range w.OrderBy {
		keys[i] = sql.SortKey{Column: cols[len(w.PartitionBy)+i], Desc: k.Desc, NullsFirst: k.NullsFirst}
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
		var keep []sql.Expr
		var keepCols []sql.Column
		for i, c := range t.Columns() {
			if i < rankCol || i == len(t.Columns())-1 {
				keep = append(keep, &sql.InputRef{Index: i, T: c.Type, Name: c.Name})
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

func windowKeyExprs(keys []sql.WindowKey) []sql.Expr {
	out := make([]sql.Expr, len(keys))
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
func rankBound(c sql.Expr, col int) (low, high int64, ok bool) {
	call, isCall := c.(*sql.Call)
	if !isCall || len(call.Args) != 2 {
		return 0, 0, false
	}
	flip := map[string]string{sql.FnLt: sql.FnGt, sql.FnLe: sql.FnGe, sql.FnGt: sql.FnLt, sql.FnGe: sql.FnLe, sql.FnEq: sql.FnEq}
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
	case sql.FnLt:
		return 1, max(v-1, 0), true
	case sql.FnLe:
		return 1, max(v, 0), true
	case sql.FnEq:
		return max(v, 1), max(v, 0), true
	case sql.FnGt:
		return v + 1, -1, true
	default: // >=
		return max(v, 1), -1, true
	}
}

// isRankColumn reports whether e is column col, or a cast of it (rank
// numbers compared with an integer of another width).
func isRankColumn(e sql.Expr, col int) bool {
	if c, ok := e.(*sql.Cast); ok {
		e = c.Arg
	}
	return isColumn(e, col)
}

func intConst(e sql.Expr) (int64, bool) {
	if c, ok := e.(*sql.Cast); ok {
		e = c.Arg
	}
	c, ok := e.(*sql.Const)
	if !ok || c.Value.Null {
		return 0, false
	}
	switch c.T.Kind {
	case types.Int16, types.Int32, types.Int64:
		return c.Value.I, true
	}
	return 0, false
}

func refersTo(e sql.Expr, col int) bool {
	found := false
	sql.Walk(e, func(x sql.Expr) bool {
		if ref, ok := x.(*sql.InputRef); ok && ref.Index == col {
			found = true
		}
		return !found
	})
	return found
}
