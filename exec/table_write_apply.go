package exec

import (
	"context"

	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/streamsql/streamsql/state"
	"github.com/streamsql/streamsql/types"
)

// The entry points of TableWrite for writers whose changes are already
// resolved and checked: a transaction's COMMIT (its overlay, checked by
// its statements and for conflicts), and the connectors that mirror an
// upstream table (CDC, Kafka tables), whose changes need no constraint
// checks, and the update pairs of INSERT ... ON CONFLICT DO UPDATE, which
// its owner checked. They write the table's state and indexes and emit the change
// stream exactly as Insert, Update and Delete do, a batch at a time.

// ApplyBatch writes the changes b (every column of the table), row i an
// insert when b.Ops[i] is an insert and a delete (of the row with row i's
// key) otherwise, in order, then emits b to out, which takes it.
func (w *TableWrite) ApplyBatch(ctx context.Context, b *Batch, out Output) error {
	return w.ApplyEncoded(ctx, b, nil, out)
}

// ApplyEncoded is ApplyBatch of changes whose keys and values the caller
// has already encoded (KeyedRows.ApplyEncoded): row i of enc is row i of b.
// A nil enc has them encoded here. It does not keep enc.
func (w *TableWrite) ApplyEncoded(ctx context.Context, b *Batch, enc *EncodedRows, out Output) error {
	if b.Rec.NumRows() == 0 {
		b.Release()
		return nil
	}
	if enc == nil {
		w.rows.Apply(b.Rec, b.Ops)
	} else {
		w.rows.ApplyEncoded(b.Rec, b.Ops, enc)
	}
	return out.Emit(ctx, Message{Batch: b})
}

// Truncate deletes every row of the table and its index entries, and emits
// the rows to out as one batch of deletes (none when the table is empty).
// The table's keys go as one range deletion.
func (w *TableWrite) Truncate(ctx context.Context, out Output) error {
	b, err := w.scanDeletes()
	if err != nil {
		return err
	}
	w.rows.Table.Clear()
	for _, x := range w.rows.Indexes {
		x.DeleteAll(b.Rec)
	}
	if b.Len() == 0 {
		b.Release()
		return nil
	}
	return out.Emit(ctx, Message{Batch: b})
}

// scanDeletes returns every row of the table, in key order, as a batch of
// deletes the caller releases.
func (w *TableWrite) scanDeletes() (*Batch, error) {
	c := w.NewChanges()
	defer c.Release()
	it, err := w.rows.Table.NewIter(nil, nil)
	if err != nil {
		return nil, err
	}
	for ok := it.First(); ok && err == nil; ok = it.Next() {
		err = c.AppendValue(it.Value(), Delete)
	}
	if err == nil {
		err = it.Error()
	}
	if cerr := it.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return nil, err
	}
	return c.Batch(), nil
}

// Changes builds a batch of changes to a table's rows for Apply: rows
// decoded from their stored encoding or given as datums (from a connector,
// which has them so), each with its op, into one set of column builders.
// It is not safe for concurrent use; its owner releases it.
type Changes struct {
	ts    []types.T
	codec *state.RowCodec
	bs    []array.Builder
	ops   []Op
}

// NewChanges returns an empty batch of changes to the table's rows.
func (w *TableWrite) NewChanges() *Changes {
	ts := w.rows.Types()
	c := &Changes{ts: ts, codec: w.rows.codec, bs: make([]array.Builder, len(ts))}
	for i, t := range ts {
		c.bs[i] = array.NewBuilder(w.mem, t.ArrowType())
	}
	return c
}

// AppendValue appends the row stored as v (the row codec's encoding) with op.
func (c *Changes) AppendValue(v []byte, op Op) error {
	if err := c.codec.Decode(v, c.bs); err != nil {
		return err
	}
	c.ops = append(c.ops, op)
	return nil
}

// AppendDatums appends row (every column) with op.
func (c *Changes) AppendDatums(row []types.Datum, op Op) {
	for i, d := range row {
		types.AppendDatum(c.bs[i], c.ts[i], d)
	}
	c.ops = append(c.ops, op)
}

// Len returns the number of rows appended since the last Batch.
func (c *Changes) Len() int { return len(c.ops) }

// Batch returns the rows appended since the last Batch, the caller's to
// release, and starts a new batch.
func (c *Changes) Batch() *Batch {
	b := NewBatch(buildRecord(SchemaOf(c.ts), c.bs, len(c.ops)), c.ops)
	c.ops = nil
	return b
}

// Release releases the builders.
func (c *Changes) Release() {
	for _, b := range c.bs {
		b.Release()
	}
	c.bs = nil
}
