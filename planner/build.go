package planner

import (
	"fmt"

	"github.com/streamsql/streamsql/catalog"
	"github.com/streamsql/streamsql/ir"
	"github.com/streamsql/streamsql/sqlerr"
	"github.com/streamsql/streamsql/types"
)

// StreamPlan is the dataflow of a materialized view.
type StreamPlan struct {
	// Root is the view's Materialize node.
	Root *Materialize
	// Tables is the number of operator state table slots the plan uses,
	// numbered 0..Tables-1 in plan order (depth first, inputs before the
	// operator); the view's own table is separate.
	Tables int
	// Upstreams are the relations the view reads, one per scan of the plan,
	// in plan order (depth first, inputs in order): the dataflow's inputs.
	Upstreams []*catalog.Relation
	// Leaves are the plan's scans, in the same order.
	Leaves []*Scan
}

// StreamOptions are the options of a materialized view's plan.
type StreamOptions struct {
	// EmitOnWindowClose makes the view's aggregation emit each window's row
	// once, when the watermark passes it (EMIT ON WINDOW CLOSE).
	EmitOnWindowClose bool
	// KeepJoinOrder plans joins as views created before join ordering
	// were planned, whose state tables were built for that plan: inner
	// joins in FROM order, interval joins keying their rows without their
	// time columns (Join.InputKeys), TopNs per window and SESSION keying
	// their output without the window or time column.
	KeepJoinOrder bool
}

// PlanStream plans rel as a materialized view.
func PlanStream(rel ir.Rel) (*StreamPlan, error) {
	return PlanStreamWith(rel, StreamOptions{})
}

// PlanStreamWith plans rel as a materialized view with options.
func PlanStreamWith(rel ir.Rel, opts StreamOptions) (*StreamPlan, error) {
	b := &builder{stream: true, legacyKeys: opts.KeepJoinOrder}
	rel = pushDown(rel)
	if !opts.KeepJoinOrder {
		rel = orderJoins(rel, nil)
	}
	root, err := b.build(rel)
	if err == nil {
		err = checkTypes(root)
	}
	if err == nil && opts.EmitOnWindowClose {
		root, err = emitOnWindowClose(b, root)
	}
	if err != nil {
		return nil, err
	}
	cols := uniqueNames(root.Columns())
	p := &StreamPlan{
		Root:      &Materialize{Input: root, Cols: cols, Key: root.StreamKey()},
		Tables:    b.tables,
		Upstreams: b.upstreams,
		Leaves:    b.leaves,
	}
	if len(p.Upstreams) == 0 {
		return nil, sqlerr.Unsupported("materialized views that read no table or view")
	}
	return p, nil
}

// PlanBatch plans rel as a batch query.
func PlanBatch(rel ir.Rel) (Node, int, error) {
	return PlanBatchWith(rel, BatchOptions{})
}

// PlanBatchWith plans rel as a batch query with options.
func PlanBatchWith(rel ir.Rel, opts BatchOptions) (Node, int, error) {
	b := &builder{rows: opts.Rows}
	root, err := b.build(orderJoins(pushDown(rel), opts.Rows))
	if err == nil {
		err = checkTypes(root)
	}
	if err != nil {
		return nil, 0, err
	}
	return root, b.tables, nil
}

// uniqueNames renames hidden columns whose names collide with another
// column's, so that a view's columns have distinct names.
func uniqueNames(cols []ir.Column) []ir.Column {
	out := append([]ir.Column(nil), cols...)
	seen := map[string]bool{}
	for _, c := range out {
		if !c.Hidden {
			seen[c.Name] = true
		}
	}
	for i := range out {
		if !out[i].Hidden {
			continue
		}
		name := out[i].Name
		for k := 1; seen[name]; k++ {
			name = fmt.Sprintf("%s_%d", out[i].Name, k)
		}
		out[i].Name = name
		seen[name] = true
	}
	return out
}

type builder struct {
	stream bool
	// legacyKeys: see StreamOptions.KeepJoinOrder.
	legacyKeys bool
	rows       RowCounts // batch plans: sizes of stored relations, or nil
	tables     int
	upstreams  []*catalog.Relation
	leaves     []*Scan
}

func (b *builder) table() int {
	b.tables++
	return b.tables - 1
}

func (b *builder) build(rel ir.Rel) (Node, error) {
	switch r := rel.(type) {
	case *ir.Scan:
		if b.stream && r.Relation.Kind == catalog.SystemTable {
			return nil, sqlerr.Unsupported("materialized views over system tables")
		}
		if !b.stream && r.Relation.Kind == catalog.Source {
			return nil, sqlerr.Unsupported("reading source %s directly (create a materialized view over it)", r.Relation.Name)
		}
		n := &Scan{Relation: r.Relation, Alias: r.Alias, Cols: r.Columns(), OffsetTable: -1}
		if b.stream {
			n.Key = r.Relation.Key
			if r.Relation.Kind == catalog.Source {
				// The view's own reader of the source keeps its position here.
				n.OffsetTable = b.table()
			}
			b.upstreams = append(b.upstreams, r.Relation)
			b.leaves = append(b.leaves, n)
		}
		return n, nil
	case *ir.CopyInput:
		if b.stream {
			return nil, sqlerr.Unsupported("COPY input in a materialized view")
		}
		return &CopyInput{Cols: r.Cols}, nil
	case *ir.Values:
		if b.stream {
			return nil, sqlerr.Unsupported("materialized views over VALUES or without FROM")
		}
		return &Values{Rows: r.Rows, Cols: r.Cols}, nil
	case *ir.GenerateSeries:
		if b.stream {
			return nil, sqlerr.Unsupported("generate_series in a materialized view")
		}
		return &Series{Start: r.Start, Stop: r.Stop, Step: r.Step, Col: r.Col, Zone: r.Zone}, nil
	case *ir.Filter:
		if w, ok := r.Input.(*ir.Window); ok {
			if n, ok, err := b.windowTopN(w, r.Pred); ok {
				return n, err
			}
		}
		in, err := b.build(r.Input)
		if err != nil {
			return nil, err
		}
		if b.stream && volatile(r.Pred) {
			return b.temporalFilter(in, r.Pred)
		}
		if scan, ok := in.(*Scan); ok && !b.stream {
			narrowScan(scan, r.Pred)
		}
		return &Filter{Input: in, Pred: r.Pred}, nil
	case *ir.Project:
		in, err := b.build(r.Input)
		if err != nil {
			return nil, err
		}
		if err := b.checkExprs(r.Exprs...); err != nil {
			return nil, err
		}
		return b.project(in, r.Exprs, r.Cols), nil
	case *ir.Aggregate:
		return b.aggregate(r)
	case *ir.Window:
		return b.window(r)
	case *ir.Join:
		return b.join(r)
	case *ir.UnionAll:
		return b.union(r)
	case *ir.HopWindow:
		return b.hopWindow(r)
	case *ir.AsofJoin:
		return b.asofJoin(r)
	case *ir.SessionWindow:
		return b.sessionWindowRel(r)
	case *ir.Unnest:
		return b.unnest(r)
	case *ir.Expand:
		in, err := b.build(r.Input)
		if err != nil {
			return nil, err
		}
		// The copy's ordinal follows the input's columns, which in a
		// streaming plan may have hidden stream key columns beyond the
		// binder's.
		cols := append(append([]ir.Column(nil), in.Columns()...), r.Cols[len(r.Cols)-1])
		n := &Expand{Input: in, Count: r.Count, Cols: cols}
		if b.stream {
			n.Key = append(append([]int{}, in.StreamKey()...), len(cols)-1)
		}
		return n, nil
	case *ir.Sort:
		in, err := b.build(r.Input)
		if err != nil || b.stream {
			// A view's rows have no order; ORDER BY is accepted and ignored,
			// as PostgreSQL does for the rows it later returns.
			return in, err
		}
		return &Sort{Input: in, Keys: r.Keys}, nil
	case *ir.Limit:
		return b.limit(r)
	case *ir.TopN:
		return b.topNRel(r)
	}
	return nil, sqlerr.Unsupported("query node %T", rel)
}

// checkExprs rejects expressions a streaming plan cannot maintain: now()
// changes without any input changing, so outside the temporal filters of a
// WHERE clause it cannot be kept up to date.
func (b *builder) checkExprs(es ...ir.Expr) error {
	if !b.stream {
		return nil
	}
	for _, e := range es {
		if volatile(e) {
			return errNowInView()
		}
	}
	return nil
}

// project builds a Project; in a streaming plan it appends hidden references
// to the input's stream key columns that the projection drops, so that the
// output keeps a stream key.
func (b *builder) project(in Node, exprs []ir.Expr, cols []ir.Column) Node {
	p := &Project{Input: in, Exprs: append([]ir.Expr(nil), exprs...), Cols: append([]ir.Column(nil), cols...)}
	if !b.stream {
		return p
	}
	p.Watermarks = projectWatermarks(in, p.Exprs)
	inCols := in.Columns()
	for _, k := range in.StreamKey() {
		pos := -1
		for i, e := range p.Exprs {
			if ref, ok := e.(*ir.InputRef); ok && ref.Index == k {
				pos = i
				break
			}
		}
		if pos < 0 {
			c := inCols[k]
			p.Exprs = append(p.Exprs, &ir.InputRef{Index: k, T: c.Type, Name: c.Name})
			p.Cols = append(p.Cols, ir.Column{Name: c.Name, Type: c.Type, Hidden: true})
			pos = len(p.Exprs) - 1
		}
		p.Key = append(p.Key, pos)
	}
	if p.Key == nil {
		p.Key = []int{}
	}
	return p
}

// aggregate builds a HashAgg, with a Project before it when group keys,
// arguments or filters are not plain input columns.
func (b *builder) aggregate(r *ir.Aggregate) (Node, error) {
	in, err := b.build(r.Input)
	if err != nil {
		return nil, err
	}
	if err := b.checkExprs(r.GroupBy...); err != nil {
		return nil, err
	}
	for _, c := range r.Aggs {
		if c.Arg != nil {
			if err := b.checkExprs(c.Arg); err != nil {
				return nil, err
			}
		}
		if c.Filter != nil {
			if err := b.checkExprs(c.Filter); err != nil {
				return nil, err
			}
		}
		if err := b.checkExprs(aggExtraExprs(c)...); err != nil {
			return nil, err
		}
	}
	var exprs []ir.Expr
	plain := true
	add := func(e ir.Expr) int {
		if _, ok := e.(*ir.InputRef); !ok {
			plain = false
		}
		exprs = append(exprs, e)
		return len(exprs) - 1
	}
	n := &HashAgg{Cols: r.Cols, ResultTable: -1}
	for _, g := range r.GroupBy {
		n.GroupCols = append(n.GroupCols, add(g))
		n.GroupTypes = append(n.GroupTypes, g.Type())
	}
	for _, c := range r.Aggs {
		argCol, filterCol := -1, -1
		var argType types.T
		if c.Arg != nil {
			argCol = add(c.Arg)
			argType = c.Arg.Type()
		}
		if c.Filter != nil {
			filterCol = add(c.Filter)
		}
		call := aggInputs(c, add)
		call.Arg, call.Filter = nil, nil
		n.Calls = append(n.Calls, call)
		n.ArgCols = append(n.ArgCols, argCol)
		n.ArgTypes = append(n.ArgTypes, argType)
		n.FilterCols = append(n.FilterCols, filterCol)
	}
	if plain {
		// Every input is a column: read them directly.
		remap := func(i int) int {
			if i < 0 {
				return i
			}
			return exprs[i].(*ir.InputRef).Index
		}
		for i := range n.GroupCols {
			n.GroupCols[i] = remap(n.GroupCols[i])
		}
		for i := range n.ArgCols {
			n.ArgCols[i] = remap(n.ArgCols[i])
			n.FilterCols[i] = remap(n.FilterCols[i])
			remapAggInputs(&n.Calls[i], remap)
		}
		n.Input = in
	} else {
		shareMinMaxArgs(n, r.Aggs)
		cols := make([]ir.Column, len(exprs))
		for i, e := range exprs {
			cols[i] = ir.Column{Name: fmt.Sprintf("$expr%d", i), Type: e.Type()}
		}
		// In a streaming plan the pre-projection keeps the input's stream key
		// (hidden): min and max key their value sets by it.
		n.Input = b.project(in, exprs, cols)
	}
	if b.stream {
		n.InputKey = n.Input.StreamKey()
		inCols := n.Input.Columns()
		for _, k := range n.InputKey {
			n.InputKeyTypes = append(n.InputKeyTypes, inCols[k].Type)
		}
	}
	n.ResultTable = b.table()
	appendOnly := b.stream && AppendOnly(n.Input)
	for _, c := range n.Calls {
		slot := -1
		if needsValueSet(c, b.stream) {
			slot = b.table()
			// Over inserts only, min and max keep just the current value.
			// (The slot stays allocated, so that the state tables of views
			// planned before keep their numbers.)
			if appendOnly && !c.Distinct && (c.Func == ir.AggMin || c.Func == ir.AggMax) {
				slot = -1
			}
		}
		n.ValueSets = append(n.ValueSets, slot)
	}
	n.WatermarkGroup, n.WatermarkTable = -1, -1
	if b.stream {
		return b.watermarkGroup(n), nil
	}
	return n, nil
}

// shareMinMaxArgs points each min or max over the same input column as an
// earlier one, neither with a FILTER, at that one's projected column, so
// that the operator sees they aggregate the same values and the two share
// one value set (exec.HashAgg.shareValueSets). The duplicate projected
// column stays, unread.
func shareMinMaxArgs(n *HashAgg, aggs []ir.AggCall) {
	minMaxRef := func(i int) (int, bool) {
		c := aggs[i]
		ref, ok := c.Arg.(*ir.InputRef)
		if !ok || c.Filter != nil || c.Func != ir.AggMin && c.Func != ir.AggMax {
			return 0, false
		}
		return ref.Index, true
	}
	for j := range aggs {
		rj, ok := minMaxRef(j)
		if !ok {
			continue
		}
		for i := range j {
			if ri, ok := minMaxRef(i); ok && ri == rj {
				n.ArgCols[j] = n.ArgCols[i]
				break
			}
		}
	}
}

// watermarkGroup makes the first group column whose input carries a
// watermark the aggregation's watermark group: it moves to the front of the
// group key, so that the state is ordered by it and the groups the
// watermark has passed are a prefix, and a projection above restores the
// query's column order.
func (b *builder) watermarkGroup(n *HashAgg) Node {
	g := -1
	for i, c := range n.GroupCols {
		if hasWatermark(n.Input, c) {
			g = i
			break
		}
	}
	if g < 0 {
		return n
	}
	n.WatermarkGroup, n.WatermarkTable = 0, b.table()
	if g == 0 {
		return n
	}
	moveToFront(n.GroupCols, g)
	moveToFront(n.GroupTypes, g)
	orig := n.Cols
	n.Cols = append([]ir.Column(nil), orig...)
	moveToFront(n.Cols, g)
	exprs := make([]ir.Expr, len(orig))
	for i, c := range orig {
		pos := i
		switch {
		case i == g:
			pos = 0
		case i < g:
			pos = i + 1
		}
		exprs[i] = &ir.InputRef{Index: pos, T: c.Type, Name: c.Name}
	}
	return b.project(n, exprs, orig)
}

// moveToFront moves s[i] to s[0], shifting s[0:i] right by one.
func moveToFront[T any](s []T, i int) {
	v := s[i]
	copy(s[1:i+1], s[:i])
	s[0] = v
}
