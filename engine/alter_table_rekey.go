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
)

// rekeyTable runs ALTER TABLE t ADD PRIMARY KEY while materialized views
// are built on t (pg_dump adds primary keys after the views). A view's
// stream key, hidden columns and operator state derive from its inputs'
// keys, so every materialized view built on t, directly or through other
// views, is planned again over the re-keyed table and rebuilt from it:
//
//  1. Before anything changes, each dependent's stored definition is bound
//     and planned against the catalog as it will be (t with its key, the
//     dependents before it with their new plans). Dependents that cannot be
//     rebuilt (sinks, views over sources, paused views, ...) refuse the
//     statement here.
//  2. One barrier n stops every dependent's dataflow and moves its inputs
//     to new channels. Right after it, under t's write lock, t's rows are
//     rewritten into a new state table (checked: NULL 23502, duplicate
//     23505), and the catalog entries of t and of every dependent, each
//     keeping its id, name, comments and privileges but with new state
//     tables, are written: all in epoch n+1.
//  3. Once epoch n is committed, each dependent's dataflow is built on its
//     new plan, keeps its dispatcher (so the views built on it keep
//     reading it) and backfills from its inputs, as a new view does; the
//     statement returns once the backfills are committed. Meanwhile the
//     dependents cannot be read (55000, as a view being created).
//
// If the rewrite fails (a NULL or duplicate key), nothing is written and the
// dependents' old dataflows are rebuilt on their committed state and the
// same channels (their inputs are the same relations in the same order,
// checked in step 1). A crash before n+1 commits leaves the old
// definitions, after it the new ones, whose backfills a restart resumes.
// The caller holds ddlMu throughout; writes to other tables go on.
func (e *Engine) rekeyTable(ctx context.Context, cat *catalog.Catalog, rel *catalog.Relation, rw *plannedRewrite, tw *tableWriter, q batchQuery) error {
	deps, err := e.planRekeyedDependents(cat, rel, rw.rel)
	if err != nil {
		return err
	}
	var muts []barrier.Mutation
	for _, d := range deps {
		for _, up := range d.old.rel.DependsOn {
			muts = append(muts, &exec.RemoveOutput{Relation: up, Actor: d.old.rel.ID})
		}
	}
	for _, d := range deps {
		for i, up := range d.plan.Upstreams {
			muts = append(muts, &exec.AddOutput{Relation: up.ID, Actor: d.rel.ID, Ch: d.inputs[i]})
		}
	}
	for _, d := range deps {
		muts = append(muts, &exec.StopActor{Actor: d.rel.ID})
	}
	var rwErr error
	epoch := e.coord.Schedule(barrier.Change{
		Mutations: muts,
		AfterInject: func(uint64) {
			tw.mu.Lock()
			defer tw.mu.Unlock()
			if rwErr = e.applyRewrite(ctx, rel, rw, tw, q); rwErr != nil {
				return
			}
			for _, d := range deps {
				if rwErr = e.catSrc.put(d.rel); rwErr != nil {
					return
				}
			}
		},
	})
	if err := e.coord.WaitInjected(e.ctx, epoch); err != nil {
		return err
	}
	for _, d := range deps {
		select {
		case <-d.old.done:
		case <-e.ctx.Done():
			return e.ctx.Err()
		}
	}
	// The old dataflows acknowledged epoch; the rebuilt ones acknowledge
	// the next ones.
	if err := e.awaitCommit(e.ctx, epoch); err != nil {
		return err
	}
	if rwErr != nil {
		if err := e.restartDependents(deps); err != nil {
			return err
		}
		if err := e.awaitCommit(e.ctx, epoch+1); err != nil {
			return err
		}
		return rwErr
	}
	jobs, err := e.startRekeyedDependents(deps)
	if err != nil {
		return err
	}
	if err := e.awaitCommit(e.ctx, epoch+1); err != nil {
		return err
	}
	cat.Add(rw.rel)
	for _, d := range deps {
		cat.Add(d.rel)
		e.cleanup.add(e.viewTables(d.old.rel)...)
	}
	return e.awaitRekeyBackfills(rel, jobs)
}

// rekeyedView is a materialized view built on a table being re-keyed: its
// running dataflow, its new catalog entry and plan, and the channels its
// inputs move to.
type rekeyedView struct {
	old    *view
	rel    *catalog.Relation
	plan   *planner.StreamPlan
	inputs []chan exec.Message
}

// planRekeyedDependents plans again every materialized view built on table
// (whose new entry is changed), in an order where each comes after the
// views it reads, or returns why one cannot be rebuilt.
func (e *Engine) planRekeyedDependents(cat *catalog.Catalog, table, changed *catalog.Relation) ([]*rekeyedView, error) {
	members, err := dependentViews(cat, table)
	if err != nil {
		return nil, err
	}
	after := cat.Clone()
	after.Add(changed)
	var deps []*rekeyedView
	for _, m := range members {
		d, err := e.planRekeyedView(after, table, m)
		if err != nil {
			return nil, err
		}
		after.Add(d.rel)
		deps = append(deps, d)
	}
	return deps, checkOnlyDependentsRead(deps)
}

// dependentViews lists the materialized views built on table, directly or
// through plain views and other materialized views, each after the views it
// reads. Sinks and other dependents refuse the re-key.
func dependentViews(cat *catalog.Catalog, table *catalog.Relation) ([]*catalog.Relation, error) {
	seen := map[uint32]bool{}
	var postOrder []*catalog.Relation
	var visit func(r *catalog.Relation) error
	visit = func(r *catalog.Relation) error {
		for _, d := range cat.Dependents(r.ID) {
			if seen[d.ID] {
				continue
			}
			seen[d.ID] = true
			switch d.Kind {
			case catalog.View, catalog.MaterializedView:
			case catalog.Sink:
				return sqlerr.Unsupported("adding a primary key to table \"%s\" while sink \"%s\" reads it", table.Name, d.Name).
					WithDetail("The sink's dataflow would be rebuilt and send its rows again.").
					WithHint("Drop the sink, add the primary key, and create the sink again.")
			default:
				return sqlerr.Unsupported("adding a primary key to table \"%s\" while %s \"%s\" depends on it", table.Name, d.Kind, d.Name)
			}
			if err := visit(d); err != nil {
				return err
			}
			postOrder = append(postOrder, d)
		}
		return nil
	}
	if err := visit(table); err != nil {
		return nil, err
	}
	var out []*catalog.Relation
	for _, r := range slices.Backward(postOrder) {
		if r.Kind == catalog.MaterializedView {
			out = append(out, r)
		}
	}
	return out, nil
}

// planRekeyedView binds m's stored definition against after (the catalog
// as the re-key leaves it) and makes m's new entry: its id, name, schema,
// options, comments and privileges (by id) kept, its columns, key and
// state tables those of the new plan.
func (e *Engine) planRekeyedView(after *catalog.Catalog, table, m *catalog.Relation) (*rekeyedView, error) {
	e.mu.Lock()
	old := e.views[m.ID]
	e.mu.Unlock()
	refuse := func(why string) error {
		return sqlerr.Unsupported("adding a primary key to table \"%s\" while materialized view \"%s\" is built on it: %s", table.Name, m.Name, why).
			WithHint("Drop the materialized view, add the primary key, and create the view again.")
	}
	switch {
	case e.backfillError(m) != nil:
		return nil, sqlerr.New(sqlerr.ObjectNotInPrerequisiteState, "materialized view \"%s\", built on table \"%s\", is being backfilled", m.Name, table.Name).
			WithHint("Wait for its job (SHOW JOBS) to end.")
	case old == nil || old.failed.Load() != nil:
		return nil, sqlerr.New(sqlerr.ObjectNotInPrerequisiteState, "materialized view \"%s\" is not running", m.Name)
	case m.Paused:
		return nil, sqlerr.New(sqlerr.ObjectNotInPrerequisiteState, "materialized view \"%s\" is paused", m.Name).
			WithHint("ALTER MATERIALIZED VIEW %s RESUME first.", m.Name)
	case readsSource(old.plan):
		return nil, refuse("it reads a source")
	case m.HistoryTable != 0:
		return nil, refuse("it retains its history")
	}
	parsed, err := sql.Parse(m.SQL)
	if err != nil || len(parsed) != 1 {
		return nil, fmt.Errorf("stored definition of %s does not parse: %v", m.Name, err)
	}
	st, err := sql.BindStoredView(after.In(m.Database), m, parsed[0])
	if err != nil {
		return nil, err
	}
	cmv, ok := st.(*ir.CreateMaterializedView)
	if !ok {
		return nil, fmt.Errorf("stored definition of %s is a %s", m.Name, st.Tag())
	}
	plan, err := e.planView(cmv, !m.JoinOrder)
	if err != nil {
		return nil, err
	}
	if !slices.Equal(dependencyIDs(old.plan.Upstreams), dependencyIDs(plan.Upstreams)) {
		return nil, refuse("its new plan reads its inputs in another order")
	}
	cols, err := viewColumns(m, plan.Root.Cols)
	if err != nil {
		return nil, err
	}
	next := *m
	next.Columns, next.Key = cols, plan.Root.Key
	ids := e.catSrc.allocIDs(3 + plan.Tables)
	next.StateTable, next.PauseTable, next.BackfillTable, next.OperatorTables = ids[0], ids[1], ids[2], ids[3:]
	next.WatermarkColumns, next.AppendOnly = planner.Watermarks(plan.Root), planner.AppendOnly(plan.Root)
	next.Indexes = nil
	for _, x := range m.Indexes {
		x.StateTable = e.catSrc.allocIDs(1)[0]
		next.Indexes = append(next.Indexes, x)
	}
	d := &rekeyedView{old: old, rel: &next, plan: plan}
	for range plan.Upstreams {
		d.inputs = append(d.inputs, make(chan exec.Message, inputBuffer))
	}
	return d, nil
}

func dependencyIDs(ups []*catalog.Relation) []uint32 {
	ids := make([]uint32, len(ups))
	for i, up := range ups {
		ids[i] = up.ID
	}
	return ids
}

// checkOnlyDependentsRead refuses the re-key while something outside the
// catalog (a SUBSCRIBE) reads one of the views: it would get the rebuilt
// view's rows again.
func checkOnlyDependentsRead(deps []*rekeyedView) error {
	for _, d := range deps {
		want := 0
		for _, o := range deps {
			for _, up := range o.old.plan.Upstreams {
				if up.ID == d.rel.ID {
					want++
				}
			}
		}
		if d.old.disp.Outputs() != want {
			return sqlerr.Unsupported("adding a primary key to a table while a SUBSCRIBE reads materialized view \"%s\", which is built on it", d.rel.Name)
		}
	}
	return nil
}

// restartDependents builds the old dataflows of deps again, on their
// committed state and the channels their inputs moved to, after a re-key
// that failed.
func (e *Engine) restartDependents(deps []*rekeyedView) error {
	for _, d := range deps {
		nv := &view{rel: d.old.rel, plan: d.old.plan, disp: d.old.disp, done: make(chan struct{}), inputs: d.inputs}
		if err := e.startRebuilt(nv, nil); err != nil {
			return err
		}
	}
	return nil
}

// startRekeyedDependents builds and starts the new dataflows of deps, and
// their backfills.
func (e *Engine) startRekeyedDependents(deps []*rekeyedView) ([]*backfillJob, error) {
	var jobs []*backfillJob
	for _, d := range deps {
		nv := &view{rel: d.rel, plan: d.plan, disp: d.old.disp, done: make(chan struct{}), inputs: d.inputs}
		if err := e.startRebuilt(nv, &jobs); err != nil {
			return nil, err
		}
	}
	return jobs, nil
}

// startRebuilt builds v's dataflow on its inputs and runs it, with its
// backfill job if it has one (appended to jobs; a rebuilt old dataflow,
// jobs nil, has none). A failure marks the view failed: the next epoch
// cannot commit without its dataflow, and a restart finds the definition
// the catalog holds.
func (e *Engine) startRebuilt(v *view, jobs *[]*backfillJob) error {
	nv, a, job, err := e.buildViewOn(v)
	if err == nil && job != nil && jobs == nil {
		err = fmt.Errorf("backfill of a restarted dataflow not done")
		discardBuilt(nv, a)
	}
	if err != nil {
		err = fmt.Errorf("rebuilding materialized view %s over its re-keyed input: %w", v.rel.Name, err)
		e.mu.Lock()
		if old := e.views[v.rel.ID]; old != nil {
			old.failed.Store(&err)
		}
		e.mu.Unlock()
		return err
	}
	e.mu.Lock()
	e.views[v.rel.ID] = nv
	e.mu.Unlock()
	if job != nil {
		*jobs = append(*jobs, job)
		e.runJob(nv, job)
	}
	e.runActor(nv, a)
	return nil
}

// awaitRekeyBackfills waits until the rebuilt views are backfilled. The
// re-key is committed already: a cancel does not stop the wait.
func (e *Engine) awaitRekeyBackfills(table *catalog.Relation, jobs []*backfillJob) error {
	for _, j := range jobs {
		select {
		case <-j.finished:
		case <-j.failed:
			return sqlerr.New(sqlerr.InternalError, "materialized view %s failed while it was rebuilt over table %s", j.view.Name, table.Name)
		case <-e.ctx.Done():
			return e.ctx.Err()
		}
	}
	return nil
}
