package planner

import (
	"github.com/streamsql/streamsql/ir"
	"github.com/streamsql/streamsql/sqlerr"
)

// sessionOver plans a Window with SESSION WITH GAP: a SessionWindow assigns
// every row (rows without a time too, with NULL bounds) the session of its
// partition that holds it; the window functions then run over PARTITION BY
// the partition and the session's window_start, each over its row's whole
// session (the session is the frame), and a projection drops the session's
// columns again. When sessions merge or split, the session
// operator retracts and re-emits the rows whose bounds change, which moves
// them between the window operator's partitions.
func (b *builder) sessionOver(r *ir.Window) (Node, error) {
	timeRef, ok := r.OrderBy[0].Expr.(*ir.InputRef)
	if !ok {
		return nil, sqlerr.Unsupported("SESSION WITH GAP ordered by an expression (order by a column)")
	}
	var parts []int
	for _, e := range r.PartitionBy {
		ref, ok := e.(*ir.InputRef)
		if !ok {
			return nil, sqlerr.Unsupported("SESSION WITH GAP partitioned by an expression (partition by columns)")
		}
		parts = append(parts, ref.Index)
	}
	in := r.Input.Columns()
	t := in[timeRef.Index].Type
	sw := &ir.SessionWindow{Input: r.Input, TimeCol: timeRef.Index, Gap: r.SessionGap, PartitionCols: parts, KeepNulls: true,
		Cols: append(append([]ir.Column(nil), in...), ir.Column{Name: "window_start", Type: t, Hidden: true},
			ir.Column{Name: "window_end", Type: t, Hidden: true})}
	w := *r
	w.SessionGap = 0
	// The frame of every call is its row's whole session.
	w.Calls = append([]ir.WindowCall(nil), r.Calls...)
	for i := range w.Calls {
		w.Calls[i].Frame = ir.WindowFrame{Mode: ir.FrameRows,
			Start: ir.FrameBound{Kind: ir.BoundUnboundedPreceding}, End: ir.FrameBound{Kind: ir.BoundUnboundedFollowing}}
	}
	w.Input = sw
	w.PartitionBy = append(append([]ir.Expr(nil), r.PartitionBy...), &ir.InputRef{Index: len(in), T: t, Name: "window_start"})
	w.Cols = append(append([]ir.Column(nil), sw.Cols...), r.Cols[len(in):]...)
	n, err := b.window(&w)
	if err != nil {
		return nil, err
	}
	cols := n.Columns()
	var exprs []ir.Expr
	var keep []ir.Column
	for i, c := range cols {
		if i == len(in) || i == len(in)+1 {
			continue
		}
		exprs = append(exprs, &ir.InputRef{Index: i, T: c.Type, Name: c.Name})
		keep = append(keep, c)
	}
	return b.project(n, exprs, keep), nil
}
