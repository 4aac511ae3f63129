package planner

import (
	"fmt"

	"github.com/streamsql/streamsql/ir"
)

// Unnest appends to each input row the elements of its array columns
// Arrays, zipped (ir.Unnest): one output row per element of the longest
// array, shorter arrays padded with NULL, and the element's ordinal (1..n).
// Its output columns are the input columns Before, the element columns,
// the ordinal, then the input columns After: Before are the columns of the
// query's input, After the hidden stream key columns a streaming plan adds
// behind them (the array columns a pre-projection computed are dropped).
// In a streaming plan (the input's stream key, ordinal) is the stream key:
// the operator is stateless, and a retracted input row retracts the rows
// of its elements, computed again from the row.
type Unnest struct {
	Input         Node
	Before, After []int
	Arrays        []int
	Outer         bool
	Cols          []ir.Column
	Key           []int
}

func (n *Unnest) Columns() []ir.Column { return n.Cols }
func (n *Unnest) StreamKey() []int     { return n.Key }
func (n *Unnest) Inputs() []Node       { return []Node{n.Input} }

// Ordinal returns the position of the ordinal column.
func (n *Unnest) Ordinal() int { return len(n.Before) + len(n.Arrays) }

// unnest builds an Unnest, with a Project before it computing the arrays
// that are not input columns.
func (b *builder) unnest(r *ir.Unnest) (Node, error) {
	in, err := b.build(r.Input)
	if err != nil {
		return nil, err
	}
	if err := b.checkExprs(r.Arrays...); err != nil {
		return nil, err
	}
	nIn := len(r.Input.Columns())
	width := len(in.Columns())
	n := &Unnest{Outer: r.Outer}
	plain := true
	for _, a := range r.Arrays {
		ref, ok := a.(*ir.InputRef)
		if !ok {
			plain = false
			break
		}
		n.Arrays = append(n.Arrays, ref.Index)
	}
	if !plain {
		inCols := in.Columns()
		exprs := make([]ir.Expr, 0, width+len(r.Arrays))
		cols := make([]ir.Column, 0, width+len(r.Arrays))
		for i, c := range inCols {
			exprs = append(exprs, &ir.InputRef{Index: i, T: c.Type, Name: c.Name})
			cols = append(cols, c)
		}
		n.Arrays = n.Arrays[:0]
		for i, a := range r.Arrays {
			n.Arrays = append(n.Arrays, len(exprs))
			exprs = append(exprs, a)
			cols = append(cols, ir.Column{Name: fmt.Sprintf("$unnest%d", i), Type: a.Type(), Hidden: true})
		}
		in = b.project(in, exprs, cols)
	}
	n.Input = in
	for i := 0; i < nIn; i++ {
		n.Before = append(n.Before, i)
	}
	for i := nIn; i < width; i++ {
		n.After = append(n.After, i)
	}
	n.Cols = append([]ir.Column(nil), r.Cols...)
	inCols := in.Columns()
	for _, c := range n.After {
		n.Cols = append(n.Cols, inCols[c])
	}
	if b.stream {
		// The input's key columns are among Before and After (a
		// pre-projection keeps them in place).
		for _, k := range in.StreamKey() {
			pos := k
			if k >= nIn {
				pos = k + len(n.Arrays) + 1
			}
			n.Key = append(n.Key, pos)
		}
		n.Key = append(n.Key, n.Ordinal())
	}
	return n, nil
}
