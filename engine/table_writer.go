package engine

import (
	"context"
	"slices"
	"sync"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/streamsql/streamsql/barrier"
	"github.com/streamsql/streamsql/catalog"
	"github.com/streamsql/streamsql/exec"
	"github.com/streamsql/streamsql/exec/eval"
	"github.com/streamsql/streamsql/planner"
	"github.com/streamsql/streamsql/sql"
	"github.com/streamsql/streamsql/sqlerr"
	"github.com/streamsql/streamsql/state"
	"github.com/streamsql/streamsql/types"
)

// tableWriter is a table's storage and the source of its change stream. DML
// holds mu while it checks constraints, writes the table's state and emits
// the change; the coordinator holds mu while it seals the state and emits the
// barrier. So every write belongs to exactly one epoch: the one after the
// last barrier sealed (sealed+1).
type tableWriter struct {
	e     *Engine
	rel   *catalog.Relation
	types []types.T
	codec *state.RowCodec
	// rowID is the index of the hidden row id column, or -1 with a primary key.
	rowID int

	mu        sync.Mutex
	table     *state.Table
	disp      *exec.Dispatcher
	sealed    uint64
	nextRowID int64
	dropped   bool
	// wm generates the table's watermark (tables with WATERMARK FOR); the
	// watermark reached is kept in wmTable.
	wm      *exec.WatermarkGen
	wmTable *state.Table
	// wmSavedAt is the watermark last written to wmTable (when wmSaved).
	wmSaved   bool
	wmSavedAt int64

	// indexes are the table's secondary indexes, written with its rows.
	indexes []*exec.IndexWriter
	// checks are the table's CHECK constraints (rel.Checks), compiled.
	checks []eval.Evaluator
	// seq holds the counters of the serial columns (nil without any), and
	// visTypes the visible columns' types.
	seq      *sequences
	visTypes []types.T

	// cdcOffset is the offset table of a table fed by a CDC source (nil
	// otherwise), written with the rows by applyCDC.
	cdcOffset *state.Table

	// write is the table's write operator over the current rel, table
	// and indexes (op rebuilds it when DDL replaced one of them), and
	// changes the table's change stream as it emits to it.
	write   *exec.TableWrite
	changes exec.Output

	keyBuf []byte
	valBuf []byte
	// cdc is the scratch memory of applyChanges' chunks.
	cdc cdcScratch
}

// op returns the operator that checks and writes the table's rows and
// emits its change stream. The caller holds mu.
func (w *tableWriter) op() *exec.TableWrite {
	if w.write == nil || !w.write.Serves(w.rel, w.table, w.indexes) {
		w.write = exec.NewTableWrite(w.e.mem, w.rel, w.table, slices.Clone(w.indexes), w.checks)
	}
	return w.write
}

// emitChange sends a batch of the table's changes (or a barrier) down its
// change stream, advancing the watermark over the batch's rows first.
func (w *tableWriter) emitChange(ctx context.Context, m exec.Message) error {
	if m.Batch != nil {
		if err := w.observe(m.Batch); err != nil {
			m.Batch.Release()
			return err
		}
	}
	return w.disp.Emit(ctx, m)
}

func (w *tableWriter) openIndex(def catalog.Index) *exec.IndexWriter {
	return exec.NewIndexWriter(w.e.store.Table(state.TableID(def.StateTable)), def, w.types, w.rel.Key)
}

// addIndex builds index def over the table's rows and maintains it from
// now on; rel is the table's catalog entry with the index. On error nothing
// is kept. The caller holds mu.
func (w *tableWriter) addIndex(rel *catalog.Relation, def catalog.Index) error {
	x := w.openIndex(def)
	if err := x.Build(w.e.ctx, w.e.mem, w.table); err != nil {
		return err
	}
	w.rel = rel
	w.indexes = append(w.indexes, x)
	return nil
}

// dropIndex stops maintaining the index named name and returns its state
// table; rel is the table's catalog entry without it. The caller holds mu.
func (w *tableWriter) dropIndex(rel *catalog.Relation, name string) *state.Table {
	w.rel = rel
	for i, x := range w.indexes {
		if x.Def.Name == name {
			w.indexes = slices.Delete(w.indexes, i, i+1)
			return x.Table
		}
	}
	return nil
}

func newTableWriter(e *Engine, rel *catalog.Relation) (*tableWriter, error) {
	w := &tableWriter{
		e:      e,
		rel:    rel,
		types:  rel.Types(),
		codec:  state.NewRowCodec(rel.Types()),
		rowID:  -1,
		table:  e.store.Table(state.TableID(rel.StateTable)),
		disp:   exec.NewDispatcher(rel.ID),
		sealed: e.store.CommittedEpoch(),
	}
	w.changes = exec.OutputFunc(w.emitChange)
	if err := w.openWatermark(); err != nil {
		return nil, err
	}
	e.startHistory(rel, w.disp)
	var err error
	if w.seq, err = openSequences(e, rel); err != nil {
		return nil, err
	}
	for _, ci := range rel.VisibleColumns() {
		w.visTypes = append(w.visTypes, w.types[ci])
	}
	for _, def := range rel.Indexes {
		w.indexes = append(w.indexes, w.openIndex(def))
	}
	if w.checks, err = compileChecks(e.cat, rel); err != nil {
		return nil, err
	}
	if rel.CDCOffsetTable != 0 {
		w.cdcOffset = e.store.Table(state.TableID(rel.CDCOffsetTable))
	}
	if !rel.PrimaryKey {
		w.rowID = rel.Key[0]
		// Continue after the largest row id stored.
		it, err := w.table.NewIter(nil, nil)
		if err != nil {
			return nil, err
		}
		defer it.Close()
		if it.Last() {
			d, _, err := state.DecodeKeyDatum(it.Key(), types.Int64T)
			if err != nil {
				return nil, err
			}
			w.nextRowID = d.I + 1
		}
		if err := it.Error(); err != nil {
			return nil, err
		}
	}
	return w, nil
}

// Inject seals the table's writes for b.Epoch and sends the barrier down its
// change stream.
func (w *tableWriter) Inject(ctx context.Context, b *barrier.Barrier) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if err := w.op().OnBarrier(ctx, b, w.changes); err != nil {
		return err
	}
	if w.seq != nil {
		w.seq.table.Seal(b.Epoch)
	}
	if w.cdcOffset != nil {
		w.cdcOffset.Seal(b.Epoch)
	}
	w.sealed = b.Epoch
	if err := w.emitWatermark(ctx, b.Epoch); err != nil {
		return err
	}
	return w.disp.Emit(ctx, exec.Message{Barrier: b})
}

// watermarkKey is the key of the watermark reached in a table's watermark
// table.
var watermarkKey = []byte("wm")

// openWatermark sets up the watermark of a table with WATERMARK FOR, at the
// value it had reached.
func (w *tableWriter) openWatermark() error {
	if w.rel.Watermark == nil {
		return nil
	}
	expr, err := sql.BindWatermark(w.rel)
	if err != nil {
		return err
	}
	if w.wm, err = exec.NewWatermarkGen(w.rel.Watermark.Column, expr); err != nil {
		return err
	}
	w.wmTable = w.e.store.Table(state.TableID(w.rel.WatermarkTable))
	v, ok, err := w.wmTable.Get(watermarkKey)
	if err != nil || !ok {
		return err
	}
	return w.wm.LoadState(v)
}

// observe advances the watermark over the rows of a change batch.
func (w *tableWriter) observe(b *exec.Batch) error {
	if w.wm == nil {
		return nil
	}
	return w.wm.Observe(w.e.mem, b)
}

// emitWatermark sends the table's watermark, if it has one, just before
// barrier epoch, and keeps it with the epoch.
func (w *tableWriter) emitWatermark(ctx context.Context, epoch uint64) error {
	if w.wm == nil {
		return nil
	}
	wm, ok := w.wm.Current()
	if !ok {
		return nil
	}
	if !w.wmSaved || wm.Value != w.wmSavedAt {
		w.wmTable.Put(watermarkKey, w.wm.AppendState(nil))
		w.wmTable.Seal(epoch)
		w.wmSaved, w.wmSavedAt = true, wm.Value
	}
	return w.disp.Emit(ctx, exec.Message{Watermark: wm})
}

func (w *tableWriter) checkLive() error {
	if w.dropped {
		return sqlerr.New(sqlerr.UndefinedTable, "relation \"%s\" does not exist", w.rel.Name)
	}
	return nil
}

// visibleToFull returns a record with every column of the table (hidden row
// ids generated) from a record of its visible columns.
func (w *tableWriter) visibleToFull(rec arrow.RecordBatch) arrow.RecordBatch {
	n := int(rec.NumRows())
	cols := make([]arrow.Array, 0, len(w.types))
	vis := 0
	for i := range w.types {
		if i == w.rowID {
			b := array.NewInt64Builder(w.e.mem)
			b.Reserve(n)
			for r := 0; r < n; r++ {
				b.UnsafeAppend(w.nextRowID)
				w.nextRowID++
			}
			cols = append(cols, b.NewArray())
			b.Release()
			continue
		}
		c := rec.Column(vis)
		c.Retain()
		cols = append(cols, c)
		vis++
	}
	out := array.NewRecordBatch(exec.SchemaOf(w.types), cols, int64(n))
	for _, c := range cols {
		c.Release()
	}
	return out
}

// checkNotNull fails with 23502 if a NOT NULL column of rec (all columns) is
// NULL.
func (w *tableWriter) checkNotNull(rec arrow.RecordBatch) error { return w.op().CheckNotNull(rec) }

func (w *tableWriter) key(rec arrow.RecordBatch, i int) []byte {
	w.keyBuf = w.keyBuf[:0]
	for _, k := range w.rel.Key {
		w.keyBuf = state.AppendKey(w.keyBuf, w.types[k], rec.Column(k), i)
	}
	return w.keyBuf
}

// duplicateKey is the 23505 error for row i of rec.
func (w *tableWriter) duplicateKey(rec arrow.RecordBatch, i int) error {
	return w.op().DuplicateKey(rec, i)
}

// rowKey is the primary key of row row of record rec of an INSERT, at
// arena[off:end] of the statement's key arena.
type rowKey struct{ rec, row, off, end int }

// encodeKeys encodes the primary key of every row of full into one arena;
// keys lists them in statement order.
func (w *tableWriter) encodeKeys(full []arrow.RecordBatch) (arena []byte, keys []rowKey) {
	arena, ks := w.op().EncodeKeys(full)
	keys = make([]rowKey, len(ks))
	for i, k := range ks {
		keys[i] = rowKey{rec: k.Rec, row: k.Row, off: k.Off, end: k.End}
	}
	return arena, keys
}

// insert writes rows (records of the table's visible columns, owned by the
// caller) as one statement: either every row is written or none. It returns
// the epoch holding the write. written, if set, is given each record of
// rows as stored (every column), which it must retain to keep.
func (w *tableWriter) insert(recs []arrow.RecordBatch, written func(arrow.RecordBatch), owner *lockOwner) (epoch uint64, n int64, err error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if err := w.checkLive(); err != nil {
		return 0, 0, err
	}
	full, err := w.fullRows(recs)
	defer func() {
		for _, r := range full {
			r.Release()
		}
	}()
	if err != nil {
		return 0, 0, err
	}
	return w.insertFull(full, written, owner)
}

// fullRows returns the rows of INSERT source records recs with every
// column of the table (serial values and row ids filled in), checked for
// NOT NULL. The caller holds mu and releases the records, also on error.
func (w *tableWriter) fullRows(recs []arrow.RecordBatch) ([]arrow.RecordBatch, error) {
	full := make([]arrow.RecordBatch, 0, len(recs))
	firstRowID := w.nextRowID
	for _, rec := range recs {
		if w.seq != nil {
			filled, err := w.seq.fill(w.e.mem, rec, w.visTypes)
			if err != nil {
				w.nextRowID = firstRowID
				return full, err
			}
			defer filled.Release()
			rec = filled
		}
		f := w.visibleToFull(rec)
		full = append(full, f)
		if err := w.checkNotNull(f); err != nil {
			w.nextRowID = firstRowID
			return full, err
		}
	}
	return full, nil
}

// insertFull writes full (every column, see fullRows) as insert does. The
// caller holds mu.
func (w *tableWriter) insertFull(full []arrow.RecordBatch, written func(arrow.RecordBatch), owner *lockOwner) (epoch uint64, n int64, err error) {
	if w.rel.PrimaryKey {
		if err := w.lockedError(owner, w.recKeys(full)); err != nil {
			return 0, 0, err
		}
	}
	if n, err = w.op().Insert(w.e.ctx, full, w.changes); err != nil {
		return 0, 0, err
	}
	if written != nil {
		for _, rec := range full {
			written(rec)
		}
	}
	return w.sealed + 1, n, nil
}

// modify runs UPDATE or DELETE: plan, whose input selects the rows and,
// for UPDATE, computes their new values after them (ir.Update.Rows). The
// plan reads this table's merged view, the writes of statements whose epoch
// is not yet committed included, and other relations from the last
// committed snapshot. Like insert, the statement is all or nothing: every
// change is computed and checked before anything is written. written, if
// set, is given the new rows of an UPDATE or the deleted rows of a DELETE,
// every column, which it must retain to keep.
func (w *tableWriter) modify(ctx context.Context, plan *planner.Write, q batchQuery, written func(arrow.RecordBatch)) (epoch uint64, n int64, err error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if err := w.checkLive(); err != nil {
		return 0, 0, err
	}
	env, release := w.e.batchEnv(q)
	defer release()
	env.Local = w.localTable
	env.Write = func(ctx context.Context, p *planner.Write, rows []arrow.RecordBatch, out exec.Output) error {
		return w.writeModified(ctx, p.Op == planner.WriteUpdate, rows, q.owner, out)
	}
	snap := w.e.store.Snapshot()
	defer snap.Release()
	if err := exec.RunBatch(ctx, env, snap, plan, writtenRows(&n, written)); err != nil {
		return 0, 0, err
	}
	return w.sealed + 1, n, nil
}

// writeModified writes the rows of an UPDATE (update set) or DELETE: rows
// are the stored rows' columns, then for UPDATE their new values (the input
// of the statement's Write). It emits the new rows of an UPDATE, the deleted
// rows of a DELETE, to out. The caller holds mu.
func (w *tableWriter) writeModified(ctx context.Context, update bool, rows []arrow.RecordBatch, owner *lockOwner, out exec.Output) error {
	var olds, news []arrow.RecordBatch
	defer func() {
		releaseAll(olds)
		releaseAll(news)
	}()
	width := len(w.types)
	schema := exec.SchemaOf(w.types)
	for _, rec := range rows {
		cols := rec.Columns()
		olds = append(olds, array.NewRecordBatch(schema, cols[:width], rec.NumRows()))
		if update {
			news = append(news, array.NewRecordBatch(schema, cols[width:2*width], rec.NumRows()))
		}
	}
	if err := w.dropRepeats(olds, news); err != nil {
		return err
	}
	if len(olds) == 0 {
		return nil
	}
	if err := w.lockedError(owner, w.recKeys(olds, news)); err != nil {
		return err
	}
	var err error
	if update {
		_, err = w.op().Update(w.e.ctx, olds, news, w.changes)
	} else {
		_, err = w.op().Delete(w.e.ctx, olds, w.changes)
	}
	if err != nil {
		return err
	}
	wrote := olds
	if update {
		wrote = news
	}
	for _, r := range wrote {
		r.Retain()
		if err := out.Emit(ctx, exec.Message{Batch: exec.NewBatch(r, nil)}); err != nil {
			return err
		}
	}
	return nil
}

// localTable returns the table or index state modify reads state table id
// from: the merged view of the table's rows and indexes (nil for any other).
func (w *tableWriter) localTable(id state.TableID) *state.Table {
	if id == state.TableID(w.rel.StateTable) {
		return w.table
	}
	for _, x := range w.indexes {
		if id == state.TableID(x.Def.StateTable) {
			return x.Table
		}
	}
	return nil
}
