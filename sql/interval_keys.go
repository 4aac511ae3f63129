package sql

import (
	"github.com/streamsql/streamsql/ir"
	"github.com/streamsql/streamsql/types"
)

// intervalKeyExpr returns e, or its canonical span if e is an interval, as a
// grouping or join key.
func intervalKeyExpr(e ir.Expr) ir.Expr {
	if e.Type().Kind != types.Interval {
		return e
	}
	return &ir.Call{Fn: ir.FnIntervalKey, Args: []ir.Expr{e}, T: types.IntervalT}
}

// intervalKeyed returns agg, or for an agg grouped by interval columns, the
// same aggregation keyed by their spans, projected to agg's columns with
// each interval key's output value taken from the group (AggKeyValue). Its
// DISTINCT aggregates over intervals count them by span (SpanDistinct).
func (b *binder) intervalKeyed(agg *ir.Aggregate) ir.Rel {
	if b.intervalSpelling {
		return agg
	}
	var flagged []ir.AggCall
	for i, a := range agg.Aggs {
		if a.Distinct && a.Arg != nil && a.Arg.Type().Kind == types.Interval {
			if flagged == nil {
				flagged = append([]ir.AggCall(nil), agg.Aggs...)
			}
			flagged[i].SpanDistinct = true
		}
	}
	if flagged != nil {
		copied := *agg
		copied.Aggs = flagged
		agg = &copied
	}
	var ivl []int
	for i, g := range agg.GroupBy {
		if g.Type().Kind == types.Interval {
			ivl = append(ivl, i)
		}
	}
	if len(ivl) == 0 {
		return agg
	}
	keyed := &ir.Aggregate{Input: agg.Input, Aggs: append([]ir.AggCall(nil), agg.Aggs...), Cols: append([]ir.Column(nil), agg.Cols...)}
	for _, g := range agg.GroupBy {
		keyed.GroupBy = append(keyed.GroupBy, intervalKeyExpr(g))
	}
	exprs := make([]ir.Expr, len(agg.Cols))
	for i, c := range agg.Cols {
		exprs[i] = &ir.InputRef{Index: i, T: c.Type, Name: c.Name}
	}
	for _, i := range ivl {
		keyed.Aggs = append(keyed.Aggs, ir.AggCall{Func: ir.AggKeyValue, Arg: agg.GroupBy[i], T: types.IntervalT})
		keyed.Cols = append(keyed.Cols, ir.Column{Name: agg.Cols[i].Name, Type: types.IntervalT, Hidden: true})
		exprs[i] = &ir.InputRef{Index: len(keyed.Cols) - 1, T: types.IntervalT, Name: agg.Cols[i].Name}
	}
	return &ir.Project{Input: keyed, Exprs: exprs, Cols: agg.Cols}
}
