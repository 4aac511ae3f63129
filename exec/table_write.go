package exec

import (
	"context"
	"slices"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/streamsql/streamsql/barrier"
	"github.com/streamsql/streamsql/catalog"
	"github.com/streamsql/streamsql/exec/eval"
	"github.com/streamsql/streamsql/state"
)

// TableWrite is the write of a statement into a table, the root of an
// INSERT's, UPDATE's or DELETE's plan (EXPLAIN shows it as BatchInsert,
// BatchUpdate, BatchDelete): it checks the table's constraints over the
// statement's rows, writes them into the table's state and indexes through
// the write path it shares with Materialize (KeyedRows), and emits the
// change stream the table's views read.
//
// A statement is all or nothing: Insert, Update and Delete check every row
// before they write any, so a violation leaves the table as it was. The rows
// they take are records of every column of the table (hidden row ids and
// serial values filled in), owned by the caller; the batches they emit take
// their own references.
//
// Checks, in PostgreSQL's order for a statement: NOT NULL (23502), CHECK
// constraints (23514), then uniqueness of the primary key and of unique
// indexes (23505), each reporting the first offending row.
//
// Ordering and safety: its owner serializes statements and barriers (the
// table's lock), so every write lands in the epoch after the last barrier
// sealed. It is not safe for concurrent use.
type TableWrite struct {
	mem    memory.Allocator
	rel    *catalog.Relation
	rows   *KeyedRows
	checks []eval.Evaluator
	keyBuf []byte
}

// NewTableWrite returns the write into the rows of rel held in table, with
// its indexes and its compiled CHECK constraints (one per rel.Checks).
func NewTableWrite(mem memory.Allocator, rel *catalog.Relation, table *state.Table, indexes []*IndexWriter, checks []eval.Evaluator) *TableWrite {
	return &TableWrite{mem: mem, rel: rel, rows: NewKeyedRows(table, rel.Key, rel.Types(), indexes), checks: checks}
}

// Serves reports whether w writes the rows of rel into table with exactly
// the indexes given: its owner builds a new TableWrite when DDL replaced one.
func (w *TableWrite) Serves(rel *catalog.Relation, table *state.Table, indexes []*IndexWriter) bool {
	return w.rel == rel && w.rows.Table == table && slices.Equal(w.rows.Indexes, indexes)
}

// Rows returns the write path into the table's state.
func (w *TableWrite) Rows() *KeyedRows { return w.rows }

// Insert checks and writes new rows, then emits each record to out as a
// batch of inserts. It returns the number of rows written.
func (w *TableWrite) Insert(ctx context.Context, full []arrow.RecordBatch, out Output) (int64, error) {
	if err := w.checkInsert(full); err != nil {
		return 0, err
	}
	var n int64
	for _, rec := range full {
		w.rows.PutAll(rec)
		n += rec.NumRows()
	}
	for _, rec := range full {
		rec.Retain()
		if err := out.Emit(ctx, Message{Batch: NewBatch(rec, nil)}); err != nil {
			return n, err
		}
	}
	return n, nil
}

// checkInsert runs every check of Insert.
func (w *TableWrite) checkInsert(full []arrow.RecordBatch) error {
	for _, rec := range full {
		if err := w.CheckRows(rec); err != nil {
			return err
		}
	}
	if err := w.CheckUnique(full, nil); err != nil {
		return err
	}
	if !w.rel.PrimaryKey {
		return nil
	}
	return w.checkNewKeys(full)
}

// Update checks and writes the new versions news[k] of rows olds[k] (records
// of the same length, row for row), then emits, per record, the pairs of
// UpdateDelete and UpdateInsert. The old rows must be stored and distinct.
func (w *TableWrite) Update(ctx context.Context, olds, news []arrow.RecordBatch, out Output) (int64, error) {
	for _, r := range news {
		if err := w.CheckRows(r); err != nil {
			return 0, err
		}
	}
	if w.rel.PrimaryKey {
		if err := w.checkMovedKeys(olds, news); err != nil {
			return 0, err
		}
	}
	if err := w.CheckUnique(news, olds); err != nil {
		return 0, err
	}
	// Deletions first, so that keys moving between rows stay correct. Rows
	// and index entries the statement leaves as they were are not written.
	var n int64
	reps := make([]*Replacement, len(olds))
	for k, r := range olds {
		reps[k] = w.rows.Compare(r, news[k])
		w.rows.DeleteReplaced(reps[k])
		n += r.NumRows()
	}
	for _, r := range reps {
		w.rows.PutReplacements(r)
	}
	for k, old := range olds {
		b, err := UpdatePairs(w.mem, old, news[k])
		if err != nil {
			return n, err
		}
		if err := out.Emit(ctx, Message{Batch: b}); err != nil {
			return n, err
		}
	}
	return n, nil
}

// Delete deletes rows olds (stored, distinct), then emits each record to out
// as a batch of deletes.
func (w *TableWrite) Delete(ctx context.Context, olds []arrow.RecordBatch, out Output) (int64, error) {
	var n int64
	for _, r := range olds {
		w.rows.DeleteAll(r)
		n += r.NumRows()
	}
	for _, r := range olds {
		r.Retain()
		ops := make([]Op, r.NumRows())
		for i := range ops {
			ops[i] = Delete
		}
		if err := out.Emit(ctx, Message{Batch: NewBatch(r, ops)}); err != nil {
			return n, err
		}
	}
	return n, nil
}

// OnBarrier seals the epoch's writes of the table and its indexes; the
// owner forwards the barrier down the change stream after it.
func (w *TableWrite) OnBarrier(_ context.Context, b *barrier.Barrier, _ Output) error {
	w.rows.Seal(b.Epoch)
	return nil
}

// UpdatePairs interleaves the rows of old and new (the same length) into a
// batch of UpdateDelete/UpdateInsert pairs: old row i, then new row i.
func UpdatePairs(mem memory.Allocator, old, new arrow.RecordBatch) (*Batch, error) {
	n := int(old.NumRows())
	cols := make([]arrow.Array, old.NumCols())
	for i := range cols {
		c, err := array.Concatenate([]arrow.Array{old.Column(i), new.Column(i)}, mem)
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
	ops := make([]Op, 0, 2*n)
	for i := 0; i < n; i++ {
		idx = append(idx, int32(i), int32(n+i))
		ops = append(ops, UpdateDelete, UpdateInsert)
	}
	rec, err := eval.TakeRecord(mem, both, idx)
	if err != nil {
		return nil, err
	}
	return NewBatch(rec, ops), nil
}
