package engine

import (
	"bytes"
	"context"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/streamsql/streamsql/exec"
	"github.com/streamsql/streamsql/exec/eval"
	"github.com/streamsql/streamsql/ir"
	"github.com/streamsql/streamsql/state"
)

// The row locks of a transaction block's writes (see rowlock.go) and what
// it does when a row it is about to write changed after its statement's
// snapshot was taken.
//
// UPDATE and DELETE first select their rows from the statement's snapshot
// (under the transaction's own writes), as before. Then they lock every
// selected row the transaction has not written yet, waiting for the
// transactions that hold them. With the locks held, each such row's newest
// version (the table's, the writes of committed transactions and of
// statements outside transaction blocks included, whether or not their
// checkpoint is done) is compared with the version the statement read:
//
//   - unchanged: the statement goes on with what it read;
//   - changed, under REPEATABLE READ or SERIALIZABLE: 40001, could not
//     serialize access due to concurrent update, as PostgreSQL;
//   - changed, under READ COMMITTED: the statement runs again for those
//     rows only (PostgreSQL's EvalPlanQual): over the same snapshot for
//     every other row and relation, but with each changed row replaced by
//     its newest version (or gone if it was deleted). Its WHERE is checked
//     on the new version and its SET computed from it; rows that no longer
//     match are left alone (and stay locked until the end, as in
//     PostgreSQL). The new version becomes the value COMMIT checks the row
//     against, so a transaction that re-applied a statement does not fail
//     at COMMIT on that row.
//
// INSERT locks each new primary key the transaction has not written; if
// another transaction inserting the same key held it and committed, the
// waiter fails with 23505 (a key its snapshot did not show). An UPDATE that
// gives a row a new primary key locks the new key too.

// latestRow is the newest version of a row that changed after the
// statement's snapshot: its encoding, or has false if it was deleted.
type latestRow struct {
	val []byte
	has bool
}

// lockKeys locks, for the transaction, every key of keys in its table.
func (tx *txn) lockKeys(ctx context.Context, q batchQuery, tt *txnTable, keys [][]byte) error {
	for _, k := range keys {
		if _, err := tx.e.locks.lock(ctx, tx.owner, tt.rel.ID, k, q.lockTimeout); err != nil {
			return err
		}
	}
	return nil
}

// unwrittenKeys returns a copy of the key of every row of recs that the
// transaction has not written, in order, without repeats.
func (tt *txnTable) unwrittenKeys(recs []arrow.RecordBatch, skip map[string]bool) [][]byte {
	var keys [][]byte
	seen := map[string]bool{}
	for _, r := range recs {
		for i := range int(r.NumRows()) {
			k := tt.key(r, i)
			if seen[string(k)] || skip[string(k)] {
				continue
			}
			if _, _, written := tt.rows.Written(k); written {
				continue
			}
			seen[string(k)] = true
			keys = append(keys, bytes.Clone(k))
		}
	}
	return keys
}

// changedRows returns, for each of keys (rows the transaction has not
// written, locked by it), the newest version of the row if it is not the
// one the statement's snapshot has.
func (tt *txnTable) changedRows(keys [][]byte) (map[string]latestRow, error) {
	var changed map[string]latestRow
	w := tt.w
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, k := range keys {
		read, had, err := tt.rows.Get(k)
		if err != nil {
			return nil, err
		}
		cur, has, err := w.table.Get(k)
		if err != nil {
			return nil, err
		}
		if had == has && bytes.Equal(read, cur) {
			continue
		}
		if changed == nil {
			changed = map[string]latestRow{}
		}
		changed[string(k)] = latestRow{val: bytes.Clone(cur), has: has}
	}
	return changed, nil
}

// lockModified locks the rows an UPDATE or DELETE selected (olds; news are
// their new versions, for UPDATE) and re-evaluates the statement on the
// rows that changed since its snapshot (see above). It returns the rows
// to write, which replace olds and news (the caller releases both), and the
// changed rows, whose newest versions the caller records as what the
// transaction read once it has written them.
func (tx *txn) lockModified(ctx context.Context, q batchQuery, tt *txnTable, rows ir.Rel, update bool, olds, news []arrow.RecordBatch) (_, _ []arrow.RecordBatch, changed map[string]latestRow, err error) {
	keys := tt.unwrittenKeys(olds, nil)
	if err := tx.lockKeys(ctx, q, tt, keys); err != nil {
		return olds, news, nil, err
	}
	if changed, err = tt.changedRows(keys); err != nil || len(changed) == 0 {
		return olds, news, nil, err
	}
	if tx.repeatable {
		for k := range changed {
			return olds, news, nil, tt.conflict([]byte(k))
		}
	}
	keep := func(k []byte) bool { _, c := changed[string(k)]; return !c }
	o2, n2, err := tx.recheck(ctx, q, tt, rows, update, olds, changed)
	if err != nil {
		return olds, news, nil, err
	}
	o1, err := tt.filterRows(olds, keep, olds)
	if err != nil {
		releaseAll(o2)
		releaseAll(n2)
		return olds, news, nil, err
	}
	n1, err := tt.filterRows(news, keep, olds)
	if err != nil {
		releaseAll(o1)
		releaseAll(o2)
		releaseAll(n2)
		return olds, news, nil, err
	}
	releaseAll(olds)
	releaseAll(news)
	return append(o1, o2...), append(n1, n2...), changed, nil
}

// lockNewKeys locks the keys of news that are not keys of olds (inserted
// rows, or rows an UPDATE gives a new primary key) and fails with 23505 if
// one was added since the statement's snapshot.
func (tx *txn) lockNewKeys(ctx context.Context, q batchQuery, tt *txnTable, news, olds []arrow.RecordBatch) error {
	if !tt.rel.PrimaryKey {
		return nil
	}
	skip := map[string]bool{}
	for _, r := range olds {
		for i := range int(r.NumRows()) {
			skip[string(tt.key(r, i))] = true
		}
	}
	keys := tt.unwrittenKeys(news, skip)
	if len(keys) == 0 {
		return nil
	}
	if err := tx.lockKeys(ctx, q, tt, keys); err != nil {
		return err
	}
	changed, err := tt.changedRows(keys)
	if err != nil || len(changed) == 0 {
		return err
	}
	for _, r := range news {
		for i := range int(r.NumRows()) {
			if l, ok := changed[string(tt.key(r, i))]; ok && l.has {
				return tt.w.duplicateKey(r, i)
			}
		}
	}
	return nil
}

// filterRows returns the rows of recs (row-aligned with by) whose key in by
// keep accepts.
func (tt *txnTable) filterRows(recs []arrow.RecordBatch, keep func([]byte) bool, by []arrow.RecordBatch) ([]arrow.RecordBatch, error) {
	var out []arrow.RecordBatch
	for j, r := range recs {
		var idx []int32
		for i := range int(r.NumRows()) {
			if keep(tt.key(by[j], i)) {
				idx = append(idx, int32(i))
			}
		}
		if len(idx) == 0 {
			continue
		}
		t, err := eval.TakeRecord(tt.w.e.mem, r, idx)
		if err != nil {
			releaseAll(out)
			return nil, err
		}
		out = append(out, t)
	}
	return out, nil
}

// recheck runs the statement's row selection again for the changed rows
// only: over the statement's snapshot, with the table (and its indexes)
// showing each changed row's newest version in place of the one read. olds
// are the rows the statement selected first.
func (tx *txn) recheck(ctx context.Context, q batchQuery, tt *txnTable, rows ir.Rel, update bool, olds []arrow.RecordBatch, changed map[string]latestRow) (o2, n2 []arrow.RecordBatch, err error) {
	w := tt.w
	table := tt.rows.Clone()
	var latest [][]byte
	for k, l := range changed {
		if l.has {
			table.Put([]byte(k), l.val)
			latest = append(latest, l.val)
		} else {
			table.Delete([]byte(k))
		}
	}
	// The indexes lose the entries of the versions read and gain those of
	// the newest ones.
	var indexes []*exec.IndexWriter
	if len(tt.indexes) > 0 {
		read, err := tt.filterRows(olds, func(k []byte) bool { _, c := changed[string(k)]; return c }, olds)
		if err != nil {
			return nil, nil, err
		}
		defer releaseAll(read)
		now, err := tt.decodeRows(latest)
		if err != nil {
			return nil, nil, err
		}
		defer now.Release()
		for _, x := range tt.indexes {
			c := exec.NewIndexWriter(x.Table.Clone(), x.Def, w.types, tt.rel.Key)
			for _, r := range read {
				c.DeleteAll(r)
			}
			c.PutAll(now)
			indexes = append(indexes, c)
		}
	}
	local := func(id state.TableID) *state.Table {
		if id == table.ID() {
			return table
		}
		for _, x := range indexes {
			if x.Table.ID() == id {
				return x.Table
			}
		}
		return tx.local(id)
	}
	width := len(w.types)
	schema := exec.SchemaOf(w.types)
	err = tx.runQueryWith(ctx, rows, q, local, exec.OutputFunc(func(_ context.Context, m exec.Message) error {
		if m.Batch == nil {
			return nil
		}
		defer m.Batch.Release()
		rec := m.Batch.Rec
		if rec.NumRows() == 0 {
			return nil
		}
		cols := rec.Columns()
		old := array.NewRecordBatch(schema, cols[:width], rec.NumRows())
		defer old.Release()
		in := func(k []byte) bool { _, c := changed[string(k)]; return c }
		kept, err := tt.filterRows([]arrow.RecordBatch{old}, in, []arrow.RecordBatch{old})
		if err != nil {
			return err
		}
		o2 = append(o2, kept...)
		if update {
			nw := array.NewRecordBatch(schema, cols[width:2*width], rec.NumRows())
			defer nw.Release()
			kept, err := tt.filterRows([]arrow.RecordBatch{nw}, in, []arrow.RecordBatch{old})
			if err != nil {
				return err
			}
			n2 = append(n2, kept...)
		}
		return nil
	}))
	if err != nil {
		releaseAll(o2)
		releaseAll(n2)
		return nil, nil, err
	}
	return o2, n2, nil
}

// decodeRows returns a record of the table's rows encoded in vals.
func (tt *txnTable) decodeRows(vals [][]byte) (arrow.RecordBatch, error) {
	w := tt.w
	bs := make([]array.Builder, len(w.types))
	for i, t := range w.types {
		bs[i] = array.NewBuilder(w.e.mem, t.ArrowType())
		defer bs[i].Release()
	}
	codec := state.NewRowCodec(w.types)
	for _, v := range vals {
		if err := codec.Decode(v, bs); err != nil {
			return nil, err
		}
	}
	cols := make([]arrow.Array, len(bs))
	for i, b := range bs {
		cols[i] = b.NewArray()
		defer cols[i].Release()
	}
	return array.NewRecordBatch(exec.SchemaOf(w.types), cols, int64(len(vals))), nil
}

// noteLatest records, for each changed row the statement wrote, its
// newest version as the value the transaction read: COMMIT checks the row
// is still that.
func (tt *txnTable) noteLatest(changed map[string]latestRow) {
	for k, l := range changed {
		if _, _, written := tt.rows.Written([]byte(k)); written && l.has {
			tt.before.Put([]byte(k), l.val)
		}
	}
}
