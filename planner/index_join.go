package planner

import (
	"fmt"
	"strings"

	"github.com/streamsql/streamsql/catalog"
	"github.com/streamsql/streamsql/ir"
	"github.com/streamsql/streamsql/types"
)

// Lookup joins.
//
// A batch equi-join one of whose inputs is a stored relation (a table or a
// materialized view, possibly filtered and projected) whose primary key or
// a secondary index starts with join columns, and whose other input is
// estimated to be much smaller, is planned as an IndexJoin: the small input
// streams through, and each batch of it looks its distinct join keys up in
// the relation instead of reading the whole relation into a hash table.
// Views never get one: their plans must not depend on the data (sizes), and
// a view's join must also see the changes of both inputs.

// lookupRatio is how many times more rows the stored relation must be
// estimated to have (as scanned) than the other input for a lookup join: a
// seek costs about as much as reading and hashing that many rows.
const lookupRatio = 10

// IndexJoin joins each row of Input (the probe side) with the rows of
// Relation whose first len(InputKeys) columns of Index (or, if Index is nil,
// of the relation's key) equal the row's InputKeys columns (batch plans
// only). NULL keys match nothing. Looked-up rows must pass Filter (over the
// relation's columns), and pairs Cond (over the input's columns followed by
// the relation's). Type is InnerJoin, LeftJoin (input rows without a match
// are NULL-padded), SemiJoin or AntiJoin (the output is the input's
// columns). Otherwise the output is the input's columns, then the
// relation's.
type IndexJoin struct {
	Type      ir.JoinType
	Input     Node
	Relation  *catalog.Relation
	Index     *catalog.Index
	InputKeys []int
	Filter    ir.Expr
	Cond      ir.Expr
	Cols      []ir.Column
	// RelCols are the relation's columns (as a scan of it has them).
	RelCols []ir.Column
}

func (n *IndexJoin) Columns() []ir.Column { return n.Cols }
func (n *IndexJoin) StreamKey() []int     { return nil }
func (n *IndexJoin) Inputs() []Node       { return []Node{n.Input} }

// LookupColumns returns the relation's columns the lookup matches, in order.
func (n *IndexJoin) LookupColumns() []int {
	cols := n.Relation.Key
	if n.Index != nil {
		cols = n.Index.Columns
	}
	return cols[:len(n.InputKeys)]
}

// lookupSide is a join input that a lookup join can read by key: a scan of
// a stored relation, under an optional filter and an optional projection
// of plain columns.
type lookupSide struct {
	scan   *ir.Scan
	filter ir.Expr // over the relation's columns, or nil
	cols   []int   // the relation column of each of the input's columns
	narrow bool    // the filter narrows the scan by key or index
}

// asLookupSide reports whether rel can be read by key, and how.
func asLookupSide(rel ir.Rel) (*lookupSide, bool) {
	ls := &lookupSide{}
	var proj []ir.Expr
	if p, ok := rel.(*ir.Project); ok {
		proj = p.Exprs
		rel = p.Input
	}
	if f, ok := rel.(*ir.Filter); ok {
		ls.filter = f.Pred
		rel = f.Input
	}
	scan, ok := rel.(*ir.Scan)
	if !ok {
		return nil, false
	}
	switch scan.Relation.Kind {
	case catalog.Table, catalog.MaterializedView:
	default:
		return nil, false
	}
	ls.scan = scan
	ncols := len(scan.Columns())
	if proj == nil {
		for c := 0; c < ncols; c++ {
			ls.cols = append(ls.cols, c)
		}
	} else {
		for _, e := range proj {
			ref, ok := e.(*ir.InputRef)
			if !ok {
				return nil, false
			}
			ls.cols = append(ls.cols, ref.Index)
		}
	}
	if ls.filter != nil {
		r := scan.Relation
		ls.narrow = len(PinnedKey(ls.filter, r.Key, r.Types())) > 0 || ChooseIndex(ls.filter, r) != nil
	}
	return ls, true
}

// lookupPath is an access path of a lookup join: the relation's key (index
// nil) or a secondary index, and the join key pairs matching its first
// columns, in order.
type lookupPath struct {
	index *catalog.Index
	pairs []int
}

// choosePath returns the access path matching the most leading columns
// with join keys (the key wins ties: it needs no second read per row), or
// false if none matches one. probeKeys and sideKeys are the join's keys of
// the other input and of ls.
func (ls *lookupSide) choosePath(probeKeys, sideKeys []ir.Expr) (lookupPath, bool) {
	rel := ls.scan.Relation
	ts := rel.Types()
	match := func(cols []int) []int {
		var pairs []int
		for _, col := range cols {
			p := -1
			for k, e := range sideKeys {
				ref, ok := e.(*ir.InputRef)
				if !ok || ls.cols[ref.Index] != col {
					continue
				}
				pt := probeKeys[k].Type()
				if pt != ts[col] && (pt.Kind != types.Text || ts[col].Kind != types.Text) {
					continue
				}
				p = k
				break
			}
			if p < 0 || !indexable(ts[col]) {
				break
			}
			pairs = append(pairs, p)
		}
		return pairs
	}
	var best lookupPath
	if rel.PrimaryKey || rel.Kind == catalog.MaterializedView {
		best.pairs = match(rel.Key)
	}
	for i := range rel.Indexes {
		if pairs := match(rel.Indexes[i].Columns); len(pairs) > len(best.pairs) {
			best = lookupPath{index: &rel.Indexes[i], pairs: pairs}
		}
	}
	return best, len(best.pairs) > 0
}

// scannedRows estimates the rows a scan of ls reads: the relation's rows,
// or, when its filter narrows the scan by key or index, the filtered rows.
func (ls *lookupSide) scannedRows(rc RowCounts) (float64, bool) {
	n, ok := rc.rows(ls.scan.Relation)
	if !ok {
		return 0, false
	}
	if ls.narrow {
		var rel ir.Rel = ls.scan
		rel = &ir.Filter{Input: rel, Pred: ls.filter}
		return estimateRows(rel, rc), true
	}
	return n, true
}

// lookupJoin plans r as an IndexJoin if it qualifies (see above); ok is
// false if it does not.
func (b *builder) lookupJoin(r *ir.Join) (n Node, ok bool, err error) {
	if b.stream || b.rows == nil {
		return nil, false, nil
	}
	var sides []int // the inputs that may be looked up
	switch r.Type {
	case ir.InnerJoin:
		sides = []int{1, 0}
	case ir.LeftJoin, ir.SemiJoin, ir.AntiJoin:
		sides = []int{1}
	default:
		return nil, false, nil
	}
	if len(r.LeftKeys) == 0 {
		return nil, false, nil
	}
	ins := [2]ir.Rel{r.Left, r.Right}
	keys := [2][]ir.Expr{r.LeftKeys, r.RightKeys}
	for _, s := range sides {
		ls, ok := asLookupSide(ins[s])
		if !ok {
			continue
		}
		path, ok := ls.choosePath(keys[1-s], keys[s])
		if !ok {
			continue
		}
		scanned, ok := ls.scannedRows(b.rows)
		if !ok || estimateRows(ins[1-s], b.rows)*lookupRatio > scanned {
			continue
		}
		n, err := b.buildLookupJoin(r, s, ls, path)
		return n, true, err
	}
	return nil, false, nil
}

// buildLookupJoin builds the IndexJoin of r that looks up input s (ls)
// through path, under a projection restoring r's column layout.
func (b *builder) buildLookupJoin(r *ir.Join, s int, ls *lookupSide, path lookupPath) (Node, error) {
	ins := [2]ir.Rel{r.Left, r.Right}
	keys := [2][]ir.Expr{r.LeftKeys, r.RightKeys}
	probe, err := b.build(ins[1-s])
	if err != nil {
		return nil, err
	}
	nProbeOrig := len(ins[1-s].Columns())
	probe, probeKeys := b.keyColumns(probe, keys[1-s])
	np := len(probe.Columns())
	relCols := ls.scan.Columns()
	// The join's expressions over input s move to the relation's columns,
	// after the probe's.
	onSide := func(e ir.Expr) ir.Expr {
		return ir.Rewrite(e, func(x ir.Expr) ir.Expr {
			if ref, ok := x.(*ir.InputRef); ok {
				return &ir.InputRef{Index: np + ls.cols[ref.Index], T: ref.T, Name: ref.Name}
			}
			return x
		})
	}
	n := &IndexJoin{Type: r.Type, Input: probe, Relation: ls.scan.Relation, Index: path.index, Filter: ls.filter, RelCols: relCols}
	used := map[int]bool{}
	for _, p := range path.pairs {
		n.InputKeys = append(n.InputKeys, probeKeys[p])
		used[p] = true
	}
	var conds []ir.Expr
	for p := range keys[s] {
		if used[p] {
			continue
		}
		pk := probeKeys[p]
		conds = append(conds, &ir.Call{Fn: ir.FnEq, T: types.BoolT, Args: []ir.Expr{
			&ir.InputRef{Index: pk, T: probe.Columns()[pk].Type, Name: probe.Columns()[pk].Name},
			onSide(keys[s][p]),
		}})
	}
	if r.Cond != nil {
		nl := len(r.Left.Columns())
		cond := ir.Rewrite(r.Cond, func(x ir.Expr) ir.Expr {
			ref, ok := x.(*ir.InputRef)
			if !ok {
				return x
			}
			i := ref.Index // over the left columns, then the right ones
			if s == 0 {
				if i < nl {
					return &ir.InputRef{Index: np + ls.cols[i], T: ref.T, Name: ref.Name}
				}
				return &ir.InputRef{Index: i - nl, T: ref.T, Name: ref.Name}
			}
			if i < nl {
				return x
			}
			return &ir.InputRef{Index: np + ls.cols[i-nl], T: ref.T, Name: ref.Name}
		})
		conds = append(conds, cond)
	}
	n.Cond = conjunction(conds)
	n.Cols = append([]ir.Column(nil), probe.Columns()...)
	if r.Type.KeepsRight() {
		n.Cols = append(n.Cols, relCols...)
	}
	// Restore the join's layout: left columns, then right columns.
	probeRefs := func() []ir.Expr {
		var es []ir.Expr
		for c := 0; c < nProbeOrig; c++ {
			es = append(es, &ir.InputRef{Index: c, T: n.Cols[c].Type, Name: n.Cols[c].Name})
		}
		return es
	}
	var exprs []ir.Expr
	if !r.Type.KeepsRight() {
		exprs = probeRefs()
	} else {
		var sideRefs []ir.Expr
		for _, c := range ls.cols {
			col := n.Cols[np+c]
			sideRefs = append(sideRefs, &ir.InputRef{Index: np + c, T: col.Type, Name: col.Name})
		}
		if s == 0 {
			exprs = append(sideRefs, probeRefs()...)
		} else {
			exprs = append(probeRefs(), sideRefs...)
		}
	}
	if isIdentityProjection(exprs, len(n.Cols)) {
		return n, nil
	}
	return b.project(n, exprs, r.Columns()), nil
}

// isIdentityProjection reports whether exprs are the n columns of their
// input, in order.
func isIdentityProjection(exprs []ir.Expr, n int) bool {
	if len(exprs) != n {
		return false
	}
	for i, e := range exprs {
		if ref, ok := e.(*ir.InputRef); !ok || ref.Index != i {
			return false
		}
	}
	return true
}

// indexJoinDetail renders an IndexJoin for EXPLAIN: the relation and the
// path it is read through, then the keys as the condition has them (the
// input's columns, then the relation's).
func indexJoinDetail(n *IndexJoin) string {
	pair := append(append([]ir.Column(nil), n.Input.Columns()...), n.RelCols...)
	np := len(n.Input.Columns())
	path := "primary key"
	if n.Index != nil {
		path = n.Index.Name
	}
	var names, conds []string
	for i, c := range n.LookupColumns() {
		names = append(names, n.RelCols[c].Name)
		conds = append(conds, fmt.Sprintf("%s = %s", colName(pair, n.InputKeys[i]), colName(pair, np+c)))
	}
	detail := fmt.Sprintf("type: %s, %s: %s using %s (%s), keys: [%s]", n.Type, n.Relation.Kind, n.Relation.Name,
		path, strings.Join(names, ", "), strings.Join(conds, ", "))
	if n.Filter != nil {
		detail += fmt.Sprintf(", filter: %s", n.Filter)
	}
	if n.Cond != nil {
		detail += fmt.Sprintf(", condition: %s", n.Cond)
	}
	return detail
}

// findLookups fills e.lookups and e.scanned: for each input that is a
// stored relation, the equality conjuncts between the first column of its
// key or of one of its indexes and an expression over other inputs.
// inputOf maps the graph's columns to inputs.
func (e *estimator) findLookups(inputOf []int) {
	n := len(e.g.inputs)
	e.lookups = make([][]int, n)
	e.scanned = make([]float64, n)
	for i, in := range e.g.inputs {
		e.scanned[i] = e.rows[i]
		ls, ok := asLookupSide(in)
		if !ok {
			continue
		}
		if rows, ok := ls.scannedRows(e.g.rc); ok {
			e.scanned[i] = rows
		}
		rel := ls.scan.Relation
		ts := rel.Types()
		leading := map[int]bool{}
		if len(rel.Key) > 0 && (rel.PrimaryKey || rel.Kind == catalog.MaterializedView) {
			leading[rel.Key[0]] = true
		}
		for _, idx := range rel.Indexes {
			leading[idx.Columns[0]] = true
		}
		for _, c := range e.byIn[i] {
			call, ok := e.g.conjuncts[c].(*ir.Call)
			if !ok || call.Fn != ir.FnEq || len(call.Args) != 2 {
				continue
			}
			for a, arg := range call.Args {
				ref, ok := arg.(*ir.InputRef)
				if !ok || inputOf[ref.Index] != i {
					continue
				}
				col := ls.cols[ref.Index-e.g.offsets[i]]
				other := call.Args[1-a]
				ot := other.Type()
				if !leading[col] || !indexable(ts[col]) || (ot != ts[col] && (ot.Kind != types.Text || ts[col].Kind != types.Text)) {
					continue
				}
				if !readsInput(other, inputOf, i) {
					e.lookups[i] = append(e.lookups[i], c)
					break
				}
			}
		}
	}
}

// readsInput reports whether e reads a column of input i.
func readsInput(e ir.Expr, inputOf []int, i int) bool {
	reads := false
	ir.Walk(e, func(x ir.Expr) bool {
		if ref, ok := x.(*ir.InputRef); ok && inputOf[ref.Index] == i {
			reads = true
		}
		return !reads
	})
	return reads
}
