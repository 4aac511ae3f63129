package ir

import (
	"github.com/streamsql/streamsql/catalog"
	"github.com/streamsql/streamsql/types"
)

// Rel is a bound relational expression: the binder's output for a query and
// the planner's input. Expressions inside a Rel refer to the columns of the
// Rel's input by position (InputRef). Rels are immutable once bound.
type Rel interface {
	// Columns describes the rows the Rel produces.
	Columns() []Column
}

// Column is one output column of a Rel.
type Column struct {
	Name string
	Type types.T
	// Hidden columns are carried for the plan's needs (a table's row id, a sort
	// key not in the select list) and are not returned to the client.
	Hidden bool
}

// Scan reads every column of a table or materialized view, hidden ones
// included, in catalog order.
type Scan struct {
	Relation *catalog.Relation
	// Alias is the name the query gives the relation (for EXPLAIN).
	Alias string
}

// Values is a literal list of rows (VALUES or a SELECT without FROM). Every
// expression is constant (has no InputRef).
type Values struct {
	Rows [][]Expr
	Cols []Column
}

// GenerateSeries is generate_series(start, stop [, step]) over integers: one
// column of the rows start, start+step, ... up to stop inclusive.
type GenerateSeries struct {
	Start, Stop, Step Expr
	Col               Column
	// Zone is the time zone a timestamptz series steps days and months in
	// ("": UTC), the session's when the query was bound.
	Zone string
}

// Filter keeps the input rows for which Pred is true.
type Filter struct {
	Input Rel
	Pred  Expr
}

// Project computes one output column per expression over the input.
type Project struct {
	Input Rel
	Exprs []Expr
	Cols  []Column
}

// Aggregate groups the input by GroupBy and computes Aggs for each group. Its
// output has the group-by columns first, then one column per aggregate. With
// no GroupBy, it produces exactly one row, also for empty input.
type Aggregate struct {
	Input   Rel
	GroupBy []Expr
	Aggs    []AggCall
	Cols    []Column
}

// Aggregate function names.
const (
	AggCountStar = "count_star"
	AggCount     = "count"
	AggSum       = "sum"
	AggAvg       = "avg"
	AggMin       = "min"
	AggMax       = "max"

	// bool_and, bool_or and every (bool_and under PostgreSQL's SQL-standard
	// name) over boolean.
	AggBoolAnd = "bool_and"
	AggBoolOr  = "bool_or"
	AggEvery   = "every"
	// The sample and population variances and standard deviations; stddev
	// and variance are stddev_samp and var_samp.
	AggStddev     = "stddev"
	AggStddevSamp = "stddev_samp"
	AggStddevPop  = "stddev_pop"
	AggVariance   = "variance"
	AggVarSamp    = "var_samp"
	AggVarPop     = "var_pop"
	// string_agg(value, delimiter [ORDER BY ...]).
	AggStringAgg = "string_agg"
	// first_value(x ORDER BY ...) and last_value(x ORDER BY ...): the value
	// of the first or last row in the order, NULL or not (RisingWave's
	// aggregates; PostgreSQL has them only as window functions).
	AggFirstValue = "first_value"
	AggLastValue  = "last_value"
	// approx_count_distinct(x): an estimate of count(DISTINCT x) from a
	// HyperLogLog sketch (see docs/decisions.md).
	AggApproxCountDistinct = "approx_count_distinct"
	// array_agg(x [ORDER BY ...]): the values, NULLs included, as an
	// array, in the ORDER BY's order (see exec.orderedAgg for the order
	// without one).
	AggArrayAgg = "array_agg"
	// jsonb_agg(x [ORDER BY ...]) is array_agg into a jsonb array;
	// jsonb_object_agg(k, v [ORDER BY ...]) builds an object (the last value
	// of a key in the order wins).
	AggJSONBAgg       = "jsonb_agg"
	AggJSONBObjectAgg = "jsonb_object_agg"
)

// AggCall is one aggregate function call.
type AggCall struct {
	Func string
	// Arg is over the Aggregate's input; nil for count(*).
	Arg Expr
	// Distinct aggregates see each distinct non-NULL value of Arg once per
	// group (array_agg sees NULL once too).
	Distinct bool
	// Filter, if not nil, is a boolean expression over the input: only rows for
	// which it is true are aggregated (FILTER (WHERE ...)).
	Filter Expr
	// ExtraArgs are the arguments after Arg: string_agg's delimiter.
	ExtraArgs []Expr
	// OrderBy is the ORDER BY inside the call, kept only for the aggregates
	// whose result depends on the order of their input (OrderSensitive).
	OrderBy []AggOrder
	// SpanDistinct makes a DISTINCT aggregate over intervals see each
	// span once ('1 mon' and '30 days' are one value).
	SpanDistinct bool
	// Direct are the constant fractions of percentile_cont and
	// percentile_disc (one, or one per element of an array argument;
	// IsNullFraction for a NULL one).
	Direct []float64
	// T is the result type.
	T types.T
}

// AggOrder is one ORDER BY item of an aggregate call.
type AggOrder struct {
	Expr       Expr
	Desc       bool
	NullsFirst bool
}

// OrderSensitive reports whether the result of aggregate fn depends on the
// order of its input.
func OrderSensitive(fn string) bool {
	return fn == AggStringAgg || fn == AggFirstValue || fn == AggLastValue || fn == AggArrayAgg ||
		fn == AggJSONBAgg || fn == AggJSONBObjectAgg
}

// Sort orders its input; it appears only at the top of batch queries.
type Sort struct {
	Input Rel
	Keys  []SortKey
}

// SortKey is one ORDER BY item: an input column and its direction.
type SortKey struct {
	Column     int
	Desc       bool
	NullsFirst bool
}

// OrderWords renders a sort direction as SQL: "ASC NULLS LAST" and so on.
func OrderWords(desc, nullsFirst bool) string {
	dir, nulls := "ASC", "NULLS LAST"
	if desc {
		dir = "DESC"
	}
	if nullsFirst {
		nulls = "NULLS FIRST"
	}
	return dir + " " + nulls
}

// Limit skips Offset rows and returns at most Count rows (Count < 0: all).
// WithTies (FETCH FIRST ... WITH TIES) also returns the rows after those
// that are peers of the last one in the Sort below it.
type Limit struct {
	Input    Rel
	Offset   int64
	Count    int64
	WithTies bool
}

// Columns of a Scan are the relation's columns.
func (r *Scan) Columns() []Column {
	cols := make([]Column, len(r.Relation.Columns))
	for i, c := range r.Relation.Columns {
		cols[i] = Column{Name: c.Name, Type: c.Type, Hidden: c.Hidden}
	}
	return cols
}

func (r *Values) Columns() []Column         { return r.Cols }
func (r *GenerateSeries) Columns() []Column { return []Column{r.Col} }
func (r *Filter) Columns() []Column         { return r.Input.Columns() }
func (r *Project) Columns() []Column        { return r.Cols }
func (r *Aggregate) Columns() []Column      { return r.Cols }
func (r *Sort) Columns() []Column           { return r.Input.Columns() }
func (r *Limit) Columns() []Column          { return r.Input.Columns() }

// VisibleColumns returns the indices of rel's columns that are not hidden.
func VisibleColumns(rel Rel) []int {
	var idx []int
	for i, c := range rel.Columns() {
		if !c.Hidden {
			idx = append(idx, i)
		}
	}
	return idx
}
