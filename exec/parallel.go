package exec

import (
	"fmt"
	"log/slog"
	"slices"

	"github.com/streamsql/streamsql/barrier"
	"github.com/streamsql/streamsql/planner"
	"github.com/streamsql/streamsql/state"
)

// exchangeBuffer is the capacity, in messages, of each channel between the
// fragments of a parallel dataflow.
const exchangeBuffer = 16

// Parallel says how to run a view's dataflow on several actors.
type Parallel struct {
	// N is the number of actors of each partitioned fragment (> 1).
	N     int
	Frags *planner.Fragments
	// TableShard returns the handle of state table slot for the actor
	// owning shard's virtual nodes (state.Store.TableShard).
	TableShard func(slot, shard int) *state.Table
	// ID, Mode, OnError and Log are those of the view's actor (Actor); the
	// parallel fragments' actors share its ID, so they stop with it.
	ID      uint32
	Mode    barrier.Mode
	OnError func(error)
	Log     *slog.Logger
}

// BuildParallelStream builds a view's dataflow on the fragments of
// par.Frags: fragment 0, which reads the plan's leaves (the dataflow's
// Heads, driven by the view's actor) and ends in the Exchanges from it,
// once more per further reader actor if its sources are split among
// several (Dataflow.Readers);
// par.N actors per other fragment (Dataflow.Actors), actor i of each over
// shard i of every state table, those of the last fragment ending each in
// its own Materialize over its shard of the view's storage (view.Shard);
// and the Gather actor, which merges the last fragment's streams into out.
// The caller runs the Actors and Gather (none of which acknowledges
// barriers) and wires the acknowledgements and the view's actor's
// Downstream with WireAcks. Closing the view's actor's operators (Closers)
// closes the exchanges from it, which ends the other actors in turn.
//
// Every barrier reaches the gather only through every actor of every
// fragment, each of which seals its tables before forwarding it, so the
// gather's alignment of barrier n means that the whole dataflow but the
// view's actor has sealed epoch n (see ParallelAck for that one).
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
		mat.shard = &materializeShard{part: newPartitioner(par.Frags.ViewKeys, par.Frags.ViewKeyTypes, par.N), index: int32(shard), table: st.Table}
		return &link{op: mat, next: next}, mat
	}
	return buildParallel(env, p, par, tail, nil, out)
}

// BuildParallelSink is BuildParallelStream for a sink: the last fragment's
// actors end where the Materialize would be, and the Gather actor feeds
// sink.
func BuildParallelSink(env Env, p *planner.StreamPlan, sink *Sink, par Parallel, out Output) (*Dataflow, error) {
	tail := func(_ Env, _ int, next Output) (Output, interface{ Close() }) { return next, nil }
	return buildParallel(env, p, par, tail, sink, out)
}

// exchangeChannels are the channels of one planner.Exchange: ch[p][c]
// carries producer p's rows for consumer c (one producer if the exchange
// is from fragment 0).
type exchangeChannels [][]chan Message

func newExchangeChannels(producers, consumers int) exchangeChannels {
	ch := make(exchangeChannels, producers)
	for p := range ch {
		ch[p] = make([]chan Message, consumers)
		for c := range ch[p] {
			ch[p][c] = make(chan Message, exchangeBuffer)
		}
	}
	return ch
}

// buildParallel builds the fragments (see BuildParallelStream); tail builds
// the end of each last-fragment actor's chain; gatherOp, if set, is the
// operator the gather actor runs before out.
func buildParallel(env Env, p *planner.StreamPlan, par Parallel, tail func(Env, int, Output) (Output, interface{ Close() }), gatherOp Operator, out Output) (df *Dataflow, err error) {
	f := par.Frags
	n := par.N
	d := &Dataflow{}
	defer func() {
		if err != nil {
			d.closeAll()
		}
	}()
	readers := max(f.Readers, 1)
	chans := make([]exchangeChannels, len(f.Exchanges))
	for i, x := range f.Exchanges {
		producers := n
		if x.From == 0 {
			producers = readers
		}
		chans[i] = newExchangeChannels(producers, n)
	}
	gch := make([]chan Message, n)
	for i := range gch {
		gch[i] = make(chan Message, exchangeBuffer)
	}
	last := len(f.Frags) - 1
	for fi := 1; fi <= last; fi++ {
		for i := 0; i < n; i++ {
			var a *Actor
			if fi == last {
				a, err = buildShard(env, par, fi, i, chans, func(env Env) (Output, []interface{ Close() }, *Exchange) {
					toGather := NewExchange(env.Mem, nil, nil, []chan Message{gch[i]})
					head, closer := tail(env, i, toGather)
					if closer != nil {
						return head, []interface{ Close() }{closer, toGather}, toGather
					}
					return head, []interface{ Close() }{toGather}, toGather
				})
			} else {
				a, err = buildShard(env, par, fi, i, chans, func(env Env) (Output, []interface{ Close() }, *Exchange) {
					o := f.Frags[fi].Out
					x := f.Exchanges[o]
					ex := NewExchange(env.Mem, x.Keys, x.KeyTypes, chans[o][i])
					return ex, []interface{ Close() }{ex}, ex
				})
			}
			if err != nil {
				return nil, err
			}
			d.Actors = append(d.Actors, a)
		}
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
	// Fragment 0, read by the view's actor: the exchanges from it in plan
	// order, so that its leaves are the plan's in order.
	var from0 []int
	for i, x := range f.Exchanges {
		if x.From == 0 {
			from0 = append(from0, i)
		}
	}
	leafIndex := func(x int) int {
		n := f.Exchanges[x].Input
		for len(n.Inputs()) > 0 {
			n = n.Inputs()[0]
		}
		sc, _ := n.(*planner.Scan)
		return slices.Index(p.Leaves, sc)
	}
	slices.SortStableFunc(from0, func(a, b int) int { return leafIndex(a) - leafIndex(b) })
	if err := buildReader(env, p, f, d, from0, chans, 0); err != nil {
		return nil, err
	}
	for r := 1; r < readers; r++ {
		rd := &Dataflow{}
		d.Readers = append(d.Readers, rd)
		// Each reader's operators have their own evaluation context (they
		// may set Now), as the partitioned actors'.
		renv := env
		ec := *env.Eval
		renv.Eval = &ec
		if err := buildReader(renv, p, f, rd, from0, chans, r); err != nil {
			return nil, err
		}
	}
	return d, nil
}

// buildReader builds into d reader r's copy of fragment 0: the exchanges
// from0 out of it, in order, over producer r's channels, and below them the
// plan's leaves in order.
func buildReader(env Env, p *planner.StreamPlan, f *planner.Fragments, d *Dataflow, from0 []int, chans []exchangeChannels, r int) error {
	for _, i := range from0 {
		x := f.Exchanges[i]
		ex := NewExchange(env.Mem, x.Keys, x.KeyTypes, chans[i][r])
		d.Exchanges = append(d.Exchanges, ex)
		d.Closers = append(d.Closers, ex)
		if err := d.build(env, x.Input, ex); err != nil {
			return err
		}
	}
	for i, l := range d.Leaves {
		if _, ok := l.(*planner.Scan); !ok {
			return fmt.Errorf("exec: a view's dataflow reads %T, not a scan", l)
		}
		if i >= len(p.Leaves) || l != planner.Node(p.Leaves[i]) {
			return fmt.Errorf("exec: fragment 0 reads the plan's scans out of order")
		}
	}
	return nil
}

// buildShard builds actor i of fragment fi: the plan from the fragment's
// root down to its exchanges in, over shard i of every state table,
// reading for each exchange in its channels to consumer i (through a Merge
// of the producers' streams when there are several, and a NetChanges when
// the exchange nets), and ending in what end returns: the output of the
// fragment's root, the operators it adds, and the actor's Downstream.
func buildShard(env Env, par Parallel, fi, i int, chans []exchangeChannels, end func(Env) (Output, []interface{ Close() }, *Exchange)) (*Actor, error) {
	f := par.Frags
	fr := f.Frags[fi]
	env.Table = func(slot int) *state.Table { return par.TableShard(slot, i) }
	env.VNodes = state.OwnedVNodes(i, par.N)
	ec := *env.Eval // operators may set Now
	env.Eval = &ec
	sd := &Dataflow{cut: map[planner.Node]int{}, cutHeads: make([]Output, len(fr.Ins))}
	for j, x := range fr.Ins {
		sd.cut[f.Exchanges[x].Input] = j
	}
	head, closers, down := end(env)
	sd.Closers = append(sd.Closers, closers...)
	if err := sd.build(env, fr.Root, head); err != nil {
		sd.Close()
		return nil, err
	}
	a := &Actor{
		ID: par.ID, Mode: par.Mode, OnError: par.OnError, Log: par.Log,
		Ops: sd.Closers, Downstream: []*Exchange{down},
	}
	for j, xi := range fr.Ins {
		x := f.Exchanges[xi]
		h := sd.cutHeads[j]
		if h == nil {
			sd.Close()
			return nil, fmt.Errorf("exec: fragment %d does not reach its exchange %d", fi, xi)
		}
		if x.Net {
			net := NewNetChanges(env.Mem, planner.Types(x.Input.Columns()))
			a.Ops = append(a.Ops, net)
			h = &link{op: net, next: h}
		}
		producers := chans[xi]
		if len(producers) == 1 {
			a.Inputs = append(a.Inputs, producers[0][i])
			a.Heads = append(a.Heads, h)
			continue
		}
		merge := NewMerge(len(producers), planner.Watermarks(x.Input), h)
		for p := range producers {
			a.Inputs = append(a.Inputs, producers[p][i])
			a.Heads = append(a.Heads, merge.Port(p))
		}
	}
	return a, nil
}

// closeAll closes every operator of a dataflow that will not run.
func (d *Dataflow) closeAll() {
	d.Close()
	for _, rd := range d.Readers {
		rd.Close()
	}
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
