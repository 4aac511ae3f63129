package exec

import (
	"bytes"
	"slices"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/streamsql/streamsql/state"
	"github.com/streamsql/streamsql/types"
)

// KeyedRows writes rows into a relation's keyed state table and its
// secondary indexes: the one write path of a materialized view's rows
// (Materialize) and of a table's (TableWrite). A row's key is the
// memcomparable encoding of its key columns, its value the row codec's
// encoding of every column.
//
// Keys are encoded a whole batch at a time (state.KeyEncoder: one typed loop
// per key column) and values into one reused buffer, so a write allocates
// nothing per row beyond the state table's own copy.
//
// Its owner writes it from one goroutine and seals its tables with the
// epoch (Seal). It is not safe for concurrent use.
type KeyedRows struct {
	Table *state.Table
	// Indexes are the relation's secondary indexes, written with the rows.
	Indexes []*IndexWriter

	key     []int
	types   []types.T
	codec   *state.RowCodec
	enc     *state.KeyEncoder // nil when a key column has no columnar encoding
	keyCols []arrow.Array
	// keyArena and keyOffs hold the keys of the last EncodeKeys without enc.
	keyArena []byte
	keyOffs  []int
	valBuf   []byte
}

// NewKeyedRows returns the writer of rows of types ts into table, keyed by
// the columns key, and of the indexes.
func NewKeyedRows(table *state.Table, key []int, ts []types.T, indexes []*IndexWriter) *KeyedRows {
	kts := make([]types.T, len(key))
	for i, k := range key {
		kts[i] = ts[k]
	}
	w := &KeyedRows{Table: table, Indexes: indexes, key: key, types: ts,
		codec: state.NewRowCodec(ts), keyCols: make([]arrow.Array, len(key))}
	if len(key) > 0 && !slices.ContainsFunc(kts, func(t types.T) bool { return !columnarKey(t) }) {
		w.enc = state.NewKeyEncoder(kts)
	}
	return w
}

// Key returns the key columns and the types of the rows.
func (w *KeyedRows) Key() []int { return w.key }

// Types returns the rows' column types.
func (w *KeyedRows) Types() []types.T { return w.types }

// EncodeKeys encodes the key of every row of rec; RowKey(i) returns them
// until the next EncodeKeys or write.
func (w *KeyedRows) EncodeKeys(rec arrow.RecordBatch) {
	if w.enc == nil {
		w.encodeRowKeys(rec)
		return
	}
	for i, k := range w.key {
		w.keyCols[i] = rec.Column(k)
	}
	w.enc.Encode(w.keyCols)
}

// encodeRowKeys is EncodeKeys for keys KeyEncoder does not encode: a row at
// a time into one arena.
func (w *KeyedRows) encodeRowKeys(rec arrow.RecordBatch) {
	w.keyArena, w.keyOffs = w.keyArena[:0], append(w.keyOffs[:0], 0)
	for i := range int(rec.NumRows()) {
		for _, k := range w.key {
			w.keyArena = state.AppendKey(w.keyArena, w.types[k], rec.Column(k), i)
		}
		w.keyOffs = append(w.keyOffs, len(w.keyArena))
	}
}

// RowKey returns the key of row i of the last EncodeKeys (empty without key
// columns: a relation of at most one row). The caller must not modify or
// keep it.
func (w *KeyedRows) RowKey(i int) []byte {
	if w.enc == nil {
		return w.keyArena[w.keyOffs[i]:w.keyOffs[i+1]:w.keyOffs[i+1]]
	}
	return w.enc.Key(i)
}

// Apply writes rec: row i is inserted (its key set to it) when ops is nil or
// ops[i] is an insert, and deleted otherwise. Rows are applied in order, so
// an update's delete and insert of the same key end with the insert (and
// the delete, which the insert overwrites, is not written).
func (w *KeyedRows) Apply(rec arrow.RecordBatch, ops []Op) {
	if rec.NumRows() == 0 {
		return
	}
	w.EncodeKeys(rec)
	cols := rec.Columns()
	w.write(rec, ops, w.RowKey, func(i int) []byte {
		w.valBuf = w.codec.Append(w.valBuf[:0], cols, i)
		return w.valBuf
	})
}

// ApplyEncoded is Apply of rows whose stored form the caller already has:
// row i of enc holds the key and value KeyedRows would encode for row i of
// rec (its value unused for a delete), and is written as it is.
func (w *KeyedRows) ApplyEncoded(rec arrow.RecordBatch, ops []Op, enc *EncodedRows) {
	if rec.NumRows() == 0 {
		return
	}
	if enc.Len() != int(rec.NumRows()) {
		panic("exec: KeyedRows.ApplyEncoded: encoded rows do not match the batch")
	}
	w.write(rec, ops, enc.Key, enc.Value)
}

// write applies the rows of rec in order, row i under key(i), an insert
// storing value(i) (called for inserts only), then their index entries.
func (w *KeyedRows) write(rec arrow.RecordBatch, ops []Op, key, value func(int) []byte) {
	for i := range int(rec.NumRows()) {
		switch {
		case ops == nil || ops[i].IsInsert():
			w.Table.Put(key(i), value(i))
		case !overwritten(ops, i, key):
			w.Table.Delete(key(i))
		}
	}
	w.applyIndexes(rec, ops)
}

// overwritten reports whether row i, a delete, is the delete of an update
// pair whose insert (row i+1) writes the same key: the insert replaces it.
func overwritten(ops []Op, i int, key func(int) []byte) bool {
	return ops[i] == UpdateDelete && i+1 < len(ops) && ops[i+1] == UpdateInsert &&
		bytes.Equal(key(i), key(i+1))
}

// applyIndexes writes the index entries of rec's rows, in order.
func (w *KeyedRows) applyIndexes(rec arrow.RecordBatch, ops []Op) {
	for _, x := range w.Indexes {
		if ops == nil {
			x.PutAll(rec)
			continue
		}
		for i, op := range ops {
			if op.IsInsert() {
				x.Put(rec, i)
			} else {
				x.Delete(rec, i)
			}
		}
	}
}

// EncodedRows holds a batch's rows in their stored form, as a writer that
// encoded them for its own lookups has them: per row a key and a value
// (empty for a delete), in one buffer. Its owner reuses it (Reset); it is
// not safe for concurrent use.
type EncodedRows struct {
	buf []byte
	// ends holds, per row, the end of its key in buf, then of its value.
	ends []int
}

// Append appends a row with key and value (nil for a delete); it copies
// both.
func (e *EncodedRows) Append(key, value []byte) {
	e.buf = append(e.buf, key...)
	e.ends = append(e.ends, len(e.buf))
	e.buf = append(e.buf, value...)
	e.ends = append(e.ends, len(e.buf))
}

// Len returns the number of rows.
func (e *EncodedRows) Len() int { return len(e.ends) / 2 }

// Key returns row i's key, valid until the next Append or Reset; the
// caller must not modify it.
func (e *EncodedRows) Key(i int) []byte {
	start := 0
	if i > 0 {
		start = e.ends[2*i-1]
	}
	end := e.ends[2*i]
	return e.buf[start:end:end]
}

// Value returns row i's value, valid as Key.
func (e *EncodedRows) Value(i int) []byte {
	start, end := e.ends[2*i], e.ends[2*i+1]
	return e.buf[start:end:end]
}

// Reset empties e, keeping its memory.
func (e *EncodedRows) Reset() { e.buf, e.ends = e.buf[:0], e.ends[:0] }

// PutAll inserts every row of rec.
func (w *KeyedRows) PutAll(rec arrow.RecordBatch) { w.Apply(rec, nil) }

// DeleteAll deletes the row of every key of rec, and its index entries.
func (w *KeyedRows) DeleteAll(rec arrow.RecordBatch) {
	if rec.NumRows() == 0 {
		return
	}
	w.EncodeKeys(rec)
	for i := range int(rec.NumRows()) {
		w.Table.Delete(w.RowKey(i))
	}
	for _, x := range w.Indexes {
		x.DeleteAll(rec)
	}
}

// Replacement pairs stored rows with their new versions (row i of New
// replaces row i of Old, records of every column) and records which rows
// and index entries the replacement leaves as they are: those are not
// written again, so an UPDATE writes only what it changes (an index whose
// columns it does not set costs nothing, a row set to its own value
// nothing at all). Build it with Compare.
type Replacement struct {
	Old, New arrow.RecordBatch
	// same[i]: row i is unchanged, and so is every index entry of it;
	// sameEntry[x][i]: the entry of row i in index x is unchanged.
	same      []bool
	sameEntry [][]bool
}

// Compare compares the rows of old with their new versions in new (the
// same length). Equal encodings of every column mean an unchanged row, and
// so an unchanged key.
func (w *KeyedRows) Compare(old, new arrow.RecordBatch) *Replacement {
	n := int(old.NumRows())
	r := &Replacement{Old: old, New: new, same: make([]bool, n), sameEntry: make([][]bool, len(w.Indexes))}
	oc, nc := old.Columns(), new.Columns()
	for i := range n {
		w.valBuf = w.codec.Append(w.valBuf[:0], oc, i)
		split := len(w.valBuf)
		w.valBuf = w.codec.Append(w.valBuf, nc, i)
		r.same[i] = bytes.Equal(w.valBuf[:split], w.valBuf[split:])
	}
	for x, ix := range w.Indexes {
		r.sameEntry[x] = make([]bool, n)
		for i := range n {
			r.sameEntry[x][i] = r.same[i] || ix.sameEntry(old, new, i)
		}
	}
	return r
}

// DeleteReplaced deletes the old rows of r and their index entries that the
// replacement changes. A statement's replacements delete, every one of
// them, before any is put (PutReplacements), so that a key moving from one
// row to another ends up written.
func (w *KeyedRows) DeleteReplaced(r *Replacement) {
	if r.Old.NumRows() == 0 {
		return
	}
	w.EncodeKeys(r.Old)
	for i, same := range r.same {
		if !same {
			w.Table.Delete(w.RowKey(i))
		}
	}
	for x, ix := range w.Indexes {
		for i, same := range r.sameEntry[x] {
			if !same {
				ix.Delete(r.Old, i)
			}
		}
	}
}

// PutReplacements writes the new rows of r and their index entries that the
// replacement changes.
func (w *KeyedRows) PutReplacements(r *Replacement) {
	if r.New.NumRows() == 0 {
		return
	}
	w.EncodeKeys(r.New)
	cols := r.New.Columns()
	for i, same := range r.same {
		if !same {
			w.valBuf = w.codec.Append(w.valBuf[:0], cols, i)
			w.Table.Put(w.RowKey(i), w.valBuf)
		}
	}
	for x, ix := range w.Indexes {
		for i, same := range r.sameEntry[x] {
			if !same {
				ix.Put(r.New, i)
			}
		}
	}
}

// Seal ends epoch for the rows and the indexes (state.Table.Seal).
func (w *KeyedRows) Seal(epoch uint64) {
	w.Table.Seal(epoch)
	for _, x := range w.Indexes {
		x.Table.Seal(epoch)
	}
}
