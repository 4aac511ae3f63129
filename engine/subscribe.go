package engine

import (
	"context"
	"fmt"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/streamsql/streamsql/barrier"
	"github.com/streamsql/streamsql/catalog"
	"github.com/streamsql/streamsql/exec"
	"github.com/streamsql/streamsql/exec/eval"
	"github.com/streamsql/streamsql/ir"
	"github.com/streamsql/streamsql/pgwire"
	"github.com/streamsql/streamsql/sql"
	"github.com/streamsql/streamsql/sqlerr"
	"github.com/streamsql/streamsql/state"
	"github.com/streamsql/streamsql/types"
)

// SUBSCRIBE runs its query as a temporary dataflow: a sink (sink.go) that
// is not in the catalog, whose writer is the subscriber. It is built and
// attached to its upstreams at a barrier as a view is (view.go), so its
// backfill reads the upstreams' committed rows as of that barrier and then
// follows their changes; the changes up to the barrier at which the
// backfill ends are the snapshot, all stamped with that barrier's epoch.
//
// The subscriber buffers every change of an epoch until the epoch commits,
// then hands it to the session, which sends it to the client. The dataflow
// never waits for the client: the buffer is bounded
// (subscribe_backlog_rows), and a subscriber whose buffer fills up is told
// so with 53400 and detached. A SUBSCRIBE lasts until its client cancels it
// (or closes its cursor); it does not survive a restart.
//
// Each change is one row: epoch (bigint), op (text: Insert, Delete,
// UpdateDelete or UpdateInsert, the change ops of RisingWave's
// subscriptions), then the query's columns. With PROGRESS, a column
// progressed (boolean) follows epoch, and after the changes of each
// committed epoch comes a row with progressed true and NULL elsewhere: every
// change of that epoch and before has been sent.

// defaultBacklogRows is the default of subscribe_backlog_rows.
const defaultBacklogRows = 1 << 20

// subscribers maps the relation of a running SUBSCRIBE dataflow to its
// subscriber, for the "subscribe" sink connector that buildSink opens.
var subscribers sync.Map // *catalog.Relation -> *subscriber

func init() {
	sinkConnectors[sql.SubscriptionConnector] = func(_ *Engine, rel *catalog.Relation, _ *state.Table) (exec.SinkWriter, error) {
		return nil, sqlerr.New(sqlerr.FeatureNotSupported, "sink %s: a subscription's log is opened by buildSink", rel.Name)
	}
	sinkConnectors["subscribe"] = func(_ *Engine, rel *catalog.Relation, _ *state.Table) (exec.SinkWriter, error) {
		if s, ok := subscribers.Load(rel); ok {
			return s.(*subscriber), nil
		}
		return nil, sqlerr.New(sqlerr.FeatureNotSupported, "sink connector \"subscribe\" is not supported: use SUBSCRIBE")
	}
}

// change is a run of changes of one epoch, or a progress row (rec nil).
type change struct {
	epoch uint64
	rec   arrow.RecordBatch
	ops   []exec.Op
}

// subscriber is one SUBSCRIBE: the writer of its dataflow's sink (Write and
// Barrier run on the dataflow's goroutine) and the queue the session reads
// (next, on the session's goroutine).
type subscriber struct {
	e    *Engine
	rel  *catalog.Relation
	v    *view
	job  *backfillJob
	cols []pgwire.Column
	// vis are the query's visible columns; snapshot and progress are the
	// SUBSCRIBE's options; limit bounds rows.
	vis                []int
	snapshot, progress bool
	limit              int64
	// drained is closed when the server shuts down.
	drained <-chan struct{}
	// rows counts the buffered changes (pending, sealed and ready).
	rows atomic.Int64

	// pending are the changes of the open epoch (of every epoch before
	// the snapshot's end while snapDone is false); the dataflow's
	// goroutine only.
	pending    []change
	snapDone   bool
	overflowed bool

	mu sync.Mutex
	// sealed are the changes of ended epochs not yet known to be
	// committed, in epoch order; ready those committed, to be sent.
	sealed []change
	ready  []change
	err    error
	// wake (capacity 1) is poked when ready grows or err is set; sealedCh
	// when sealed grows.
	wake, sealedCh chan struct{}
	stop           chan struct{}
	stopOnce       sync.Once
	stopped        chan struct{}
}

// backlogRows is the session's subscribe_backlog_rows.
func (s *session) backlogRows() int64 {
	n, err := strconv.ParseInt(s.value("subscribe_backlog_rows"), 10, 64)
	if err != nil || n <= 0 {
		return defaultBacklogRows
	}
	return n
}

// checkBacklogRows validates subscribe_backlog_rows.
func checkBacklogRows(v string) (string, error) {
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil || n <= 0 {
		return "", sqlerr.New(sqlerr.InvalidParameterValue, "invalid value for parameter \"subscribe_backlog_rows\": \"%s\"", v).
			WithHint("Give a positive number of rows.")
	}
	return strconv.FormatInt(n, 10), nil
}

// subscribe starts the dataflow of a SUBSCRIBE.
func (e *Engine) subscribe(ctx context.Context, cat *catalog.Catalog, st *sql.Subscribe, limit int64) (*subscriber, error) {
	if st.AsOf != 0 {
		return nil, sqlerr.Unsupported("SUBSCRIBE ... AS OF (the changes of past epochs are not retained)").
			WithHint("Leave out AS OF: SUBSCRIBE starts at the last committed epoch.")
	}
	plan, err := e.planView(st.View, false)
	if err != nil {
		return nil, err
	}
	for _, up := range plan.Upstreams {
		if err := e.backfillError(up); err != nil {
			return nil, err
		}
		if err := e.viewError(up); err != nil {
			return nil, err
		}
	}
	ids := e.catSrc.allocIDs(4 + plan.Tables)
	rel := &catalog.Relation{
		Database:       cat.DatabaseName(),
		ID:             ids[0],
		Name:           fmt.Sprintf("subscribe_%d", ids[0]),
		Kind:           catalog.Sink,
		Options:        map[string]string{"connector": "subscribe"},
		Key:            plan.Root.Key,
		StateTable:     ids[1],
		PauseTable:     ids[2],
		BackfillTable:  ids[3],
		OperatorTables: ids[4:],
		SQL:            st.View.SQL,
		DependsOn:      dependencies(plan.Upstreams),
		JoinOrder:      true,
		TimeZone:       st.View.TimeZone,
		IntervalSpans:  true,
	}
	sub := &subscriber{e: e, rel: rel, snapshot: st.Snapshot, progress: st.Progress, limit: limit,
		wake: make(chan struct{}, 1), sealedCh: make(chan struct{}, 1), stop: make(chan struct{}), stopped: make(chan struct{})}
	sub.cols = subscribeColumns(st)
	for i, c := range plan.Root.Cols {
		rel.Columns = append(rel.Columns, catalog.Column{Name: c.Name, Type: c.Type, Hidden: c.Hidden})
		if !c.Hidden {
			sub.vis = append(sub.vis, i)
		}
	}
	if len(sub.vis) != len(ir.VisibleColumns(st.View.Query)) {
		return nil, fmt.Errorf("engine: SUBSCRIBE plan has %d visible columns, its query %d", len(sub.vis), len(ir.VisibleColumns(st.View.Query)))
	}
	subscribers.Store(rel, sub)
	defer subscribers.Delete(rel)
	v, a, job, err := e.buildView(rel, plan)
	if err != nil {
		return nil, err
	}
	sub.v, sub.job = v, job
	if err := e.openReaders(v); err != nil {
		discardBuilt(v, a)
		v.discardReaders()
		return nil, err
	}
	var attach []barrier.Mutation
	for i, up := range plan.Upstreams {
		if up.Kind != catalog.Source {
			attach = append(attach, &exec.AddOutput{Relation: up.ID, Actor: rel.ID, Ch: v.inputs[i]})
		}
	}
	e.coord.Schedule(barrier.Change{
		Mutations: attach,
		AddActors: []uint32{rel.ID},
		AfterInject: func(uint64) {
			for _, r := range v.readers {
				if r != nil {
					e.coord.AddSource(r)
					go r.run()
				}
			}
		},
	})
	if job != nil {
		e.runJob(v, job)
	}
	e.runActor(v, a)
	go sub.commitLoop()
	return sub, nil
}

// subscribeColumns are the columns of a SUBSCRIBE's rows.
func subscribeColumns(st *sql.Subscribe) []pgwire.Column {
	cols := []pgwire.Column{{Name: "epoch", Type: types.Int64T}}
	if st.Progress {
		cols = append(cols, pgwire.Column{Name: "progressed", Type: types.BoolT})
	}
	cols = append(cols, pgwire.Column{Name: "op", Type: types.TextT})
	if st.View == nil { // a subscription's log
		for _, c := range st.Log.VisibleColumns() {
			cols = append(cols, pgwire.Column{Name: st.Log.Columns[c].Name, Type: st.Log.Columns[c].Type})
		}
		return cols
	}
	all := st.View.Query.Columns()
	for _, c := range ir.VisibleColumns(st.View.Query) {
		cols = append(cols, pgwire.Column{Name: all[c].Name, Type: all[c].Type})
	}
	return cols
}

// Write implements exec.SinkWriter: it keeps b's changes in the open epoch.
func (s *subscriber) Write(_ context.Context, b *exec.Batch) error {
	if b.Len() == 0 || s.overflowed {
		return nil
	}
	if n := s.rows.Add(int64(b.Len())); n > s.limit {
		// The dataflow goes on, dropping changes, until it is detached.
		s.overflowed = true
		s.releasePending()
		s.fail(sqlerr.New(sqlerr.ConfigurationLimitExceeded,
			"subscriber fell behind: %d changes are waiting to be sent (subscribe_backlog_rows = %d); the subscription ends", n, s.limit).
			WithHint("Read the changes faster, or raise subscribe_backlog_rows."))
		go s.close()
		return nil
	}
	b.Rec.Retain()
	s.pending = append(s.pending, change{rec: b.Rec, ops: append([]exec.Op(nil), b.Ops...)})
	return nil
}

// Barrier implements exec.SinkWriter: epoch b.Epoch has ended. Its changes
// are sealed, to be sent once it commits; before the snapshot's end they
// stay pending, to be sent with the snapshot.
func (s *subscriber) Barrier(_ context.Context, b *barrier.Barrier) error {
	if !s.snapDone {
		if s.job != nil {
			select {
			case <-s.job.allDone: // closed on this goroutine, before b came
			default:
				return nil
			}
		}
		s.snapDone = true
		if !s.snapshot {
			s.releasePending()
		} else if err := s.consolidate(); err != nil {
			return err
		}
	}
	for i := range s.pending {
		s.pending[i].epoch = b.Epoch
	}
	if s.progress {
		s.pending = append(s.pending, change{epoch: b.Epoch})
	}
	if len(s.pending) == 0 {
		return nil
	}
	s.mu.Lock()
	if s.err == nil {
		s.sealed = append(s.sealed, s.pending...)
		s.pending = s.pending[:0]
	}
	s.mu.Unlock()
	s.releasePending() // after a failure
	poke(s.sealedCh)
	return nil
}

// consolidate replaces the pending changes, the snapshot, by their net
// rows as inserts: the changes made while the backfill read the inputs
// cancel out. Rows are told apart by their visible columns.
func (s *subscriber) consolidate() error {
	ts := make([]types.T, len(s.vis))
	for k, c := range s.vis {
		ts[k] = s.rel.Columns[c].Type
	}
	codec := state.NewRowCodec(ts)
	type at struct{ change, row int }
	count := map[string]int{}
	first := map[string]at{}
	var order []string
	var buf []byte
	cols := make([]arrow.Array, len(s.vis))
	for ci, c := range s.pending {
		for k, col := range s.vis {
			cols[k] = c.rec.Column(col)
		}
		for i, op := range c.ops {
			buf = codec.Append(buf[:0], cols, i)
			key := string(buf)
			if _, ok := first[key]; !ok {
				first[key] = at{ci, i}
				order = append(order, key)
			}
			if op.IsInsert() {
				count[key]++
			} else {
				count[key]--
			}
		}
	}
	sel := make([][]int32, len(s.pending))
	for _, key := range order {
		p := first[key]
		for n := count[key]; n > 0; n-- {
			sel[p.change] = append(sel[p.change], int32(p.row))
		}
	}
	var out []change
	var err error
	for ci, c := range s.pending {
		if len(sel[ci]) > 0 && err == nil {
			var rec arrow.RecordBatch
			if rec, err = eval.TakeRecord(s.e.mem, c.rec, sel[ci]); err == nil {
				out = append(out, change{rec: rec, ops: make([]exec.Op, len(sel[ci]))}) // Insert is 0
			}
		}
		s.rows.Add(int64(len(sel[ci])) - c.rec.NumRows())
		c.rec.Release()
	}
	s.pending = out
	return err
}

// Close implements exec.SinkWriter.
func (s *subscriber) Close() { s.releasePending() }

func (s *subscriber) releasePending() {
	for _, c := range s.pending {
		if c.rec != nil {
			s.rows.Add(-int64(c.rec.NumRows()))
			c.rec.Release()
		}
	}
	s.pending = s.pending[:0]
}

func poke(ch chan struct{}) {
	select {
	case ch <- struct{}{}:
	default:
	}
}

// fail ends the subscription with err (the first error wins) and drops
// what it buffered.
func (s *subscriber) fail(err error) {
	s.mu.Lock()
	if s.err == nil {
		s.err = err
	}
	dropped := append(s.sealed, s.ready...)
	s.sealed, s.ready = nil, nil
	s.mu.Unlock()
	for _, c := range dropped {
		if c.rec != nil {
			c.rec.Release()
		}
	}
	poke(s.wake)
}

// commitLoop moves sealed changes to ready as their epochs commit.
func (s *subscriber) commitLoop() {
	defer close(s.stopped)
	ctx, cancel := context.WithCancel(s.e.ctx)
	defer cancel()
	go func() {
		select {
		case <-s.stop:
			cancel()
		case <-ctx.Done():
		}
	}()
	for {
		s.mu.Lock()
		var wait uint64
		if len(s.sealed) > 0 {
			wait = s.sealed[0].epoch
		}
		s.mu.Unlock()
		if wait == 0 {
			select {
			case <-s.sealedCh:
				continue
			case <-ctx.Done():
				return
			}
		}
		if err := s.e.coord.WaitCommitted(ctx, wait); err != nil {
			if ctx.Err() == nil {
				s.fail(err)
			}
			return
		}
		committed := s.e.coord.Committed()
		s.mu.Lock()
		k := 0
		for k < len(s.sealed) && s.sealed[k].epoch <= committed {
			k++
		}
		s.ready = append(s.ready, s.sealed[:k]...)
		s.sealed = append(s.sealed[:0], s.sealed[k:]...)
		s.mu.Unlock()
		poke(s.wake)
	}
}

// next waits until changes are ready (at most wait; forever if wait < 0),
// and returns up to max rows of them, formatted as the subscription's
// result rows. It returns no records when wait passes first.
func (s *subscriber) next(ctx context.Context, max int64, wait time.Duration) ([]arrow.RecordBatch, error) {
	var timer <-chan time.Time
	if wait >= 0 {
		t := time.NewTimer(wait)
		defer t.Stop()
		timer = t.C
	}
	for {
		taken, err := s.take(max)
		if err != nil || len(taken) > 0 {
			return s.format(taken), err
		}
		if p := s.v.failed.Load(); p != nil {
			return nil, sqlerr.New(sqlerr.InternalError, "the subscription's dataflow failed: %v", *p)
		}
		select {
		case <-s.wake:
		case <-timer:
			return nil, nil
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-s.drained:
			return nil, errDrained
		case <-s.v.done:
			return nil, sqlerr.New(sqlerr.AdminShutdown, "the subscription ended: the server is shutting down")
		}
	}
}

// take removes up to max ready rows (a progress row counts as one).
func (s *subscriber) take(max int64) ([]change, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.err != nil {
		return nil, s.err
	}
	var out []change
	for max > 0 && len(s.ready) > 0 {
		c := s.ready[0]
		n := int64(1)
		if c.rec != nil {
			n = c.rec.NumRows()
		}
		if n > max {
			head := change{epoch: c.epoch, rec: c.rec.NewSlice(0, max), ops: c.ops[:max]}
			rest := c.rec.NewSlice(max, n)
			c.rec.Release()
			s.ready[0] = change{epoch: c.epoch, rec: rest, ops: c.ops[max:]}
			c, n = head, max
		} else {
			s.ready = s.ready[1:]
		}
		if c.rec != nil {
			s.rows.Add(-n)
		}
		out = append(out, c)
		max -= n
	}
	return out, nil
}

// opNames are the values of the op column.
var opNames = [...]string{exec.Insert: "Insert", exec.Delete: "Delete", exec.UpdateDelete: "UpdateDelete", exec.UpdateInsert: "UpdateInsert"}

// format turns changes into result rows, releasing them.
func (s *subscriber) format(cs []change) []arrow.RecordBatch {
	mem := s.e.mem
	ts := make([]types.T, len(s.cols))
	for i, c := range s.cols {
		ts[i] = c.Type
	}
	schema := exec.SchemaOf(ts)
	out := make([]arrow.RecordBatch, 0, len(cs))
	for _, c := range cs {
		n := 1
		if c.rec != nil {
			n = int(c.rec.NumRows())
		}
		eb := array.NewInt64Builder(mem)
		for range n {
			eb.Append(int64(c.epoch))
		}
		arrs := []arrow.Array{eb.NewArray()}
		eb.Release()
		if s.progress {
			bb := array.NewBooleanBuilder(mem)
			for range n {
				bb.Append(c.rec == nil)
			}
			arrs = append(arrs, bb.NewArray())
			bb.Release()
		}
		if c.rec == nil {
			for _, t := range ts[len(arrs):] {
				arrs = append(arrs, array.MakeArrayOfNull(mem, t.ArrowType(), 1))
			}
		} else {
			ob := array.NewStringBuilder(mem)
			for _, op := range c.ops {
				ob.Append(opNames[op])
			}
			arrs = append(arrs, ob.NewArray())
			ob.Release()
			for _, col := range s.vis {
				a := c.rec.Column(col)
				a.Retain()
				arrs = append(arrs, a)
			}
			c.rec.Release()
		}
		out = append(out, array.NewRecordBatch(schema, arrs, int64(n)))
		for _, a := range arrs {
			a.Release()
		}
	}
	return out
}

// close detaches the subscription's dataflow and drops what it buffered.
func (s *subscriber) close() {
	s.stopOnce.Do(func() {
		close(s.stop)
		e, rel := s.e, s.rel
		var muts []barrier.Mutation
		for _, up := range rel.DependsOn {
			muts = append(muts, &exec.RemoveOutput{Relation: up, Actor: rel.ID})
		}
		muts = append(muts, &exec.StopActor{Actor: rel.ID})
		e.coord.Schedule(barrier.Change{
			Mutations:    muts,
			RemoveActors: []uint32{rel.ID},
			AfterInject: func(uint64) {
				for _, r := range s.v.readers {
					if r != nil {
						e.coord.RemoveSource(r)
					}
				}
			},
		})
		<-s.v.done
		<-s.stopped
		for _, r := range s.v.readers {
			if r != nil {
				r.close()
			}
		}
		e.cleanup.add(s.v.tables...)
		s.fail(errSubscriptionClosed)
	})
}

// Drain implements pgwire.Drainer: a running SUBSCRIBE ends.
func (s *session) Drain() { s.drainOnce.Do(func() { close(s.drained) }) }

var errDrained = sqlerr.New(sqlerr.AdminShutdown, "terminating SUBSCRIBE: the server is shutting down")

var errSubscriptionClosed = sqlerr.New(sqlerr.InvalidCursorName, "the subscription is closed")

// runSubscribe runs a SUBSCRIBE statement: its rows stream to the client
// until it cancels (57014) or the subscription fails.
func (s *session) runSubscribe(ctx context.Context, st *sql.Subscribe, w pgwire.ResultWriter) error {
	sub, err := s.openFeed(ctx, st)
	if err != nil {
		return err
	}
	defer sub.close()
	if err := w.BeginRows(sub.columns()); err != nil {
		return err
	}
	flush := flusher(w)
	for {
		recs, err := sub.next(ctx, 1<<12, -1)
		for _, r := range recs {
			if err == nil {
				err = w.WriteRows(r)
			}
			r.Release()
		}
		if err == nil {
			err = flush()
		}
		if err != nil {
			return err
		}
	}
}

// flusher returns w's Flush, or a func that does nothing if w cannot flush.
func flusher(w pgwire.ResultWriter) func() error {
	if f, ok := w.(pgwire.Flusher); ok {
		return f.Flush
	}
	return func() error { return nil }
}

// copySubscribe runs COPY (SUBSCRIBE ...) TO STDOUT: the rows stream as
// COPY data until the client cancels.
func (s *session) copySubscribe(ctx context.Context, st *sql.CopySubscribe, w pgwire.ResultWriter) error {
	c, err := copier(w)
	if err != nil {
		return err
	}
	sub, err := s.openFeed(ctx, st.Subscribe)
	if err != nil {
		return err
	}
	defer sub.close()
	enc := &copyEncoder{f: st.Format, zone: s.zone}
	for _, col := range sub.columns() {
		enc.names = append(enc.names, col.Name)
		enc.types = append(enc.types, col.Type)
	}
	if err := c.CopyOut(false, len(sub.columns())); err != nil {
		return err
	}
	if err := c.CopyData(enc.header()); err != nil {
		return err
	}
	flush := flusher(w)
	for {
		recs, err := sub.next(ctx, 1<<12, -1)
		for _, r := range recs {
			if err == nil {
				err = c.CopyData(enc.rows(r.Columns(), int(r.NumRows())))
			}
			r.Release()
		}
		if err == nil {
			err = flush()
		}
		if err != nil {
			return err
		}
	}
}

func (s *subscriber) columns() []pgwire.Column      { return s.cols }
func (s *subscriber) setDrained(ch <-chan struct{}) { s.drained = ch }

// fetchFeed runs FETCH of a cursor over f: it waits for changes (at most
// st.Timeout) and returns up to st.Count rows of them.
func fetchFeed(ctx context.Context, s changeFeed, st *sql.Fetch, cols []pgwire.Column, w pgwire.ResultWriter) error {
	if st.Direction != sql.FetchForward || st.Count < 0 {
		return errNoScroll
	}
	wait := time.Duration(-1)
	if st.Timeout >= 0 {
		wait = time.Duration(st.Timeout) * time.Microsecond
	}
	var recs []arrow.RecordBatch
	var err error
	if st.Count > 0 {
		recs, err = s.next(ctx, st.Count, wait)
	}
	defer func() {
		for _, r := range recs {
			r.Release()
		}
	}()
	if err != nil {
		return err
	}
	var n int64
	if !st.Move {
		if err := w.BeginRows(cols); err != nil {
			return err
		}
	}
	for _, r := range recs {
		n += r.NumRows()
		if !st.Move {
			if err := w.WriteRows(r); err != nil {
				return err
			}
		}
	}
	return w.Complete(fmt.Sprintf("%s %d", st.Tag(), n))
}
