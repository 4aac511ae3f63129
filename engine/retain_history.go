package engine

import (
	"context"
	"encoding/binary"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/streamsql/streamsql/catalog"
	"github.com/streamsql/streamsql/exec"
	"github.com/streamsql/streamsql/sql"
	"github.com/streamsql/streamsql/sqlerr"
	"github.com/streamsql/streamsql/state"
	"github.com/streamsql/streamsql/types"
)

// Retained history (sql/retain_history.go): a table or materialized view
// whose retention is not zero keeps its change log in its HistoryTable, in
// a subscription's log format (subscription.go). The log is the
// relation's dispatcher's log (exec.Dispatcher.SetLog): it sees the
// relation's change stream as the views over it do, and writes and seals
// epoch n's changes at barrier n, before the barrier goes on, so the log
// and the relation's rows are committed by the same checkpoint. At its
// first barrier (the relation's first, or after a restart, an ALTER that
// turns it on) the log records that it holds the changes after that epoch;
// trimming moves that mark forward. Reads (SUBSCRIBE ... AS OF) read the
// log and the relation's rows from one committed snapshot.

// DefaultRetainHistory is the retention of relations that do not set
// retain_history, unless Options.RetainHistory says otherwise: none. The
// log costs every write of the relation a second write (docs/decisions.md
// has the measured cost), so it is kept where asked for.
const DefaultRetainHistory time.Duration = 0

// defaultRetainHistory is the server's default retention (0: none).
func (e *Engine) defaultRetainHistory() time.Duration {
	switch d := e.opts.RetainHistory; {
	case d < 0:
		return 0
	case d == 0:
		return DefaultRetainHistory
	default:
		return d
	}
}

// retainHistoryOf returns rel's retention: its retain_history, or the
// server's default (0: none).
func (e *Engine) retainHistoryOf(rel *catalog.Relation) time.Duration {
	if v, ok := rel.Options[sql.RetainHistoryOption]; ok {
		if d, err := sql.ParseRetainHistory(v); err == nil {
			return d
		}
	}
	return e.defaultRetainHistory()
}

// keepsHistory reports whether rel's kind keeps a retained history.
func keepsHistory(rel *catalog.Relation) bool {
	return rel.Kind == catalog.Table || rel.Kind == catalog.MaterializedView
}

// withRetainHistory returns options with retain_history = v set ("":
// options unchanged).
func withRetainHistory(options map[string]string, v string) map[string]string {
	if v == "" {
		return options
	}
	out := map[string]string{sql.RetainHistoryOption: v}
	for k, x := range options {
		if k != sql.RetainHistoryOption {
			out[k] = x
		}
	}
	return out
}

// startHistory makes disp, the dispatcher of rel's change stream, log it
// if rel retains history. A log that is off (the default was changed since
// it was written, or a restart after ALTER ... SET (retain_history = 0))
// is cleared, so that a later one starts afresh.
func (e *Engine) startHistory(rel *catalog.Relation, disp *exec.Dispatcher) {
	if rel.HistoryTable == 0 || !keepsHistory(rel) {
		return
	}
	table := e.store.Table(state.TableID(rel.HistoryTable))
	d := e.retainHistoryOf(rel)
	if d == 0 {
		// Every log writes its start mark at its first barrier.
		if _, ok, err := table.Get([]byte{logTrimmed}); ok || err != nil {
			e.cleanup.add(table)
		}
		return
	}
	l := newChangelog(rel, table, d)
	l.startsAtBarrier = true
	e.mu.Lock()
	e.histories[rel.ID] = l
	e.mu.Unlock()
	disp.SetLog(l)
}

// stopHistory stops relation id's log, if it has one, and clears its table
// at the next barrier. disp, if not nil, is the relation's dispatcher.
func (e *Engine) stopHistory(id uint32, disp *exec.Dispatcher) {
	e.mu.Lock()
	l := e.histories[id]
	delete(e.histories, id)
	e.mu.Unlock()
	if l == nil {
		return
	}
	if disp != nil {
		disp.SetLog(nil)
	}
	l.stop()
	e.cleanup.add(l.table)
}

// historyLog returns relation id's running log, or nil.
func (e *Engine) historyLog(id uint32) *changelog {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.histories[id]
}

// dispatcherOf returns the dispatcher of table or view id, or nil.
func (e *Engine) dispatcherOf(id uint32) *exec.Dispatcher {
	e.mu.Lock()
	defer e.mu.Unlock()
	if tw := e.tables[id]; tw != nil {
		return tw.disp
	}
	if v := e.views[id]; v != nil {
		return v.disp
	}
	return nil
}

// alterRetainHistory runs ALTER TABLE | MATERIALIZED VIEW ... SET
// (retain_history = ...) and RESET (retain_history). A change of retention
// applies from the next barrier; turning history off clears the log with
// the catalog change; turning it on starts a new log (in a new state
// table) once the catalog change is committed.
func (e *Engine) alterRetainHistory(cat *catalog.Catalog, st *sql.AlterRetainHistory) error {
	e.ddlMu.Lock()
	defer e.ddlMu.Unlock()
	rel, err := current(cat, st.Rel)
	if err != nil {
		return err
	}
	changed := *rel
	changed.Options = map[string]string{}
	for k, v := range rel.Options {
		if k != sql.RetainHistoryOption {
			changed.Options[k] = v
		}
	}
	if !st.Reset {
		changed.Options[sql.RetainHistoryOption] = st.Value
	}
	if len(changed.Options) == 0 {
		changed.Options = nil
	}
	d := e.retainHistoryOf(&changed)
	disp := e.dispatcherOf(rel.ID)
	l := e.historyLog(rel.ID)
	switch {
	case l != nil && d == 0:
		e.stopHistory(rel.ID, disp)
	case l == nil && d > 0:
		changed.HistoryTable = e.catSrc.allocIDs(1)[0]
	}
	if err := e.replaceRelation(cat, &changed); err != nil {
		return err
	}
	switch {
	case l != nil && d > 0:
		l.setRetention(d)
	case l == nil && d > 0 && disp != nil:
		e.startHistory(&changed, disp)
	}
	return nil
}

// historyRange is what a relation's committed log holds: every change
// after epoch from, up to the committed epoch; ok is false if it holds
// none yet.
func historyRange(snap *state.Snapshot, table uint32) (from uint64, ok bool, err error) {
	v, ok, err := snap.Get(state.TableID(table), []byte{logTrimmed})
	if err != nil || !ok {
		return 0, false, err
	}
	return binary.BigEndian.Uint64(v), true, nil
}

// checkHistory fails unless rel's committed log in snap holds every change
// after epoch asOf: 55000 before its range (or with none), 22023 after the
// committed epoch.
func (e *Engine) checkHistory(snap *state.Snapshot, rel *catalog.Relation, asOf uint64) error {
	if asOf > snap.Epoch() {
		return sqlerr.New(sqlerr.InvalidParameterValue, "AS OF %d is in the future: the last committed epoch is %d", asOf, snap.Epoch())
	}
	from, ok, err := historyRange(snap, rel.HistoryTable)
	if err != nil {
		return err
	}
	if !ok {
		return sqlerr.New(sqlerr.ObjectNotInPrerequisiteState, "%s \"%s\" retains no history yet", rel.Kind, rel.Name).
			WithHint("Its history starts with the next checkpoint; retain_history is %s.", e.retentionText(rel))
	}
	if asOf < from {
		return sqlerr.New(sqlerr.ObjectNotInPrerequisiteState, "%s \"%s\" no longer retains epoch %d: its history starts at epoch %d", rel.Kind, rel.Name, asOf, from).
			WithHint("retain_history is %s (ALTER %s %s SET (retain_history = '...') keeps more).", e.retentionText(rel), alterWord(rel), rel.Name)
	}
	return nil
}

// retentionText renders rel's retention for messages and system tables.
func (e *Engine) retentionText(rel *catalog.Relation) string {
	if v, ok := rel.Options[sql.RetainHistoryOption]; ok {
		return v
	}
	if d := e.defaultRetainHistory(); d > 0 {
		return d.String() + " (the default)"
	}
	return "0 (the default)"
}

func alterWord(rel *catalog.Relation) string {
	if rel.Kind == catalog.MaterializedView {
		return "MATERIALIZED VIEW"
	}
	return "TABLE"
}

// historyRows lists each table's and materialized view's retention and the
// epochs its committed history covers (streamsql_history).
func (e *Engine) historyRows(cat *catalog.Catalog) ([][]types.Datum, error) {
	snap := e.store.Snapshot()
	defer snap.Release()
	var rows [][]types.Datum
	for _, r := range cat.InDatabase() {
		if !keepsHistory(r) {
			continue
		}
		retention, from, to := types.Null, types.Null, types.Null
		if d := e.retainHistoryOf(r); d > 0 && r.HistoryTable != 0 {
			retention = types.DInterval(types.IntervalValue{Micros: d.Microseconds()})
			first, ok, err := historyRange(snap, r.HistoryTable)
			if err != nil {
				return nil, err
			}
			if ok && e.historyLog(r.ID) != nil {
				from, to = types.DInt(int64(first)), types.DInt(int64(snap.Epoch()))
			}
		}
		_, set := r.Options[sql.RetainHistoryOption]
		rows = append(rows, []types.Datum{types.DText(r.Name), types.DText(r.Schema), types.DText(r.Kind.String()),
			retention, types.DBool(!set), from, to})
	}
	return rows, nil
}

// historySystemTable is streamsql_history: one row per table and
// materialized view, with its retention (NULL: none), whether that is the
// server's default, and the epochs SUBSCRIBE ... AS OF may name (from
// oldest_epoch to newest_epoch; NULL while it retains none).
var historySystemTable = systemTable{
	rel: &catalog.Relation{
		Name: "streamsql_history",
		Columns: []catalog.Column{
			{Name: "name", Type: types.TextT},
			{Name: "schema", Type: types.TextT},
			{Name: "kind", Type: types.TextT},
			{Name: "retain_history", Type: types.IntervalT},
			{Name: "is_default", Type: types.BoolT},
			{Name: "oldest_epoch", Type: types.Int64T},
			{Name: "newest_epoch", Type: types.Int64T},
		},
	},
	rows: (*Engine).historyRows,
}

// openHistory returns the feed of SUBSCRIBE TO rel AS OF asOf over rel's
// retained history: with snapshot, rel's rows as of epoch asOf (inserts
// with that epoch), then every change after asOf. asOf 0 is the last
// committed epoch. The snapshot is built before anything is sent and is
// bounded by memoryLimit (the session's query_memory_limit; 0: none):
// beyond it the SUBSCRIBE fails with 53200.
func (e *Engine) openHistory(ctx context.Context, rel *catalog.Relation, asOf uint64, snapshot, progress bool, memoryLimit int64) (changeFeed, error) {
	if err := e.viewError(rel); err != nil {
		return nil, err
	}
	check := func(snap *state.Snapshot, after uint64) error { return e.checkHistory(snap, rel, after) }
	snap := e.store.Snapshot()
	defer snap.Release()
	if asOf == 0 {
		asOf = snap.Epoch()
	}
	if err := check(snap, asOf); err != nil {
		return nil, err
	}
	f := newLogFeed(e, rel, state.TableID(rel.HistoryTable), asOf, progress, check)
	if !snapshot {
		return f, nil
	}
	var budget *exec.Budget
	if memoryLimit > 0 {
		budget = exec.NewBudget(memoryLimit)
	}
	rows, err := e.rowsAsOf(ctx, snap, rel, f, asOf, budget)
	if err != nil {
		return nil, err
	}
	f.pending = rows
	return f, nil
}

// rowsAsOf returns rel's rows as of epoch asOf, as feed rows of f: its
// rows in snap, less the ones the log inserted after asOf, plus the ones
// it deleted. Rows are told apart by their encoding in the log. The rows
// and the undo map are counted against budget (nil: no limit).
func (e *Engine) rowsAsOf(ctx context.Context, snap *state.Snapshot, rel *catalog.Relation, f *logFeed, asOf uint64, budget *exec.Budget) ([]arrow.RecordBatch, error) {
	undo, err := undoAfter(snap, f, asOf, budget)
	if err != nil {
		return nil, err
	}
	mem := e.mem
	if budget != nil {
		mem = budget.Allocator(mem)
	}
	out := newFeedBuilder(mem, f, asOf)
	defer out.release()
	vis := rel.VisibleColumns()
	cols := make([]arrow.Array, len(vis))
	var enc []byte
	err = exec.ScanSnapshot(ctx, e.mem, snap, rel, exec.OutputFunc(func(_ context.Context, m exec.Message) error {
		if m.Batch == nil {
			return nil
		}
		defer m.Batch.Release()
		for k, c := range vis {
			cols[k] = m.Batch.Rec.Column(c)
		}
		for i := range m.Batch.Ops {
			enc = f.codec.Append(enc[:0], cols, i)
			if n := undo[string(enc)]; n < 0 {
				undo[string(enc)] = n + 1 // inserted after asOf
				continue
			}
			if err := out.add(enc); err != nil {
				return err
			}
		}
		return budget.Check(0)
	}))
	if err != nil {
		return nil, err
	}
	for row, n := range undo {
		for ; n > 0; n-- { // deleted after asOf
			if err := out.add([]byte(row)); err != nil {
				return nil, err
			}
		}
	}
	if err := budget.Check(0); err != nil {
		return nil, err
	}
	return out.finish(), nil
}

// undoAfter returns, for each row (its log encoding) that f's log in snap
// changed after epoch asOf, the net number of copies to add back to undo
// those changes: deletes count +1, inserts -1. Each new entry is reserved
// in budget (nil: no limit).
func undoAfter(snap *state.Snapshot, f *logFeed, asOf uint64, budget *exec.Budget) (map[string]int, error) {
	it, err := snap.NewIter(f.table, logChangeKey(nil, asOf+1, 0), logChangeKey(nil, snap.Epoch()+1, 0))
	if err != nil {
		return nil, err
	}
	defer it.Close()
	undo := map[string]int{}
	for ok := it.First(); ok; ok = it.Next() {
		val := it.Value()
		if len(val) == 0 || val[0] > byte(exec.UpdateInsert) {
			return nil, sqlerr.New(sqlerr.InternalError, "%s: corrupt log entry", f.name)
		}
		row := val[1:]
		if _, ok := undo[string(row)]; !ok && budget != nil {
			budget.Reserve(int64(len(row)) + undoEntryOverhead)
			if err := budget.Check(0); err != nil {
				return nil, err
			}
		}
		switch exec.Op(val[0]) {
		case exec.Insert, exec.UpdateInsert:
			undo[string(row)]--
		default:
			undo[string(row)]++
		}
	}
	return undo, it.Error()
}

// undoEntryOverhead is about what a map[string]int entry costs beside its
// key's bytes: the string header, the int and the map's slot.
const undoEntryOverhead = 48

// feedBuilder builds a feed's rows of one epoch, all Inserts, in records
// of up to exec.BatchSize rows.
type feedBuilder struct {
	f     *logFeed
	epoch int64
	mem   memory.Allocator
	bs    []array.Builder
	n     int64
	recs  []arrow.RecordBatch
}

func newFeedBuilder(mem memory.Allocator, f *logFeed, epoch uint64) *feedBuilder {
	b := &feedBuilder{f: f, epoch: int64(epoch), mem: mem}
	for _, c := range f.cols {
		b.bs = append(b.bs, array.NewBuilder(mem, c.Type.ArrowType()))
	}
	return b
}

// add appends the row whose log encoding is enc.
func (b *feedBuilder) add(enc []byte) error {
	b.bs[0].(*array.Int64Builder).Append(b.epoch)
	i := 1
	if b.f.progress {
		b.bs[i].(*array.BooleanBuilder).Append(false)
		i++
	}
	b.bs[i].(*array.StringBuilder).Append(opNames[exec.Insert])
	if err := b.f.codec.Decode(enc, b.bs[i+1:]); err != nil {
		return err
	}
	if b.n++; b.n == exec.BatchSize {
		b.flush()
	}
	return nil
}

func (b *feedBuilder) flush() {
	if b.n == 0 {
		return
	}
	arrs := make([]arrow.Array, len(b.bs))
	ts := make([]types.T, len(b.bs))
	for i, bb := range b.bs {
		arrs[i] = bb.NewArray()
		ts[i] = b.f.cols[i].Type
	}
	b.recs = append(b.recs, array.NewRecordBatch(exec.SchemaOf(ts), arrs, b.n))
	for _, a := range arrs {
		a.Release()
	}
	b.n = 0
}

// finish returns the records built; the caller releases them.
func (b *feedBuilder) finish() []arrow.RecordBatch {
	b.flush()
	recs := b.recs
	b.recs = nil
	return recs
}

// release frees the builders and any record not taken by finish.
func (b *feedBuilder) release() {
	for _, bb := range b.bs {
		bb.Release()
	}
	for _, r := range b.recs {
		r.Release()
	}
}
