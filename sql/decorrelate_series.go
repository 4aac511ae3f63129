package sql

import (
	"github.com/streamsql/streamsql/ir"
	"github.com/streamsql/streamsql/sqlerr"
	"github.com/streamsql/streamsql/types"
)

// series generates, for every domain value, the integer series of r with
// its outer references taken from that value: unnest over series_array.
func (dc *decorrelator) series(r *ir.GenerateSeries) (ir.Rel, error) {
	t := r.Col.Type
	if t.Kind != types.Int32 && t.Kind != types.Int64 {
		return nil, sqlerr.Unsupported("correlated subqueries over generate_series of %s", t)
	}
	step := r.Step
	if step == nil {
		step = &ir.Const{Value: types.DInt(1), T: t}
	}
	arr := &ir.Call{Fn: ir.FnSeriesArray, Args: []ir.Expr{dc.expr(r.Start, 0), dc.expr(r.Stop, 0), dc.expr(step, 0)}, T: types.ArrayOf(t)}
	u := ir.NewUnnest(dc.domain, []ir.Expr{arr}, []string{r.Col.Name}, "ordinality", false)
	return reorder(u, append([]int{dc.nd}, seq(0, dc.nd)...)), nil
}
