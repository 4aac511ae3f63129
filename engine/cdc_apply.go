package engine

import (
	"encoding/binary"

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
//
// The changes are resolved against the table's rows (cdcChunk) into one
// batch, which the table's write operator writes and emits
// (exec.TableWrite.ApplyBatch); a truncate ends the batch before it and
// goes as exec.TableWrite.Truncate.
func (w *tableWriter) applyChanges(changes []cdcChange, record func(offset *state.Table)) (uint64, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if err := w.checkLive(); err != nil {
		return 0, err
	}
	c := newCDCChunk(w)
	defer c.release()
	for i := range changes {
		if err := c.add(&changes[i]); err != nil {
			return 0, err
		}
	}
	if err := c.flush(); err != nil {
		return 0, err
	}
	record(w.cdcOffset)
	return w.sealed + 1, nil
}

// cdcChunk resolves a chunk of connector changes into a batch of changes
// to the table's rows: each change reads the row it replaces or deletes
// from the table, or from the chunk's earlier changes, which are not
// written until flush. The caller holds w.mu.
type cdcChunk struct {
	w       *tableWriter
	op      *exec.TableWrite
	changes *exec.Changes
	// written holds, by key, the rows the chunk wrote since its last flush
	// (the changes' own rows, kept as they are), nil for a deleted row.
	written map[string][]types.Datum
	oldRow  []types.Datum
	keyBuf  []byte
	getBuf  []byte
}

func newCDCChunk(w *tableWriter) *cdcChunk {
	op := w.op()
	return &cdcChunk{w: w, op: op, changes: op.NewChanges(),
		written: map[string][]types.Datum{}, oldRow: make([]types.Datum, len(w.types))}
}

func (c *cdcChunk) release() { c.changes.Release() }

// add resolves ch. It may fill ch's row id and unchanged columns; the chunk
// keeps ch.new until its next flush.
func (c *cdcChunk) add(ch *cdcChange) error {
	w := c.w
	switch ch.kind {
	case 'T':
		if err := c.flush(); err != nil {
			return err
		}
		return c.op.Truncate(w.e.ctx, w.changes)
	case 'D':
		return c.delete(c.key(ch.old))
	case 'I', 'U':
		if w.rowID >= 0 {
			ch.new[w.rowID] = types.DInt(w.nextRowID)
			w.nextRowID++
		}
		newKey := c.key(ch.new)
		oldKey := newKey
		if ch.old != nil {
			oldKey = c.key(ch.old)
		}
		if oldKey != newKey {
			// A key change onto a key that is held: that row goes first.
			if err := c.delete(newKey); err != nil {
				return err
			}
		}
		old, had, err := c.take(oldKey, exec.UpdateDelete)
		if err != nil {
			return err
		}
		op := exec.Insert
		if had {
			for i, u := range ch.unchanged {
				if u {
					ch.new[i] = old[i]
				}
			}
			op = exec.UpdateInsert
		}
		c.changes.AppendDatums(ch.new, op)
		c.written[newKey] = ch.new
	}
	return nil
}

// key encodes the primary key (or row id) of row.
func (c *cdcChunk) key(row []types.Datum) string {
	c.keyBuf = c.keyBuf[:0]
	for _, k := range c.w.rel.Key {
		c.keyBuf = state.AppendKeyDatum(c.keyBuf, c.w.types[k], row[k])
	}
	return string(c.keyBuf)
}

// take removes the row at key, as of the chunk's changes so far, if there
// is one: it appends it to the changes with op and, for an UpdateDelete,
// returns it (valid until the next take).
func (c *cdcChunk) take(key string, op exec.Op) ([]types.Datum, bool, error) {
	row, ok := c.written[key]
	if ok {
		if row == nil {
			return nil, false, nil
		}
		c.changes.AppendDatums(row, op)
	} else {
		c.getBuf = append(c.getBuf[:0], key...)
		v, stored, err := c.w.table.Get(c.getBuf)
		if err != nil || !stored {
			return nil, false, err
		}
		if err := c.changes.AppendValue(v, op); err != nil {
			return nil, false, err
		}
		if op == exec.UpdateDelete { // the update reads the old row
			if err := c.w.codec.DecodeDatums(v, c.oldRow); err != nil {
				return nil, false, err
			}
			row = c.oldRow
		}
	}
	c.written[key] = nil
	return row, true, nil
}

// delete deletes the row at key, if any.
func (c *cdcChunk) delete(key string) error {
	_, _, err := c.take(key, exec.Delete)
	return err
}

// flush writes and emits the changes resolved since the last flush.
func (c *cdcChunk) flush() error {
	if c.changes.Len() == 0 {
		return nil
	}
	clear(c.written)
	return c.op.ApplyBatch(c.w.e.ctx, c.changes.Batch(), c.w.changes)
}

// isDropped reports whether the table has been dropped (for the CDC reader,
// which does not hold mu).
func (w *tableWriter) isDropped() bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.dropped
}
