package engine

import (
	"context"
	"slices"

	"github.com/streamsql/streamsql/catalog"
	"github.com/streamsql/streamsql/exec"
	"github.com/streamsql/streamsql/ir"
	"github.com/streamsql/streamsql/planner"
	"github.com/streamsql/streamsql/sqlerr"
	"github.com/streamsql/streamsql/state"
)

// Transaction blocks. Between BEGIN and COMMIT a session's writes do not
// reach the tables: each table the transaction writes gets an overlay
// (state.Store.NewOverlay), a private layer of the rows it inserted, changed
// or deleted over the committed snapshot the statement reads. Statements of
// the transaction read the overlays instead of the tables (their own writes
// first, then the snapshot), so they see what the transaction did; nobody
// else sees it.
//
// UPDATE, DELETE and INSERT lock the rows they write until the
// transaction ends, waiting for the transactions holding them; under read
// committed a statement whose rows another transaction changed meanwhile
// re-applies itself to their newest versions (see txn_lock.go).
//
// COMMIT locks every table written (in relation id order), checks that no
// key the transaction wrote was changed by anyone since the transaction
// first read it (else 40001: the first committer wins), and applies the
// overlays through the tables' write operators (exec.TableWrite, the
// write path of every statement) while holding every lock, so all
// of the transaction's changes land in one epoch: they commit together in
// one checkpoint, and every view sees them together or, after a crash, not
// at all. ROLLBACK drops the overlays.
//
// Isolation is read committed (PostgreSQL's default): each statement reads
// the last committed snapshot as of its start, under the transaction's own
// writes. REPEATABLE READ and SERIALIZABLE read one snapshot, taken at the
// transaction's first statement, for the whole transaction (snapshot
// isolation; SERIALIZABLE is not stronger than that). There a write of a
// row changed after the snapshot fails with 40001 (after waiting for the
// row's lock). A row changed without a lock (by a CDC source or ALTER TABLE)
// is still caught at COMMIT, with 40001, at every level.

// txn is a session's open transaction block. It belongs to the session's
// goroutine.
type txn struct {
	e *Engine
	// isolation is the transaction's isolation level, lower case.
	isolation string
	// repeatable is set for REPEATABLE READ and SERIALIZABLE: snap is taken
	// once and held until the end.
	repeatable bool
	// readOnly is set for READ ONLY: writes fail with 25006.
	readOnly bool
	// failed is set once a statement failed: only ROLLBACK ends it.
	failed bool
	// started is set once a statement has read or written.
	started bool
	// snap is the snapshot statements read (nil between statements under
	// read committed).
	snap   *state.Snapshot
	tables map[uint32]*txnTable // by relation id
	saved  []txnSavepoint
	valBuf []byte
	// owner holds the row locks of the transaction's writes (txn_lock.go).
	owner *lockOwner
}

// txnTable is a transaction's writes to one table.
type txnTable struct {
	w *tableWriter
	// rel is the table's definition when the transaction first wrote it.
	rel *catalog.Relation
	// rows is the overlay of the table's rows; before holds, for every key
	// rows wrote, the committed value the transaction read before its first
	// write of it (a deletion if it had none): COMMIT checks it is still
	// the table's.
	rows, before *state.Table
	// indexes maintain the table's secondary indexes over overlays of their
	// own, for the transaction's reads.
	indexes []*exec.IndexWriter
	keyBuf  []byte
}

// txnSavepoint is a transaction's state at SAVEPOINT name.
type txnSavepoint struct {
	name   string
	tables map[uint32]*txnTable
}

func newTxn(e *Engine, isolation string) *txn {
	tx := &txn{e: e, isolation: isolation, tables: map[uint32]*txnTable{}, owner: newLockOwner(0)}
	tx.owner.describe = e.describeRow
	tx.setIsolation(isolation)
	return tx
}

func (tx *txn) setIsolation(isolation string) {
	tx.repeatable = isolation == "repeatable read" || isolation == "serializable"
}

// beginStatement takes the snapshot the next statement reads.
func (tx *txn) beginStatement() {
	tx.started = true
	if tx.snap != nil {
		return
	}
	tx.snap = tx.e.store.Snapshot()
	for _, tt := range tx.tables {
		tt.setBase(tx.snap)
	}
}

// endStatement releases the statement's snapshot under read committed.
func (tx *txn) endStatement() {
	if !tx.repeatable {
		tx.releaseSnapshot()
	}
}

func (tx *txn) releaseSnapshot() {
	if tx.snap == nil {
		return
	}
	for _, tt := range tx.tables {
		tt.setBase(nil)
	}
	tx.snap.Release()
	tx.snap = nil
}

// end releases what the transaction holds; it is done.
func (tx *txn) end() {
	tx.e.locks.releaseAll(tx.owner)
	tx.releaseSnapshot()
	tx.tables, tx.saved = nil, nil
}

func (tt *txnTable) setBase(snap *state.Snapshot) {
	tt.rows.SetBase(snap)
	for _, x := range tt.indexes {
		x.Table.SetBase(snap)
	}
}

// table returns the transaction's writes to w's table, empty at first.
func (tx *txn) table(w *tableWriter) *txnTable {
	if tt := tx.tables[w.rel.ID]; tt != nil {
		return tt
	}
	st := tx.e.store
	w.mu.Lock()
	rel := w.rel
	w.mu.Unlock()
	tt := &txnTable{w: w, rel: rel,
		rows:   st.NewOverlay(state.TableID(rel.StateTable), tx.snap),
		before: st.NewOverlay(state.TableID(rel.StateTable), nil)}
	for _, def := range rel.Indexes {
		x := exec.NewIndexWriter(st.NewOverlay(state.TableID(def.StateTable), tx.snap), def, w.types, rel.Key)
		tt.indexes = append(tt.indexes, x)
	}
	tx.tables[rel.ID] = tt
	return tt
}

// local is exec.Env.Local of the transaction's statements: the overlays of
// the tables (and indexes) it wrote.
func (tx *txn) local(id state.TableID) *state.Table {
	for _, tt := range tx.tables {
		if tt.rows.ID() == id {
			return tt.rows
		}
		for _, x := range tt.indexes {
			if x.Table.ID() == id {
				return x.Table
			}
		}
	}
	return nil
}

// clone returns a copy of tt that later writes to either do not change.
func (tt *txnTable) clone() *txnTable {
	c := &txnTable{w: tt.w, rel: tt.rel, rows: tt.rows.Clone(), before: tt.before.Clone()}
	for _, x := range tt.indexes {
		c.indexes = append(c.indexes, exec.NewIndexWriter(x.Table.Clone(), x.Def, tt.w.types, tt.rel.Key))
	}
	return c
}

func cloneTables(ts map[uint32]*txnTable) map[uint32]*txnTable {
	c := make(map[uint32]*txnTable, len(ts))
	for id, tt := range ts {
		c[id] = tt.clone()
	}
	return c
}

// savepoint runs SAVEPOINT name.
func (tx *txn) savepoint(name string) {
	tx.saved = append(tx.saved, txnSavepoint{name: name, tables: cloneTables(tx.tables)})
}

// findSavepoint returns the index of the newest savepoint called name.
func (tx *txn) findSavepoint(name string) (int, error) {
	for i := len(tx.saved) - 1; i >= 0; i-- {
		if tx.saved[i].name == name {
			return i, nil
		}
	}
	return 0, sqlerr.New(sqlerr.InvalidSavepoint, "savepoint \"%s\" does not exist", name)
}

// rollbackTo runs ROLLBACK TO SAVEPOINT name: the transaction's writes are
// those it had at the savepoint, which stays, and it is no longer failed.
func (tx *txn) rollbackTo(name string) error {
	i, err := tx.findSavepoint(name)
	if err != nil {
		return err
	}
	tx.saved = tx.saved[:i+1]
	tx.tables = cloneTables(tx.saved[i].tables)
	for _, tt := range tx.tables {
		tt.setBase(tx.snap)
	}
	tx.failed = false
	return nil
}

// release runs RELEASE SAVEPOINT name: it and every later savepoint go.
func (tx *txn) release(name string) error {
	i, err := tx.findSavepoint(name)
	if err != nil {
		return err
	}
	tx.saved = tx.saved[:i]
	return nil
}

// putNew writes key = value to the overlay for a key the statement found
// free (an INSERT's checked key or a new row id): unless the transaction
// wrote key before, the committed table has no such key either.
func (tt *txnTable) putNew(key, value []byte) {
	if _, _, written := tt.rows.Written(key); !written {
		tt.before.Delete(key)
	}
	tt.rows.Put(key, value)
}

// put writes key = value to the overlay, first noting the value key had.
func (tt *txnTable) put(key, value []byte) error {
	if err := tt.noteBefore(key); err != nil {
		return err
	}
	tt.rows.Put(key, value)
	return nil
}

// del deletes key in the overlay, first noting the value key had.
func (tt *txnTable) del(key []byte) error {
	if err := tt.noteBefore(key); err != nil {
		return err
	}
	tt.rows.Delete(key)
	return nil
}

// noteBefore records in before the committed value of key, read from the
// statement's snapshot, unless the transaction wrote key already.
func (tt *txnTable) noteBefore(key []byte) error {
	if _, _, written := tt.rows.Written(key); written {
		return nil
	}
	v, ok, err := tt.rows.Get(key)
	if err != nil {
		return err
	}
	if ok {
		tt.before.Put(key, v)
	} else {
		tt.before.Delete(key)
	}
	return nil
}

// runQuery runs a batch query of the transaction: over its snapshot, with
// the overlays of the tables it wrote.
func (tx *txn) runQuery(ctx context.Context, rel ir.Rel, q batchQuery, out exec.Output) error {
	return tx.runQueryWith(ctx, rel, q, tx.local, out)
}

// runQueryWith is runQuery reading the tables local gives (exec.Env.Local).
func (tx *txn) runQueryWith(ctx context.Context, rel ir.Rel, q batchQuery, local func(state.TableID) *state.Table, out exec.Output) error {
	e := tx.e
	if err := e.checkViews(rel); err != nil {
		return err
	}
	root, _, err := planner.PlanBatchWith(rel, planner.BatchOptions{Rows: rowCounts(tx.snap)})
	if err != nil {
		return err
	}
	env, release := e.batchEnv(q)
	defer release()
	env.Local = local
	return exec.RunBatch(ctx, env, tx.snap, root, out)
}

// written returns the tables the transaction wrote, in relation id order
// (the order COMMIT locks them in).
func (tx *txn) written() []*txnTable {
	var ts []*txnTable
	for _, tt := range tx.tables {
		if tt.rows.Len() > 0 {
			ts = append(ts, tt)
		}
	}
	slices.SortFunc(ts, func(a, b *txnTable) int { return int(a.rel.ID) - int(b.rel.ID) })
	return ts
}
