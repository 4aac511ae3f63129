package engine

import (
	"context"
	"fmt"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"github.com/streamsql/streamsql/catalog"
	"github.com/streamsql/streamsql/exec"
	"github.com/streamsql/streamsql/pgwire"
	"github.com/streamsql/streamsql/planner"
	"github.com/streamsql/streamsql/sqlerr"
	"github.com/streamsql/streamsql/state"
	"github.com/streamsql/streamsql/types"
)

// backfillJob is the backfill of a new materialized view from the tables and
// views it reads (one exec.Backfill per such input). It runs from the view's
// CREATE, which waits for it, or after a restart in the background, until
// every input's backfill is done and the epoch that recorded it is
// committed; meanwhile the view is listed by SHOW JOBS and cannot be read.
type backfillJob struct {
	view     *catalog.Relation
	started  time.Time
	progress []*exec.BackfillProgress
	// total is the upstreams' row count when the job started (an estimate
	// of the rows to backfill); -1 until it is counted.
	total atomic.Int64
	// remaining counts the inputs not done; the actor's goroutine only.
	remaining int
	doneEpoch atomic.Uint64
	// allDone is closed by the actor when the last input is done (at
	// doneEpoch); finished once doneEpoch is committed and the job no longer
	// listed; failed if the dataflow failed.
	allDone  chan struct{}
	finished chan struct{}
	failed   chan struct{}
	failOnce sync.Once
}

func (j *backfillJob) fail() { j.failOnce.Do(func() { close(j.failed) }) }

// rowsDone returns the rows backfilled so far, over every input.
func (j *backfillJob) rowsDone() int64 {
	var n int64
	for _, p := range j.progress {
		n += p.Rows.Load()
	}
	return n
}

// backfillBudget is how long a backfill reads at one barrier.
func (e *Engine) backfillBudget() time.Duration {
	if e.opts.BackfillBudget > 0 {
		return e.opts.BackfillBudget
	}
	return min(50*time.Millisecond, max(e.opts.BarrierInterval/4, 10*time.Millisecond))
}

// addBackfills puts a Backfill at the head of every input of the view that
// reads a table or view (heads[i] is replaced), keeping positions in
// table. It returns the view's job, or nil if every backfill is done (or
// there is none).
func (e *Engine) addBackfills(rel *catalog.Relation, plan *planner.StreamPlan, heads []exec.Output, table *state.Table) (*backfillJob, error) {
	j := &backfillJob{view: rel, started: time.Now(), allDone: make(chan struct{}), finished: make(chan struct{}), failed: make(chan struct{})}
	j.total.Store(-1)
	for i, up := range plan.Upstreams {
		if up.Kind == catalog.Source {
			continue // its reader starts at the source's first row
		}
		f, err := exec.NewBackfill(exec.BackfillConfig{
			Mem:       e.mem,
			Input:     i,
			Upstream:  e.store.Table(state.TableID(up.StateTable)),
			Types:     up.Types(),
			Key:       up.Key,
			State:     table,
			ChunkRows: e.opts.BackfillChunkRows,
			Budget:    e.backfillBudget(),
			OnDone: func(epoch uint64) {
				if j.remaining--; j.remaining == 0 {
					j.doneEpoch.Store(epoch)
					close(j.allDone)
				}
			},
			Next: heads[i],
		})
		if err != nil {
			return nil, err
		}
		heads[i] = f
		j.progress = append(j.progress, f.Progress)
		if !f.Done() {
			j.remaining++
		}
	}
	if j.remaining == 0 {
		return nil, nil
	}
	return j, nil
}

// runJob lists j and, in the background, counts the rows to backfill,
// drives checkpoints back to back until the backfill is done, waits for its
// end to commit, then closes j.finished and delists it. A job whose view is
// dropped or fails, or whose engine closes, just ends.
func (e *Engine) runJob(v *view, j *backfillJob) {
	e.mu.Lock()
	if e.jobs == nil {
		e.jobs = map[uint32]*backfillJob{}
	}
	e.jobs[j.view.ID] = j
	e.mu.Unlock()
	delist := func() {
		e.mu.Lock()
		if e.jobs[j.view.ID] == j {
			delete(e.jobs, j.view.ID)
		}
		e.mu.Unlock()
	}
	e.actors.Add(2)
	go func() {
		defer e.actors.Done()
		e.countBackfill(v, j)
	}()
	go func() {
		defer e.actors.Done()
		// A backfill moves at barriers: ask for them back to back (each
		// once the last committed) until it is done.
		for running := true; running; {
			select {
			case <-j.allDone:
				running = false
				continue
			case <-v.done:
				delist()
				return
			case <-j.failed:
				delist() // the view reports its failure (viewError)
				return
			case <-e.ctx.Done():
				return
			default:
			}
			if err := e.coord.WaitCommitted(e.ctx, e.coord.Checkpoint()); err != nil {
				return
			}
		}
		if err := e.awaitCommit(e.ctx, j.doneEpoch.Load()); err != nil {
			return
		}
		delist()
		close(j.finished)
		e.log.Info("backfill done", "view", j.view.Name, "rows", j.rowsDone(), "duration", time.Since(j.started))
	}()
}

// countBackfill counts the committed rows of the upstreams j backfills into
// j.total, stopping early if the job ends.
func (e *Engine) countBackfill(v *view, j *backfillJob) {
	snap := e.store.Snapshot()
	defer snap.Release()
	var total int64
	for _, up := range v.plan.Upstreams {
		if up.Kind == catalog.Source {
			continue
		}
		it, err := snap.NewIter(state.TableID(up.StateTable), nil, nil)
		if err != nil {
			return
		}
		for ok := it.First(); ok; ok = it.Next() {
			if total++; total%4096 == 0 && e.jobEnded(v, j) {
				it.Close()
				return
			}
		}
		it.Close()
	}
	j.total.Store(total)
}

func (e *Engine) jobEnded(v *view, j *backfillJob) bool {
	select {
	case <-j.finished:
		return true
	case <-v.done:
		return true
	case <-e.ctx.Done():
		return true
	default:
		return false
	}
}

// awaitBackfill waits until the backfill of the view created by this
// session ends. If ctx is canceled first (a cancel request), the view is
// dropped.
func (e *Engine) awaitBackfill(ctx context.Context, rel *catalog.Relation, v *view, j *backfillJob) error {
	select {
	case <-j.finished:
		return nil
	case <-j.failed:
		err := *v.failed.Load()
		return sqlerr.New(sqlerr.InternalError, "materialized view %s failed during backfill: %v", rel.Name, err)
	case <-v.done:
		return sqlerr.New(sqlerr.QueryCanceled, "materialized view \"%s\" was dropped during its backfill", rel.Name)
	case <-ctx.Done():
	}
	e.ddlMu.Lock()
	defer e.ddlMu.Unlock()
	if e.cat.ByID(rel.ID) != nil {
		if err := e.dropView(e.ctx, rel); err != nil {
			return err
		}
	}
	return sqlerr.New(sqlerr.QueryCanceled, "canceling statement due to user request")
}

// backfillError returns the error of reading a view that is still being
// backfilled, or nil.
func (e *Engine) backfillError(rel *catalog.Relation) error {
	e.mu.Lock()
	j := e.jobs[rel.ID]
	e.mu.Unlock()
	if j == nil {
		return nil
	}
	return &sqlerr.Error{
		Code:    sqlerr.ObjectNotInPrerequisiteState,
		Message: fmt.Sprintf("materialized view \"%s\" is being backfilled (job %d)", rel.Name, rel.ID),
		Hint:    "SHOW JOBS shows its progress; its CREATE MATERIALIZED VIEW returns when it is done.",
	}
}

// jobRows lists the backfills of the views of cat's database (streamsql_jobs).
func (e *Engine) jobRows(cat *catalog.Catalog) ([][]types.Datum, error) {
	e.mu.Lock()
	var jobs []*backfillJob
	for _, j := range e.jobs {
		if j.view.Database == cat.DatabaseName() {
			jobs = append(jobs, j)
		}
	}
	e.mu.Unlock()
	sort.Slice(jobs, func(a, b int) bool { return jobs[a].view.ID < jobs[b].view.ID })
	var rows [][]types.Datum
	for _, j := range jobs {
		total := types.Null
		if n := j.total.Load(); n >= 0 {
			total = types.DInt(n)
		}
		rows = append(rows, []types.Datum{
			types.DInt(int64(j.view.ID)), types.DText(j.view.Name), types.DText(j.view.Schema),
			types.DInt(j.rowsDone()), total, types.DInt(j.started.UnixMicro()), millis(time.Since(j.started)),
		})
	}
	return rows, nil
}

// jobsTable returns the streamsql_jobs system table.
func jobsTable() *catalog.Relation {
	for _, st := range systemTables {
		if st.rel.Name == "streamsql_jobs" {
			return st.rel
		}
	}
	panic("engine: no streamsql_jobs")
}

// jobColumns are the columns of SHOW JOBS.
func jobColumns() []pgwire.Column {
	rel := jobsTable()
	cols := make([]pgwire.Column, len(rel.Columns))
	for i, c := range rel.Columns {
		cols[i] = pgwire.Column{Name: c.Name, Type: c.Type}
	}
	return cols
}

// showJobs is SHOW JOBS: the rows of streamsql_jobs.
func (s *session) showJobs(w pgwire.ResultWriter) error {
	recs, err := s.e.systemRows(s.cat, jobsTable())
	if err != nil {
		return err
	}
	defer recs[0].Release()
	if err := w.BeginRows(jobColumns()); err != nil {
		return err
	}
	if err := w.WriteRows(recs[0]); err != nil {
		return err
	}
	return w.Complete(fmt.Sprintf("SHOW %d", recs[0].NumRows()))
}
