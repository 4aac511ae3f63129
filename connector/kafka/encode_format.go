package kafka

import (
	"bytes"
	"encoding/binary"
	"github.com/streamsql/streamsql/connector/jsonenc"
	"strconv"

	"github.com/streamsql/streamsql/exec"
	"github.com/streamsql/streamsql/types"
)

// Format is how a sink turns a view's changes into Kafka records
// (FORMAT ... ENCODE JSON).
type Format uint8

const (
	// Plain writes each inserted row as a record whose value is the row
	// (FORMAT PLAIN); it takes only inserts, so a view that deletes or
	// updates needs force_append_only, which drops deletes and writes the
	// new version of an updated row as an insert.
	Plain Format = iota
	// Upsert keys each record by the primary key: an insert or update is
	// the row, a delete a tombstone (a null value) (FORMAT UPSERT).
	Upsert
	// Debezium writes Debezium change events: {"before", "after", "op",
	// "ts_ms"} with op "c", "u" or "d" (FORMAT DEBEZIUM).
	Debezium
)

func (f Format) String() string {
	switch f {
	case Plain:
		return "plain"
	case Upsert:
		return "upsert"
	}
	return "debezium"
}

// encoder turns batches of changes into chunks: runs of encoded records
// (appendRecord's layout), the unit the outbox stores and delivery
// produces. It works on whole columns: each batch binds one JSON appender
// per column, and rows are appended into reused buffers.
type encoder struct {
	format Format
	types  []types.T
	value  *jsonenc.Row
	key    *jsonenc.Row // nil without a primary key
	// nowMillis is ts_ms of Debezium events.
	nowMillis func() int64

	keyBuf, otherKey, valBuf []byte
}

// encodeBatch appends b's changes to chunk as records and returns it and
// the number of records appended.
func (e *encoder) encodeBatch(chunk []byte, b *exec.Batch) ([]byte, int) {
	e.value.Reset(b.Rec, e.types)
	defer e.value.Release()
	if e.key != nil {
		e.key.Reset(b.Rec, e.types)
		defer e.key.Release()
	}
	var ts []byte
	if e.format == Debezium {
		ts = strconv.AppendInt(nil, e.nowMillis(), 10)
	}
	n, ops := 0, b.Ops
	for i := 0; i < len(ops); i++ {
		op := ops[i]
		switch e.format {
		case Plain:
			if !op.IsInsert() {
				continue
			}
			chunk = e.appendRow(chunk, i)
		case Upsert:
			e.keyBuf = e.key.AppendRow(e.keyBuf[:0], i)
			if op.IsInsert() {
				e.valBuf = e.value.AppendRow(e.valBuf[:0], i)
				chunk = appendRecord(chunk, e.keyBuf, e.valBuf)
				break
			}
			if op == exec.UpdateDelete && e.updatesSameKey(ops, i) {
				continue // the new version overwrites it
			}
			chunk = appendRecord(chunk, e.keyBuf, nil)
		case Debezium:
			if op == exec.UpdateDelete && e.updatesSameKey(ops, i) {
				chunk = e.appendDebezium(chunk, i, i+1, "u", ts)
				i++
				break
			}
			if op.IsInsert() {
				chunk = e.appendDebezium(chunk, -1, i, "c", ts)
			} else {
				chunk = e.appendDebezium(chunk, i, -1, "d", ts)
			}
		}
		n++
	}
	return chunk, n
}

// updatesSameKey reports whether the UpdateDelete at i is followed, in the
// batch, by its UpdateInsert with the same primary key (always, without a
// primary key). e.keyBuf holds row i's key if there is one.
func (e *encoder) updatesSameKey(ops []exec.Op, i int) bool {
	if i+1 >= len(ops) || ops[i+1] != exec.UpdateInsert {
		return false
	}
	if e.key == nil {
		return true
	}
	e.otherKey = e.key.AppendRow(e.otherKey[:0], i+1)
	return bytes.Equal(e.keyBuf, e.otherKey)
}

// appendRow appends a record of row i: its key, if the sink has a primary
// key, and the row.
func (e *encoder) appendRow(chunk []byte, i int) []byte {
	var key []byte
	if e.key != nil {
		e.keyBuf = e.key.AppendRow(e.keyBuf[:0], i)
		key = e.keyBuf
	}
	e.valBuf = e.value.AppendRow(e.valBuf[:0], i)
	return appendRecord(chunk, key, e.valBuf)
}

// appendDebezium appends a Debezium event with rows before and after (-1
// for none), keyed by the primary key of the row that is there (after if
// both).
func (e *encoder) appendDebezium(chunk []byte, before, after int, op string, ts []byte) []byte {
	var key []byte
	if e.key != nil {
		row := after
		if row < 0 {
			row = before
		}
		e.keyBuf = e.key.AppendRow(e.keyBuf[:0], row)
		key = e.keyBuf
	}
	v := append(e.valBuf[:0], `{"before":`...)
	v = e.appendOptRow(v, before)
	v = append(v, `,"after":`...)
	v = e.appendOptRow(v, after)
	v = append(v, `,"op":"`...)
	v = append(v, op...)
	v = append(v, `","ts_ms":`...)
	v = append(v, ts...)
	e.valBuf = append(v, '}')
	return appendRecord(chunk, key, e.valBuf)
}

func (e *encoder) appendOptRow(buf []byte, i int) []byte {
	if i < 0 {
		return append(buf, "null"...)
	}
	return e.value.AppendRow(buf, i)
}

// appendRecord appends one record to a chunk: the key and the value, each
// as a uvarint of its length plus one (0 for nil) and its bytes.
func appendRecord(chunk, key, value []byte) []byte {
	chunk = appendField(chunk, key)
	return appendField(chunk, value)
}

func appendField(chunk, f []byte) []byte {
	if f == nil {
		return binary.AppendUvarint(chunk, 0)
	}
	chunk = binary.AppendUvarint(chunk, uint64(len(f))+1)
	return append(chunk, f...)
}

// chunkReader reads the records of a chunk.
type chunkReader struct{ rest []byte }

// next returns the next record's key and value (nil for none); ok is false
// at the end of the chunk or if it is corrupt (err says which).
func (r *chunkReader) next() (key, value []byte, ok bool, err error) {
	if len(r.rest) == 0 {
		return nil, nil, false, nil
	}
	if key, err = r.field(); err != nil {
		return nil, nil, false, err
	}
	if value, err = r.field(); err != nil {
		return nil, nil, false, err
	}
	return key, value, true, nil
}

func (r *chunkReader) field() ([]byte, error) {
	n, w := binary.Uvarint(r.rest)
	if w <= 0 || n > uint64(len(r.rest)-w)+1 {
		return nil, errCorruptChunk
	}
	r.rest = r.rest[w:]
	if n == 0 {
		return nil, nil
	}
	f := r.rest[: n-1 : n-1]
	r.rest = r.rest[n-1:]
	return f, nil
}
