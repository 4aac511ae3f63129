package engine

import (
	"context"
	"encoding/binary"
	"fmt"
	"math"
	"sync"
	"sync/atomic"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/streamsql/streamsql/barrier"
	"github.com/streamsql/streamsql/catalog"
	"github.com/streamsql/streamsql/exec"
	"github.com/streamsql/streamsql/ir"
	"github.com/streamsql/streamsql/pgwire"
	"github.com/streamsql/streamsql/sql"
	"github.com/streamsql/streamsql/sqlerr"
	"github.com/streamsql/streamsql/state"
	"github.com/streamsql/streamsql/types"
)

// A subscription (CREATE SUBSCRIPTION s FROM v) is a sink of SELECT * FROM
// v whose writer, the changelog, keeps the change stream in the sink's
// state table for the subscription's retention. Its first changes are its
// backfill (v's rows when it was created), so reading the log from its
// start rebuilds v; later ones are v's changes. Readers (subscription
// cursors, SUBSCRIBE ... AS OF) read the committed log through store
// snapshots, so they never slow the dataflow; a reader that falls behind
// the retention fails with 55000.
//
// The log's keys are not prefixed by a partition key: it is one ordered
// log per subscription (docs/decisions.md).
//
//	0x01 epoch seq -> op, row  the changes of epoch, in stream order
//	0x02 epoch     -> time     barrier time of an epoch with changes
//	0x03           -> epoch    the last epoch trimmed (none: nothing trimmed)
//
// epoch is 8 bytes and seq 4, big-endian; time is microseconds since the
// Unix epoch; op is an exec.Op; row is the visible columns' state.RowCodec
// encoding.
const (
	logChange  = 0x01
	logEpoch   = 0x02
	logTrimmed = 0x03
)

func logChangeKey(buf []byte, epoch uint64, seq uint32) []byte {
	buf = binary.BigEndian.AppendUint64(append(buf[:0], logChange), epoch)
	return binary.BigEndian.AppendUint32(buf, seq)
}

func logEpochKey(buf []byte, epoch uint64) []byte {
	return binary.BigEndian.AppendUint64(append(buf[:0], logEpoch), epoch)
}

// changelog is the SinkWriter of a subscription, and the log of a
// relation's retained history (retain_history.go). Write and Barrier run on
// the goroutine of the stream they log; retention and stop may be called
// from any.
type changelog struct {
	table *state.Table
	codec *state.RowCodec
	vis   []int
	// retention is in microseconds.
	retention atomic.Int64
	// startsAtBarrier is set for a relation's history: the log starts at
	// some point of the stream, and at its first barrier it records that it
	// holds every change after that epoch (in logTrimmed). A subscription's
	// log starts with its backfill and holds everything until trimmed.
	startsAtBarrier bool
	// oldest is the barrier time of the oldest epoch the log holds: none is
	// past the retention before oldest is (oldestUnknown: not read yet;
	// logEmpty: the log holds no epoch).
	oldest int64
	// buf holds the encoded changes of the open epoch; ends[i] is where
	// change i ends.
	buf  []byte
	ends []int
	cols []arrow.Array
	key  []byte
	// mu orders stop after a Write or Barrier under way.
	mu      sync.Mutex
	stopped bool
}

const (
	oldestUnknown = math.MinInt64
	logEmpty      = math.MaxInt64
)

// newChangelog returns a log of rel's changes (batches with rel's
// columns) into table, for retention.
func newChangelog(rel *catalog.Relation, table *state.Table, retention time.Duration) *changelog {
	vis := rel.VisibleColumns()
	ts := rel.Types()
	visTypes := make([]types.T, len(vis))
	for i, c := range vis {
		visTypes[i] = ts[c]
	}
	l := &changelog{
		table:  table,
		codec:  state.NewRowCodec(visTypes),
		vis:    vis,
		oldest: oldestUnknown,
		cols:   make([]arrow.Array, len(vis)),
	}
	l.retention.Store(retention.Microseconds())
	return l
}

// openChangelog returns the writer of subscription rel.
func (e *Engine) openChangelog(rel *catalog.Relation, v *view) exec.SinkWriter {
	retention := sql.DefaultRetention
	if r, err := sql.ParseRetention(rel.Options["retention"]); err == nil {
		retention = r
	}
	return newChangelog(rel, e.store.Table(state.TableID(rel.StateTable)), retention)
}

// setRetention changes the retention; the next barrier trims by it.
func (l *changelog) setRetention(d time.Duration) {
	l.retention.Store(d.Microseconds())
	l.mu.Lock()
	l.oldest = oldestUnknown
	l.mu.Unlock()
}

// stop makes the log ignore every later call; once it returns, no call
// writes the table any more.
func (l *changelog) stop() {
	l.mu.Lock()
	l.stopped = true
	l.mu.Unlock()
}

// Write encodes b's changes into the open epoch.
func (l *changelog) Write(_ context.Context, b *exec.Batch) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.stopped {
		return nil
	}
	for k, c := range l.vis {
		l.cols[k] = b.Rec.Column(c)
	}
	for i, op := range b.Ops {
		l.buf = l.codec.Append(append(l.buf, byte(op)), l.cols, i)
		l.ends = append(l.ends, len(l.buf))
	}
	clear(l.cols)
	return nil
}

// Barrier writes the epoch's changes under their keys, trims the epochs
// past the retention and seals the table.
func (l *changelog) Barrier(_ context.Context, b *barrier.Barrier) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.stopped {
		return nil
	}
	if l.startsAtBarrier {
		l.startsAtBarrier = false
		if err := l.markStart(b.Epoch); err != nil {
			return err
		}
	}
	if len(l.ends) > 0 {
		start := 0
		for i, end := range l.ends {
			l.key = logChangeKey(l.key, b.Epoch, uint32(i))
			l.table.Put(l.key, l.buf[start:end])
			start = end
		}
		l.key = logEpochKey(l.key, b.Epoch)
		l.table.Put(l.key, binary.BigEndian.AppendUint64(nil, uint64(b.Time)))
		l.buf, l.ends = l.buf[:0], l.ends[:0]
		if l.oldest == logEmpty {
			l.oldest = b.Time
		}
	}
	if cutoff := b.Time - l.retention.Load(); cutoff > l.oldest {
		if err := l.trim(cutoff); err != nil {
			return err
		}
	}
	l.table.Seal(b.Epoch)
	return nil
}

// markStart records, unless the log already says where it starts (a
// restart), that it holds every change after epoch.
func (l *changelog) markStart(epoch uint64) error {
	_, ok, err := l.table.Get([]byte{logTrimmed})
	if err != nil || ok {
		return err
	}
	l.table.Put([]byte{logTrimmed}, binary.BigEndian.AppendUint64(nil, epoch))
	return nil
}

// trim deletes the epochs whose barrier came before cutoff, and learns
// the time of the oldest one left.
func (l *changelog) trim(cutoff int64) error {
	it, err := l.table.NewIter([]byte{logEpoch}, []byte{logEpoch + 1})
	if err != nil {
		return err
	}
	var old []uint64
	l.oldest = logEmpty
	for ok := it.First(); ok; ok = it.Next() {
		if t := int64(binary.BigEndian.Uint64(it.Value())); t >= cutoff {
			l.oldest = t
			break
		}
		old = append(old, binary.BigEndian.Uint64(it.Key()[1:]))
	}
	if err := it.Close(); err != nil {
		return err
	}
	for _, epoch := range old {
		lo := logChangeKey(nil, epoch, 0)
		hi := logChangeKey(nil, epoch+1, 0)
		l.table.DeleteRange(lo, hi)
		l.table.Delete(logEpochKey(l.key, epoch))
	}
	if len(old) > 0 {
		l.table.Put([]byte{logTrimmed}, binary.BigEndian.AppendUint64(nil, old[len(old)-1]))
	}
	return nil
}

func (l *changelog) Close() {}

// changeFeed is what a SUBSCRIBE or a subscription cursor reads: its
// dataflow (subscriber) or a subscription's log (logFeed).
type changeFeed interface {
	// columns are the feed's result columns.
	columns() []pgwire.Column
	// next waits until changes are ready (at most wait; forever if wait
	// < 0) and returns up to max rows of them; none when wait passes.
	next(ctx context.Context, max int64, wait time.Duration) ([]arrow.RecordBatch, error)
	close()
	setDrained(<-chan struct{})
}

// logFeed reads a subscription's committed log after an epoch, or a
// relation's retained history (after its rows as of that epoch).
type logFeed struct {
	e     *Engine
	name  string // the log's owner, for messages
	table state.TableID
	// check fails unless the log in snap holds every change after epoch.
	check    func(snap *state.Snapshot, after uint64) error
	codec    *state.RowCodec
	cols     []pgwire.Column
	progress bool
	// pending are rows to return before the log's (a snapshot).
	pending []arrow.RecordBatch
	// pos is the key of the next change to read; after the epoch whose
	// changes have all been read.
	pos   []byte
	after uint64
	// lastProgress is the epoch of the last progress row.
	lastProgress uint64
	drained      <-chan struct{}
}

// openLog returns a feed of subscription sub's changes after epoch after.
func (e *Engine) openLog(sub *catalog.Relation, after uint64, progress bool) (*logFeed, error) {
	check := func(snap *state.Snapshot, after uint64) error { return checkRetained(snap, sub, after) }
	snap := e.store.Snapshot()
	defer snap.Release()
	if err := check(snap, after); err != nil {
		return nil, err
	}
	return newLogFeed(e, sub, state.TableID(sub.StateTable), after, progress, check), nil
}

// newLogFeed returns a feed of the changes after epoch after in the log
// of rel's visible columns kept in table.
func newLogFeed(e *Engine, rel *catalog.Relation, table state.TableID, after uint64, progress bool, check func(*state.Snapshot, uint64) error) *logFeed {
	f := &logFeed{e: e, name: rel.Name, table: table, check: check, progress: progress, after: after,
		pos: logChangeKey(nil, after+1, 0), lastProgress: after}
	vis := rel.VisibleColumns()
	ts := rel.Types()
	visTypes := make([]types.T, len(vis))
	f.cols = []pgwire.Column{{Name: "epoch", Type: types.Int64T}}
	if progress {
		f.cols = append(f.cols, pgwire.Column{Name: "progressed", Type: types.BoolT})
	}
	f.cols = append(f.cols, pgwire.Column{Name: "op", Type: types.TextT})
	for i, c := range vis {
		visTypes[i] = ts[c]
		f.cols = append(f.cols, pgwire.Column{Name: rel.Columns[c].Name, Type: ts[c]})
	}
	f.codec = state.NewRowCodec(visTypes)
	return f
}

// checkRetained fails unless sub's log holds every change after epoch.
func checkRetained(snap *state.Snapshot, sub *catalog.Relation, after uint64) error {
	v, ok, err := snap.Get(state.TableID(sub.StateTable), []byte{logTrimmed})
	if err != nil {
		return err
	}
	if ok {
		if trimmed := binary.BigEndian.Uint64(v); after < trimmed {
			return sqlerr.New(sqlerr.ObjectNotInPrerequisiteState,
				"subscription \"%s\" no longer retains the changes after epoch %d: it retains those after epoch %d", sub.Name, after, trimmed).
				WithHint("Its retention is %s (CREATE SUBSCRIPTION ... WITH (retention = '...')).", retentionText(sub))
		}
	}
	return nil
}

func retentionText(sub *catalog.Relation) string {
	if r := sub.Options["retention"]; r != "" {
		return r
	}
	return sql.DefaultRetention.String()
}

func (f *logFeed) columns() []pgwire.Column { return f.cols }
func (f *logFeed) close() {
	for _, r := range f.pending {
		r.Release()
	}
	f.pending = nil
}
func (f *logFeed) setDrained(ch <-chan struct{}) { f.drained = ch }

// next implements changeFeed: it reads the committed log, and waits for the
// next commit while there is nothing new.
func (f *logFeed) next(ctx context.Context, max int64, wait time.Duration) ([]arrow.RecordBatch, error) {
	if wait >= 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, wait)
		defer cancel()
	}
	waitCtx, stop := context.WithCancel(ctx)
	defer stop()
	if f.drained != nil {
		go func() {
			select {
			case <-f.drained:
				stop()
			case <-waitCtx.Done():
			}
		}()
	}
	if rec := f.takePending(max); rec != nil {
		return []arrow.RecordBatch{rec}, nil
	}
	for {
		rec, epoch, err := f.read(max)
		if err != nil {
			return nil, err
		}
		if rec != nil {
			return []arrow.RecordBatch{rec}, nil
		}
		if err := f.e.coord.WaitCommitted(waitCtx, epoch+1); err != nil {
			switch {
			case ctx.Err() == context.DeadlineExceeded && wait >= 0:
				return nil, nil
			case ctx.Err() == nil && waitCtx.Err() != nil:
				return nil, errDrained
			}
			return nil, err
		}
	}
}

// takePending returns up to max of the pending rows, or nil if there are
// none.
func (f *logFeed) takePending(max int64) arrow.RecordBatch {
	if len(f.pending) == 0 {
		return nil
	}
	rec := f.pending[0]
	if rec.NumRows() <= max {
		f.pending = f.pending[1:]
		return rec
	}
	head, rest := rec.NewSlice(0, max), rec.NewSlice(max, rec.NumRows())
	rec.Release()
	f.pending[0] = rest
	return head
}

// read returns up to max rows of the changes after the feed's position as
// of the last committed epoch (nil if there are none), and that epoch.
func (f *logFeed) read(max int64) (arrow.RecordBatch, uint64, error) {
	snap := f.e.store.Snapshot()
	defer snap.Release()
	epoch := snap.Epoch()
	if err := f.check(snap, f.after); err != nil {
		return nil, epoch, err
	}
	it, err := snap.NewIter(f.table, f.pos, logChangeKey(nil, epoch+1, 0))
	var pos []byte // the key after the last read
	if err != nil {
		return nil, epoch, err
	}
	defer it.Close()
	mem := f.e.mem
	eb, ob := array.NewInt64Builder(mem), array.NewStringBuilder(mem)
	var pb *array.BooleanBuilder
	if f.progress {
		pb = array.NewBooleanBuilder(mem)
	}
	bs := make([]array.Builder, len(f.codec.Types()))
	for i, t := range f.codec.Types() {
		bs[i] = array.NewBuilder(mem, t.ArrowType())
	}
	defer func() {
		eb.Release()
		ob.Release()
		if pb != nil {
			pb.Release()
		}
		for _, b := range bs {
			b.Release()
		}
	}()
	var n int64
	for ok := it.First(); ok && n < max; ok = it.Next() {
		key, val := it.Key(), it.Value()
		if len(key) != 13 || len(val) == 0 || val[0] > byte(exec.UpdateInsert) {
			return nil, epoch, sqlerr.New(sqlerr.InternalError, "%s: corrupt log entry", f.name)
		}
		e := binary.BigEndian.Uint64(key[1:])
		eb.Append(int64(e))
		if pb != nil {
			pb.Append(false)
		}
		ob.Append(opNames[val[0]])
		if err := f.codec.Decode(val[1:], bs); err != nil {
			return nil, epoch, err
		}
		pos = append(append(pos[:0], key...), 0)
		n++
	}
	if err := it.Error(); err != nil {
		return nil, epoch, err
	}
	if pos != nil {
		f.pos = pos
	}
	if n < max {
		// Every change up to epoch has been read.
		f.pos, f.after = logChangeKey(nil, epoch+1, 0), epoch
		if f.progress && epoch > f.lastProgress {
			eb.Append(int64(epoch))
			pb.Append(true)
			ob.AppendNull()
			for _, b := range bs {
				b.AppendNull()
			}
			f.lastProgress = epoch
			n++
		}
	}
	if n == 0 {
		return nil, epoch, nil
	}
	arrs := []arrow.Array{eb.NewArray()}
	if pb != nil {
		arrs = append(arrs, pb.NewArray())
	}
	arrs = append(arrs, ob.NewArray())
	for _, b := range bs {
		arrs = append(arrs, b.NewArray())
	}
	ts := make([]types.T, len(f.cols))
	for i, c := range f.cols {
		ts[i] = c.Type
	}
	rec := array.NewRecordBatch(exec.SchemaOf(ts), arrs, n)
	for _, a := range arrs {
		a.Release()
	}
	return rec, epoch, nil
}

// openFeed starts what a SUBSCRIBE reads: a dataflow, or with AS OF (or
// naming a subscription) a subscription's log.
func (s *session) openFeed(ctx context.Context, st *sql.Subscribe) (changeFeed, error) {
	var f changeFeed
	var err error
	switch {
	case st.AsOf != 0 || st.Log != nil:
		f, err = s.e.logFeedOf(ctx, s.cat, st, s.queryMemoryLimit())
	default:
		f, err = s.e.subscribe(ctx, s.cat, st, s.backlogRows())
	}
	if err != nil {
		return nil, err
	}
	f.setDrained(s.drained)
	return f, nil
}

// logFeedOf opens the log a SUBSCRIBE reads: that of the subscription it
// names, or with AS OF the relation's retained history, or else one kept
// by a subscription on the relation it names.
func (e *Engine) logFeedOf(ctx context.Context, cat *catalog.Catalog, st *sql.Subscribe, memoryLimit int64) (changeFeed, error) {
	log := st.Log
	if log == nil {
		if st.From == nil {
			return nil, sqlerr.Unsupported("SUBSCRIBE (query) AS OF").
				WithHint("Name a table or materialized view: SUBSCRIBE TO v AS OF epoch.")
		}
		if e.historyLog(st.From.ID) != nil {
			return e.openHistory(ctx, st.From, st.AsOf, st.Snapshot, st.Progress, memoryLimit)
		}
		for _, r := range cat.InDatabase() {
			if sql.IsSubscription(r) && len(r.DependsOn) == 1 && r.DependsOn[0] == st.From.ID {
				log = r
				break
			}
		}
		if log == nil {
			err := sqlerr.New(sqlerr.ObjectNotInPrerequisiteState, "the changes of past epochs of \"%s\" are not retained", st.From.Name)
			if !keepsHistory(st.From) {
				return nil, err.WithHint("Only tables and materialized views retain history (retain_history).")
			}
			return nil, err.WithHint("ALTER %s %s SET (retain_history = '1h') retains them from now on.", alterWord(st.From), st.From.Name)
		}
	}
	if st.Snapshot && st.AsOf != 0 {
		return nil, sqlerr.Unsupported("SUBSCRIBE ... AS OF with a snapshot of a subscription (it retains changes, not past snapshots)").
			WithHint("Add WITH (SNAPSHOT = false): the changes after the epoch of AS OF are sent; or subscribe to a relation that retains history.")
	}
	after := st.AsOf
	if after == 0 {
		after = e.coord.Committed()
	}
	return e.openLog(log, after, st.Progress)
}

// declareSubscriptionCursor runs DECLARE c SUBSCRIPTION CURSOR FOR s.
func (s *session) declareSubscriptionCursor(st *sql.DeclareSubscriptionCursor, w pgwire.ResultWriter) error {
	if _, ok := s.cursors[st.Name]; ok {
		return sqlerr.New(sqlerr.DuplicateCursor, "cursor \"%s\" already exists", st.Name)
	}
	after := st.Since
	if !st.HasSince {
		after = s.e.coord.Committed()
	}
	f, err := s.e.openLog(st.Subscription, after, false)
	if err != nil {
		return err
	}
	f.setDrained(s.drained)
	if s.cursors == nil {
		s.cursors = map[string]*cursor{}
	}
	// Subscription cursors do not belong to a transaction (RisingWave's).
	s.cursors[st.Name] = &cursor{name: st.Name, hold: true, noScroll: true, cols: f.cols, sub: f}
	return w.Complete(st.Tag())
}

// dropSubscription runs DROP SUBSCRIPTION.
func (e *Engine) dropSubscription(ctx context.Context, cat *catalog.Catalog, st *sql.DropSubscription, w notifier) error {
	rel, err := e.resolve(cat, st.Path, st.Name)
	if err != nil {
		return err
	}
	if !sql.IsSubscription(rel) {
		if st.IfExists && rel == nil {
			return w.Notice("NOTICE", "00000", fmt.Sprintf("subscription \"%s\" does not exist, skipping", st.Name.Name))
		}
		return sqlerr.New(sqlerr.UndefinedObject, "subscription \"%s\" does not exist", st.Name.Name)
	}
	return e.drop(ctx, cat, &ir.Drop{Kind: catalog.Sink, Names: []ir.ObjectName{st.Name}, Path: st.Path}, w)
}
