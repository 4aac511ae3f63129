package exec

import (
	"context"

	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/streamsql/streamsql/barrier"
	"github.com/streamsql/streamsql/state"
	"github.com/streamsql/streamsql/types"
)

// LateFilter drops, and counts, the rows whose time column is below its
// watermark or NULL, and passes the watermark on: it keeps late rows out
// of an operator that would otherwise change the results of rows already
// emitted on window close (window functions). The watermark reached is kept
// in its state table, so a restarted filter drops the same rows.
type LateFilter struct {
	mem  memory.Allocator
	wm   *groupWatermark
	late func(int)
}

// NewLateFilter returns the filter of time column col (of type t).
func NewLateFilter(mem memory.Allocator, col int, t types.T, table *state.Table, late func(int)) (*LateFilter, error) {
	wm, err := newGroupWatermark(table, col, t)
	if err != nil {
		return nil, err
	}
	return &LateFilter{mem: mem, wm: wm, late: late}, nil
}

// OnBatch passes b's rows that are not late.
func (f *LateFilter) OnBatch(ctx context.Context, b *Batch, out Output) error {
	n := b.Len()
	b, err := f.wm.dropLate(f.mem, b, true, nil)
	if err != nil {
		return err
	}
	if dropped := n - b.Len(); dropped > 0 && f.late != nil {
		f.late(dropped)
	}
	if b.Len() == 0 {
		b.Release()
		return nil
	}
	return out.Emit(ctx, Message{Batch: b})
}

// OnWatermark records w and passes it on.
func (f *LateFilter) OnWatermark(ctx context.Context, w *barrier.Watermark, out Output) error {
	f.wm.observe(w)
	return out.Emit(ctx, Message{Watermark: w})
}

// OnBarrier keeps the watermark reached with the epoch.
func (f *LateFilter) OnBarrier(_ context.Context, br *barrier.Barrier, _ Output) error {
	if _, _, ok := f.wm.finalRange(); ok {
		f.wm.dropped()
	}
	f.wm.table.Seal(br.Epoch)
	return nil
}

// Close releases nothing.
func (f *LateFilter) Close() {}
