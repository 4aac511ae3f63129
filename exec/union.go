package exec

import (
	"context"

	"github.com/streamsql/streamsql/barrier"
)

// Union merges its inputs' streams (UNION ALL). The planner gives every
// input the same columns, including a branch column that keeps stream keys
// distinct across inputs. It is stateless.
type Union struct{}

// OnBatch forwards b.
func (Union) OnBatch(ctx context.Context, _ int, b *Batch, out Output) error {
	return out.Emit(ctx, Message{Batch: b})
}

// OnBarrier does nothing: Union has no state.
func (Union) OnBarrier(context.Context, *barrier.Barrier, Output) error { return nil }

// Close does nothing.
func (Union) Close() {}
