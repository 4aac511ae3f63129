package engine

import (
	"context"
	"fmt"
	"slices"

	"github.com/streamsql/streamsql/barrier"
	"github.com/streamsql/streamsql/catalog"
	"github.com/streamsql/streamsql/exec"
	"github.com/streamsql/streamsql/ir"
	"github.com/streamsql/streamsql/planner"
	"github.com/streamsql/streamsql/sql"
	"github.com/streamsql/streamsql/sqlerr"
	"github.com/streamsql/streamsql/state"
	"github.com/streamsql/streamsql/types"
)

// alterViewQuery replaces a materialized view's query (ALTER MATERIALIZED
// VIEW v AS query) while it keeps running:
//
//  1. The new query's dataflow is built as a replacement: a view of its own
//     state tables (catalog entry with Replaces set, in no Catalog) attached
//     to its upstreams at a barrier, backfilled as a new view is (a job in
//     SHOW JOBS). Meanwhile the old dataflow keeps serving reads and
//     feeding the views built on v.
//  2. Once the backfill is committed, one barrier n stops both dataflows
//     and moves the replacement's upstream outputs to v's id; the catalog
//     entry of v with the replacement's state tables and the new query
//     lands in epoch n+1, with the replacement's entry deleted.
//  3. Once epoch n is committed, the changes from v's old rows to the new
//     ones (exec.EmitViewDiff) are sent down v's dispatcher, in epoch n+1
//     before anything else, and v's dataflow is rebuilt on the new plan over
//     the replacement's state; the old state is cleared once n+1 commits.
//
// A crash before n+1 commits leaves the old query (a restart drops the
// replacement, see dropReplacement), after it the new one. ddlMu is held
// throughout, so no DDL changes v, its inputs or its dependents meanwhile.
func (e *Engine) alterViewQuery(ctx context.Context, cat *catalog.Catalog, st *sql.AlterViewQuery, w notifier) error {
	e.ddlMu.Lock()
	defer e.ddlMu.Unlock()
	rel, err := current(cat, st.Rel)
	if err != nil {
		return err
	}
	old, err := e.replaceableView(cat, rel)
	if err != nil {
		return err
	}
	plan, err := e.planView(st.View, false)
	if err != nil {
		return err
	}
	if err := checkNoCycle(cat, rel, plan); err != nil {
		return err
	}
	cols, err := viewColumns(rel, plan.Root.Cols)
	if err != nil {
		return err
	}
	if err := e.checkReplacement(cat, rel, old, plan, cols); err != nil {
		return err
	}
	repl, rv, job, err := e.startReplacement(rel, cols, st.View, plan)
	if err != nil {
		return err
	}
	if err := e.awaitReplacement(ctx, rel, rv, job); err != nil {
		if dropErr := e.dropReplacementView(repl, rv); dropErr != nil {
			return dropErr
		}
		return err
	}
	return e.switchView(cat, rel, old, repl, rv)
}

// replaceableView returns rel's running view, or why its query cannot be
// replaced now.
func (e *Engine) replaceableView(cat *catalog.Catalog, rel *catalog.Relation) (*view, error) {
	if err := e.backfillError(rel); err != nil {
		return nil, err
	}
	e.mu.Lock()
	old := e.views[rel.ID]
	e.mu.Unlock()
	if old == nil || old.failed.Load() != nil {
		return nil, sqlerr.New(sqlerr.ObjectNotInPrerequisiteState, "materialized view \"%s\" is not running", rel.Name)
	}
	if rel.Paused {
		return nil, sqlerr.New(sqlerr.ObjectNotInPrerequisiteState, "materialized view \"%s\" is paused", rel.Name).
			WithHint("ALTER MATERIALIZED VIEW %s RESUME first.", rel.Name)
	}
	if rel.AtLeastOnce {
		return nil, sqlerr.Unsupported("replacing the query of materialized view \"%s\": it was created with checkpoint_mode = at_least_once", rel.Name)
	}
	if readsSource(old.plan) {
		return nil, sqlerr.Unsupported("replacing the query of materialized view \"%s\", which reads a source", rel.Name)
	}
	for _, d := range cat.Dependents(rel.ID) {
		if err := e.backfillError(d); err != nil {
			return nil, sqlerr.New(sqlerr.ObjectNotInPrerequisiteState, "%s \"%s\", built on materialized view \"%s\", is being backfilled", d.Kind, d.Name, rel.Name).
				WithHint("Wait for its job (SHOW JOBS) to end.")
		}
	}
	return old, nil
}

func readsSource(plan *planner.StreamPlan) bool {
	return slices.ContainsFunc(plan.Upstreams, func(r *catalog.Relation) bool { return r.Kind == catalog.Source })
}

// viewColumns checks that the new query gives rel's visible columns, by
// name and type, in order, with PostgreSQL's 42P16 of CREATE OR REPLACE
// VIEW, and returns the view's columns under the new query: rel's visible
// ones (their comments kept), and the new plan's hidden ones.
func viewColumns(rel *catalog.Relation, cols []ir.Column) ([]catalog.Column, error) {
	vis := rel.VisibleColumns()
	var out []catalog.Column
	n := 0
	for _, c := range cols {
		if c.Hidden {
			out = append(out, catalog.Column{Name: c.Name, Type: c.Type, Hidden: true})
			continue
		}
		if n >= len(vis) {
			return nil, sqlerr.New(sqlerr.InvalidTableDefinition, "cannot add column \"%s\" to materialized view \"%s\"", c.Name, rel.Name).
				WithDetail("ALTER MATERIALIZED VIEW ... AS keeps the view's columns.")
		}
		have := rel.Columns[vis[n]]
		n++
		switch {
		case have.Name != c.Name:
			return nil, sqlerr.New(sqlerr.InvalidTableDefinition, "cannot change name of materialized view column \"%s\" to \"%s\"", have.Name, c.Name).
				WithHint("Name the new query's column as the view's.")
		case !types.Identical(have.Type, c.Type) || have.Type.String() != c.Type.String():
			return nil, sqlerr.New(sqlerr.InvalidTableDefinition, "cannot change data type of materialized view column \"%s\" from %s to %s", have.Name, have.Type, c.Type)
		}
		out = append(out, have)
	}
	if n < len(vis) {
		return nil, sqlerr.New(sqlerr.InvalidTableDefinition, "cannot drop column \"%s\" from materialized view \"%s\"", rel.Columns[vis[n]].Name, rel.Name)
	}
	return out, nil
}

// layoutChange describes how the new query stores rel's rows differently
// (other hidden columns or types, another key), or is "" if it stores them alike:
// views built on rel read every column by position and rely on its key.
func layoutChange(rel *catalog.Relation, cols []catalog.Column, key []int) string {
	for i, c := range cols {
		if i >= len(rel.Columns) || rel.Columns[i].Name != c.Name || rel.Columns[i].Hidden != c.Hidden ||
			!types.Identical(rel.Columns[i].Type, c.Type) {
			return fmt.Sprintf("hidden column \"%s\"", c.Name)
		}
	}
	if len(cols) < len(rel.Columns) {
		return fmt.Sprintf("no hidden column \"%s\"", rel.Columns[len(cols)].Name)
	}
	if !slices.Equal(rel.Key, key) {
		return fmt.Sprintf("stream key %s (the view's is %s)", keyNames(cols, key), keyNames(rel.Columns, rel.Key))
	}
	return ""
}

// checkReplacement checks the new plan (which stores rel's rows as cols)
// against what reads rel: it must not read a source, and, while relations
// are built on rel, must keep what their plans rely on (how rows are
// stored, the watermark columns, rows never being retracted). A SUBSCRIBE
// reading rel (not in the catalog) reads its columns too.
func (e *Engine) checkReplacement(cat *catalog.Catalog, rel *catalog.Relation, old *view, plan *planner.StreamPlan, cols []catalog.Column) error {
	if readsSource(plan) {
		return sqlerr.Unsupported("a new query for materialized view \"%s\" that reads a source", rel.Name)
	}
	change := layoutChange(rel, cols, plan.Root.Key)
	deps := cat.Dependents(rel.ID)
	if len(deps) == 0 {
		if change != "" && old.disp.Outputs() > 0 {
			return sqlerr.Unsupported("a new query with %s while a SUBSCRIBE reads materialized view \"%s\"", change, rel.Name)
		}
		return nil
	}
	d := deps[0]
	switch {
	case change != "":
		return sqlerr.Unsupported("a new query with %s while %s \"%s\" is built on materialized view \"%s\"", change, d.Kind, d.Name, rel.Name).
			WithDetail("The views built on a materialized view read its columns, hidden ones included, and rely on its key.")
	case rel.AppendOnly:
		return sqlerr.Unsupported("replacing the query of append-only materialized view \"%s\" while %s \"%s\" is built on it (it relies on rows never being retracted)", rel.Name, d.Kind, d.Name)
	case !slices.Equal(rel.WatermarkColumns, planner.Watermarks(plan.Root)):
		return sqlerr.Unsupported("a new query that changes the watermark columns of materialized view \"%s\" while %s \"%s\" is built on it", rel.Name, d.Kind, d.Name)
	}
	return nil
}

// checkNoCycle refuses a new query that reads rel itself or a relation
// built on it.
func checkNoCycle(cat *catalog.Catalog, rel *catalog.Relation, plan *planner.StreamPlan) error {
	for _, up := range plan.Upstreams {
		if up.ID == rel.ID || builtOn(cat, up, rel.ID) {
			return sqlerr.New(sqlerr.InvalidObjectDefinition, "materialized view \"%s\" cannot read \"%s\", which is built on it", rel.Name, up.Name)
		}
	}
	return nil
}

// builtOn reports whether r reads relation id, directly or through others.
func builtOn(cat *catalog.Catalog, r *catalog.Relation, id uint32) bool {
	seen := map[uint32]bool{}
	var walk func(r *catalog.Relation) bool
	walk = func(r *catalog.Relation) bool {
		for _, up := range r.DependsOn {
			if up == id {
				return true
			}
			if seen[up] {
				continue
			}
			seen[up] = true
			if u := cat.ByID(up); u != nil && walk(u) {
				return true
			}
		}
		return false
	}
	return walk(r)
}

func keyNames(cols []catalog.Column, key []int) string {
	s := "("
	for i, k := range key {
		if i > 0 {
			s += ", "
		}
		if k < len(cols) {
			s += cols[k].Name
		}
	}
	return s + ")"
}

// startReplacement creates the dataflow of rel's new query on state tables
// of its own, attaches it to its upstreams at a barrier and starts its
// backfill, as createView does; its catalog entry (Replaces: rel) lands
// with its first state. It runs on as many actors as rel, whatever the
// session's streaming_parallelism (docs/decisions.md).
func (e *Engine) startReplacement(rel *catalog.Relation, cols []catalog.Column, stmt *ir.CreateMaterializedView, plan *planner.StreamPlan) (*catalog.Relation, *view, *backfillJob, error) {
	ids := e.catSrc.allocIDs(4 + plan.Tables)
	repl := &catalog.Relation{
		Database:         rel.Database,
		ID:               ids[0],
		Schema:           rel.Schema,
		Name:             rel.Name,
		Kind:             catalog.MaterializedView,
		Columns:          cols,
		Key:              plan.Root.Key,
		StateTable:       ids[1],
		PauseTable:       ids[2],
		BackfillTable:    ids[3],
		OperatorTables:   ids[4:],
		SQL:              stmt.SQL,
		DependsOn:        dependencies(plan.Upstreams),
		Refs:             stmt.Refs,
		Functions:        stmt.Functions,
		CallsFunctions:   stmt.CallsFunctions,
		ReadsThrough:     stmt.ReadsThrough,
		Parallelism:      rel.Parallelism,
		JoinOrder:        true,
		TimeZone:         stmt.TimeZone,
		IntervalSpans:    true,
		WatermarkColumns: planner.Watermarks(plan.Root),
		AppendOnly:       planner.AppendOnly(plan.Root),
		Comment:          rel.Comment,
		Replaces:         rel.ID,
	}
	// The view's indexes are built with the new rows, by the replacement's
	// dataflow, into tables of their own.
	for _, x := range rel.Indexes {
		x.StateTable = e.catSrc.allocIDs(1)[0]
		repl.Indexes = append(repl.Indexes, x)
	}
	rv, a, job, err := e.buildView(repl, plan)
	if err != nil {
		return nil, nil, nil, err
	}
	var attach []barrier.Mutation
	for i, up := range plan.Upstreams {
		attach = append(attach, &exec.AddOutput{Relation: up.ID, Actor: repl.ID, Ch: rv.inputs[i]})
	}
	var catErr error
	done := make(chan struct{})
	epoch := e.coord.Schedule(barrier.Change{
		Mutations: attach,
		AddActors: []uint32{repl.ID},
		AfterInject: func(uint64) {
			catErr = e.catSrc.put(repl)
			close(done)
		},
	})
	if job != nil {
		e.runJob(rv, job)
	}
	e.runActor(rv, a)
	<-done
	if catErr != nil {
		return nil, nil, nil, catErr
	}
	if err := e.awaitCommit(e.ctx, epoch+1); err != nil {
		return nil, nil, nil, err
	}
	return repl, rv, job, nil
}

// awaitReplacement waits until the backfill of rel's new query is
// committed; ctx canceled (a cancel request) or the dataflow failing end
// the wait with an error.
func (e *Engine) awaitReplacement(ctx context.Context, rel *catalog.Relation, rv *view, job *backfillJob) error {
	if job == nil {
		return nil
	}
	select {
	case <-job.finished:
		return nil
	case <-job.failed:
		return sqlerr.New(sqlerr.InternalError, "the new query of materialized view %s failed during its backfill: %v", rel.Name, *rv.failed.Load())
	case <-ctx.Done():
		return sqlerr.New(sqlerr.QueryCanceled, "canceling statement due to user request")
	case <-e.ctx.Done():
		return e.ctx.Err()
	}
}

// dropReplacementView stops an abandoned replacement's dataflow at a
// barrier, deletes its catalog entry in the next epoch and clears its
// state.
func (e *Engine) dropReplacementView(repl *catalog.Relation, rv *view) error {
	e.mu.Lock()
	delete(e.jobs, repl.ID)
	e.mu.Unlock()
	var muts []barrier.Mutation
	for _, up := range repl.DependsOn {
		muts = append(muts, &exec.RemoveOutput{Relation: up, Actor: repl.ID})
	}
	muts = append(muts, &exec.StopActor{Actor: repl.ID})
	epoch := e.coord.Schedule(barrier.Change{
		Mutations:    muts,
		RemoveActors: []uint32{repl.ID},
		AfterInject:  func(uint64) { e.catSrc.delete(repl.ID) },
	})
	select {
	case <-rv.done:
	case <-e.ctx.Done():
		return e.ctx.Err()
	}
	e.cleanup.add(e.viewTables(repl)...)
	return e.awaitCommit(e.ctx, epoch+1)
}

// dropReplacement drops, at startup, the replacement of a view whose ALTER
// ... AS a crash interrupted: its catalog entry and its state go at the
// first barrier; the view keeps its old query.
func (e *Engine) dropReplacement(repl *catalog.Relation) {
	e.log.Info("dropping the unfinished new query of a materialized view", "view", repl.Name)
	e.catSrc.delete(repl.ID)
	e.cleanup.add(e.viewTables(repl)...)
}

// viewTables lists every state table of a view: its rows, its indexes, its
// operators', pause and backfill tables.
func (e *Engine) viewTables(rel *catalog.Relation) []*state.Table {
	ids := append([]uint32{rel.StateTable, rel.PauseTable, rel.BackfillTable}, rel.OperatorTables...)
	for _, x := range rel.Indexes {
		ids = append(ids, x.StateTable)
	}
	var ts []*state.Table
	for _, id := range ids {
		if id != 0 {
			ts = append(ts, e.store.Table(state.TableID(id)))
		}
	}
	return ts
}

// switchView makes rel's backfilled replacement its dataflow (steps 2 and
// 3 of alterViewQuery).
func (e *Engine) switchView(cat *catalog.Catalog, rel *catalog.Relation, old *view, repl *catalog.Relation, rv *view) error {
	next := *repl
	next.ID, next.Name, next.Schema, next.Replaces = rel.ID, rel.Name, rel.Schema, 0
	inputs := make([]chan exec.Message, len(rv.plan.Upstreams))
	var muts []barrier.Mutation
	for _, up := range rel.DependsOn {
		muts = append(muts, &exec.RemoveOutput{Relation: up, Actor: rel.ID})
	}
	for _, up := range repl.DependsOn {
		muts = append(muts, &exec.RemoveOutput{Relation: up, Actor: repl.ID})
	}
	for i, up := range rv.plan.Upstreams {
		inputs[i] = make(chan exec.Message, inputBuffer)
		muts = append(muts, &exec.AddOutput{Relation: up.ID, Actor: rel.ID, Ch: inputs[i]})
	}
	muts = append(muts, &exec.StopActor{Actor: rel.ID}, &exec.StopActor{Actor: repl.ID})
	var catErr error
	epoch := e.coord.Schedule(barrier.Change{
		Mutations:    muts,
		RemoveActors: []uint32{repl.ID},
		AfterInject: func(uint64) {
			e.catSrc.delete(repl.ID)
			catErr = e.catSrc.put(&next)
		},
	})
	// Both dataflows acknowledged epoch; the rebuilt one acknowledges the
	// next ones, so the commit of epoch does not wait for it.
	if err := e.awaitStopped(epoch, old, rv); err != nil {
		return err
	}
	nv := &view{rel: &next, plan: rv.plan, disp: old.disp, done: make(chan struct{}), inputs: inputs}
	nv, a, job, err := e.buildViewOn(nv)
	if err == nil && job != nil {
		err = fmt.Errorf("backfill of the new query not done")
		discardBuilt(nv, a)
	}
	if err == nil && layoutChange(rel, next.Columns, next.Key) == "" {
		// (Otherwise nothing reads the view: checkReplacement.)
		if err = e.emitSwitchDiff(rel, &next, old.disp); err != nil {
			discardBuilt(nv, a)
		}
	}
	if err != nil {
		// Epoch+1 cannot commit without the view's dataflow: mark the view
		// failed; a restart finds the old query or the new one.
		err = fmt.Errorf("switching materialized view %s to its new query: %w", rel.Name, err)
		old.failed.Store(&err)
		return err
	}
	e.mu.Lock()
	e.views[rel.ID] = nv
	e.mu.Unlock()
	e.runActor(nv, a)
	if err := e.awaitCommit(e.ctx, epoch+1); err != nil {
		return err
	}
	if catErr != nil {
		return catErr
	}
	cat.Add(&next)
	e.cleanup.add(e.viewTables(rel)...)
	return nil
}

// emitSwitchDiff sends down disp, rel's dispatcher, the changes from rel's
// committed rows to those of its replacement next. It runs on the engine's
// goroutine between the stop of rel's old dataflow and the start of the
// new one, the only time no actor drives disp.
func (e *Engine) emitSwitchDiff(rel, next *catalog.Relation, disp *exec.Dispatcher) error {
	snap := e.store.Snapshot()
	defer snap.Release()
	return exec.EmitViewDiff(e.ctx, e.mem, snap, state.TableID(rel.StateTable), state.TableID(next.StateTable), rel.Types(), disp)
}
