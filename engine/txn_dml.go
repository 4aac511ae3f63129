package engine

import (
	"bytes"
	"context"
	"slices"
	"strings"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/streamsql/streamsql/catalog"
	"github.com/streamsql/streamsql/exec"
	"github.com/streamsql/streamsql/ir"
	"github.com/streamsql/streamsql/planner"
	"github.com/streamsql/streamsql/sqlerr"
	"github.com/streamsql/streamsql/state"
	"github.com/streamsql/streamsql/types"
)

// The DML of a transaction block: INSERT, UPDATE, DELETE and COPY FROM
// write the transaction's overlays (see txn.go), checked as the table's own
// write path checks them (NOT NULL, primary keys) against the statement's
// snapshot under the transaction's writes; COMMIT applies them.

// releaseAll releases every record of recs.
func releaseAll(recs []arrow.RecordBatch) {
	for _, r := range recs {
		r.Release()
	}
}

// runWrite runs the plan of st, an INSERT, UPDATE or DELETE, in the
// transaction: the plan reads the statement's snapshot under the
// transaction's writes, and write writes its rows into the overlays. It
// returns the rows written.
func (tx *txn) runWrite(ctx context.Context, st ir.Statement, q batchQuery, write exec.WriteFunc) (int64, error) {
	e := tx.e
	if err := e.checkViews(writeRows(st)); err != nil {
		return 0, err
	}
	plan, err := planWrite(st, tx.snap)
	if err != nil {
		return 0, err
	}
	env, release := e.batchEnv(q)
	defer release()
	env.Local = tx.local
	env.Write = write
	var n int64
	if err := exec.RunBatch(ctx, env, tx.snap, plan, writtenRows(&n, nil)); err != nil {
		return 0, err
	}
	return n, nil
}

// insert runs INSERT (and COPY FROM) in the transaction.
func (tx *txn) insert(ctx context.Context, st *ir.Insert, q batchQuery) (int64, error) {
	w, err := tx.e.writer(st.Table)
	if err != nil {
		return 0, err
	}
	return tx.runWrite(ctx, st, q, func(ctx context.Context, _ *planner.Write, recs []arrow.RecordBatch, out exec.Output) error {
		return tx.writeInserted(ctx, q, w, recs, out)
	})
}

// writeInserted writes the rows of an INSERT (records of the table's
// visible columns) into the transaction's overlay of w's table and emits
// them, every column, to out.
func (tx *txn) writeInserted(ctx context.Context, q batchQuery, w *tableWriter, recs []arrow.RecordBatch, out exec.Output) error {
	tt := tx.table(w)
	full, err := w.txnRows(recs)
	defer releaseAll(full)
	if err != nil {
		return err
	}
	if err := tt.checkNewKeys(full); err != nil {
		return err
	}
	if err := tx.lockNewKeys(ctx, q, tt, full, nil); err != nil {
		return err
	}
	for _, rec := range full {
		cols := rec.Columns()
		for i := range int(rec.NumRows()) {
			tx.valBuf = w.codec.Append(tx.valBuf[:0], cols, i)
			tt.putNew(tt.key(rec, i), tx.valBuf)
		}
		for _, x := range tt.indexes {
			x.PutAll(rec)
		}
	}
	return emitRecords(ctx, full, out)
}

// emitRecords emits every record of recs to out, as inserts; the caller
// keeps its references.
func emitRecords(ctx context.Context, recs []arrow.RecordBatch, out exec.Output) error {
	for _, r := range recs {
		r.Retain()
		if err := out.Emit(ctx, exec.Message{Batch: exec.NewBatch(r, nil)}); err != nil {
			return err
		}
	}
	return nil
}

// txnRows returns the table's full rows for records of its visible columns:
// serial columns filled, hidden row ids allocated (neither comes back on
// ROLLBACK, as sequences do not in PostgreSQL), NOT NULL checked.
func (w *tableWriter) txnRows(recs []arrow.RecordBatch) ([]arrow.RecordBatch, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if err := w.checkLive(); err != nil {
		return nil, err
	}
	full := make([]arrow.RecordBatch, 0, len(recs))
	for _, rec := range recs {
		if w.seq != nil {
			filled, err := w.seq.fill(w.e.mem, rec, w.visTypes)
			if err != nil {
				return full, err
			}
			full = append(full, w.visibleToFull(filled))
			filled.Release()
		} else {
			full = append(full, w.visibleToFull(rec))
		}
		if err := w.checkNotNull(full[len(full)-1]); err != nil {
			return full, err
		}
	}
	return full, nil
}

// key encodes the key (primary key or row id) of row i of rec; the result
// is valid until the next call.
func (tt *txnTable) key(rec arrow.RecordBatch, i int) []byte {
	tt.keyBuf = tt.keyBuf[:0]
	for _, k := range tt.rel.Key {
		tt.keyBuf = state.AppendKey(tt.keyBuf, tt.w.types[k], rec.Column(k), i)
	}
	return tt.keyBuf
}

// checkNewKeys fails with 23505 for the first row of full, in statement
// order, whose primary key the transaction sees already or that an earlier
// row of full has.
func (tt *txnTable) checkNewKeys(full []arrow.RecordBatch) error {
	w := tt.w
	if !w.rel.PrimaryKey {
		return nil
	}
	arena, keys := w.encodeKeys(full)
	key := func(k rowKey) []byte { return arena[k.off:k.end] }
	sorted := slices.Clone(keys)
	slices.SortStableFunc(sorted, func(a, b rowKey) int { return bytes.Compare(key(a), key(b)) })
	first := rowKey{rec: -1}
	for j, k := range sorted {
		dup := j > 0 && bytes.Equal(key(sorted[j-1]), key(k))
		if !dup {
			_, exists, err := tt.rows.Get(key(k))
			if err != nil {
				return err
			}
			dup = exists
		}
		if dup && (first.rec < 0 || k.rec < first.rec || k.rec == first.rec && k.row < first.row) {
			first = k
		}
	}
	if first.rec >= 0 {
		return w.duplicateKey(full[first.rec], first.row)
	}
	return nil
}

// modify runs UPDATE or DELETE (st) in the transaction.
func (tx *txn) modify(ctx context.Context, st ir.Statement, q batchQuery) (int64, error) {
	w, err := tx.e.writer(writeTable(st))
	if err != nil {
		return 0, err
	}
	return tx.runWrite(ctx, st, q, func(ctx context.Context, p *planner.Write, recs []arrow.RecordBatch, out exec.Output) error {
		return tx.writeModified(ctx, q, w, writeRows(st), p.Op == planner.WriteUpdate, recs, out)
	})
}

// writeModified writes the rows of an UPDATE (update set) or DELETE into
// the transaction's overlay of w's table: recs are the stored rows'
// columns, then for UPDATE their new values, selected by rows (which
// lockModified re-evaluates for rows changed since the statement's
// snapshot). It emits the new rows of an UPDATE, the deleted rows of a
// DELETE, to out.
func (tx *txn) writeModified(ctx context.Context, q batchQuery, w *tableWriter, rows ir.Rel, update bool, recs []arrow.RecordBatch, out exec.Output) error {
	tt := tx.table(w)
	var olds, news []arrow.RecordBatch
	defer func() { releaseAll(olds); releaseAll(news) }()
	width := len(w.types)
	schema := exec.SchemaOf(w.types)
	for _, rec := range recs {
		cols := rec.Columns()
		olds = append(olds, array.NewRecordBatch(schema, cols[:width], rec.NumRows()))
		if update {
			news = append(news, array.NewRecordBatch(schema, cols[width:2*width], rec.NumRows()))
		}
	}
	olds, news, changed, err := tx.lockModified(ctx, q, tt, rows, update, olds, news)
	if err != nil {
		return err
	}
	if update {
		if err := tt.checkUpdate(olds, news); err != nil {
			return err
		}
		if err := tx.lockNewKeys(ctx, q, tt, news, olds); err != nil {
			return err
		}
	}
	// Deletions first, so that keys moving between rows stay correct.
	for _, r := range olds {
		for i := range int(r.NumRows()) {
			if err := tt.del(tt.key(r, i)); err != nil {
				return err
			}
		}
		for _, x := range tt.indexes {
			x.DeleteAll(r)
		}
	}
	for _, r := range news {
		cols := r.Columns()
		for i := range int(r.NumRows()) {
			tx.valBuf = w.codec.Append(tx.valBuf[:0], cols, i)
			if err := tt.put(tt.key(r, i), tx.valBuf); err != nil {
				return err
			}
		}
		for _, x := range tt.indexes {
			x.PutAll(r)
		}
	}
	tt.noteLatest(changed)
	if update {
		return emitRecords(ctx, news, out)
	}
	return emitRecords(ctx, olds, out)
}

// checkUpdate checks the new versions of an UPDATE's rows: NOT NULL, and for
// a changed primary key that the new key is free (not held by a row the
// statement keeps).
func (tt *txnTable) checkUpdate(olds, news []arrow.RecordBatch) error {
	w := tt.w
	oldKeys := map[string]bool{}
	for _, r := range olds {
		for i := range int(r.NumRows()) {
			oldKeys[string(tt.key(r, i))] = true
		}
	}
	newKeys := map[string]bool{}
	for _, r := range news {
		if err := w.checkNotNull(r); err != nil {
			return err
		}
		if !w.rel.PrimaryKey {
			continue
		}
		for i := range int(r.NumRows()) {
			k := tt.key(r, i)
			if newKeys[string(k)] {
				return w.duplicateKey(r, i)
			}
			newKeys[string(k)] = true
			if oldKeys[string(k)] {
				continue
			}
			if _, exists, err := tt.rows.Get(k); err != nil {
				return err
			} else if exists {
				return w.duplicateKey(r, i)
			}
		}
	}
	return nil
}

// commit applies the transaction's writes: all in one epoch, or none.
func (tx *txn) commit() error {
	ts := tx.written()
	if len(ts) == 0 {
		return nil
	}
	epoch, err := tx.apply(ts)
	if err != nil {
		return err
	}
	// The writes are in the tables: waiters for their rows go on with them
	// while the checkpoint holding them completes.
	tx.e.locks.releaseAll(tx.owner)
	return tx.e.awaitWrite(epoch)
}

// apply locks the tables of ts (in order) at one epoch, checks them for
// conflicts and applies the writes; it returns the epoch holding them.
func (tx *txn) apply(ts []*txnTable) (uint64, error) {
	lockAll(ts)
	defer func() {
		for _, tt := range ts {
			tt.w.mu.Unlock()
		}
	}()
	for _, tt := range ts {
		if err := tt.w.checkLive(); err != nil {
			return 0, err
		}
		if err := tt.checkConflicts(); err != nil {
			return 0, err
		}
	}
	for _, tt := range ts {
		if err := tt.w.applyTxn(tt); err != nil {
			return 0, err
		}
	}
	return ts[0].w.sealed + 1, nil
}

// lockAll locks every table of ts when all of them are at the same epoch:
// the coordinator seals tables one after the other, so between two locks it
// may have sealed one and not the next yet; then it tries again.
func lockAll(ts []*txnTable) {
	for {
		for _, tt := range ts {
			tt.w.mu.Lock()
		}
		same := true
		for _, tt := range ts[1:] {
			same = same && tt.w.sealed == ts[0].w.sealed
		}
		if same {
			return
		}
		for _, tt := range ts {
			tt.w.mu.Unlock()
		}
		time.Sleep(100 * time.Microsecond)
	}
}

// checkConflicts fails with 40001 if a key the transaction wrote no longer
// has the value the transaction read before writing it: someone else wrote
// it first. The caller holds w.mu.
func (tt *txnTable) checkConflicts() error {
	var err error
	tt.rows.Writes(func(key, _ []byte, _ bool) bool {
		was, had, _ := tt.before.Written(key)
		var now []byte
		var has bool
		if now, has, err = tt.w.table.Get(key); err != nil {
			return false
		}
		if has != had || had && !bytes.Equal(now, was) {
			err = tt.conflict(key)
			return false
		}
		return true
	})
	return err
}

// conflict is the 40001 error for key.
func (tt *txnTable) conflict(key []byte) error {
	e := sqlerr.New(sqlerr.SerializationFailure, "could not serialize access due to concurrent update")
	if k, ok := keyText(tt.w.rel, tt.w.types, key); ok {
		e.Detail = "Key " + k + " of relation \"" + tt.w.rel.Name + "\" was changed by a transaction that committed first."
	}
	return e
}

// keyText shows an encoded primary key of rel as (names)=(values); ok is
// false for a table without a primary key or a key that does not decode.
func keyText(rel *catalog.Relation, ts []types.T, key []byte) (string, bool) {
	if !rel.PrimaryKey {
		return "", false
	}
	var names, vals []string
	rest := key
	for _, k := range rel.Key {
		d, next, err := state.DecodeKeyDatum(rest, ts[k])
		if err != nil {
			return "", false
		}
		rest = next
		names = append(names, rel.Columns[k].Name)
		vals = append(vals, d.Text(ts[k]))
	}
	return "(" + strings.Join(names, ", ") + ")=(" + strings.Join(vals, ", ") + ")", true
}

// applyTxn writes the transaction's changes of tt through the table's
// write operator (exec.TableWrite.ApplyBatch): its state, its indexes and
// its change stream, as one batch of deletes, one of update pairs and one
// of inserts, built from the overlay in one pass. The statements checked
// the rows and checkConflicts the keys, so nothing is checked again. The
// caller holds w.mu.
func (w *tableWriter) applyTxn(tt *txnTable) error {
	op := w.op()
	dels, upds, ins := op.NewChanges(), op.NewChanges(), op.NewChanges()
	defer func() { dels.Release(); upds.Release(); ins.Release() }()
	var err error
	tt.rows.Writes(func(key, val []byte, deleted bool) bool {
		was, had, _ := tt.before.Written(key)
		switch {
		case !deleted && !had:
			err = ins.AppendValue(val, exec.Insert)
		case deleted && had:
			err = dels.AppendValue(was, exec.Delete)
		case !deleted && had && !bytes.Equal(was, val):
			if err = upds.AppendValue(was, exec.UpdateDelete); err == nil {
				err = upds.AppendValue(val, exec.UpdateInsert)
			}
		}
		return err == nil
	})
	if err != nil {
		return err
	}
	for _, c := range []*exec.Changes{dels, upds, ins} {
		if err := op.ApplyBatch(w.e.ctx, c.Batch(), w.changes); err != nil {
			return err
		}
	}
	return nil
}
