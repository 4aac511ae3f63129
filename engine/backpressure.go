package engine

import (
	"sync/atomic"
	"time"
)

// DefaultMaxUncommittedState is the default of Options.MaxUncommittedState.
const DefaultMaxUncommittedState = 64 << 20

// backpressure holds the sources back while the state store holds more
// uncommitted writes than the limit: a source that reads faster than the
// commits of its views can write would otherwise grow the in-memory layers
// of the open epochs, and the commit batches after them, without bound.
type backpressure struct {
	limit int64 // bytes; 0: none
	// waited is the time source readers spent held back, in nanoseconds.
	waited atomic.Int64
}

// awaitStateRoom returns once the store's uncommitted bytes are within the
// limit, asking for a checkpoint (which commits them) if they are not. A
// source reader calls it before reading more, without holding anything a
// barrier injection needs, so that the checkpoint it waits for can pass.
// It returns false if stop is closed or the engine closes first.
func (e *Engine) awaitStateRoom(stop <-chan struct{}) bool {
	bp := &e.backpressure
	if bp.limit <= 0 || e.store.UncommittedBytes() <= bp.limit {
		return true
	}
	start := time.Now()
	defer func() { bp.waited.Add(int64(time.Since(start))) }()
	e.coord.Checkpoint()
	tick := time.NewTicker(2 * time.Millisecond)
	defer tick.Stop()
	for e.store.UncommittedBytes() > bp.limit {
		select {
		case <-stop:
			return false
		case <-e.ctx.Done():
			return false
		case <-tick.C:
		}
	}
	return true
}

// BackpressureWait returns the time source readers have spent waiting for
// commits (streamsql_source_backpressure_seconds_total).
func (e *Engine) BackpressureWait() time.Duration {
	return time.Duration(e.backpressure.waited.Load())
}
