package engine

import (
	"bytes"
	"context"
	"slices"
	"strings"
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

	keyBuf []byte
	valBuf []byte
}

func (w *tableWriter) openIndex(def catalog.Index) *exec.IndexWriter {
	return exec.NewIndexWriter(w.e.store.Table(state.TableID(def.StateTable)), def, w.types, w.rel.Key)
}

// putIndexes writes the index entries of every row of rec.
func (w *tableWriter) putIndexes(rec arrow.RecordBatch) {
	for _, x := range w.indexes {
		x.PutAll(rec)
	}
}

// deleteIndexes deletes the index entries of every row of rec.
func (w *tableWriter) deleteIndexes(rec arrow.RecordBatch) {
	for _, x := range w.indexes {
		x.DeleteAll(rec)
	}
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
	w.table.Seal(b.Epoch)
	for _, x := range w.indexes {
		x.Table.Seal(b.Epoch)
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
func (w *tableWriter) checkNotNull(rec arrow.RecordBatch) error {
	for i, c := range w.rel.Columns {
		if c.NotNull && rec.Column(i).NullN() > 0 {
			return &sqlerr.Error{Code: sqlerr.NotNullViolation,
				Message: "null value in column \"" + c.Name + "\" of relation \"" + w.rel.Name + "\" violates not-null constraint"}
		}
	}
	return nil
}

func (w *tableWriter) key(rec arrow.RecordBatch, i int) []byte {
	w.keyBuf = w.keyBuf[:0]
	for _, k := range w.rel.Key {
		w.keyBuf = state.AppendKey(w.keyBuf, w.types[k], rec.Column(k), i)
	}
	return w.keyBuf
}

// duplicateKey is the 23505 error for row i of rec.
func (w *tableWriter) duplicateKey(rec arrow.RecordBatch, i int) error {
	var names, vals []string
	for _, k := range w.rel.Key {
		names = append(names, w.rel.Columns[k].Name)
		vals = append(vals, types.DatumAt(w.types[k], rec.Column(k), i).Text(w.types[k]))
	}
	return &sqlerr.Error{
		Code:    sqlerr.UniqueViolation,
		Message: "duplicate key value violates unique constraint \"" + primaryKeyName(w.rel) + "\"",
		Detail:  "Key (" + strings.Join(names, ", ") + ")=(" + strings.Join(vals, ", ") + ") already exists.",
	}
}

// rowKey is the primary key of row row of record rec of an INSERT, at
// arena[off:end] of the statement's key arena.
type rowKey struct{ rec, row, off, end int }

// encodeKeys encodes the primary key of every row of full into one arena;
// keys lists them in statement order.
func (w *tableWriter) encodeKeys(full []arrow.RecordBatch) (arena []byte, keys []rowKey) {
	for r, rec := range full {
		for i := range int(rec.NumRows()) {
			off := len(arena)
			for _, k := range w.rel.Key {
				arena = state.AppendKey(arena, w.types[k], rec.Column(k), i)
			}
			keys = append(keys, rowKey{rec: r, row: i, off: off, end: len(arena)})
		}
	}
	return arena, keys
}

// checkNewKeys fails with 23505 for the first row of full (in statement
// order) whose primary key (encodeKeys: arena, byRow) is already in the
// table or is the key of an earlier row of full. The keys are sorted, so
// repeats are neighbours; when the table holds no row between the least and
// the greatest of them (an append, as loads in key order are), one seek
// replaces a point read per row.
func (w *tableWriter) checkNewKeys(full []arrow.RecordBatch, arena []byte, byRow []rowKey) error {
	if len(byRow) == 0 {
		return nil
	}
	key := func(k rowKey) []byte { return arena[k.off:k.end] }
	keys := slices.Clone(byRow)
	slices.SortStableFunc(keys, func(a, b rowKey) int { return bytes.Compare(key(a), key(b)) })
	first := rowKey{rec: -1}
	violates := func(k rowKey) {
		if first.rec < 0 || k.rec < first.rec || k.rec == first.rec && k.row < first.row {
			first = k
		}
	}
	for j := 1; j < len(keys); j++ {
		if bytes.Equal(key(keys[j-1]), key(keys[j])) {
			violates(keys[j]) // the later of equal keys, in statement order
		}
	}
	empty, err := w.noRowsBetween(key(keys[0]), key(keys[len(keys)-1]))
	if err != nil {
		return err
	}
	for j := 0; !empty && j < len(keys); j++ {
		_, exists, err := w.table.Get(key(keys[j]))
		if err != nil {
			return err
		}
		if exists {
			violates(keys[j])
		}
	}
	if first.rec >= 0 {
		return w.duplicateKey(full[first.rec], first.row)
	}
	return nil
}

// noRowsBetween reports whether the table (its writes so far included) has
// no row whose key is in [lo, hi].
func (w *tableWriter) noRowsBetween(lo, hi []byte) (bool, error) {
	upper := append(slices.Clip(hi), 0) // the first key after hi
	it, err := w.table.NewIter(lo, upper)
	if err != nil {
		return false, err
	}
	found := it.First()
	err = it.Error()
	if cerr := it.Close(); err == nil {
		err = cerr
	}
	return !found, err
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
	for _, rec := range full {
		if err := w.checkRows(rec); err != nil {
			return 0, 0, err
		}
	}
	if err := w.checkUnique(full, nil); err != nil {
		return 0, 0, err
	}
	var arena []byte
	var keys []rowKey
	if w.rel.PrimaryKey {
		arena, keys = w.encodeKeys(full)
		if err := w.checkNewKeys(full, arena, keys); err != nil {
			return 0, 0, err
		}
		if err := w.lockedError(owner, arenaKeys(arena, keys)); err != nil {
			return 0, 0, err
		}
	}
	row := 0
	for _, rec := range full {
		cols := rec.Columns()
		rows := int(rec.NumRows())
		for i := 0; i < rows; i++ {
			w.valBuf = w.codec.Append(w.valBuf[:0], cols, i)
			if keys != nil {
				w.table.Put(arena[keys[row].off:keys[row].end], w.valBuf)
				row++
			} else {
				w.table.Put(w.key(rec, i), w.valBuf)
			}
		}
		w.putIndexes(rec)
		n += int64(rows)
		if written != nil {
			written(rec)
		}
		rec.Retain()
		b := exec.NewBatch(rec, nil)
		if err := w.observe(b); err != nil {
			b.Release()
			return 0, 0, err
		}
		if err := w.disp.Emit(w.e.ctx, exec.Message{Batch: b}); err != nil {
			return 0, 0, err
		}
	}
	return w.sealed + 1, n, nil
}

// modify runs UPDATE (update set) or DELETE over the rows root selects: a
// batch plan of the table's columns and, for UPDATE, their new values after
// them (sql.Update.Rows). The plan reads this table's merged view, the
// writes of statements whose epoch is not yet committed included, and other
// relations from the last committed snapshot. Like insert, the statement is
// all or nothing: every change is computed and checked before anything is
// written. written, if set, is given the new rows of an UPDATE or the
// deleted rows of a DELETE, every column, which it must retain to keep.
func (w *tableWriter) modify(ctx context.Context, root planner.Node, update bool, q batchQuery, written func(arrow.RecordBatch)) (epoch uint64, n int64, err error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if err := w.checkLive(); err != nil {
		return 0, 0, err
	}
	env, release := w.e.batchEnv(q)
	defer release()
	env.Local = w.localTable
	snap := w.e.store.Snapshot()
	defer snap.Release()
	// Collect the matching rows (old) and their new versions.
	var olds, news []arrow.RecordBatch
	defer func() {
		for _, r := range append(olds, news...) {
			r.Release()
		}
	}()
	width := len(w.types)
	schema := exec.SchemaOf(w.types)
	collect := exec.OutputFunc(func(_ context.Context, m exec.Message) error {
		if m.Batch == nil {
			return nil
		}
		defer m.Batch.Release()
		rec := m.Batch.Rec
		if rec.NumRows() == 0 {
			return nil
		}
		cols := rec.Columns()
		olds = append(olds, array.NewRecordBatch(schema, cols[:width], rec.NumRows()))
		if update {
			news = append(news, array.NewRecordBatch(schema, cols[width:2*width], rec.NumRows()))
		}
		return nil
	})
	if err := exec.RunBatch(ctx, env, snap, root, collect); err != nil {
		return 0, 0, err
	}
	if err := w.dropRepeats(olds, news); err != nil {
		return 0, 0, err
	}
	for _, r := range olds {
		n += r.NumRows()
	}
	if n == 0 {
		return w.sealed + 1, 0, nil
	}
	if err := w.lockedError(q.owner, w.recKeys(olds, news)); err != nil {
		return 0, 0, err
	}
	// Check the new versions: NOT NULL, and for a changed primary key, that
	// the new key is free (not held by a row this statement keeps).
	if update {
		oldKeys := map[string]bool{}
		for _, r := range olds {
			for i := 0; i < int(r.NumRows()); i++ {
				oldKeys[string(w.key(r, i))] = true
			}
		}
		newKeys := map[string]bool{}
		for _, r := range news {
			if err := w.checkNotNull(r); err != nil {
				return 0, 0, err
			}
			if err := w.checkRows(r); err != nil {
				return 0, 0, err
			}
			if !w.rel.PrimaryKey {
				continue
			}
			for i := 0; i < int(r.NumRows()); i++ {
				k := string(w.key(r, i))
				if newKeys[k] {
					return 0, 0, w.duplicateKey(r, i)
				}
				newKeys[k] = true
				if !oldKeys[k] {
					if _, exists, err := w.table.Get([]byte(k)); err != nil {
						return 0, 0, err
					} else if exists {
						return 0, 0, w.duplicateKey(r, i)
					}
				}
			}
		}
	}
	if update {
		if err := w.checkUnique(news, olds); err != nil {
			return 0, 0, err
		}
	}
	// Write: deletions first, so that keys moving between rows stay correct.
	for _, r := range olds {
		for i := 0; i < int(r.NumRows()); i++ {
			w.table.Delete(w.key(r, i))
		}
		w.deleteIndexes(r)
	}
	for _, r := range news {
		cols := r.Columns()
		for i := 0; i < int(r.NumRows()); i++ {
			w.valBuf = w.codec.Append(w.valBuf[:0], cols, i)
			w.table.Put(w.key(r, i), w.valBuf)
		}
		w.putIndexes(r)
	}
	for k, old := range olds {
		if written != nil && update {
			written(news[k])
		} else if written != nil {
			written(old)
		}
		var b *exec.Batch
		if !update {
			old.Retain()
			ops := make([]exec.Op, old.NumRows())
			for i := range ops {
				ops[i] = exec.Delete
			}
			b = exec.NewBatch(old, ops)
		} else if b, err = updatePairs(w.e, old, news[k]); err != nil {
			return 0, 0, err
		} else if err := w.observe(b); err != nil {
			b.Release()
			return 0, 0, err
		}
		if err := w.disp.Emit(w.e.ctx, exec.Message{Batch: b}); err != nil {
			return 0, 0, err
		}
	}
	return w.sealed + 1, n, nil
}

// updatePairs interleaves old and new rows into UpdateDelete/UpdateInsert
// pairs.
func updatePairs(e *Engine, old, new arrow.RecordBatch) (*exec.Batch, error) {
	n := int(old.NumRows())
	cols := make([]arrow.Array, old.NumCols())
	for i := range cols {
		c, err := array.Concatenate([]arrow.Array{old.Column(i), new.Column(i)}, e.mem)
		if err != nil {
			for _, x := range cols[:i] {
				x.Release()
			}
			return nil, err
		}
		cols[i] = c
	}
	both := array.NewRecordBatch(old.Schema(), cols, int64(2*n))
	for _, c := range cols {
		c.Release()
	}
	defer both.Release()
	idx := make([]int32, 0, 2*n)
	ops := make([]exec.Op, 0, 2*n)
	for i := 0; i < n; i++ {
		idx = append(idx, int32(i), int32(n+i))
		ops = append(ops, exec.UpdateDelete, exec.UpdateInsert)
	}
	rec, err := eval.TakeRecord(e.mem, both, idx)
	if err != nil {
		return nil, err
	}
	return exec.NewBatch(rec, ops), nil
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
