package exec

import (
	"context"

	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/streamsql/streamsql/barrier"
	"github.com/streamsql/streamsql/state"
	"github.com/streamsql/streamsql/types"
)

// NetChanges nets out the changes of each epoch and passes them on at the
// epoch's barrier: first a delete for every row the epoch removed, then an
// insert for every row it added, then the epoch's last watermark of each
// column. It is the receiving side of an exchange whose rows come from
// several actors and whose partition key is not part of their stream key
// (planner.Exchange.Net): the changes of one row can then come from two
// actors in the same epoch, merged in either order (an insert from one
// before the delete of the same key from the other), while the operators
// after it need, per stream key, a delete to follow the insert it undoes.
// At a barrier every actor's changes of the epoch are in, and their sum,
// which does not depend on the order, is the epoch's change.
//
// It holds every distinct row the epoch changed, encoded (one string per
// row: this is the path of exchanges that need it, not of the others), and
// delays them to the barrier; the watermarks wait with them, so that no row
// arrives behind a watermark sent before it.
type NetChanges struct {
	mem    memory.Allocator
	types  []types.T
	codec  *state.RowCodec
	counts map[string]int64
	order  []string // the distinct rows, in order of first change
	buf    []byte
	wms    []barrier.Watermark // the last of each column, in order of first arrival
}

// NewNetChanges returns a NetChanges over rows of the given types.
func NewNetChanges(mem memory.Allocator, ts []types.T) *NetChanges {
	return &NetChanges{mem: mem, types: ts, codec: state.NewRowCodec(ts), counts: map[string]int64{}}
}

// OnBatch counts b's rows.
func (c *NetChanges) OnBatch(_ context.Context, b *Batch, _ Output) error {
	defer b.Release()
	cols := b.Rec.Columns()
	for i, op := range b.Ops {
		c.buf = c.codec.Append(c.buf[:0], cols, i)
		n, seen := c.counts[string(c.buf)]
		if !seen {
			c.order = append(c.order, string(c.buf))
		}
		if op.IsInsert() {
			n++
		} else {
			n--
		}
		c.counts[string(c.buf)] = n
	}
	return nil
}

// OnWatermark keeps w until the barrier.
func (c *NetChanges) OnWatermark(_ context.Context, w *barrier.Watermark, _ Output) error {
	for i := range c.wms {
		if c.wms[i].Column == w.Column {
			c.wms[i].Value = max(c.wms[i].Value, w.Value)
			return nil
		}
	}
	c.wms = append(c.wms, *w)
	return nil
}

// OnBarrier emits the epoch's net changes and watermarks.
func (c *NetChanges) OnBarrier(ctx context.Context, _ *barrier.Barrier, out Output) error {
	if err := c.emit(ctx, Delete, out); err != nil {
		return err
	}
	if err := c.emit(ctx, Insert, out); err != nil {
		return err
	}
	clear(c.counts)
	c.order = c.order[:0]
	for _, w := range c.wms {
		if err := out.Emit(ctx, Message{Watermark: &barrier.Watermark{Column: w.Column, Value: w.Value}}); err != nil {
			return err
		}
	}
	c.wms = c.wms[:0]
	return nil
}

// emit sends the rows whose count went down (op Delete) or up (Insert),
// each as many times as it changed.
func (c *NetChanges) emit(ctx context.Context, op Op, out Output) error {
	bs := newBuilders(c.mem, c.types)
	defer releaseBuilders(bs)
	schema := SchemaOf(c.types)
	rows := 0
	flush := func() error {
		ops := make([]Op, rows)
		for i := range ops {
			ops[i] = op
		}
		b := NewBatch(buildRecord(schema, bs, rows), ops)
		rows = 0
		return out.Emit(ctx, Message{Batch: b})
	}
	for _, k := range c.order {
		n := c.counts[k]
		if op == Delete {
			n = -n
		}
		for ; n > 0; n-- {
			if err := c.codec.Decode([]byte(k), bs); err != nil {
				return err
			}
			rows++
			if rows == BatchSize {
				if err := flush(); err != nil {
					return err
				}
			}
		}
	}
	if rows > 0 {
		return flush()
	}
	return nil
}

// Close drops what an unfinished epoch held.
func (c *NetChanges) Close() {
	c.counts, c.order = nil, nil
}
