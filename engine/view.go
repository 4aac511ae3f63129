package engine

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/streamsql/streamsql/barrier"
	"github.com/streamsql/streamsql/catalog"
	"github.com/streamsql/streamsql/exec"
	"github.com/streamsql/streamsql/exec/eval"
	"github.com/streamsql/streamsql/ir"
	"github.com/streamsql/streamsql/planner"
	"github.com/streamsql/streamsql/sql"
	"github.com/streamsql/streamsql/sqlerr"
	"github.com/streamsql/streamsql/state"
)

// inputBuffer is the capacity, in messages, of a view's input channel.
const inputBuffer = 16

// view is a running materialized view: its actor reads the upstream
// relation's change stream and its dispatcher feeds the views built on it.
type view struct {
	rel  *catalog.Relation
	plan *planner.StreamPlan
	// inputs are the channels of the view's upstream streams, one per scan
	// of its plan (plan.Upstreams), per reader actor: reader actor r's
	// input i is inputs[r*len(plan.Upstreams)+i].
	inputs []chan exec.Message
	// readers are the view's own readers of the sources it reads (nil for
	// inputs that are tables or views), laid out as inputs.
	readers []viewSourceReader
	// readerActors is the number of actors reading the view's sources (more
	// than one when its sources' splits are shared among them).
	readerActors int
	disp         *exec.Dispatcher
	tables       []*state.Table
	done         chan struct{}
	// exprErrors counts rows whose expressions failed (and yielded NULL);
	// lateRows those dropped for arriving behind a watermark.
	exprErrors atomic.Int64
	lateRows   atomic.Int64
	failed     atomic.Pointer[error]
	// sinkRows counts the changes a sink has written.
	sinkRows atomic.Int64
	// sinkWriter is a sink's connector writer, once opened.
	sinkWriter atomic.Pointer[exec.SinkWriter]
	// stats are the dataflow's operator counters (EXPLAIN ANALYZE, metrics).
	stats *exec.Stats
	// parallel are the actors of a parallel dataflow besides the view's
	// own (see wireParallel), run with it.
	parallel []*exec.Actor
}

// planView plans a view's defining statement. keepJoinOrder plans its inner
// joins in FROM order, for views created before join ordering (see
// catalog.Relation.JoinOrder).
func (e *Engine) planView(stmt *ir.CreateMaterializedView, keepJoinOrder bool) (*planner.StreamPlan, error) {
	return planner.PlanStreamWith(stmt.Query, planner.StreamOptions{EmitOnWindowClose: stmt.EmitOnWindowClose, KeepJoinOrder: keepJoinOrder})
}

// buildView creates the view's actor (not yet running) and, if some of its
// inputs are still to be backfilled, its backfill job (not yet running).
func (e *Engine) buildView(rel *catalog.Relation, plan *planner.StreamPlan) (*view, *exec.Actor, *backfillJob, error) {
	return e.buildViewOn(&view{rel: rel, plan: plan, disp: exec.NewDispatcher(rel.ID), done: make(chan struct{})})
}

// buildViewOn builds the dataflow of v, whose rel, plan, disp and done are
// set; a view rebuilt on the inputs of its stopped dataflow (a rescale)
// also keeps its inputs and readers.
func (e *Engine) buildViewOn(v *view) (*view, *exec.Actor, *backfillJob, error) {
	rel, plan := v.rel, v.plan
	for _, id := range rel.OperatorTables {
		v.tables = append(v.tables, e.store.Table(state.TableID(id)))
	}
	viewTable := e.store.Table(state.TableID(rel.StateTable))
	pauseTable := e.store.Table(state.TableID(rel.PauseTable))
	v.tables = append(v.tables, viewTable, pauseTable)
	log := e.log.With("view", rel.Name)
	env := exec.Env{
		Mem:            e.mem,
		Eval:           &eval.Context{Mem: e.mem, Errors: &v.exprErrors, Log: log},
		Table:          func(slot int) *state.Table { return v.tables[slot] },
		AggCacheGroups: e.opts.AggCacheGroups,
		CachePool:      e.opCaches,
		LateRows:       &v.lateRows,
		StartTime:      e.coord.LastBarrierTime(),
		Stats:          exec.NewStats(plan.Root),
	}
	v.stats = env.Stats
	storage := exec.ViewStorage{ID: rel.ID, Rows: viewTable, Indexes: rel.Indexes}
	for _, idx := range rel.Indexes {
		storage.IndexTables = append(storage.IndexTables, e.store.Table(state.TableID(idx.StateTable)))
	}
	var df *exec.Dataflow
	var err error
	par := e.parallelPlan(rel, plan, v)
	if par != nil {
		df, err = e.buildParallel(env, rel, plan, par, v)
	} else if rel.Kind == catalog.Sink {
		df, err = e.buildSink(env, rel, plan, v)
	} else {
		df, err = exec.BuildStream(env, plan, storage, v.disp)
	}
	if err != nil {
		return nil, nil, nil, err
	}
	v.readerActors = 1 + len(df.Readers)
	for len(v.inputs) < v.readerActors*len(plan.Upstreams) {
		v.inputs = append(v.inputs, make(chan exec.Message, inputBuffer))
	}
	inputs, heads, err := e.readerHeads(v, df.Heads, 0, pauseTable)
	if err != nil {
		closeDataflow(df)
		return nil, nil, nil, err
	}
	var job *backfillJob
	var backfillTable *state.Table
	if rel.BackfillTable != 0 {
		backfillTable = e.store.Table(state.TableID(rel.BackfillTable))
		v.tables = append(v.tables, backfillTable)
		if job, err = e.addBackfills(rel, plan, heads, backfillTable); err != nil {
			closeDataflow(df)
			return nil, nil, nil, err
		}
	}
	// The pause gates write kept changes on the actor's goroutine; they
	// belong to the epoch once every input's barrier has arrived.
	seal := func(b *barrier.Barrier) {
		pauseTable.Seal(b.Epoch)
		if backfillTable != nil {
			backfillTable.Seal(b.Epoch) // as the pause table
		}
	}
	onError := func(err error) {
		v.failed.Store(&err)
		if job != nil {
			job.fail()
		}
	}
	a := &exec.Actor{
		ID:     rel.ID,
		Inputs: inputs,
		Heads:  heads,
		Ops:    df.Closers,
		Mode:   alignmentMode(rel),
		Aligned: func(epoch uint64, d time.Duration) {
			e.stats.aligned(epoch, rel.Name, d)
		},
		Ack: func(b *barrier.Barrier) {
			seal(b)
			e.coord.Ack(rel.ID, b.Epoch)
		},
		OnError: onError,
		Log:     log,
	}
	if df.Gather != nil {
		readers := []*exec.Actor{a}
		seals := []func(*barrier.Barrier){seal}
		for r, rd := range df.Readers {
			ra, rseal, err := e.readerActor(v, rd, r+1, onError)
			if err != nil {
				closeDataflow(df)
				return nil, nil, nil, err
			}
			readers, seals = append(readers, ra), append(seals, rseal)
		}
		wireParallel(readers, df, seals, func(b *barrier.Barrier) { e.coord.Ack(rel.ID, b.Epoch) }, onError)
		v.parallel = append(append(df.Actors, df.Gather), readers[1:]...)
	}
	return v, a, job, nil
}

// closeDataflow closes every operator of df, which never ran: those of
// the view's actor, of its other reader actors and, in a parallel
// dataflow, of its parallel actors and gather (a sink's writer among
// them, which stops its delivery).
func closeDataflow(df *exec.Dataflow) {
	df.Close()
	for _, rd := range df.Readers {
		rd.Close()
	}
	for _, a := range df.Actors {
		closeOps(a)
	}
	if df.Gather != nil {
		closeOps(df.Gather)
	}
}

// closeOps closes the operators of a, which never ran.
func closeOps(a *exec.Actor) {
	for _, op := range a.Ops {
		op.Close()
	}
}

// discardBuilt closes the dataflow buildView built for v, whose actor is
// a, when it is not to run after all: its operators and those of its
// other actors (v.parallel). It leaves v's inputs and readers alone, which
// a rebuilt view may share with its old dataflow (see discardReaders).
func discardBuilt(v *view, a *exec.Actor) {
	closeOps(a)
	for _, pa := range v.parallel {
		closeOps(pa)
	}
}

// discardReaders stops the source readers openReaders opened for v, none
// of which was started or added to the coordinator, and releases what
// they sent into v's inputs. A reader's close waits for its run, so each
// one is started to be stopped.
func (v *view) discardReaders() {
	for _, r := range v.readers {
		if r != nil {
			go r.run()
		}
	}
	v.closeReaders()
}

// readerHeads returns reader actor r's inputs (its share of v.inputs) and
// their heads: a pause gate per input, over pause, in front of heads.
func (e *Engine) readerHeads(v *view, heads []exec.Output, r int, pause *state.Table) ([]<-chan exec.Message, []exec.Output, error) {
	u := len(v.plan.Upstreams)
	inputs := make([]<-chan exec.Message, u)
	gates := make([]exec.Output, u)
	for i := range u {
		inputs[i] = v.inputs[r*u+i]
		gate, err := exec.NewPauseGate(e.mem, v.rel.ID, i, heads[i], pause, planner.Types(v.plan.Leaves[i].Cols), v.rel.Paused)
		if err != nil {
			return nil, nil, err
		}
		gates[i] = gate
	}
	return inputs, gates, nil
}

// readerActor returns the actor of reader r (> 0) of a view whose sources
// are split among several reader actors: it drives rd, its copy of the
// fragment reading the sources, from its share of the view's inputs. Its
// pause gates keep their changes in shard r of the view's pause table,
// which it seals with seal.
func (e *Engine) readerActor(v *view, rd *exec.Dataflow, r int, onError func(error)) (*exec.Actor, func(*barrier.Barrier), error) {
	pause := e.store.TableShard(state.TableID(v.rel.PauseTable), r)
	inputs, heads, err := e.readerHeads(v, rd.Heads, r, pause)
	if err != nil {
		return nil, nil, err
	}
	a := &exec.Actor{ID: v.rel.ID, Inputs: inputs, Heads: heads, Ops: rd.Closers, Mode: alignmentMode(v.rel),
		OnError: onError, Log: e.log.With("view", v.rel.Name, "reader", r)}
	return a, func(b *barrier.Barrier) { pause.Seal(b.Epoch) }, nil
}

func (e *Engine) runActor(v *view, a *exec.Actor) {
	e.actors.Add(1)
	go func() {
		defer e.actors.Done()
		defer close(v.done)
		wait := e.runParallel(v)
		defer func() {
			wait()
			releaseBuffered(v.parallel)
		}()
		if err := a.Run(e.ctx); err != nil && e.ctx.Err() == nil {
			e.log.Error("view dataflow stopped", "view", v.rel.Name, "err", err)
		}
	}()
}

// upstreamDispatcher returns the dispatcher of relation id's change stream.
func (e *Engine) upstreamDispatcher(id uint32) (*exec.Dispatcher, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if w := e.tables[id]; w != nil {
		return w.disp, nil
	}
	if v := e.views[id]; v != nil {
		return v.disp, nil
	}
	return nil, fmt.Errorf("engine: relation %d has no running dataflow", id)
}

// restoreView rebuilds a view's dataflow at startup from its stored
// definition; its state is already in the store.
func (e *Engine) restoreView(rel *catalog.Relation) error {
	parsed, err := sql.Parse(rel.SQL)
	if err != nil || len(parsed) != 1 {
		return fmt.Errorf("stored definition does not parse: %v", err)
	}
	st, err := sql.BindStoredView(e.cat.In(rel.Database), rel, parsed[0])
	if err != nil {
		return err
	}
	cmv, ok := st.(*ir.CreateMaterializedView)
	if cs, sink := st.(*sql.CreateSink); sink {
		cmv, ok = cs.View, true
	}
	if !ok {
		return fmt.Errorf("stored definition is a %s", st.Tag())
	}
	plan, err := e.planView(cmv, !rel.JoinOrder)
	if err != nil {
		return err
	}
	if plan.Tables != len(rel.OperatorTables) || len(plan.Root.Cols) != len(rel.Columns) {
		return fmt.Errorf("plan has %d state tables and %d columns, catalog has %d and %d (incompatible version?)",
			plan.Tables, len(plan.Root.Cols), len(rel.OperatorTables), len(rel.Columns))
	}
	v, a, job, err := e.buildView(rel, plan)
	if err != nil {
		return err
	}
	// Everything that can fail comes before anything starts; a failure
	// closes what was built (a sink's delivery, operators' memory).
	ups := make([]*exec.Dispatcher, len(plan.Upstreams))
	for i, upRel := range plan.Upstreams {
		if upRel.Kind == catalog.Source {
			continue
		}
		if ups[i], err = e.upstreamDispatcher(upRel.ID); err != nil {
			discardBuilt(v, a)
			return err
		}
	}
	if err := e.openReaders(v); err != nil {
		discardBuilt(v, a)
		v.discardReaders()
		return err
	}
	e.startHistory(rel, v.disp)
	for _, r := range v.readers {
		if r != nil {
			e.coord.AddSource(r)
			go r.run()
		}
	}
	for i, up := range ups {
		if up != nil {
			up.AddOutputNow(rel.ID, v.inputs[i])
		}
	}
	e.mu.Lock()
	e.views[rel.ID] = v
	e.mu.Unlock()
	e.coord.AddRunningActor(rel.ID)
	if job != nil {
		// A backfill interrupted by a restart goes on in the background.
		e.runJob(v, job)
	}
	e.runActor(v, a)
	return nil
}

// createView creates a materialized view: it attaches a new dataflow to the
// upstreams' change streams at barrier n; the view's catalog entry and its
// first state land in epoch n+1. Its inputs from tables and views start with
// a Backfill each, which feeds the dataflow the upstream's rows chunk by
// chunk at the barriers after n while checkpoints go on; createView returns
// once the backfill is done and committed. A cancel (ctx) during the
// backfill drops the view. With sinkOptions it creates a sink instead (see
// createSink).
func (e *Engine) createView(ctx context.Context, cat *catalog.Catalog, stmt *ir.CreateMaterializedView, atLeastOnce bool, parallelism int, w notifier, sinkOptions map[string]string) error {
	e.ddlMu.Lock()
	unlock := sync.OnceFunc(e.ddlMu.Unlock)
	defer unlock()
	if exists, err := e.nameTaken(cat, stmt.Schema, stmt.Name, stmt.IfNotExists, w); exists {
		return err
	}
	plan, err := e.planView(stmt, false)
	if err != nil {
		return err
	}
	for _, up := range plan.Upstreams {
		if err := e.backfillError(up); err != nil {
			return err
		}
	}
	ids := e.catSrc.allocIDs(4 + plan.Tables)
	rel := &catalog.Relation{
		Database:       cat.DatabaseName(),
		ID:             ids[0],
		Schema:         stmt.Schema,
		Name:           stmt.Name,
		Kind:           viewKind(sinkOptions),
		Options:        sinkOptions,
		Key:            plan.Root.Key,
		StateTable:     ids[1],
		PauseTable:     ids[2],
		BackfillTable:  ids[3],
		OperatorTables: ids[4:],
		SQL:            stmt.SQL,
		DependsOn:      dependencies(plan.Upstreams),
		Refs:           stmt.Refs,
		Functions:      stmt.Functions,
		CallsFunctions: stmt.CallsFunctions,
		ReadsThrough:   stmt.ReadsThrough,
		AtLeastOnce:    atLeastOnce,
		Parallelism:    parallelism,
		JoinOrder:      true,
		TimeZone:       stmt.TimeZone,
		IntervalSpans:  true,
		// Views over this one see its watermarks, and whether it only
		// inserts.
		WatermarkColumns: planner.Watermarks(plan.Root),
		AppendOnly:       planner.AppendOnly(plan.Root),
	}
	for _, c := range plan.Root.Cols {
		rel.Columns = append(rel.Columns, catalog.Column{Name: c.Name, Type: c.Type, Hidden: c.Hidden})
	}
	if sinkOptions == nil {
		rel.Options = withRetainHistory(nil, stmt.RetainHistory)
		if e.retainHistoryOf(rel) > 0 {
			rel.HistoryTable = e.catSrc.allocIDs(1)[0]
		}
	}
	v, a, job, err := e.buildView(rel, plan)
	if err != nil {
		return err
	}
	if err := e.openReaders(v); err != nil {
		discardBuilt(v, a)
		v.discardReaders()
		return err
	}
	e.startHistory(rel, v.disp)
	e.mu.Lock()
	e.views[rel.ID] = v
	e.mu.Unlock()
	var attach []barrier.Mutation
	for i, up := range plan.Upstreams {
		if up.Kind != catalog.Source {
			attach = append(attach, &exec.AddOutput{Relation: up.ID, Actor: rel.ID, Ch: v.inputs[i]})
		}
	}
	var catErr error
	done := make(chan struct{})
	epoch := e.coord.Schedule(barrier.Change{
		Mutations: attach,
		AddActors: []uint32{rel.ID},
		AfterInject: func(epoch uint64) {
			// The catalog entry lands in epoch+1, with the view's first state;
			// the view's source readers start in that epoch too.
			catErr = e.catSrc.put(rel)
			for _, r := range v.readers {
				if r != nil {
					e.coord.AddSource(r)
					go r.run()
				}
			}
			close(done)
		},
	})
	if job != nil {
		e.runJob(v, job)
	}
	e.runActor(v, a)
	<-done
	if catErr != nil {
		return catErr
	}
	// The view exists once epoch+1 commits, whatever happens to this session;
	// a crash after that resumes its backfill.
	if err := e.awaitCommit(e.ctx, epoch+1); err != nil {
		return err
	}
	cat.Add(rel)
	if job != nil {
		unlock() // other DDL (a DROP of this view) may run during the backfill
		return e.awaitBackfill(ctx, rel, v, job)
	}
	if p := v.failed.Load(); p != nil {
		return sqlerr.New(sqlerr.InternalError, "materialized view %s failed during backfill: %v", rel.Name, *p)
	}
	return nil
}

// dropView stops a view's dataflow at a barrier, removes it from the catalog
// in the next epoch and clears its state.
func (e *Engine) dropView(ctx context.Context, rel *catalog.Relation) error {
	e.mu.Lock()
	v := e.views[rel.ID]
	delete(e.jobs, rel.ID) // a backfill under way ends with the view
	e.mu.Unlock()
	e.cat.Remove(rel.ID)
	var muts []barrier.Mutation
	for _, up := range rel.DependsOn {
		muts = append(muts, &exec.RemoveOutput{Relation: up, Actor: rel.ID})
	}
	muts = append(muts, &exec.StopActor{Actor: rel.ID})
	epoch := e.coord.Schedule(barrier.Change{
		Mutations:    muts,
		RemoveActors: []uint32{rel.ID},
		AfterInject: func(uint64) {
			e.catSrc.delete(rel.ID)
			if v != nil {
				for _, r := range v.readers {
					if r != nil {
						e.coord.RemoveSource(r)
					}
				}
			}
		},
	})
	if v != nil {
		<-v.done
		v.closeReaders()
		e.cleanup.add(v.tables...)
		for _, idx := range rel.Indexes {
			e.cleanup.add(e.store.Table(state.TableID(idx.StateTable)))
		}
		e.stopHistory(rel.ID, v.disp)
		e.mu.Lock()
		delete(e.views, rel.ID)
		e.mu.Unlock()
	}
	return e.awaitCommit(e.ctx, epoch+1)
}

// releaseBuffered releases the batches left in the input channels of
// stopped actors (a parallel dataflow's exchanges and gather), which no
// one reads or sends to any more.
func releaseBuffered(actors []*exec.Actor) {
	for _, a := range actors {
		for _, in := range a.Inputs {
			drainChannel(in)
		}
	}
}

// drainChannel releases the messages buffered in ch, open or closed,
// without blocking.
func drainChannel(ch <-chan exec.Message) {
	for {
		select {
		case m, ok := <-ch:
			if !ok {
				return // closed: nothing more in it
			}
			m.Release()
		default:
			return
		}
	}
}

// closeReaders stops the view's source readers once its dataflow has
// stopped, and releases the batches left in its input channels, which no one
// reads any more. The upstream dispatchers must no longer send to it.
func (v *view) closeReaders() {
	for _, r := range v.readers {
		if r != nil {
			r.close()
		}
	}
	for _, in := range v.inputs {
		drainChannel(in)
	}
}

// viewError returns the error of a failed view, or of one still being
// backfilled, or nil.
func (e *Engine) viewError(rel *catalog.Relation) error {
	if err := e.backfillError(rel); err != nil {
		return err
	}
	e.mu.Lock()
	v := e.views[rel.ID]
	e.mu.Unlock()
	if v == nil {
		return nil
	}
	if p := v.failed.Load(); p != nil {
		return sqlerr.New(sqlerr.InternalError, "materialized view %s failed and no longer follows its inputs: %v", rel.Name, *p)
	}
	return nil
}

// dependencies lists the distinct relations of ups, in order.
func dependencies(ups []*catalog.Relation) []uint32 {
	var ids []uint32
	seen := map[uint32]bool{}
	for _, r := range ups {
		if !seen[r.ID] {
			seen[r.ID] = true
			ids = append(ids, r.ID)
		}
	}
	return ids
}

// openReaders creates the view's readers of the sources it reads, at their
// committed positions. With several reader actors, reader r of each source reads its share of
// the splits (readerPart) and keeps their positions in shard r of the
// offset table.
func (e *Engine) openReaders(v *view) error {
	u := len(v.plan.Upstreams)
	n := max(v.readerActors, 1)
	v.readers = make([]viewSourceReader, n*u)
	for r := range n {
		for i, up := range v.plan.Upstreams {
			if up.Kind != catalog.Source {
				continue
			}
			slot := v.plan.Leaves[i].OffsetTable
			table := v.tables[slot]
			if r > 0 {
				table = e.store.TableShard(state.TableID(v.rel.OperatorTables[slot]), r)
			}
			rd, err := newViewSourceReader(e, up, v.rel, table, v.inputs[r*u+i], v.fail, readerPart{index: r, count: n})
			if err != nil {
				return err
			}
			v.readers[r*u+i] = rd
		}
	}
	return nil
}

// alterViewPause pauses or resumes a view at a barrier.
func (e *Engine) alterViewPause(ctx context.Context, cat *catalog.Catalog, st *sql.AlterViewPause, w notifier) error {
	e.ddlMu.Lock()
	defer e.ddlMu.Unlock()
	rel, err := e.resolve(cat, st.Path, st.Name)
	if err != nil {
		return err
	}
	if rel == nil || rel.Kind != catalog.MaterializedView {
		return sqlerr.New(sqlerr.UndefinedTable, "materialized view \"%s\" does not exist", st.Name)
	}
	if rel.Paused == st.Pause {
		state := "running"
		if st.Pause {
			state = "paused"
		}
		return w.Notice("NOTICE", "00000", fmt.Sprintf("materialized view %s is already %s", rel.Name, state))
	}
	changed := *rel
	changed.Paused = st.Pause
	var mu barrier.Mutation = &exec.ResumeView{View: rel.ID}
	if st.Pause {
		mu = &exec.PauseView{View: rel.ID}
	}
	var catErr error
	epoch := e.coord.Schedule(barrier.Change{
		Mutations:   []barrier.Mutation{mu},
		AfterInject: func(uint64) { catErr = e.catSrc.put(&changed) },
	})
	if err := e.awaitCommit(e.ctx, epoch+1); err != nil {
		return err
	}
	if catErr != nil {
		return catErr
	}
	cat.Add(&changed)
	e.setViewRelation(&changed)
	return nil
}

// setViewRelation records rel as the catalog entry of its running view.
func (e *Engine) setViewRelation(rel *catalog.Relation) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if v := e.views[rel.ID]; v != nil {
		v.rel = rel
	}
}
