package exec

import (
	"context"

	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/streamsql/streamsql/barrier"
	"github.com/streamsql/streamsql/state"
	"github.com/streamsql/streamsql/types"
)

// Consolidate nets out the inserts and deletes of its input and, at the
// barrier that ends it, emits each remaining row as many times as it is
// present. It is for batch queries whose plans produce retractions.
type Consolidate struct {
	mem    memory.Allocator
	types  []types.T
	codec  *state.RowCodec
	counts map[string]int64
	order  []string
	buf    []byte
	// budget, if set, counts the distinct rows held (batch queries).
	budget *Budget
}

// NewConsolidate returns a Consolidate over rows of the given types.
func NewConsolidate(mem memory.Allocator, ts []types.T) *Consolidate {
	return &Consolidate{mem: mem, types: ts, codec: state.NewRowCodec(ts), counts: map[string]int64{}}
}

// OnBatch counts b's rows.
func (c *Consolidate) OnBatch(_ context.Context, b *Batch, _ Output) error {
	defer b.Release()
	cols := b.Rec.Columns()
	for i, op := range b.Ops {
		c.buf = c.codec.Append(c.buf[:0], cols, i)
		n, seen := c.counts[string(c.buf)]
		if !seen {
			c.order = append(c.order, string(c.buf))
			if c.budget != nil {
				// The key twice (map and order) and their headers.
				c.budget.Reserve(2*int64(len(c.buf)) + 64)
			}
		}
		if op.IsInsert() {
			n++
		} else {
			n--
		}
		c.counts[string(c.buf)] = n
	}
	return c.budget.Check(0)
}

// OnBarrier emits the net rows, in order of first appearance.
func (c *Consolidate) OnBarrier(ctx context.Context, _ *barrier.Barrier, out Output) error {
	bs := newBuilders(c.mem, c.types)
	defer releaseBuilders(bs)
	schema := SchemaOf(c.types)
	rows := 0
	for _, k := range c.order {
		for n := c.counts[k]; n > 0; n-- {
			if err := c.codec.Decode([]byte(k), bs); err != nil {
				return err
			}
			rows++
			if rows == BatchSize {
				if err := out.Emit(ctx, Message{Batch: NewBatch(buildRecord(schema, bs, rows), nil)}); err != nil {
					return err
				}
				rows = 0
			}
		}
	}
	c.counts, c.order = map[string]int64{}, nil
	if rows > 0 {
		return out.Emit(ctx, Message{Batch: NewBatch(buildRecord(schema, bs, rows), nil)})
	}
	return nil
}

// Close does nothing.
func (c *Consolidate) Close() {}
