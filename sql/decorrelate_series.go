package sql

import (
	"github.com/streamsql/streamsql/sqlerr"
	"github.com/streamsql/streamsql/types"
)

// FnSeriesArray is series_array(start, stop, step): the integers
// generate_series(start, stop, step) returns, as an array. A correlated
// generate_series in FROM is unnest over it (decorrelator.series).
const FnSeriesArray = "series_array"

func init() {
	for _, t := range []types.T{types.Int32T, types.Int64T} {
		def(FnSeriesArray, types.ArrayOf(t), t, t, t)
	}
}

// series generates, for every domain value, the integer series of r with
// its outer references taken from that value: unnest over series_array.
func (dc *decorrelator) series(r *GenerateSeries) (Rel, error) {
	t := r.Col.Type
	if t.Kind != types.Int32 && t.Kind != types.Int64 {
		return nil, sqlerr.Unsupported("correlated subqueries over generate_series of %s", t)
	}
	step := r.Step
	if step == nil {
		step = &Const{Value: types.DInt(1), T: t}
	}
	arr := &Call{Fn: FnSeriesArray, Args: []Expr{dc.expr(r.Start, 0), dc.expr(r.Stop, 0), dc.expr(step, 0)}, T: types.ArrayOf(t)}
	u := newUnnest(dc.domain, []Expr{arr}, []string{r.Col.Name}, "ordinality", false)
	return reorder(u, append([]int{dc.nd}, seq(0, dc.nd)...)), nil
}
