package planner

import (
	"github.com/streamsql/streamsql/ir"
	"github.com/streamsql/streamsql/types"
)

// AsofJoin joins each left row with the closest right row of equal keys
// (ir.AsofJoin). LeftKeys/RightKeys and LeftTime/RightTime are columns of
// each input (computed by projections below when the query's are
// expressions). Each input's rows are kept in a state table keyed by join
// key, time, stream key.
type AsofJoin struct {
	Left, Right           Node
	LeftKeys, RightKeys   []int
	KeyTypes              []types.T
	LeftTime, RightTime   int
	TimeType              types.T
	Op                    string
	Outer                 bool
	Cols                  []ir.Column
	Key                   []int
	LeftTable, RightTable int
}

func (n *AsofJoin) Columns() []ir.Column { return n.Cols }
func (n *AsofJoin) StreamKey() []int     { return n.Key }
func (n *AsofJoin) Inputs() []Node       { return []Node{n.Left, n.Right} }

// asofJoin builds an AsofJoin, with a projection above that drops the
// computed key and time columns again.
func (b *builder) asofJoin(r *ir.AsofJoin) (Node, error) {
	left, err := b.build(r.Left)
	if err != nil {
		return nil, err
	}
	right, err := b.build(r.Right)
	if err != nil {
		return nil, err
	}
	if err := b.checkExprs(append(append([]ir.Expr{r.LeftTime, r.RightTime}, r.LeftKeys...), r.RightKeys...)...); err != nil {
		return nil, err
	}
	nlOrig, nrOrig := len(r.Left.Columns()), len(r.Right.Columns())
	left, lcols := b.keyColumns(left, append(append([]ir.Expr{}, r.LeftKeys...), r.LeftTime))
	right, rcols := b.keyColumns(right, append(append([]ir.Expr{}, r.RightKeys...), r.RightTime))
	nk := len(r.LeftKeys)
	n := &AsofJoin{
		Left: left, Right: right,
		LeftKeys: lcols[:nk], RightKeys: rcols[:nk],
		LeftTime: lcols[nk], RightTime: rcols[nk], TimeType: r.LeftTime.Type(),
		Op: r.Op, Outer: r.Outer,
		LeftTable: b.table(), RightTable: b.table(),
	}
	for _, k := range r.LeftKeys {
		n.KeyTypes = append(n.KeyTypes, k.Type())
	}
	n.Cols = append(append([]ir.Column(nil), left.Columns()...), right.Columns()...)
	nl := len(left.Columns())
	// A left row matches at most one right row: the left stream key is the
	// output's.
	n.Key = append([]int{}, left.StreamKey()...)
	if !b.stream {
		n.Key = nil
	}
	if nl == nlOrig && len(right.Columns()) == nrOrig {
		return n, nil
	}
	var exprs []ir.Expr
	var cols []ir.Column
	for i := 0; i < nlOrig; i++ {
		exprs = append(exprs, &ir.InputRef{Index: i, T: n.Cols[i].Type, Name: n.Cols[i].Name})
		cols = append(cols, n.Cols[i])
	}
	for i := 0; i < nrOrig; i++ {
		c := n.Cols[nl+i]
		exprs = append(exprs, &ir.InputRef{Index: nl + i, T: c.Type, Name: c.Name})
		cols = append(cols, c)
	}
	return b.project(n, exprs, cols), nil
}
