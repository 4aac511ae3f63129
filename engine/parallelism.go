package engine

import (
	"context"
	"fmt"
	"runtime"
	"strconv"
	"strings"
	"sync"

	"github.com/streamsql/streamsql/barrier"
	"github.com/streamsql/streamsql/catalog"
	"github.com/streamsql/streamsql/exec"
	"github.com/streamsql/streamsql/planner"
	"github.com/streamsql/streamsql/sql"
	"github.com/streamsql/streamsql/sqlerr"
	"github.com/streamsql/streamsql/state"
)

// MaxParallelism bounds streaming_parallelism: an actor per virtual node.
const MaxParallelism = state.VNodeCount

// parallelismValue checks a value of streaming_parallelism: "default" (or
// 0: one actor per core) or a number of actors.
func parallelismValue(v string) (string, error) {
	s := strings.ToLower(strings.Trim(strings.TrimSpace(v), "'"))
	if s == "default" || s == "0" {
		return "default", nil
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < 1 || n > MaxParallelism {
		return "", sqlerr.New(sqlerr.InvalidParameterValue,
			"invalid value for parameter \"streaming_parallelism\": \"%s\"", v).
			WithHint("Use default or a number of actors from 1 to %d.", MaxParallelism)
	}
	return strconv.Itoa(n), nil
}

// defaultParallelism is what streaming_parallelism = default gives:
// Options.StreamingParallelism, or one actor per core the Go runtime runs
// goroutines on (GOMAXPROCS, which follows the process's CPU quota); see
// docs/decisions.md.
func (e *Engine) defaultParallelism() int {
	if n := e.opts.StreamingParallelism; n > 0 {
		return min(n, MaxParallelism)
	}
	return min(runtime.GOMAXPROCS(0), MaxParallelism)
}

// sessionParallelism is the parallelism a view created with setting v
// gets: the number, or defaultParallelism for "default".
func (e *Engine) sessionParallelism(v string) int {
	if n, err := strconv.Atoi(v); err == nil && n >= 1 {
		return n
	}
	return e.defaultParallelism()
}

// viewParallelism is the number of actors rel's partitioned fragment runs
// on (views created before parallelism existed have none stored: one).
func viewParallelism(rel *catalog.Relation) int {
	return max(rel.Parallelism, 1)
}

// parallelPlan returns how rel's dataflow runs on several actors, or nil
// if it runs as one (parallelism 1, or a plan planner.CutFragments cannot
// cut).
func (e *Engine) parallelPlan(rel *catalog.Relation, plan *planner.StreamPlan, v *view) *exec.Parallel {
	n := viewParallelism(rel)
	if n <= 1 || !parallelSink(rel) {
		return nil
	}
	frags := cutFragments(plan, n)
	if frags == nil || (rel.AtLeastOnce && !frags.SingleProducer()) {
		// Unaligned merges of several producers would mix epochs, and with
		// them the order of a key's changes: such views run as one actor.
		return nil
	}
	return &exec.Parallel{
		N:     n,
		Frags: frags,
		TableShard: func(slot, shard int) *state.Table {
			if shard == 0 {
				return v.tables[slot]
			}
			return e.store.TableShard(state.TableID(rel.OperatorTables[slot]), shard)
		},
		ID:   rel.ID,
		Mode: alignmentMode(rel),
		Log:  e.log.With("view", rel.Name),
		// OnError: set by wireParallel, as the view's actor's.
	}
}

// cutFragments cuts plan into fragments at parallelism n: with its sources'
// splits shared among sourceReaders(plan, n) reader actors when its part
// reading them is stateless, else with one reader (planner.CutFragments).
func cutFragments(plan *planner.StreamPlan, n int) *planner.Fragments {
	if r := sourceReaders(plan, n); r > 1 {
		if f := planner.CutSourceFragments(plan, r); f != nil {
			return f
		}
	}
	return planner.CutFragments(plan)
}

// sourceReaders is the number of actors that can share the reading of
// plan's sources at parallelism n: n, or fewer if a source has fewer
// splits, when every upstream is a generated source (datagen, nexmark)
// with several splits; else 1.
func sourceReaders(plan *planner.StreamPlan, n int) int {
	if n <= 1 || len(plan.Upstreams) == 0 {
		return 1
	}
	r := n
	for _, up := range plan.Upstreams {
		if up.Kind != catalog.Source {
			return 1
		}
		r = min(r, rowSourceSplits(up))
	}
	return max(r, 1)
}

// shardStorage returns the storage handles of shard i of a view.
func (e *Engine) shardStorage(rel *catalog.Relation, i int) exec.ViewStorage {
	st := exec.ViewStorage{ID: rel.ID, Rows: e.store.TableShard(state.TableID(rel.StateTable), i), Indexes: rel.Indexes,
		Table: func(id state.TableID) *state.Table { return e.store.TableShard(id, i) }}
	for _, idx := range rel.Indexes {
		st.IndexTables = append(st.IndexTables, e.store.TableShard(state.TableID(idx.StateTable), i))
	}
	return st
}

// buildParallel builds a view's (or sink's) dataflow on par's actors.
func (e *Engine) buildParallel(env exec.Env, rel *catalog.Relation, plan *planner.StreamPlan, par *exec.Parallel, v *view) (*exec.Dataflow, error) {
	if rel.Kind == catalog.Sink {
		sink, err := e.openSink(rel, v)
		if err != nil {
			return nil, err
		}
		return exec.BuildParallelSink(env, plan, sink, *par, v.disp)
	}
	storage := e.shardStorage(rel, 0)
	storage.Shard = func(i int) exec.ViewStorage { return e.shardStorage(rel, i) }
	return exec.BuildParallelStream(env, plan, storage, *par, v.disp)
}

// wireParallel makes readers (the view's actor first, then the other
// reader actors, if its sources' splits are shared among several) the
// readers of a parallel dataflow's leaves: an epoch is acknowledged with
// ack once its barrier has passed every actor and each reader r has sealed
// its own tables of it with seals[r] (exec.Dataflow.WireReaderAcks).
func wireParallel(readers []*exec.Actor, df *exec.Dataflow, seals []func(b *barrier.Barrier), ack func(b *barrier.Barrier), onError func(error)) {
	df.WireReaderAcks(readers, func(r int, b *barrier.Barrier) { seals[r](b) }, ack)
	for _, pa := range append(df.Actors[:len(df.Actors):len(df.Actors)], df.Gather) {
		pa.OnError = onError
	}
}

// runParallel runs the actors of a parallel dataflow besides the view's
// own; wait returns when they have all stopped.
func (e *Engine) runParallel(v *view) (wait func()) {
	var wg sync.WaitGroup
	for _, a := range v.parallel {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := a.Run(e.ctx); err != nil && e.ctx.Err() == nil {
				e.log.Error("view dataflow stopped", "view", v.rel.Name, "err", err)
			}
		}()
	}
	return wg.Wait
}

// explainParallel appends to a view's plan how it runs on n actors, if it
// runs on more than one.
func explainParallel(lines []string, plan *planner.StreamPlan, n int) []string {
	if n <= 1 {
		return lines
	}
	// (An at_least_once view whose fragments merge several producers runs
	// as one actor; EXPLAIN CREATE shows the plan at the session's mode
	// default, exactly once.)
	if f := cutFragments(plan, n); f != nil {
		lines = append(lines, f.Describe(n)...)
	}
	return lines
}

// alterViewParallelism rescales a running view: a barrier stops its
// dataflow; once that barrier's epoch is committed, so that every actor's
// state is in the store, the dataflow is rebuilt on the new number of
// actors over the same state tables (each new actor reads the keys of the
// virtual nodes it now owns) and the same input channels, which have kept
// the changes made meanwhile. Nothing is lost or read twice: the changes
// after the barrier wait in the channels (writers block when they are
// full) until the new dataflow reads them.
func (e *Engine) alterViewParallelism(ctx context.Context, cat *catalog.Catalog, st *sql.AlterViewParallelism, w notifier) error {
	n := st.N
	if n == 0 {
		n = e.defaultParallelism()
	}
	if n < 1 || n > MaxParallelism {
		return sqlerr.New(sqlerr.InvalidParameterValue, "parallelism must be between 1 and %d", MaxParallelism)
	}
	e.ddlMu.Lock()
	defer e.ddlMu.Unlock()
	rel, err := e.resolve(cat, st.Path, st.Name)
	if err != nil {
		return err
	}
	if rel == nil || rel.Kind != catalog.MaterializedView {
		return sqlerr.New(sqlerr.UndefinedTable, "materialized view \"%s\" does not exist", st.Name)
	}
	if err := e.backfillError(rel); err != nil {
		return err
	}
	if rel.AtLeastOnce {
		// Its actor reads past a barrier before the barrier has arrived on
		// every input, so stopping it there would drop what it read.
		return sqlerr.New(sqlerr.FeatureNotSupported, "cannot change the parallelism of materialized view \"%s\": it was created with checkpoint_mode = at_least_once", rel.Name)
	}
	e.mu.Lock()
	old := e.views[rel.ID]
	e.mu.Unlock()
	if old == nil || old.failed.Load() != nil {
		return sqlerr.New(sqlerr.ObjectNotInPrerequisiteState, "materialized view \"%s\" is not running", rel.Name)
	}
	changed := *rel
	changed.Parallelism = n
	if old.readerActors > 1 || e.readerActors(&changed, old.plan) > 1 {
		return e.rescaleReaders(old, &changed, cat)
	}
	var catErr error
	epoch := e.coord.Schedule(barrier.Change{
		Mutations:   []barrier.Mutation{&exec.StopActor{Actor: rel.ID}},
		AfterInject: func(uint64) { catErr = e.catSrc.put(&changed) },
	})
	// The stopped dataflow acknowledged epoch; the new one acknowledges the
	// next ones, so the commit of epoch does not wait for it.
	if err := e.awaitStopped(epoch, old); err != nil {
		return err
	}
	nv := &view{rel: &changed, plan: old.plan, disp: old.disp, done: make(chan struct{}), inputs: old.inputs, readers: old.readers}
	nv, a, job, err := e.buildViewOn(nv)
	if err != nil {
		// The old dataflow cannot come back either: mark the view failed.
		err = fmt.Errorf("rebuilding materialized view %s: %w", rel.Name, err)
		old.failed.Store(&err)
		return err
	}
	e.mu.Lock()
	e.views[rel.ID] = nv
	e.mu.Unlock()
	e.runActor(nv, a)
	if job != nil {
		e.runJob(nv, job)
	}
	if err := e.awaitCommit(e.ctx, epoch+1); err != nil {
		return err
	}
	if catErr != nil {
		return catErr
	}
	cat.Add(&changed)
	return nil
}

// awaitStopped waits until the dataflows of views, stopped by the barrier
// of epoch, have returned, and then until epoch is committed.
func (e *Engine) awaitStopped(epoch uint64, views ...*view) error {
	for _, v := range views {
		select {
		case <-v.done:
		case <-e.ctx.Done():
			return e.ctx.Err()
		}
	}
	return e.awaitCommit(e.ctx, epoch)
}

// parallelSink reports whether rel, if it is a sink, may run on several
// actors: only a blackhole's writers are independent. A Kafka sink's
// transactional producer and outbox, a subscription's change log and a
// SUBSCRIBE's subscriber are one per sink, so such sinks run as one actor.
func parallelSink(rel *catalog.Relation) bool {
	return rel.Kind != catalog.Sink || rel.Options["connector"] == "blackhole"
}

// readerActors is the number of actors that read rel's sources when its
// dataflow runs with plan at rel's parallelism.
func (e *Engine) readerActors(rel *catalog.Relation, plan *planner.StreamPlan) int {
	if par := e.parallelPlan(rel, plan, nil); par != nil {
		return max(par.Frags.Readers, 1)
	}
	return 1
}

// rescaleReaders rescales a view whose sources' splits are shared among
// several reader actors (before or after; see sourceReaders) to
// changed.Parallelism. A barrier stops its dataflow and its readers: each
// reader records the position of each of its splits with it, and the view
// acknowledges nothing after it. Once that epoch is committed, the
// dataflow is rebuilt on the new number of actors with new readers, which
// share the splits anew and resume each at its committed position; it
// acknowledges the epochs after the barrier that starts them. What the old
// readers generated after the first barrier is dropped, and generated
// again by the new ones.
func (e *Engine) rescaleReaders(old *view, changed *catalog.Relation, cat *catalog.Catalog) error {
	id := changed.ID
	var catErr error
	epoch := e.coord.Schedule(barrier.Change{
		Mutations:    []barrier.Mutation{&exec.StopActor{Actor: id}},
		RemoveActors: []uint32{id},
		AfterInject: func(uint64) {
			catErr = e.catSrc.put(changed)
			for _, r := range old.readers {
				if r != nil {
					e.coord.RemoveSource(r)
				}
			}
		},
	})
	if err := e.awaitStopped(epoch, old); err != nil {
		return err
	}
	old.closeReaders()
	if catErr != nil {
		return catErr
	}
	nv := &view{rel: changed, plan: old.plan, disp: old.disp, done: make(chan struct{})}
	nv, a, _, err := e.buildViewOn(nv)
	if err == nil {
		if err = e.openReaders(nv); err != nil {
			discardBuilt(nv, a)
			nv.discardReaders()
		}
	}
	if err != nil {
		err = fmt.Errorf("rebuilding materialized view %s: %w", changed.Name, err)
		old.failed.Store(&err)
		return err
	}
	e.mu.Lock()
	e.views[id] = nv
	e.mu.Unlock()
	started := e.coord.Schedule(barrier.Change{
		AddActors: []uint32{id},
		AfterInject: func(uint64) {
			for _, r := range nv.readers {
				if r != nil {
					e.coord.AddSource(r)
					go r.run()
				}
			}
		},
	})
	e.runActor(nv, a)
	if err := e.awaitCommit(e.ctx, started+1); err != nil {
		return err
	}
	cat.Add(changed)
	return nil
}
