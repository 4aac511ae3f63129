package exec

import (
	"context"

	"github.com/streamsql/streamsql/barrier"
)

// Output receives a stream's messages in order. Implementations are not
// safe for concurrent use: one goroutine drives a stream.
type Output interface {
	Emit(ctx context.Context, m Message) error
}

// Operator is a streaming operator with one input, driven by one goroutine.
//
// Contract: OnBatch and OnBarrier are called in stream order. On a barrier,
// the operator emits any output it owes for the epoch, writes its changed
// state for the epoch (Seal), and returns; the runtime forwards the barrier
// downstream after OnBarrier returns, so state is always sealed before the
// barrier leaves the operator. An error stops the dataflow.
type Operator interface {
	// OnBatch processes b, whose ownership passes to the operator.
	OnBatch(ctx context.Context, b *Batch, out Output) error
	// OnBarrier ends epoch b.Epoch for the operator.
	OnBarrier(ctx context.Context, b *barrier.Barrier, out Output) error
	// Close releases the operator's resources. It is called once, after the
	// last message.
	Close()
}

// Chain connects operators: the messages emitted by ops[i] go to ops[i+1],
// those of the last operator to out.
func Chain(ops []Operator, out Output) Output {
	for i := len(ops) - 1; i >= 0; i-- {
		out = &link{op: ops[i], next: out}
	}
	return out
}

// link feeds an operator and forwards barriers after it. Watermarks go to
// operators that take them (WatermarkOperator) and stop at the others.
type link struct {
	op   Operator
	next Output
}

func (l *link) Emit(ctx context.Context, m Message) error {
	switch {
	case m.Batch != nil:
		return l.op.OnBatch(ctx, m.Batch, l.next)
	case m.Barrier != nil:
		if err := l.op.OnBarrier(ctx, m.Barrier, l.next); err != nil {
			return err
		}
		return l.next.Emit(ctx, m)
	case m.Watermark != nil:
		if wo, ok := l.op.(WatermarkOperator); ok {
			return wo.OnWatermark(ctx, m.Watermark, l.next)
		}
		return nil
	}
	// End of stream passes through.
	return l.next.Emit(ctx, m)
}

// OutputFunc adapts a function to Output.
type OutputFunc func(ctx context.Context, m Message) error

// Emit calls f.
func (f OutputFunc) Emit(ctx context.Context, m Message) error { return f(ctx, m) }
