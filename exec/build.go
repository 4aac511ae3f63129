package exec

import (
	"context"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/streamsql/streamsql/barrier"
	"github.com/streamsql/streamsql/catalog"
	"github.com/streamsql/streamsql/exec/eval"
	"github.com/streamsql/streamsql/memlimit"
	"github.com/streamsql/streamsql/planner"
	"github.com/streamsql/streamsql/state"
	"github.com/streamsql/streamsql/types"
)

// Env is what building operators needs.
type Env struct {
	Mem  memory.Allocator
	Eval *eval.Context
	// Table returns the state table of a plan's table slot.
	Table func(slot int) *state.Table
	// SystemRows returns the current rows of a system table (batch queries).
	SystemRows func(rel *catalog.Relation) ([]arrow.RecordBatch, error)
	// AggCacheGroups bounds the groups each aggregation keeps in memory
	// (0: DefaultAggCacheGroups).
	AggCacheGroups int
	// CachePool is the memory budget's pool of operator caches: the
	// aggregations and TopNs account their groups in it and evict beyond
	// its share (nil: bounded by AggCacheGroups only).
	CachePool *memlimit.Pool
	// LateRows counts the rows operators drop for arriving behind their
	// watermark (may be nil).
	LateRows *atomic.Int64
	// Local, when set, returns the table a batch query reads state table id
	// from instead of the snapshot, or nil: DML reads its target table's
	// merged view, uncommitted writes included.
	Local func(id state.TableID) *state.Table
	// Batch is set by RunBatch: it feeds every join's right input before
	// its left input.
	Batch bool
	// Budget bounds the memory of a batch query (nil: no bound). Env.Mem
	// is then its allocator.
	Budget *Budget
	// CopyInput emits the rows of a COPY FROM STDIN as inserts (the plan's
	// planner.CopyInput leaf), in batches of the leaf's columns.
	CopyInput func(ctx context.Context, out Output) error
	// Write performs the write of a plan rooted at a planner.Write (DML);
	// nil in plans that write no table.
	Write WriteFunc
	// Snapshot is the committed snapshot a batch run reads (RunBatch): its
	// lookup joins read it.
	Snapshot *state.Snapshot
	// StartTime is now() (microseconds since the Unix epoch) for a new
	// streaming plan until its first barrier: the time of the last barrier
	// injected before it started.
	StartTime int64
	// Stats, if set, counts the rows and time of every operator (NewStats).
	Stats *Stats
	// VNodes are the virtual nodes the operators built own: an actor's
	// range in a parallel fragment (state.OwnedVNodes), every one (the zero
	// value) elsewhere. Vnode-keyed operators scan and clean only these.
	VNodes state.VNodes
}

// countLate adds n to env.LateRows, if set.
func (env Env) countLate(n int) {
	if env.LateRows != nil {
		env.LateRows.Add(int64(n))
	}
}

// Dataflow is a built plan: its operators wired together, with one entry
// point per leaf. Leaves are the plan's sources (scans, values, series) in
// plan order: depth first, inputs in order.
type Dataflow struct {
	Leaves []planner.Node
	Heads  []Output
	// Closers are every operator, closed when the dataflow stops.
	Closers []interface{ Close() }
	// A parallel dataflow (BuildParallelStream) has Exchanges at the end of
	// the fragment that reads its leaves, the Actors of its parallel
	// fragment, and Gather, the actor that merges their outputs (see
	// parallel.go).
	Exchanges []*Exchange
	Actors    []*Actor
	Gather    *Actor
	// Readers are, when fragment 0 runs on several actors (its sources
	// split among them: planner.Fragments.Readers), the dataflows of
	// fragment 0 for readers 1 and up, each with its Heads, Exchanges and
	// Closers; this Dataflow's own are reader 0's. The caller drives each
	// one's Heads on an actor of its own whose Downstream are its
	// Exchanges (see WireAcks).
	Readers []*Dataflow

	// cut, while building a fragment, maps the nodes where building stops
	// to an index of cutHeads, which gets the Output they would emit into.
	cut      map[planner.Node]int
	cutHeads []Output
}

// Close closes every operator.
func (d *Dataflow) Close() {
	for _, c := range d.Closers {
		c.Close()
	}
}

// build wires node n so that its output goes to next.
func (d *Dataflow) build(env Env, n planner.Node, next Output) error {
	if env.Budget != nil {
		next = &budgetCheck{b: env.Budget, next: next}
	}
	if i, ok := d.cut[n]; ok {
		d.cutHeads[i] = next
		return nil
	}
	next = env.Stats.wrap(n, next)
	switch n := n.(type) {
	case *planner.Scan, *planner.Values, *planner.Series, *planner.CopyInput:
		d.Leaves = append(d.Leaves, n)
		d.Heads = append(d.Heads, next)
		return nil
	case *planner.Join:
		j, err := newJoinOperator(env, n)
		if err != nil {
			return err
		}
		d.Closers = append(d.Closers, j)
		mn := NewMultiNode(j, 2, next)
		if err := d.build(env, n.Left, mn.Port(0)); err != nil {
			return err
		}
		return d.build(env, n.Right, mn.Port(1))
	case *planner.AsofJoin:
		j := NewAsofJoin(env.Mem, AsofJoinSpec{
			Types:      [2][]types.T{planner.Types(n.Left.Columns()), planner.Types(n.Right.Columns())},
			Keys:       [2][]int{n.LeftKeys, n.RightKeys},
			KeyTypes:   n.KeyTypes,
			Time:       [2]int{n.LeftTime, n.RightTime},
			TimeType:   n.TimeType,
			Op:         n.Op,
			Outer:      n.Outer,
			StreamKeys: [2][]int{n.Left.StreamKey(), n.Right.StreamKey()},
			Tables:     [2]*state.Table{env.Table(n.LeftTable), env.Table(n.RightTable)},
		})
		d.Closers = append(d.Closers, j)
		mn := NewMultiNode(j, 2, next)
		if err := d.build(env, n.Left, mn.Port(0)); err != nil {
			return err
		}
		return d.build(env, n.Right, mn.Port(1))
	case *planner.Union:
		u := NewUnion(len(n.Ins), n.Watermarks)
		mn := NewMultiNode(u, len(n.Ins), next)
		for i, in := range n.Ins {
			if err := d.build(env, in, mn.Port(i)); err != nil {
				return err
			}
		}
		return nil
	}
	op, err := operator(env, n)
	if err != nil {
		return err
	}
	d.Closers = append(d.Closers, op)
	in := n.Inputs()
	if len(in) != 1 {
		return fmt.Errorf("exec: %T has %d inputs", n, len(in))
	}
	return d.build(env, in[0], &link{op: op, next: next})
}

// operator builds the operator of one single-input plan node.
func operator(env Env, n planner.Node) (Operator, error) {
	switch n := n.(type) {
	case *planner.Filter:
		pred, err := eval.Compile(n.Pred)
		if err != nil {
			return nil, err
		}
		return NewFilter(env.Mem, env.Eval, pred), nil
	case *planner.Project:
		exprs := make([]eval.Evaluator, len(n.Exprs))
		for i, e := range n.Exprs {
			var err error
			if exprs[i], err = eval.Compile(e); err != nil {
				return nil, err
			}
		}
		p := NewProject(env.Mem, env.Eval, exprs)
		if len(n.Watermarks) > 0 {
			var err error
			if p.wm, err = newWatermarkMapper(env.Mem, n.Watermarks); err != nil {
				return nil, err
			}
		}
		return p, nil
	case *planner.HashAgg:
		spec := HashAggSpec{
			GroupCols:     n.GroupCols,
			GroupTypes:    n.GroupTypes,
			Calls:         n.Calls,
			ArgCols:       n.ArgCols,
			ArgTypes:      n.ArgTypes,
			FilterCols:    n.FilterCols,
			Result:        env.Table(n.ResultTable),
			InputKey:      n.InputKey,
			InputKeyTypes: n.InputKeyTypes,
			CacheGroups:   env.AggCacheGroups,
			CachePool:     env.CachePool,
			LateRows:      env.LateRows,
			VNodes:        env.VNodes,
		}
		if n.WatermarkTable >= 0 {
			spec.Watermark = env.Table(n.WatermarkTable)
			spec.EmitOnWindowClose = n.EmitOnWindowClose
		}
		for _, slot := range n.ValueSets {
			var t *state.Table
			if slot >= 0 {
				t = env.Table(slot)
			}
			spec.ValueSets = append(spec.ValueSets, t)
		}
		return NewHashAgg(env.Mem, env.Eval, spec)
	case *planner.Window:
		if n.Table < 0 {
			return NewWindowBatch(env.Mem, env.Eval, n)
		}
		return NewOverWindow(env.Mem, env.Eval, n, env.Table(n.Table), env.VNodes)
	case *planner.Write:
		if env.Write == nil {
			return nil, fmt.Errorf("exec: a plan writes %s outside a statement that writes it", n.Table.Name)
		}
		return NewStatementWrite(n, env.Write), nil
	case *planner.Sort:
		return NewSort(env.Mem, n.Keys, planner.Types(n.Columns())), nil
	case *planner.Limit:
		return NewLimit(env.Mem, n.Offset, n.Count), nil
	case *planner.TopN:
		return newTopNOperator(env, n)
	case *planner.Consolidate:
		c := NewConsolidate(env.Mem, planner.Types(n.Columns()))
		c.budget = env.Budget
		return c, nil
	case *planner.Expand:
		return NewExpand(env.Mem, n.Count), nil
	case *planner.Unnest:
		return NewUnnest(env.Mem, planner.Types(n.Input.Columns()), n.Before, n.Arrays, n.After, n.Outer), nil
	case *planner.HopWindow:
		h := NewHopWindow(env.Mem, planner.Types(n.Input.Columns()), n.TimeCol, n.Slide, n.Size, n.Offset)
		if len(n.Watermarks) > 0 {
			var err error
			if h.wm, err = newWatermarkMapper(env.Mem, n.Watermarks); err != nil {
				h.Close()
				return nil, err
			}
		}
		return h, nil
	case *planner.EowcGate:
		return NewEowcGate(env.Mem, planner.Types(n.Columns()), n.StreamKey(), n.TimeCol, env.Table(n.Table), env.countLate)
	case *planner.LateFilter:
		return NewLateFilter(env.Mem, n.TimeCol, n.Columns()[n.TimeCol].Type, env.Table(n.Table), env.countLate)
	case *planner.TemporalFilter:
		return NewTemporalFilter(env.Mem, n, env.Table(n.Table), env.StartTime)
	case *planner.SessionWindow:
		return newSessionWindowOperator(env, n)
	case *planner.IndexJoin:
		return newIndexJoinOperator(env, n)
	}
	return nil, fmt.Errorf("exec: no operator for %T", n)
}

func newJoinOperator(env Env, n *planner.Join) (*HashJoin, error) {
	spec := HashJoinSpec{
		Type:       n.Type,
		Types:      [2][]types.T{planner.Types(n.Left.Columns()), planner.Types(n.Right.Columns())},
		Keys:       [2][]int{n.LeftKeys, n.RightKeys},
		KeyTypes:   n.KeyTypes,
		StreamKeys: n.InputKeys,
		Tables:     [2]*state.Table{env.Table(n.LeftTable), env.Table(n.RightTable)},
		VNodes:     env.VNodes,
	}
	// Batch plans have no stream keys: stored rows get sequence numbers. A
	// batch run feeds a join's right input first (RunBatch).
	spec.Sequence = [2]bool{spec.StreamKeys[0] == nil, spec.StreamKeys[1] == nil}
	spec.RightFirst = env.Batch
	spec.Budget = env.Budget
	if n.Cond != nil {
		cond, err := eval.Compile(n.Cond)
		if err != nil {
			return nil, err
		}
		spec.Cond = cond
	}
	var j *HashJoin
	if n.WatermarkTable >= 0 {
		spec.Watermark, spec.LateRows = env.Table(n.WatermarkTable), env.LateRows
		spec.CleanFirstKey = n.CleanFirstKey
		for _, ib := range n.IntervalBounds {
			spec.Intervals = append(spec.Intervals, IntervalClean{Side: ib.Clean, Cols: ib.Cols, Offset: ib.Offset})
		}
		for s, slot := range n.IndexTables {
			if slot >= 0 {
				spec.TimeIndex[s] = env.Table(slot)
			}
		}
		var err error
		if j, err = NewCleaningHashJoin(env.Mem, env.Eval, spec); err != nil {
			return nil, err
		}
	} else {
		j = NewHashJoin(env.Mem, env.Eval, spec)
	}
	for _, p := range n.WatermarkKeys {
		j.wm.add([]int{n.LeftKeys[p], n.RightKeys[p]}, n.WatermarkOutputs(p))
	}
	return j, nil
}

// ViewStorage is where a view's dataflow writes: the view's rows and its
// secondary indexes (catalog.Relation.Indexes, each with its state table).
type ViewStorage struct {
	ID          uint32
	Rows        *state.Table
	Indexes     []catalog.Index
	IndexTables []*state.Table
	// Shard returns the storage handles of the actor owning shard's
	// virtual nodes (parallel dataflows; shard 0 is this storage).
	Shard func(shard int) ViewStorage
	// Table returns this storage's handle of any table of the view (an
	// index added later).
	Table func(id state.TableID) *state.Table
}

// BuildStream builds a view's dataflow: every operator of the plan down to
// its scans, ending in the Materialize that writes the view's storage and
// then in out. The dataflow's leaves are the plan's scans, whose streams the
// actor reads.
func BuildStream(env Env, p *planner.StreamPlan, view ViewStorage, out Output) (*Dataflow, error) {
	d := &Dataflow{}
	m := p.Root
	ts := planner.Types(m.Cols)
	var indexes []*IndexWriter
	for i, def := range view.Indexes {
		indexes = append(indexes, NewIndexWriter(view.IndexTables[i], def, ts, m.Key))
	}
	mat := NewMaterialize(env.Mem, view.ID, view.Rows, m.Key, ts, indexes)
	d.Closers = append(d.Closers, mat)
	return d.buildOver(env, m.Input, &link{op: mat, next: env.Stats.wrap(m, out)})
}

// buildOver builds n into d, ending in next; n's leaves must be scans.
func (d *Dataflow) buildOver(env Env, n planner.Node, next Output) (*Dataflow, error) {
	if err := d.build(env, n, next); err != nil {
		d.Close()
		return nil, err
	}
	for _, l := range d.Leaves {
		if _, ok := l.(*planner.Scan); !ok {
			d.Close()
			return nil, fmt.Errorf("exec: a view's dataflow reads %T, not a scan", l)
		}
	}
	return d, nil
}

// BuildSink builds a sink's dataflow: every operator of the plan down to
// its scans, ending in sink instead of the Materialize of a view, and then
// in out (which sees only barriers).
func BuildSink(env Env, p *planner.StreamPlan, sink *Sink, out Output) (*Dataflow, error) {
	d := &Dataflow{}
	d.Closers = append(d.Closers, sink)
	return d.buildOver(env, p.Root.Input, &link{op: sink, next: env.Stats.wrap(p.Root, out)})
}

// emitSystemRows emits the rows of a system table.
func emitSystemRows(ctx context.Context, env Env, rel *catalog.Relation, out Output) error {
	if env.SystemRows == nil {
		return fmt.Errorf("exec: no rows for system table %s", rel.Name)
	}
	recs, err := env.SystemRows(rel)
	if err != nil {
		return err
	}
	return emitInserts(ctx, out, recs)
}

// emitInserts emits each of recs, whose references it takes, as a batch of
// inserts; on error it releases the records not emitted.
func emitInserts(ctx context.Context, out Output, recs []arrow.RecordBatch) error {
	for i, rec := range recs {
		if err := out.Emit(ctx, Message{Batch: NewBatch(rec, nil)}); err != nil {
			for _, r := range recs[i+1:] {
				r.Release()
			}
			return err
		}
	}
	return nil
}

// RunBatch runs a batch plan over a committed snapshot and sends its result
// rows to out. Sources run one after the other, the right input of every
// join before its left input, so that joins see their build side first and
// emit no retractions (plans with right or full outer joins end in a
// Consolidate operator that cancels the ones they do emit).
func RunBatch(ctx context.Context, env Env, snap *state.Snapshot, root planner.Node, out Output) error {
	env.Batch = true
	env.Snapshot = snap
	d := &Dataflow{}
	defer d.Close()
	if err := d.build(env, root, out); err != nil {
		return err
	}
	order := batchOrder(root)
	for _, i := range order {
		var err error
		start := time.Now()
		switch leaf := d.Leaves[i].(type) {
		case *planner.Scan:
			if leaf.Relation.Kind == catalog.SystemTable {
				err = emitSystemRows(ctx, env, leaf.Relation, d.Heads[i])
			} else {
				err = scanLeaf(ctx, env, snap, leaf, d.Heads[i])
			}
		case *planner.Values:
			err = emitValues(ctx, env.Mem, env.Eval, leaf, d.Heads[i])
		case *planner.Series:
			err = emitSeries(ctx, env.Mem, env.Eval, leaf, d.Heads[i])
		case *planner.CopyInput:
			if env.CopyInput == nil {
				return fmt.Errorf("exec: a plan reads COPY input its statement does not have")
			}
			err = env.CopyInput(ctx, d.Heads[i])
		}
		if err != nil {
			return err
		}
		// The final barrier makes the operators above this source emit what
		// they hold (aggregations, sorts) once all their inputs are done.
		if err := d.Heads[i].Emit(ctx, Message{Barrier: finalBarrier}); err != nil {
			return err
		}
		env.Stats.leafRan(d.Leaves[i], time.Since(start))
	}
	return nil
}

var finalBarrier = &barrier.Barrier{Epoch: 1, Kind: barrier.Final}

// batchOrder returns the indices of root's leaves (in plan order) in the
// order a batch run feeds them: right inputs of joins first.
func isJoin(n planner.Node) bool {
	switch n.(type) {
	case *planner.Join, *planner.AsofJoin:
		return true
	}
	return false
}

func batchOrder(root planner.Node) []int {
	var order []int
	next := 0
	var walk func(n planner.Node)
	walk = func(n planner.Node) {
		ins := n.Inputs()
		if len(ins) == 0 {
			order = append(order, next)
			next++
			return
		}
		if isJoin(n) {
			// Leaves are numbered in plan order (left first) but fed right
			// first.
			saved := order
			order = nil
			walk(ins[0])
			left := order
			order = nil
			walk(ins[1])
			order = append(saved, append(order, left...)...)
			return
		}
		for _, in := range ins {
			walk(in)
		}
	}
	walk(root)
	return order
}
