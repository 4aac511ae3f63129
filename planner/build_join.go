package planner

import (
	"slices"

	"github.com/streamsql/streamsql/catalog"
	"github.com/streamsql/streamsql/ir"
	"github.com/streamsql/streamsql/types"
)

// join builds a Join. Join keys that are not plain columns are computed by a
// projection under the join; a projection over the join restores the
// binder's column layout (left columns, then right columns).
func (b *builder) join(r *ir.Join) (Node, error) {
	if n, ok, err := b.lookupJoin(r); ok || err != nil {
		return n, err
	}
	left, err := b.build(r.Left)
	if err != nil {
		return nil, err
	}
	right, err := b.build(r.Right)
	if err != nil {
		return nil, err
	}
	if err := b.checkExprs(append(append(append([]ir.Expr{}, r.LeftKeys...), r.RightKeys...), condList(r.Cond)...)...); err != nil {
		return nil, err
	}
	nlOrig := len(r.Left.Columns())
	nrOrig := len(r.Right.Columns())
	left, leftKeys := b.keyColumns(left, r.LeftKeys)
	right, rightKeys := b.keyColumns(right, r.RightKeys)
	if b.stream && r.Type == ir.FullJoin && !nonNullKey(left) && !nonNullKey(right) {
		left = b.presentMarker(left)
	}
	nl := len(left.Columns())
	n := &Join{
		Type:       r.Type,
		Left:       left,
		Right:      right,
		LeftKeys:   leftKeys,
		RightKeys:  rightKeys,
		LeftTable:  b.table(),
		RightTable: b.table(),
	}
	for _, k := range r.LeftKeys {
		n.KeyTypes = append(n.KeyTypes, k.Type())
	}
	n.WatermarkTable = -1
	cleans := b.stream && cleansState(r.Type)
	var pairs []int // key pairs with watermarks on both inputs
	if cleans {
		for p := range leftKeys {
			if hasWatermark(left, leftKeys[p]) && hasWatermark(right, rightKeys[p]) {
				pairs = append(pairs, p)
			}
		}
	}
	if r.Type != ir.FullJoin {
		// A full join NULL-pads both sides: no output column forwards them.
		n.WatermarkKeys = pairs
	}
	if len(pairs) > 0 {
		// Move the first watermark pair to the front of the join key, so
		// that the rows it makes final are a prefix of each side's state.
		p := pairs[0]
		moveToFront(n.LeftKeys, p)
		moveToFront(n.RightKeys, p)
		moveToFront(n.KeyTypes, p)
		for i, q := range n.WatermarkKeys {
			switch {
			case q == p:
				n.WatermarkKeys[i] = 0
			case q < p:
				n.WatermarkKeys[i] = q + 1
			}
		}
		n.CleanFirstKey = true
		n.WatermarkTable = b.table()
	}
	if r.Cond != nil {
		n.Cond = ir.Rewrite(r.Cond, func(e ir.Expr) ir.Expr {
			if ref, ok := e.(*ir.InputRef); ok && ref.Index >= nlOrig {
				return &ir.InputRef{Index: ref.Index - nlOrig + nl, T: ref.T, Name: ref.Name}
			}
			return e
		})
	}
	n.IndexTables = [2]int{-1, -1}
	if cleans {
		n.IntervalBounds = intervalBounds(n.Cond, left, right)
		for _, ib := range n.IntervalBounds {
			if n.IndexTables[ib.Clean] < 0 {
				n.IndexTables[ib.Clean] = b.table()
			}
		}
		if len(n.IntervalBounds) > 0 && n.WatermarkTable < 0 {
			n.WatermarkTable = b.table()
		}
	}
	n.Cols = append([]ir.Column(nil), left.Columns()...)
	if r.Type.KeepsRight() {
		n.Cols = append(n.Cols, right.Columns()...)
	}
	if b.stream {
		n.InputKeys = [2][]int{left.StreamKey(), right.StreamKey()}
		for _, ib := range n.IntervalBounds {
			for s := range n.InputKeys {
				if b.legacyKeys {
					break
				}
				n.InputKeys[s] = withColumn(n.InputKeys[s], ib.Cols[s])
			}
		}
		n.Key = append([]int{}, n.InputKeys[0]...)
		if r.Type.KeepsRight() {
			for _, k := range n.InputKeys[1] {
				n.Key = append(n.Key, nl+k)
			}
		}
	}
	var out Node = n
	if !b.stream && (r.Type == ir.RightJoin || r.Type == ir.FullJoin) {
		// A batch run feeds the right input first, so a right or full join
		// emits NULL-padded right rows that later left rows retract.
		out = &Consolidate{Input: n}
	}
	if nl == nlOrig && len(right.Columns()) == nrOrig {
		return out, nil
	}
	// Drop the computed key columns again.
	var exprs []ir.Expr
	var cols []ir.Column
	for i := 0; i < nlOrig; i++ {
		c := n.Cols[i]
		exprs = append(exprs, &ir.InputRef{Index: i, T: c.Type, Name: c.Name})
		cols = append(cols, c)
	}
	if r.Type.KeepsRight() {
		for j := 0; j < nrOrig; j++ {
			c := n.Cols[nl+j]
			exprs = append(exprs, &ir.InputRef{Index: nl + j, T: c.Type, Name: c.Name})
			cols = append(cols, c)
		}
	}
	return b.project(out, exprs, cols), nil
}

func condList(e ir.Expr) []ir.Expr {
	if e == nil {
		return nil
	}
	return []ir.Expr{e}
}

// keyColumns returns in (or a projection of it with computed key columns
// appended as hidden columns) and the positions of the key columns.
func (b *builder) keyColumns(in Node, keys []ir.Expr) (Node, []int) {
	pos := make([]int, len(keys))
	var extra []ir.Expr
	for i, k := range keys {
		if ref, ok := k.(*ir.InputRef); ok {
			pos[i] = ref.Index
			continue
		}
		pos[i] = len(in.Columns()) + len(extra)
		extra = append(extra, k)
	}
	if len(extra) == 0 {
		return in, pos
	}
	var exprs []ir.Expr
	var cols []ir.Column
	for i, c := range in.Columns() {
		exprs = append(exprs, &ir.InputRef{Index: i, T: c.Type, Name: c.Name})
		cols = append(cols, c)
	}
	for i, e := range extra {
		exprs = append(exprs, e)
		cols = append(cols, ir.Column{Name: "$key" + itoa(i), Type: e.Type(), Hidden: true})
	}
	p := b.project(in, exprs, cols)
	return p, pos
}

func itoa(i int) string {
	const digits = "0123456789"
	if i < 10 {
		return digits[i : i+1]
	}
	return itoa(i/10) + digits[i%10:i%10+1]
}

// union builds a Union. In a streaming plan every input is projected to the
// union's columns, then a hidden branch number, then hidden slots holding
// each input's stream key (NULL for the other inputs' slots): the branch and
// the slots are the union's stream key, unique across inputs.
func (b *builder) union(r *ir.UnionAll) (Node, error) {
	var ins []Node
	for _, in := range r.Inputs {
		n, err := b.build(in)
		if err != nil {
			return nil, err
		}
		ins = append(ins, n)
	}
	if !b.stream {
		return &Union{Ins: ins, Cols: r.Cols}, nil
	}
	width := len(r.Cols)
	cols := append([]ir.Column(nil), r.Cols...)
	cols = append(cols, ir.Column{Name: "$branch", Type: types.Int32T, Hidden: true})
	slotStart := make([]int, len(ins))
	for i, in := range ins {
		slotStart[i] = len(cols)
		inCols := in.Columns()
		for _, k := range in.StreamKey() {
			cols = append(cols, ir.Column{Name: "$key_" + inCols[k].Name, Type: inCols[k].Type, Hidden: true})
		}
	}
	u := &Union{Cols: cols}
	for i, in := range ins {
		inCols := in.Columns()
		var exprs []ir.Expr
		for c := 0; c < width; c++ {
			exprs = append(exprs, &ir.InputRef{Index: c, T: inCols[c].Type, Name: inCols[c].Name})
		}
		exprs = append(exprs, &ir.Const{Value: types.DInt(int64(i)), T: types.Int32T})
		for j, other := range ins {
			for n, k := range other.StreamKey() {
				if j == i {
					exprs = append(exprs, &ir.InputRef{Index: k, T: inCols[k].Type, Name: inCols[k].Name})
				} else {
					exprs = append(exprs, &ir.Const{Value: types.Null, T: cols[slotStart[j]+n].Type})
				}
			}
		}
		p := &Project{Input: in, Exprs: exprs, Cols: cols, Key: []int{}, Watermarks: projectWatermarks(in, exprs)}
		u.Ins = append(u.Ins, p)
	}
	u.Watermarks = commonWatermarks(u.Ins, width)
	u.Key = []int{width}
	for c := width + 1; c < len(cols); c++ {
		u.Key = append(u.Key, c)
	}
	return u, nil
}

// presentMarker appends a hidden, always true column to in's columns and
// stream key. A full join needs it when neither input's stream key is known
// to be non-NULL (a global aggregation has an empty key, a grouping may have
// a NULL group): otherwise a left row padded with NULLs and a right row
// padded with NULLs could have the same stream key, all NULL; with the
// marker, the left row's key has it true and the right row's NULL.
func (b *builder) presentMarker(in Node) Node {
	var exprs []ir.Expr
	var cols []ir.Column
	for i, c := range in.Columns() {
		exprs = append(exprs, &ir.InputRef{Index: i, T: c.Type, Name: c.Name})
		cols = append(cols, c)
	}
	exprs = append(exprs, &ir.Const{Value: types.DBool(true), T: types.BoolT})
	cols = append(cols, ir.Column{Name: "$left", Type: types.BoolT, Hidden: true})
	key := append(append([]int{}, in.StreamKey()...), len(cols)-1)
	return &Project{Input: in, Exprs: exprs, Cols: cols, Key: key, Watermarks: projectWatermarks(in, exprs)}
}

// nonNullKey reports whether n has a stream key and its columns are never
// NULL: they are the primary key or row id of a table, passed through
// filters and projections.
func nonNullKey(n Node) bool {
	key := n.StreamKey()
	if len(key) == 0 {
		return false
	}
	for _, k := range key {
		if !nonNullColumn(n, k) {
			return false
		}
	}
	return true
}

func nonNullColumn(n Node, c int) bool {
	switch n := n.(type) {
	case *Scan:
		if n.Relation.Kind != catalog.Table {
			return false
		}
		for _, k := range n.Relation.Key {
			if k == c {
				return true
			}
		}
	case *Filter:
		return nonNullColumn(n.Input, c)
	case *Project:
		if ref, ok := n.Exprs[c].(*ir.InputRef); ok {
			return nonNullColumn(n.Input, ref.Index)
		}
	}
	return false
}

// commonWatermarks returns the columns below width that carry a watermark on
// every one of ins.
func commonWatermarks(ins []Node, width int) []int {
	var cols []int
	for c := 0; c < width; c++ {
		all := true
		for _, in := range ins {
			all = all && hasWatermark(in, c)
		}
		if all {
			cols = append(cols, c)
		}
	}
	return cols
}

// cleansState reports whether a streaming join of type t drops, by
// watermark, the stored rows no later row can match (hash_join_clean.go).
// Outer joins may, as inner ones do: a dropped row's pairs and NULL-padded
// row are final, since no row still to come matches it, and a later delete
// of it is either late (window joins) or finds every partner it had still
// stored, as a partner is dropped only once it can match no row still to
// come, which the delete is (interval joins). A preserved row's match count
// is recounted from those partners. Semi and anti joins are left out: the
// null-aware anti join counts every right row, and the others come from
// subqueries, which carry no time bounds.
func cleansState(t ir.JoinType) bool {
	switch t {
	case ir.InnerJoin, ir.LeftJoin, ir.RightJoin, ir.FullJoin:
		return true
	}
	return false
}

// withColumn returns key with column c added if it is not in it yet.
func withColumn(key []int, c int) []int {
	if slices.Contains(key, c) {
		return key
	}
	return append(slices.Clone(key), c)
}
