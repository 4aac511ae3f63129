package exec

import (
	"context"
	"sync/atomic"

	"github.com/streamsql/streamsql/barrier"
)

// SinkWriter is where a sink's change stream goes: a connector's writer.
//
// Contract: Write and Barrier are called on the sink's actor goroutine, in
// stream order. Write is given one batch of changes (ops and rows, in the
// order the view would apply them); the batch stays owned by the caller
// and is valid only during the call. Barrier says that every change of
// epoch b.Epoch has been written; a writer that buffers flushes, or
// prepares the epoch, there. An error from either fails the sink's
// dataflow.
type SinkWriter interface {
	Write(ctx context.Context, b *Batch) error
	Barrier(ctx context.Context, b *barrier.Barrier) error
	Close()
}

// Sink is the last operator of a sink's dataflow: it hands every change to
// its writer and forwards nothing but barriers. Rows counts the rows
// written (changes, an update being two).
type Sink struct {
	w    SinkWriter
	rows *atomic.Int64
}

// NewSink returns a Sink writing to w and counting into rows.
func NewSink(w SinkWriter, rows *atomic.Int64) *Sink { return &Sink{w: w, rows: rows} }

// OnBatch writes b.
func (s *Sink) OnBatch(ctx context.Context, b *Batch, _ Output) error {
	defer b.Release()
	if err := s.w.Write(ctx, b); err != nil {
		return err
	}
	s.rows.Add(int64(b.Len()))
	return nil
}

// OnBarrier ends the writer's epoch.
func (s *Sink) OnBarrier(ctx context.Context, b *barrier.Barrier, _ Output) error {
	return s.w.Barrier(ctx, b)
}

// Close closes the writer.
func (s *Sink) Close() { s.w.Close() }

// Blackhole is the SinkWriter of connector 'blackhole': it drops every
// change, so that a sink measures the dataflow alone.
type Blackhole struct{}

func (Blackhole) Write(context.Context, *Batch) error             { return nil }
func (Blackhole) Barrier(context.Context, *barrier.Barrier) error { return nil }
func (Blackhole) Close()                                          {}
