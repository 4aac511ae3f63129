package exec

import (
	"bytes"
	"context"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/streamsql/streamsql/state"
	"github.com/streamsql/streamsql/types"
)

// EmitViewDiff emits to out the changes that turn the rows of state table
// from into those of state table to, as snap holds them: both hold a view's
// rows of types ts, RowCodec-encoded under the same key encoding (the same
// key columns). A key in both with another value is an UpdateDelete and
// UpdateInsert pair, a key only in from a Delete, a key only in to an
// Insert; equal rows give nothing. Both tables are read once, in key order,
// with one batch of changes held at a time.
func EmitViewDiff(ctx context.Context, mem memory.Allocator, snap *state.Snapshot, from, to state.TableID, ts []types.T, out Output) error {
	old, err := snap.NewIter(from, nil, nil)
	if err != nil {
		return err
	}
	defer old.Close()
	cur, err := snap.NewIter(to, nil, nil)
	if err != nil {
		return err
	}
	defer cur.Close()
	d := &diffWriter{codec: state.NewRowCodec(ts), bs: newBuilders(mem, ts), schema: SchemaOf(ts), out: out}
	defer releaseBuilders(d.bs)
	okOld, okCur := old.First(), cur.First()
	for okOld || okCur {
		c := 0
		switch {
		case !okOld:
			c = 1
		case !okCur:
			c = -1
		default:
			c = bytes.Compare(old.Key(), cur.Key())
		}
		switch {
		case c < 0:
			err = d.add(Delete, old.Value())
		case c > 0:
			err = d.add(Insert, cur.Value())
		case !bytes.Equal(old.Value(), cur.Value()):
			if err = d.add(UpdateDelete, old.Value()); err == nil {
				err = d.add(UpdateInsert, cur.Value())
			}
		}
		if err == nil && len(d.ops) >= BatchSize {
			err = d.flush(ctx)
		}
		if err != nil {
			return err
		}
		if c <= 0 {
			okOld = old.Next()
		}
		if c >= 0 {
			okCur = cur.Next()
		}
	}
	if err := old.Error(); err != nil {
		return err
	}
	if err := cur.Error(); err != nil {
		return err
	}
	return d.flush(ctx)
}

// diffWriter collects the changes of EmitViewDiff into batches.
type diffWriter struct {
	codec  *state.RowCodec
	bs     []array.Builder
	schema *arrow.Schema
	ops    []Op
	out    Output
}

func (d *diffWriter) add(op Op, value []byte) error {
	if err := d.codec.Decode(value, d.bs); err != nil {
		return err
	}
	d.ops = append(d.ops, op)
	return nil
}

func (d *diffWriter) flush(ctx context.Context) error {
	if len(d.ops) == 0 {
		return nil
	}
	rec := buildRecord(d.schema, d.bs, len(d.ops))
	ops := d.ops
	d.ops = nil
	return d.out.Emit(ctx, Message{Batch: NewBatch(rec, ops)})
}
