package sql

import "github.com/streamsql/streamsql/types"

// Intervals PostgreSQL calls equal ('1 mon' and '30 days', '1 day' and
// '24:00:00') are one group, one distinct value and one join key, as
// PostgreSQL hashes intervals by their span. Grouping and join keys of type
// interval are therefore the span's canonical interval (FnIntervalKey), and
// a grouping outputs one of the group's own values (AggKeyValue).
const (
	// FnIntervalKey is the canonical interval of an interval's span: the
	// same for every interval of the same span (internal).
	FnIntervalKey = "$interval_key"
	// AggKeyValue is the value a grouping outputs for an interval key:
	// in a batch query the first value of the group it reads, as
	// PostgreSQL; in a view the group's value with the most months, then
	// days ('1 mon' over '30 days', '1 day' over '24:00:00'), which no
	// order of changes or restart alters.
	AggKeyValue = "$key_value"
)

func init() {
	def(FnIntervalKey, types.IntervalT, types.IntervalT)
}

// intervalKeyExpr returns e, or its canonical span if e is an interval, as a
// grouping or join key.
func intervalKeyExpr(e Expr) Expr {
	if e.Type().Kind != types.Interval {
		return e
	}
	return &Call{Fn: FnIntervalKey, Args: []Expr{e}, T: types.IntervalT}
}

// intervalKeyed returns agg, or for an agg grouped by interval columns, the
// same aggregation keyed by their spans, projected to agg's columns with
// each interval key's output value taken from the group (AggKeyValue). Its
// DISTINCT aggregates over intervals count them by span (SpanDistinct).
func (b *binder) intervalKeyed(agg *Aggregate) Rel {
	if b.intervalSpelling {
		return agg
	}
	var flagged []AggCall
	for i, a := range agg.Aggs {
		if a.Distinct && a.Arg != nil && a.Arg.Type().Kind == types.Interval {
			if flagged == nil {
				flagged = append([]AggCall(nil), agg.Aggs...)
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
	keyed := &Aggregate{Input: agg.Input, Aggs: append([]AggCall(nil), agg.Aggs...), Cols: append([]Column(nil), agg.Cols...)}
	for _, g := range agg.GroupBy {
		keyed.GroupBy = append(keyed.GroupBy, intervalKeyExpr(g))
	}
	exprs := make([]Expr, len(agg.Cols))
	for i, c := range agg.Cols {
		exprs[i] = &InputRef{Index: i, T: c.Type, Name: c.Name}
	}
	for _, i := range ivl {
		keyed.Aggs = append(keyed.Aggs, AggCall{Func: AggKeyValue, Arg: agg.GroupBy[i], T: types.IntervalT})
		keyed.Cols = append(keyed.Cols, Column{Name: agg.Cols[i].Name, Type: types.IntervalT, Hidden: true})
		exprs[i] = &InputRef{Index: len(keyed.Cols) - 1, T: types.IntervalT, Name: agg.Cols[i].Name}
	}
	return &Project{Input: keyed, Exprs: exprs, Cols: agg.Cols}
}
