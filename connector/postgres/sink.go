package postgres

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/streamsql/streamsql/barrier"
	"github.com/streamsql/streamsql/connector/outbox"
	"github.com/streamsql/streamsql/exec"
	"github.com/streamsql/streamsql/state"
)

// Delivery limits.
const (
	// chunkBytes is the size past which an epoch's lines start a new
	// chunk (an outbox value).
	chunkBytes = 1 << 20
	// maxBatchBytes bounds the lines applied in one PostgreSQL
	// transaction: committed epochs are grouped up to it.
	maxBatchBytes = 32 << 20
)

// Env is what a PostgreSQL sink needs from the engine.
type Env struct {
	// Outbox is the sink's own state table, written and sealed on the
	// sink's actor goroutine only.
	Outbox  *state.Table
	Commits outbox.Committer
	Log     *slog.Logger
}

// Sink is the exec.SinkWriter of connector 'postgres'.
//
// Exactly once through an outbox (package outbox): Write encodes changes
// into COPY text lines; Barrier(n) puts epoch n's lines into the outbox,
// part of checkpoint n, and queues them for delivery, which waits until
// epoch n commits and then applies the committed epochs in one PostgreSQL
// transaction that also sets the sink's row of the progress table to the
// last of them. After a crash the epochs in the outbox above the progress
// row are applied again; those at or below it are dropped.
//
// A PostgreSQL that is down is retried with backoff, while the dataflow
// goes on and the committed epochs wait in the outbox, up to
// Config.MaxOutboxBytes.
type Sink struct {
	cfg *Config
	enc encoder
	// chunks are the current epoch's lines, bytes their size.
	chunks [][]byte
	bytes  int64
	w      *outbox.Writer
	d      *outbox.Delivery
}

// NewSink returns the writer of a PostgreSQL sink and starts its delivery.
// The epochs left in the outbox by an earlier run are queued for delivery.
func NewSink(cfg *Config, env Env) (*Sink, error) {
	pending, err := outbox.Read(env.Outbox)
	if err != nil {
		return nil, fmt.Errorf("postgres sink %s: reading its outbox: %w", cfg.Name, err)
	}
	s := &Sink{cfg: cfg, enc: encoder{cols: cfg.Columns, upsert: cfg.Upsert}}
	dcfg := outbox.Config{Name: "postgres sink " + cfg.Name, Dest: cfg.addr(), MaxBytes: cfg.MaxOutboxBytes, MaxBatchBytes: maxBatchBytes}
	s.d = outbox.Start(dcfg, &target{cfg: cfg}, env.Commits, env.Log, pending)
	s.w = outbox.NewWriter(env.Outbox, s.d)
	return s, nil
}

// Write encodes b's changes.
func (s *Sink) Write(_ context.Context, b *exec.Batch) error {
	if n := len(s.cfg.Columns); n > 0 && int(b.Rec.NumCols()) <= s.cfg.Columns[n-1].Index {
		return fmt.Errorf("postgres sink %s: a batch of %d columns, want %d", s.cfg.Name, b.Rec.NumCols(), s.cfg.Columns[n-1].Index+1)
	}
	var cur []byte
	if n := len(s.chunks); n > 0 && len(s.chunks[n-1]) < chunkBytes {
		cur, s.chunks = s.chunks[n-1], s.chunks[:n-1]
	}
	before := len(cur)
	cur, _ = s.enc.encodeBatch(cur, b)
	s.bytes += int64(len(cur) - before)
	if len(cur) > 0 {
		s.chunks = append(s.chunks, cur)
	}
	return nil
}

// Barrier ends epoch b.Epoch: its lines go into the outbox and to
// delivery.
func (s *Sink) Barrier(_ context.Context, b *barrier.Barrier) error {
	if err := s.w.Barrier(b.Epoch, s.chunks, s.bytes); err != nil {
		return err
	}
	s.chunks, s.bytes = nil, 0
	return nil
}

// DeliveryError returns the last delivery error if PostgreSQL has not
// been written since, else nil.
func (s *Sink) DeliveryError() error { return s.d.Err() }

// Close stops delivery. Epochs not applied stay in the outbox for the next
// start.
func (s *Sink) Close() { s.d.Close() }
