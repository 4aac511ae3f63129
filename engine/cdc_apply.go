package engine

import (
	"bytes"
	"encoding/binary"

	"github.com/cespare/xxhash/v2"
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
// written until flush. The chunk encodes each row's key and value once,
// for its lookups, and the batch is written with them
// (exec.TableWrite.ApplyEncoded). The caller holds w.mu.
type cdcChunk struct {
	w       *tableWriter
	op      *exec.TableWrite
	changes *exec.Changes
	*cdcScratch
}

// cdcScratch is the Go memory a table's chunks reuse, one chunk at a time
// (under the writer's mu).
type cdcScratch struct {
	// enc holds the stored form of the chunk's rows since its last flush,
	// row i of enc row i of changes; datums[i] is row i's datums when it
	// is an insert (the change's own row, kept as it is) and nil when it
	// is a delete.
	enc    exec.EncodedRows
	datums [][]types.Datum
	// last finds by key the chunk's last row of that key.
	last   rowIndex
	oldRow []types.Datum
	keyBuf []byte
	oldBuf []byte
	valBuf []byte
}

func newCDCChunk(w *tableWriter) *cdcChunk {
	op := w.op()
	c := &cdcChunk{w: w, op: op, changes: op.NewChanges(), cdcScratch: &w.cdc}
	if len(c.oldRow) != len(w.types) {
		c.oldRow = make([]types.Datum, len(w.types))
	}
	c.reset()
	return c
}

func (c *cdcChunk) release() {
	c.changes.Release()
	c.reset()
}

// reset forgets the chunk's rows.
func (c *cdcChunk) reset() {
	c.enc.Reset()
	clear(c.datums)
	c.datums = c.datums[:0]
	c.last.reset()
}

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
		c.keyBuf = c.appendKey(c.keyBuf[:0], ch.old)
		_, _, err := c.take(c.keyBuf, xxhash.Sum64(c.keyBuf), exec.Delete)
		return err
	case 'I', 'U':
		if w.rowID >= 0 {
			ch.new[w.rowID] = types.DInt(w.nextRowID)
			w.nextRowID++
		}
		c.keyBuf = c.appendKey(c.keyBuf[:0], ch.new)
		newKey, newHash := c.keyBuf, xxhash.Sum64(c.keyBuf)
		oldKey, oldHash := newKey, newHash
		if ch.old != nil {
			c.oldBuf = c.appendKey(c.oldBuf[:0], ch.old)
			oldKey, oldHash = c.oldBuf, xxhash.Sum64(c.oldBuf)
		}
		if !bytes.Equal(oldKey, newKey) {
			// A key change onto a key that is held: that row goes first.
			if _, _, err := c.take(newKey, newHash, exec.Delete); err != nil {
				return err
			}
		}
		old, had, err := c.take(oldKey, oldHash, exec.UpdateDelete)
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
		c.valBuf = w.codec.AppendDatums(c.valBuf[:0], ch.new)
		c.appendRow(newKey, newHash, c.valBuf, ch.new)
	}
	return nil
}

// appendKey appends the encoding of the primary key (or row id) of row.
func (c *cdcChunk) appendKey(buf []byte, row []types.Datum) []byte {
	for _, k := range c.w.rel.Key {
		buf = state.AppendKeyDatum(buf, c.w.types[k], row[k])
	}
	return buf
}

// appendRow records the chunk's next row: key (hash h) with value and
// datums, both nil for a delete.
func (c *cdcChunk) appendRow(key []byte, h uint64, value []byte, datums []types.Datum) {
	row := c.enc.Len()
	c.enc.Append(key, value)
	c.datums = append(c.datums, datums)
	c.last.set(&c.enc, key, h, row)
}

// take removes the row at key (hash h), as of the chunk's changes so far,
// if there is one: it appends it to the changes with op and, for an
// UpdateDelete, returns it (valid until the next take).
func (c *cdcChunk) take(key []byte, h uint64, op exec.Op) ([]types.Datum, bool, error) {
	var row []types.Datum
	if r, ok := c.last.get(&c.enc, key, h); ok {
		if row = c.datums[r]; row == nil {
			return nil, false, nil
		}
		c.changes.AppendDatums(row, op)
	} else {
		v, stored, err := c.w.table.Get(key)
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
	c.appendRow(key, h, nil, nil)
	return row, true, nil
}

// flush writes and emits the changes resolved since the last flush.
func (c *cdcChunk) flush() error {
	if c.changes.Len() == 0 {
		return nil
	}
	err := c.op.ApplyEncoded(c.w.e.ctx, c.changes.Batch(), &c.enc, c.w.changes)
	c.reset()
	return err
}

// rowIndex finds the last row of a key among the rows of an EncodedRows:
// open addressing with linear probing over a power-of-two table of row
// numbers (more than half empty), kept from chunk to chunk.
type rowIndex struct {
	slots []rowSlot
	n     int // slots in use
}

type rowSlot struct {
	hash uint64
	row  int32 // the row + 1; 0 marks an empty slot
}

// slot returns the slot holding key (hash h), or the empty slot where it
// would go. There must be an empty slot.
func (x *rowIndex) slot(enc *exec.EncodedRows, key []byte, h uint64) *rowSlot {
	mask := uint64(len(x.slots) - 1)
	for i := h & mask; ; i = (i + 1) & mask {
		s := &x.slots[i]
		if s.row == 0 || (s.hash == h && bytes.Equal(enc.Key(int(s.row-1)), key)) {
			return s
		}
	}
}

// get returns the last row of key (hash h), if the index holds it.
func (x *rowIndex) get(enc *exec.EncodedRows, key []byte, h uint64) (int, bool) {
	if x.n == 0 {
		return 0, false
	}
	s := x.slot(enc, key, h)
	return int(s.row - 1), s.row != 0
}

// set records row (whose key is key, hash h) as the last row of its key.
func (x *rowIndex) set(enc *exec.EncodedRows, key []byte, h uint64, row int) {
	if 2*(x.n+1) > len(x.slots) {
		x.grow()
	}
	s := x.slot(enc, key, h)
	if s.row == 0 {
		x.n++
		s.hash = h
	}
	s.row = int32(row + 1)
}

// grow doubles the table.
func (x *rowIndex) grow() {
	old := x.slots
	x.slots = make([]rowSlot, max(2*len(old), 256))
	mask := uint64(len(x.slots) - 1)
	for _, s := range old {
		if s.row == 0 {
			continue
		}
		i := s.hash & mask
		for x.slots[i].row != 0 {
			i = (i + 1) & mask
		}
		x.slots[i] = s
	}
}

// reset empties the index, keeping its table.
func (x *rowIndex) reset() {
	if x.n > 0 {
		clear(x.slots)
		x.n = 0
	}
}

// isDropped reports whether the table has been dropped (for the CDC reader,
// which does not hold mu).
func (w *tableWriter) isDropped() bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.dropped
}
