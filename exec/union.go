package exec

import (
	"context"

	"github.com/streamsql/streamsql/barrier"
)

// Union merges its inputs' streams (UNION ALL). The planner gives every
// input the same columns, including a branch column that keeps stream keys
// distinct across inputs. It keeps no state; it forwards, on each of the
// columns the planner names, the smallest watermark of its inputs.
type Union struct {
	wm watermarkMin
}

// NewUnion returns a Union of n inputs whose columns cols carry watermarks.
func NewUnion(n int, cols []int) *Union {
	u := &Union{}
	for _, c := range cols {
		in := make([]int, n)
		for i := range in {
			in[i] = c
		}
		u.wm.add(in, []int{c})
	}
	return u
}

// OnBatch forwards b.
func (*Union) OnBatch(ctx context.Context, _ int, b *Batch, out Output) error {
	return out.Emit(ctx, Message{Batch: b})
}

// OnBarrier does nothing: Union has no state.
func (*Union) OnBarrier(context.Context, *barrier.Barrier, Output) error { return nil }

// OnWatermark forwards the inputs' smallest watermark.
func (u *Union) OnWatermark(ctx context.Context, input int, w *barrier.Watermark, out Output) error {
	return u.wm.onWatermark(ctx, input, w, out)
}

// Close does nothing.
func (*Union) Close() {}
