package exec

import (
	"bytes"
	"context"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/streamsql/streamsql/catalog"
	"github.com/streamsql/streamsql/state"
	"github.com/streamsql/streamsql/types"
)

// IndexWriter maintains one secondary index of a relation (a table or a
// materialized view, catalog.Index): for every row, an entry keyed by the
// row's index columns then the relation's key, valued by its INCLUDE
// columns. Its owner writes it in the same epoch as the rows and seals it
// with them. It is not safe for concurrent use.
type IndexWriter struct {
	Def   catalog.Index
	Table *state.Table
	types []types.T
	key   []int
	incl  *state.RowCodec

	keyBuf, valBuf []byte
	cmpBuf         []byte // sameEntry's copy of an old entry
	inclCols       []arrow.Array
}

// NewIndexWriter returns the writer of index def into table, for rows of
// types ts keyed by the columns key.
func NewIndexWriter(table *state.Table, def catalog.Index, ts []types.T, key []int) *IndexWriter {
	its := make([]types.T, len(def.Include))
	for i, c := range def.Include {
		its[i] = ts[c]
	}
	return &IndexWriter{Def: def, Table: table, types: ts, key: key, incl: state.NewRowCodec(its),
		inclCols: make([]arrow.Array, len(def.Include))}
}

// Put writes the entry of row i of rec.
func (x *IndexWriter) Put(rec arrow.RecordBatch, i int) {
	x.Table.Put(x.entryKey(rec, i), x.entryValue(rec, i))
}

// Delete deletes the entry of row i of rec.
func (x *IndexWriter) Delete(rec arrow.RecordBatch, i int) {
	x.Table.Delete(x.entryKey(rec, i))
}

// PutAll writes the entries of every row of rec.
func (x *IndexWriter) PutAll(rec arrow.RecordBatch) {
	for i := 0; i < int(rec.NumRows()); i++ {
		x.Put(rec, i)
	}
}

// DeleteAll deletes the entries of every row of rec.
func (x *IndexWriter) DeleteAll(rec arrow.RecordBatch) {
	for i := 0; i < int(rec.NumRows()); i++ {
		x.Delete(rec, i)
	}
}

// Build writes the entries of every row of rows, the relation's state
// table. On error the entries written so far are cleared.
func (x *IndexWriter) Build(ctx context.Context, mem memory.Allocator, rows *state.Table) error {
	build := OutputFunc(func(_ context.Context, m Message) error {
		if m.Batch != nil {
			x.PutAll(m.Batch.Rec)
			m.Batch.Release()
		}
		return nil
	})
	if err := ScanTable(ctx, mem, rows, x.types, build); err != nil {
		x.Table.Clear()
		return err
	}
	return nil
}

// sameEntry reports whether row i has the same entry (key and value) in old
// and new.
func (x *IndexWriter) sameEntry(old, new arrow.RecordBatch, i int) bool {
	k := append(x.cmpBuf[:0], x.entryKey(old, i)...)
	split := len(k)
	k = append(k, x.entryValue(old, i)...)
	x.cmpBuf = k
	if !bytes.Equal(k[:split], x.entryKey(new, i)) {
		return false
	}
	return bytes.Equal(k[split:], x.entryValue(new, i))
}

func (x *IndexWriter) entryKey(rec arrow.RecordBatch, i int) []byte {
	x.keyBuf = x.keyBuf[:0]
	for _, c := range x.Def.Columns {
		x.keyBuf = state.AppendKey(x.keyBuf, x.types[c], rec.Column(c), i)
	}
	for _, k := range x.key {
		x.keyBuf = state.AppendKey(x.keyBuf, x.types[k], rec.Column(k), i)
	}
	return x.keyBuf
}

func (x *IndexWriter) entryValue(rec arrow.RecordBatch, i int) []byte {
	for j, c := range x.Def.Include {
		x.inclCols[j] = rec.Column(c)
	}
	x.valBuf = x.incl.Append(x.valBuf[:0], x.inclCols, i)
	return x.valBuf
}
