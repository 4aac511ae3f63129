package engine

import (
	"encoding/binary"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/streamsql/streamsql/exec"
	"github.com/streamsql/streamsql/state"
	"github.com/streamsql/streamsql/types"
)

// cdcChange is one upstream row change, with its rows in the table's column
// order (a table fed by a CDC source has a primary key and no hidden
// columns).
type cdcChange struct {
	kind byte // 'I' insert, 'U' update, 'D' delete, 'T' truncate
	// old is the old row's key columns (others may be NULL) for 'D', and for
	// 'U' when the key changed; nil otherwise.
	old []types.Datum
	// new is the new row for 'I' and 'U'. unchanged marks columns whose
	// value upstream did not send (unchanged TOAST): they keep the stored
	// value.
	new       []types.Datum
	unchanged []bool
}

// cdcLSNKey is the key of the last applied transaction's end LSN in a CDC
// table's offset table.
var cdcLSNKey = []byte("lsn")

// committedCDCLSN returns the end LSN of the last transaction applied to the
// table in a committed epoch, or 0 if the snapshot has not been committed.
func committedCDCLSN(offset *state.Table) (uint64, error) {
	v, ok, err := offset.Get(cdcLSNKey)
	if err != nil || !ok || len(v) != 8 {
		return 0, err
	}
	return binary.BigEndian.Uint64(v), nil
}

// applyCDC writes one upstream transaction's changes to the table and its
// change stream, and records lsn, the transaction's end LSN, in the table's
// offset table: both in the same epoch, which it returns. Changes are
// applied in order; an insert over an existing key replaces the row and a
// delete of a missing key does nothing, so the result is the upstream
// table's whatever the table held.
func (w *tableWriter) applyCDC(changes []cdcChange, lsn uint64) (uint64, error) {
	return w.applyChanges(changes, func(offset *state.Table) {
		var lsnBuf [8]byte
		binary.BigEndian.PutUint64(lsnBuf[:], lsn)
		offset.Put(cdcLSNKey, lsnBuf[:])
	})
}

// applyChanges writes a connector's changes to the table and its change
// stream, and calls record to write the connector's position into the
// table's offset table: both in the same epoch, which it returns. Changes
// are applied in order; an insert over an existing key replaces the row (a
// table without a primary key appends it, with a new row id) and a delete
// of a missing key does nothing.
func (w *tableWriter) applyChanges(changes []cdcChange, record func(offset *state.Table)) (uint64, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if err := w.checkLive(); err != nil {
		return 0, err
	}
	bs := make([]array.Builder, len(w.types))
	for i, t := range w.types {
		bs[i] = array.NewBuilder(w.e.mem, t.ArrowType())
	}
	defer func() {
		for _, b := range bs {
			b.Release()
		}
	}()
	var ops []exec.Op
	oldRow := make([]types.Datum, len(w.types))
	for _, ch := range changes {
		switch ch.kind {
		case 'T':
			it, err := w.table.NewIter(nil, nil)
			if err != nil {
				return 0, err
			}
			for ok := it.First(); ok; ok = it.Next() {
				if err := w.codec.Decode(it.Value(), bs); err != nil {
					it.Close()
					return 0, err
				}
				ops = append(ops, exec.Delete)
			}
			err = it.Error()
			it.Close()
			if err != nil {
				return 0, err
			}
			w.table.Clear()
		case 'D':
			if err := w.deleteCDCRow(w.datumKey(ch.old), bs, &ops); err != nil {
				return 0, err
			}
		case 'I', 'U':
			if w.rowID >= 0 {
				ch.new[w.rowID] = types.DInt(w.nextRowID)
				w.nextRowID++
			}
			newKey := w.datumKey(ch.new)
			oldKey := newKey
			if ch.old != nil {
				oldKey = w.datumKey(ch.old)
			}
			if string(oldKey) != string(newKey) {
				// A key change onto a key that is held: that row goes first.
				if err := w.deleteCDCRow(newKey, bs, &ops); err != nil {
					return 0, err
				}
			}
			v, had, err := w.table.Get(oldKey)
			if err != nil {
				return 0, err
			}
			if had {
				if err := w.codec.Decode(v, bs); err != nil {
					return 0, err
				}
				ops = append(ops, exec.UpdateDelete)
				if err := w.codec.DecodeDatums(v, oldRow); err != nil {
					return 0, err
				}
				for i, u := range ch.unchanged {
					if u {
						ch.new[i] = oldRow[i]
					}
				}
				w.table.Delete(oldKey)
			}
			for i, d := range ch.new {
				types.AppendDatum(bs[i], w.types[i], d)
			}
			if had {
				ops = append(ops, exec.UpdateInsert)
			} else {
				ops = append(ops, exec.Insert)
			}
			w.valBuf = w.codec.AppendDatums(w.valBuf[:0], ch.new)
			w.table.Put(newKey, w.valBuf)
		}
	}
	record(w.cdcOffset)
	if len(ops) > 0 {
		arrs := make([]arrow.Array, len(bs))
		for i, b := range bs {
			arrs[i] = b.NewArray()
		}
		rec := array.NewRecordBatch(exec.SchemaOf(w.types), arrs, int64(len(ops)))
		for _, a := range arrs {
			a.Release()
		}
		// The rows' index entries, in the order of the changes.
		for _, x := range w.indexes {
			for i, op := range ops {
				if op == exec.Delete || op == exec.UpdateDelete {
					x.Delete(rec, i)
				} else {
					x.Put(rec, i)
				}
			}
		}
		if err := w.disp.Emit(w.e.ctx, exec.Message{Batch: exec.NewBatch(rec, ops)}); err != nil {
			return 0, err
		}
	}
	return w.sealed + 1, nil
}

// datumKey encodes the primary key of row into the writer's key buffer.
func (w *tableWriter) datumKey(row []types.Datum) []byte {
	w.keyBuf = w.keyBuf[:0]
	for _, k := range w.rel.Key {
		w.keyBuf = state.AppendKeyDatum(w.keyBuf, w.types[k], row[k])
	}
	return append([]byte(nil), w.keyBuf...)
}

// deleteCDCRow deletes the row at key, if any, appending it to bs as a
// Delete.
func (w *tableWriter) deleteCDCRow(key []byte, bs []array.Builder, ops *[]exec.Op) error {
	v, ok, err := w.table.Get(key)
	if err != nil || !ok {
		return err
	}
	if err := w.codec.Decode(v, bs); err != nil {
		return err
	}
	*ops = append(*ops, exec.Delete)
	w.table.Delete(key)
	return nil
}

// isDropped reports whether the table has been dropped (for the CDC reader,
// which does not hold mu).
func (w *tableWriter) isDropped() bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.dropped
}
