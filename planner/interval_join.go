package planner

import (
	"github.com/streamsql/streamsql/ir"
	"github.com/streamsql/streamsql/types"
)

// IntervalBound is a conjunct of a join's condition (ON, for an outer join)
// that bounds the time of one input by the other's, both columns carrying
// watermarks:
//
//	Clean's time column >= (or >) the other input's time column + Offset
//
// Once the other input's watermark w passes, a stored row of input Clean
// with time < w + Offset can match no row that is still to come, so it is
// dropped from state. Cols are the time columns of the left and right
// inputs (indices into each input's columns); Offset is in microseconds.
type IntervalBound struct {
	Clean  int
	Cols   [2]int
	Offset int64
}

// intervalBounds finds the interval bounds of a join's condition
// over left and right (Cond over the left columns then the right ones).
func intervalBounds(cond ir.Expr, left, right Node) []IntervalBound {
	if cond == nil {
		return nil
	}
	nl := len(left.Columns())
	var out []IntervalBound
	for _, c := range ir.Conjuncts(cond) {
		b, ok := intervalBound(c, nl)
		if ok && hasWatermark(left, b.Cols[0]) && hasWatermark(right, b.Cols[1]) {
			out = append(out, b)
		}
	}
	return out
}

// intervalBound reads c as x OP y + offset with x and y time columns of
// different inputs and OP one of <, <=, >, >=.
func intervalBound(c ir.Expr, nl int) (IntervalBound, bool) {
	call, ok := c.(*ir.Call)
	if !ok || len(call.Args) != 2 {
		return IntervalBound{}, false
	}
	x, okx := timeColumn(call.Args[0])
	y, oky := timeColumnPlus(call.Args[1])
	if !okx || !oky || x.T.Kind != y.col.T.Kind {
		return IntervalBound{}, false
	}
	// Normalise to lower >= upper + offset: the row of the lower side is the
	// one a watermark of the other side makes useless.
	var lower, upper *ir.InputRef
	offset := y.offset
	switch call.Fn {
	case ir.FnGe, ir.FnGt:
		lower, upper = x, y.col
	case ir.FnLe, ir.FnLt:
		// x <= y + o  is  y >= x - o.
		lower, upper, offset = y.col, x, -y.offset
	default:
		return IntervalBound{}, false
	}
	if (lower.Index < nl) == (upper.Index < nl) {
		return IntervalBound{}, false
	}
	b := IntervalBound{Offset: offset}
	if lower.Index < nl {
		b.Clean, b.Cols = 0, [2]int{lower.Index, upper.Index - nl}
	} else {
		b.Clean, b.Cols = 1, [2]int{upper.Index, lower.Index - nl}
	}
	return b, true
}

func timeColumn(e ir.Expr) (*ir.InputRef, bool) {
	ref, ok := e.(*ir.InputRef)
	if !ok || (ref.T.Kind != types.Timestamp && ref.T.Kind != types.TimestampTZ) {
		return nil, false
	}
	return ref, true
}

type columnPlus struct {
	col    *ir.InputRef
	offset int64
}

// timeColumnPlus reads e as a time column plus or minus a constant interval
// without months.
func timeColumnPlus(e ir.Expr) (columnPlus, bool) {
	if ref, ok := timeColumn(e); ok {
		return columnPlus{col: ref}, true
	}
	call, ok := e.(*ir.Call)
	if !ok || (call.Fn != ir.FnAdd && call.Fn != ir.FnSub) {
		return columnPlus{}, false
	}
	inner, ok := timeColumnPlus(call.Args[0])
	d, okd := constMicros(call.Args[1])
	if !ok || !okd {
		return columnPlus{}, false
	}
	if call.Fn == ir.FnSub {
		d = -d
	}
	inner.offset += d
	return inner, true
}
