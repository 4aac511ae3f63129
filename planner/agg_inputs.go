package planner

import (
	"github.com/streamsql/streamsql/ir"
)

// aggInputs adds the extra arguments (string_agg's delimiter) and the ORDER
// BY expressions of call to the HashAgg's pre-projection through add, which
// returns the column of an expression, and returns call with them replaced
// by InputRefs to those columns. A HashAgg's Calls therefore carry their
// extra inputs as references to its input columns (while Arg and Filter are
// nil there and given by ArgCols and FilterCols).
func aggInputs(call ir.AggCall, add func(ir.Expr) int) ir.AggCall {
	ref := func(e ir.Expr) ir.Expr {
		return &ir.InputRef{Index: add(e), T: e.Type(), Name: e.String()}
	}
	extra := make([]ir.Expr, len(call.ExtraArgs))
	for i, e := range call.ExtraArgs {
		extra[i] = ref(e)
	}
	order := make([]ir.AggOrder, len(call.OrderBy))
	for i, o := range call.OrderBy {
		order[i] = ir.AggOrder{Expr: ref(o.Expr), Desc: o.Desc, NullsFirst: o.NullsFirst}
	}
	call.ExtraArgs, call.OrderBy = extra, order
	return call
}

// remapAggInputs rewrites the references aggInputs made through remap, for
// a HashAgg that reads its input's columns directly.
func remapAggInputs(call *ir.AggCall, remap func(int) int) {
	for i, e := range call.ExtraArgs {
		r := *e.(*ir.InputRef)
		r.Index = remap(r.Index)
		call.ExtraArgs[i] = &r
	}
	for i, o := range call.OrderBy {
		r := *o.Expr.(*ir.InputRef)
		r.Index = remap(r.Index)
		call.OrderBy[i].Expr = &r
	}
}

// aggExtraExprs returns the expressions of call besides Arg and Filter.
func aggExtraExprs(call ir.AggCall) []ir.Expr {
	es := append([]ir.Expr(nil), call.ExtraArgs...)
	for _, o := range call.OrderBy {
		es = append(es, o.Expr)
	}
	return es
}

// needsValueSet reports whether call keeps per-group state in a state table
// of its own (ValueSets): DISTINCT aggregates (their values' counts), and in
// streaming plans the aggregates that must find other rows' values when one
// is retracted (min, max, the order-sensitive aggregates) or keep counts too
// many to hold in the group's state (approx_count_distinct). Batch inputs
// are insert-only: those need no table there.
func needsValueSet(call ir.AggCall, stream bool) bool {
	if call.Distinct || ir.IsOrderedSet(call.Func) {
		// An ordered-set aggregate keeps the sorted multiset of its values
		// there, in batch queries too.
		return true
	}
	if !stream {
		return false
	}
	switch call.Func {
	case ir.AggMin, ir.AggMax, ir.AggKeyValue, ir.AggApproxCountDistinct:
		return true
	}
	return ir.OrderSensitive(call.Func)
}

// aggExtraString renders the extra arguments and the ORDER BY of a HashAgg
// call for EXPLAIN.
func aggExtraString(c ir.AggCall, in []ir.Column) string {
	var s string
	for _, e := range c.ExtraArgs {
		s += ", " + in[e.(*ir.InputRef).Index].Name
	}
	for i, o := range c.OrderBy {
		if i == 0 {
			s += " ORDER BY "
		} else {
			s += ", "
		}
		s += in[o.Expr.(*ir.InputRef).Index].Name
		if o.Desc {
			s += " DESC"
		}
		if o.NullsFirst != o.Desc {
			if o.NullsFirst {
				s += " NULLS FIRST"
			} else {
				s += " NULLS LAST"
			}
		}
	}
	return s
}
