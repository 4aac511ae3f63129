package planner

import (
	"github.com/streamsql/streamsql/ir"
	"github.com/streamsql/streamsql/sqlerr"
	"github.com/streamsql/streamsql/types"
)

// errNowInView is the error for now() where a streaming plan cannot keep it.
func errNowInView() error {
	return sqlerr.Unsupported("now() in a materialized view outside a temporal filter " +
		"(a WHERE conjunct comparing an expression with now() plus or minus a constant interval, such as ts > now() - INTERVAL '1 hour')")
}

// temporalFilter plans the filter pred over in in a streaming plan: its
// conjuncts that compare an expression with now() (plus or minus a constant
// interval) become a TemporalFilter above a Filter of the other conjuncts.
func (b *builder) temporalFilter(in Node, pred ir.Expr) (Node, error) {
	var plain, exprs []ir.Expr
	var ops []string
	var deltas []int64
	for _, c := range ir.Conjuncts(pred) {
		if !volatile(c) {
			plain = append(plain, c)
			continue
		}
		e, op, delta, err := temporalBound(c)
		if err != nil {
			return nil, err
		}
		exprs, ops, deltas = append(exprs, e), append(ops, op), append(deltas, delta)
	}
	if len(plain) > 0 {
		in = &Filter{Input: in, Pred: conjunction(plain)}
	}
	width := len(in.Columns())
	withCols, cols := b.keyColumns(in, exprs)
	tf := &TemporalFilter{Input: withCols, Table: b.table()}
	for i, c := range cols {
		tf.Bounds = append(tf.Bounds, TemporalBound{Col: c, Op: ops[i], Delta: deltas[i]})
	}
	if len(withCols.Columns()) == width {
		return tf, nil
	}
	// Drop the computed bound columns again.
	var keep []ir.Expr
	for i, c := range withCols.Columns()[:width] {
		keep = append(keep, &ir.InputRef{Index: i, T: c.Type, Name: c.Name})
	}
	return b.project(tf, keep, in.Columns()), nil
}

func isNow(e ir.Expr) bool {
	c, ok := e.(*ir.Call)
	return ok && c.Fn == ir.FnNow
}

// temporalBound reads c as e OP now() + delta, with the comparison flipped
// when now() is on the left.
func temporalBound(c ir.Expr) (ir.Expr, string, int64, error) {
	call, ok := c.(*ir.Call)
	if !ok || len(call.Args) != 2 {
		return nil, "", 0, errNowInView()
	}
	flip := map[string]string{ir.FnLt: ir.FnGt, ir.FnLe: ir.FnGe, ir.FnGt: ir.FnLt, ir.FnGe: ir.FnLe}
	if _, cmp := flip[call.Fn]; !cmp {
		return nil, "", 0, errNowInView()
	}
	e, nowSide, op := call.Args[0], call.Args[1], call.Fn
	if volatile(e) {
		e, nowSide, op = nowSide, e, flip[op]
	}
	// c OP now() - e, an interval compared with an age, is e OP now() - c.
	if age, ok := nowSide.(*ir.Call); ok && age.Fn == ir.FnSub && isNow(age.Args[0]) && !volatile(age.Args[1]) {
		if c, isConst := e.(*ir.Const); isConst && c.T.Kind == types.Interval {
			e, nowSide = age.Args[1], &ir.Call{Fn: ir.FnSub, Args: []ir.Expr{age.Args[0], c}, T: age.Args[0].Type()}
		}
	}
	if volatile(e) {
		return nil, "", 0, errNowInView()
	}
	delta, ok := nowPlus(nowSide)
	if !ok {
		return nil, "", 0, errNowInView()
	}
	if e.Type().Kind != types.TimestampTZ {
		e = &ir.Cast{Arg: e, T: types.TimestampTZT}
	}
	return e, op, delta, nil
}

// nowPlus reads e as now() plus a constant interval without months and
// returns the interval in microseconds.
func nowPlus(e ir.Expr) (int64, bool) {
	switch e := e.(type) {
	case *ir.Call:
		switch {
		case e.Fn == ir.FnNow:
			return 0, true
		case e.Fn == ir.FnAdd || e.Fn == ir.FnSub:
			now, iv := e.Args[0], e.Args[1]
			if e.Fn == ir.FnAdd && volatile(iv) {
				now, iv = iv, now
			}
			d, ok := constMicros(iv)
			if !ok {
				return 0, false
			}
			base, ok := nowPlus(now)
			if e.Fn == ir.FnSub {
				d = -d
			}
			return base + d, ok
		}
	case *ir.Cast:
		if e.T.Kind == types.TimestampTZ {
			return nowPlus(e.Arg)
		}
	}
	return 0, false
}

// constMicros returns a constant interval without months in microseconds.
func constMicros(e ir.Expr) (int64, bool) {
	c, ok := e.(*ir.Const)
	if !ok || c.T.Kind != types.Interval || c.Value.Null || c.Value.Ivl.Months != 0 {
		return 0, false
	}
	return int64(c.Value.Ivl.Days)*24*3600*1_000_000 + c.Value.Ivl.Micros, true
}
