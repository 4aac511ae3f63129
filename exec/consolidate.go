package exec

import (
	"context"

	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/streamsql/streamsql/barrier"
	"github.com/streamsql/streamsql/types"
)

// Consolidate nets out the inserts and deletes of its input and, at the
// barrier that ends it, emits each remaining row as many times as it is
// present. It is for batch queries whose plans produce retractions.
type Consolidate struct {
	mem   memory.Allocator
	types []types.T
	net   rowNet
	// budget, if set, counts the distinct rows held (batch queries).
	budget *Budget
}

// NewConsolidate returns a Consolidate over rows of the given types.
func NewConsolidate(mem memory.Allocator, ts []types.T) *Consolidate {
	return &Consolidate{mem: mem, types: ts, net: newRowNet(ts)}
}

// OnBatch counts b's rows.
func (c *Consolidate) OnBatch(_ context.Context, b *Batch, _ Output) error {
	defer b.Release()
	rows, n := c.net.add(b.Rec.Columns(), b.Ops)
	if c.budget != nil && rows > 0 {
		c.budget.Reserve(int64(n) + rowOverhead*int64(rows))
	}
	return c.budget.Check(0)
}

// OnBarrier emits the net rows, in order of first appearance.
func (c *Consolidate) OnBarrier(ctx context.Context, _ *barrier.Barrier, out Output) error {
	err := c.net.emit(ctx, c.mem, c.types, +1, Insert, false, out)
	c.net.drop()
	return err
}

// Close does nothing.
func (c *Consolidate) Close() {}
