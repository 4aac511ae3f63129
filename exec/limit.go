package exec

import (
	"context"

	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/streamsql/streamsql/barrier"
)

// Limit skips the first Offset rows of its (insert-only) input and passes at
// most Count rows (all if Count < 0). It is for batch queries only.
type Limit struct {
	mem           memory.Allocator
	offset, count int64
}

// NewLimit returns a Limit.
func NewLimit(mem memory.Allocator, offset, count int64) *Limit {
	return &Limit{mem: mem, offset: offset, count: count}
}

// OnBatch forwards the part of b inside the window.
func (l *Limit) OnBatch(ctx context.Context, b *Batch, out Output) error {
	n := int64(b.Len())
	start := int64(0)
	if l.offset > 0 {
		skip := min(l.offset, n)
		l.offset -= skip
		start = skip
	}
	end := n
	if l.count >= 0 {
		end = min(n, start+l.count)
		l.count -= end - start
	}
	if start >= end {
		b.Release()
		return nil
	}
	if start == 0 && end == n {
		return out.Emit(ctx, Message{Batch: b})
	}
	rec := b.Rec.NewSlice(start, end)
	ops := b.Ops[start:end]
	b.Release()
	return out.Emit(ctx, Message{Batch: NewBatch(rec, ops)})
}

// OnBarrier does nothing.
func (l *Limit) OnBarrier(context.Context, *barrier.Barrier, Output) error { return nil }

// Close does nothing.
func (l *Limit) Close() {}
