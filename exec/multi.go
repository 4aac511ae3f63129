package exec

import (
	"context"

	"github.com/streamsql/streamsql/barrier"
)

// MultiOperator is an operator with several inputs (joins, unions).
//
// Contract: OnBatch is called with batches of every input, interleaved in
// the order the runtime reads them. OnBarrier is called once per barrier,
// after the barrier has arrived on every open input; as for Operator, the
// operator emits what it owes and seals its state, and the runtime forwards
// the barrier afterwards.
type MultiOperator interface {
	OnBatch(ctx context.Context, input int, b *Batch, out Output) error
	OnBarrier(ctx context.Context, b *barrier.Barrier, out Output) error
	Close()
}

// MultiNode connects the inputs of a MultiOperator to the chains that feed
// it: Port(i) is the Output that input i's chain emits into. It counts barrier
// arrivals per epoch (the actor's alignment guarantees, in exactly-once mode,
// that no input runs ahead) and calls OnBarrier when the last input's barrier
// arrives.
type MultiNode struct {
	op      MultiOperator
	next    Output
	tracker *barrier.Aligner
	// pending is the latest barrier seen and not yet completed.
	pending *barrier.Barrier
	closed  int
}

// NewMultiNode returns the node of op with n inputs, emitting into next.
func NewMultiNode(op MultiOperator, n int, next Output) *MultiNode {
	return &MultiNode{op: op, next: next, tracker: barrier.NewAligner(n, barrier.AtLeastOnce)}
}

// Port returns the Output of input i.
func (m *MultiNode) Port(i int) Output { return &multiPort{node: m, input: i} }

// complete ends the pending barrier's epoch if step says it completed.
func (n *MultiNode) complete(ctx context.Context, step barrier.Step) error {
	b := n.pending
	if b == nil || step.Complete != b.Epoch {
		return nil
	}
	n.pending = nil
	if err := n.op.OnBarrier(ctx, b, n.next); err != nil {
		return err
	}
	return n.next.Emit(ctx, Message{Barrier: b})
}

type multiPort struct {
	node  *MultiNode
	input int
}

func (p *multiPort) Emit(ctx context.Context, msg Message) error {
	n := p.node
	switch {
	case msg.Batch != nil:
		return n.op.OnBatch(ctx, p.input, msg.Batch, n.next)
	case msg.Barrier != nil:
		n.pending = msg.Barrier
		return n.complete(ctx, n.tracker.OnBarrier(p.input, msg.Barrier.Epoch))
	case msg.EndOfStream:
		n.closed++
		if err := n.complete(ctx, n.tracker.OnClose(p.input)); err != nil {
			return err
		}
		if n.tracker.AllClosed() {
			return n.next.Emit(ctx, msg)
		}
		return nil
	case msg.Watermark != nil:
		if wo, ok := n.op.(MultiWatermarkOperator); ok {
			return wo.OnWatermark(ctx, p.input, msg.Watermark, n.next)
		}
		return nil
	}
	return n.next.Emit(ctx, msg)
}
