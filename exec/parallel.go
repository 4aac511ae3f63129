package exec

import (
	"fmt"
	"log/slog"

	"github.com/streamsql/streamsql/barrier"
	"github.com/streamsql/streamsql/planner"
	"github.com/streamsql/streamsql/state"
)

// exchangeBuffer is the capacity, in messages, of each channel between the
// fragments of a parallel dataflow.
const exchangeBuffer = 16

// Parallel says how to run a view's dataflow on several actors.
type Parallel struct {
	// N is the number of actors of the partitioned fragment (> 1).
	N    int
	Part *planner.Partitioning
	// TableShard returns the handle of state table slot for the actor
	// owning shard's virtual nodes (state.Store.TableShard).
	TableShard func(slot, shard int) *state.Table
	// ID, Mode, OnError and Log are those of the view's actor (Actor); the
	// parallel fragment's actors share its ID, so they stop with it.
	ID      uint32
	Mode    barrier.Mode
	OnError func(error)
	Log     *slog.Logger
}

// BuildParallelStream builds a view's dataflow as three parts: the fragment
// that reads the plan's leaves (the dataflow's Heads, driven by the view's
// actor), which ends in one Exchange per input of the partitioned operator;
// par.N actors (Dataflow.Actors), each running that operator and everything
// above it down to its own Materialize over its shard of the view's storage
// (view.Shard); and the Gather actor, which merges their streams into out.
// The caller runs the Actors and Gather (none of which acknowledges
// barriers) and wires the acknowledgements and the view's actor's
// Downstream with WireAcks. Closing the view's actor's operators (Closers) closes the
// exchanges, which ends the other actors.
func BuildParallelStream(env Env, p *planner.StreamPlan, view ViewStorage, par Parallel, out Output) (*Dataflow, error) {
	m := p.Root
	ts := planner.Types(m.Cols)
	tail := func(env Env, shard int, next Output) (Output, interface{ Close() }) {
		st := view.Shard(shard)
		var indexes []*IndexWriter
		for i, def := range st.Indexes {
			indexes = append(indexes, NewIndexWriter(st.IndexTables[i], def, ts, m.Key))
		}
		mat := NewMaterialize(env.Mem, st.ID, st.Rows, m.Key, ts, indexes)
		mat.shard = &materializeShard{part: newPartitioner(par.Part.ViewKeys, par.Part.KeyTypes, par.N), index: int32(shard), table: st.Table}
		return &link{op: mat, next: next}, mat
	}
	return buildParallel(env, p, par, tail, nil, out)
}

// BuildParallelSink is BuildParallelStream for a sink: the N actors end
// where the Materialize would be, and the Gather actor feeds sink.
func BuildParallelSink(env Env, p *planner.StreamPlan, sink *Sink, par Parallel, out Output) (*Dataflow, error) {
	tail := func(_ Env, _ int, next Output) (Output, interface{ Close() }) { return next, nil }
	return buildParallel(env, p, par, tail, sink, out)
}

// buildParallel builds the three parts (see BuildParallelStream); tail
// builds the end of each parallel actor's chain; gatherOp, if set, is
// the operator the gather actor runs before out.
func buildParallel(env Env, p *planner.StreamPlan, par Parallel, tail func(Env, int, Output) (Output, interface{ Close() }), gatherOp Operator, out Output) (df *Dataflow, err error) {
	ins := par.Part.Op.Inputs()
	n := par.N
	d := &Dataflow{}
	defer func() {
		if err != nil {
			d.closeAll()
		}
	}()
	// in[j][i] is the channel from input j's exchange to actor i; gch[i]
	// the one from actor i to the gather.
	in := make([][]chan Message, len(ins))
	for j := range in {
		in[j] = make([]chan Message, n)
		for i := range in[j] {
			in[j][i] = make(chan Message, exchangeBuffer)
		}
	}
	gch := make([]chan Message, n)
	for i := range gch {
		gch[i] = make(chan Message, exchangeBuffer)
	}
	for i := 0; i < n; i++ {
		a, err := buildShard(env, p, par, i, ins, in, gch[i], tail)
		if err != nil {
			return nil, err
		}
		d.Actors = append(d.Actors, a)
	}
	gather := &Actor{ID: par.ID, Mode: par.Mode, OnError: par.OnError, Log: par.Log}
	next := out
	if gatherOp != nil {
		next = &link{op: gatherOp, next: out}
		gather.Ops = append(gather.Ops, gatherOp)
	}
	merge := NewMerge(n, planner.Watermarks(p.Root.Input), next)
	for i, ch := range gch {
		gather.Inputs = append(gather.Inputs, ch)
		gather.Heads = append(gather.Heads, merge.Port(i))
	}
	d.Gather = gather
	// The fragment of the leaves, read by the view's actor.
	for j, node := range ins {
		x := NewExchange(env.Mem, par.Part.Keys[j], par.Part.KeyTypes, in[j])
		d.Exchanges = append(d.Exchanges, x)
		d.Closers = append(d.Closers, x)
		if err := d.build(env, node, x); err != nil {
			return nil, err
		}
	}
	for _, l := range d.Leaves {
		if _, ok := l.(*planner.Scan); !ok {
			return nil, fmt.Errorf("exec: a view's dataflow reads %T, not a scan", l)
		}
	}
	return d, nil
}

// buildShard builds actor i of the parallel fragment: the plan from its
// Materialize's input down to the partitioned operator, over shard i of
// every state table, reading in[j][i] for the operator's input j and
// ending in an exchange to the gather channel g.
func buildShard(env Env, p *planner.StreamPlan, par Parallel, i int, ins []planner.Node, in [][]chan Message, g chan Message, tail func(Env, int, Output) (Output, interface{ Close() })) (*Actor, error) {
	env.Table = func(slot int) *state.Table { return par.TableShard(slot, i) }
	env.VNodes = state.OwnedVNodes(i, par.N)
	ec := *env.Eval // operators may set Now
	env.Eval = &ec
	toGather := NewExchange(env.Mem, nil, nil, []chan Message{g})
	sd := &Dataflow{cut: map[planner.Node]int{}, cutHeads: make([]Output, len(ins))}
	for j, node := range ins {
		sd.cut[node] = j
	}
	head, closer := tail(env, i, toGather)
	if closer != nil {
		sd.Closers = append(sd.Closers, closer)
	}
	sd.Closers = append(sd.Closers, toGather)
	if err := sd.build(env, p.Root.Input, head); err != nil {
		sd.Close()
		return nil, err
	}
	a := &Actor{
		ID: par.ID, Mode: par.Mode, OnError: par.OnError, Log: par.Log,
		Heads: sd.cutHeads, Ops: sd.Closers, Downstream: []*Exchange{toGather},
	}
	for j := range ins {
		a.Inputs = append(a.Inputs, in[j][i])
	}
	return a, nil
}

// closeAll closes every operator of a dataflow that will not run.
func (d *Dataflow) closeAll() {
	d.Close()
	for _, a := range d.Actors {
		for _, op := range a.Ops {
			op.Close()
		}
	}
	if d.Gather != nil {
		for _, op := range d.Gather.Ops {
			op.Close()
		}
	}
}
