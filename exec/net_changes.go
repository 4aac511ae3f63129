package exec

import (
	"context"

	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/streamsql/streamsql/barrier"
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
	mem   memory.Allocator
	types []types.T
	net   rowNet
	wms   []barrier.Watermark // the last of each column, in order of first arrival
}

// NewNetChanges returns a NetChanges over rows of the given types.
func NewNetChanges(mem memory.Allocator, ts []types.T) *NetChanges {
	return &NetChanges{mem: mem, types: ts, net: newRowNet(ts)}
}

// OnBatch counts b's rows.
func (c *NetChanges) OnBatch(_ context.Context, b *Batch, _ Output) error {
	defer b.Release()
	c.net.add(b.Rec.Columns(), b.Ops)
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
	if err := c.net.emit(ctx, c.mem, c.types, -1, Delete, true, out); err != nil {
		return err
	}
	if err := c.net.emit(ctx, c.mem, c.types, +1, Insert, true, out); err != nil {
		return err
	}
	c.net.reset()
	for _, w := range c.wms {
		if err := out.Emit(ctx, Message{Watermark: &barrier.Watermark{Column: w.Column, Value: w.Value}}); err != nil {
			return err
		}
	}
	c.wms = c.wms[:0]
	return nil
}

// Close drops what an unfinished epoch held.
func (c *NetChanges) Close() {
	c.net.drop()
}
