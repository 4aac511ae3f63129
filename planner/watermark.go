package planner

import (
	"sort"

	"github.com/streamsql/streamsql/catalog"
	"github.com/streamsql/streamsql/ir"
	"github.com/streamsql/streamsql/types"
)

// WatermarkMap says that output column Out of an operator carries a
// watermark derived from the watermark of input column In: the value of Expr
// at the input watermark, where Expr is over one column (index 0, of type
// InType). A nil Expr is the identity. Expr is non-decreasing in its column,
// so rows after the input watermark map to values at or above the output
// watermark.
type WatermarkMap struct {
	In, Out int
	InType  types.T
	Expr    ir.Expr
}

// Watermarks returns the output columns of n (of a streaming plan) that
// carry watermarks, in increasing order.
func Watermarks(n Node) []int {
	switch n := n.(type) {
	case *Scan:
		return relationWatermarks(n.Relation)
	case *Filter:
		return Watermarks(n.Input)
	case *Project:
		return mapOutputs(n.Watermarks)
	case *HashAgg:
		if n.WatermarkGroup >= 0 {
			return []int{n.WatermarkGroup}
		}
	case *Expand:
		return Watermarks(n.Input)
	case *Unnest:
		// The columns before the elements keep their places.
		var cols []int
		for _, c := range Watermarks(n.Input) {
			if c < len(n.Before) {
				cols = append(cols, c)
			}
		}
		return cols
	case *Materialize:
		return Watermarks(n.Input)
	case *HopWindow:
		return mapOutputs(n.Watermarks)
	case *SessionWindow:
		// Only window_end: rows re-emitted with new bounds keep their old
		// values of every input column (see exec.SessionWindow).
		if n.Watermark {
			return []int{n.WindowEnd()}
		}
	case *Union:
		return n.Watermarks
	case *Join:
		var cols []int
		for _, p := range n.WatermarkKeys {
			cols = append(cols, n.WatermarkOutputs(p)...)
		}
		sort.Ints(cols)
		return cols
	case *TemporalFilter:
		return Watermarks(n.Input)
	case *TopN:
		if n.WatermarkTable >= 0 {
			return []int{n.GroupCols[0]}
		}
	case *Window:
		if n.PassWatermarks {
			return []int{n.Order[0].Col}
		}
	case *EowcGate:
		return []int{n.TimeCol}
	case *LateFilter:
		return Watermarks(n.Input)
	}
	return nil
}

// relationWatermarks returns the columns of rel that carry watermarks.
func relationWatermarks(rel *catalog.Relation) []int {
	if rel.Watermark != nil {
		return []int{rel.Watermark.Column}
	}
	return rel.WatermarkColumns
}

func mapOutputs(maps []WatermarkMap) []int {
	var cols []int
	for _, m := range maps {
		cols = append(cols, m.Out)
	}
	sort.Ints(cols)
	return cols
}

func hasWatermark(n Node, col int) bool {
	for _, c := range Watermarks(n) {
		if c == col {
			return true
		}
	}
	return false
}

// projectWatermarks returns the watermark maps of a projection of in by
// exprs: every expression that is non-decreasing in one input column with a
// watermark carries one.
func projectWatermarks(in Node, exprs []ir.Expr) []WatermarkMap {
	wms := Watermarks(in)
	if len(wms) == 0 {
		return nil
	}
	var maps []WatermarkMap
	for out, e := range exprs {
		col, ok := monotoneIn(e)
		if !ok || !hasWatermark(in, col) {
			continue
		}
		maps = append(maps, watermarkMap(in, col, out, e))
	}
	return maps
}

// watermarkMap is the map from input column col of in to output column out
// computed by e.
func watermarkMap(in Node, col, out int, e ir.Expr) WatermarkMap {
	t := in.Columns()[col].Type
	m := WatermarkMap{In: col, Out: out, InType: t}
	if ref, ok := e.(*ir.InputRef); !ok || ref.Index != col {
		m.Expr = ir.Rewrite(e, func(x ir.Expr) ir.Expr {
			if ref, ok := x.(*ir.InputRef); ok && ref.Index == col {
				return &ir.InputRef{Index: 0, T: ref.T, Name: ref.Name}
			}
			return x
		})
	}
	return m
}

// monotoneIn reports whether e is a non-decreasing function of one input
// column of a timestamp type, and which: the column itself, casts between
// timestamp types, the column plus or minus a constant interval, and window
// starts (tumble_start, date_bin, date_trunc) of it.
func monotoneIn(e ir.Expr) (int, bool) {
	switch e := e.(type) {
	case *ir.InputRef:
		k := e.T.Kind
		return e.Index, k == types.Timestamp || k == types.TimestampTZ
	case *ir.Cast:
		if k := e.T.Kind; k != types.Timestamp && k != types.TimestampTZ {
			return 0, false
		}
		return monotoneIn(e.Arg)
	case *ir.Call:
		if k := e.T.Kind; k != types.Timestamp && k != types.TimestampTZ {
			return 0, false
		}
		switch e.Fn {
		case ir.FnAdd, ir.FnSub:
			if isConst(e.Args[1]) {
				return monotoneIn(e.Args[0])
			}
			if e.Fn == ir.FnAdd && isConst(e.Args[0]) {
				return monotoneIn(e.Args[1])
			}
		case ir.FnTumbleStart:
			if isConst(e.Args[1]) && isConst(e.Args[2]) {
				return monotoneIn(e.Args[0])
			}
		case ir.FnDateTrunc:
			if isConst(e.Args[0]) {
				return monotoneIn(e.Args[1])
			}
		case ir.FnDateBin:
			if len(e.Args) == 3 && isConst(e.Args[0]) && isConst(e.Args[2]) {
				return monotoneIn(e.Args[1])
			}
		}
	}
	return 0, false
}

func isConst(e ir.Expr) bool {
	_, ok := e.(*ir.Const)
	return ok
}
