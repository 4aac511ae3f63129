package exec

import (
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
// an update's delete and insert of the same key end with the insert.
func (w *KeyedRows) Apply(rec arrow.RecordBatch, ops []Op) {
	if rec.NumRows() == 0 {
		return
	}
	w.EncodeKeys(rec)
	cols := rec.Columns()
	for i := range int(rec.NumRows()) {
		if ops == nil || ops[i].IsInsert() {
			w.valBuf = w.codec.Append(w.valBuf[:0], cols, i)
			w.Table.Put(w.RowKey(i), w.valBuf)
		} else {
			w.Table.Delete(w.RowKey(i))
		}
	}
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

// Seal ends epoch for the rows and the indexes (state.Table.Seal).
func (w *KeyedRows) Seal(epoch uint64) {
	w.Table.Seal(epoch)
	for _, x := range w.Indexes {
		x.Table.Seal(epoch)
	}
}
