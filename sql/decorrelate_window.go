package sql

import (
	"github.com/streamsql/streamsql/ir"
	"github.com/streamsql/streamsql/sqlerr"
)

// window partitions by the domain too: each domain value's rows are
// windowed apart, as the subquery's rows for one outer row are. The calls'
// constant arguments and frame offsets may not reference the outer query.
func (dc *decorrelator) window(r *ir.Window) (ir.Rel, error) {
	for _, c := range r.Calls {
		for i, a := range c.Args {
			if (i > 0 || c.Func == ir.WinNtile) && hasOuterRef(a) {
				return nil, sqlerr.Unsupported("window function arguments over the outer query's columns in a correlated subquery")
			}
		}
		if offsetHasOuterRef(c.Frame.Start) || offsetHasOuterRef(c.Frame.End) {
			return nil, sqlerr.Unsupported("window frame offsets over the outer query's columns in a correlated subquery")
		}
	}
	in, err := dc.rel(r.Input)
	if err != nil {
		return nil, err
	}
	w, nc := width(r.Input), len(r.Calls)
	win := &ir.Window{Input: in, SessionGap: r.SessionGap}
	win.PartitionBy = append(dc.exprs(r.PartitionBy, w), colRefs(in, seq(w, dc.nd))...)
	for _, k := range r.OrderBy {
		k.Expr = dc.expr(k.Expr, w)
		win.OrderBy = append(win.OrderBy, k)
	}
	for _, c := range r.Calls {
		c.Args, c.Filter = dc.exprs(c.Args, w), dc.expr(c.Filter, w)
		win.Calls = append(win.Calls, c)
	}
	win.Cols = append(append([]ir.Column(nil), in.Columns()...), r.Cols[w:]...)
	// The calls go before the domain's columns.
	return reorder(win, append(append(seq(0, w), seq(w+dc.nd, nc)...), seq(w, dc.nd)...)), nil
}

func offsetHasOuterRef(b ir.FrameBound) bool { return b.Offset != nil && hasOuterRef(b.Offset) }
