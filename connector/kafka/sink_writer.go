package kafka

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/streamsql/streamsql/barrier"
	"github.com/streamsql/streamsql/catalog"
	"github.com/streamsql/streamsql/connector/jsonenc"
	"github.com/streamsql/streamsql/connector/outbox"
	"github.com/streamsql/streamsql/exec"
	"github.com/streamsql/streamsql/state"
)

// Committer tells when epochs commit: the checkpoint coordinator.
type Committer = outbox.Committer

// SinkEnv is what a Kafka sink needs from the engine.
type SinkEnv struct {
	// Outbox is the sink's own state table, written and sealed on the
	// sink's actor goroutine only.
	Outbox  *state.Table
	Commits Committer
	Log     *slog.Logger
}

// Sink is the exec.SinkWriter of connector 'kafka'.
//
// Exactly once through an outbox (package outbox). Write encodes changes
// into chunks of records kept in memory; Barrier(n) puts epoch n's chunks
// into the outbox, part of checkpoint n, and hands them to delivery, which
// waits until epoch n is committed, then produces the chunks of the
// committed epochs and a progress record naming the last of them, in one
// Kafka transaction under the sink's stable transactional.id, and commits
// it.
//
// After a crash the outbox's committed state holds exactly the committed
// epochs not known to be delivered; a new producer with the same
// transactional.id fences (aborts) any transaction the old one left open,
// the last epoch of a committed transaction is read back from the progress
// topic (read_committed), and the outbox epochs after it are delivered
// again. Epochs that were not committed never reach the outbox's committed
// state, so they are not delivered: the dataflow replays them.
//
// Delivery runs on its own goroutine and never blocks Barrier; a broker
// outage is retried with backoff while the undelivered epochs stay in the
// outbox and in memory, up to SinkConfig.MaxOutboxBytes, past which
// Barrier fails the sink.
type Sink struct {
	cfg *SinkConfig
	enc encoder
	// chunks are the current epoch's encoded records; bytes their size.
	chunks [][]byte
	bytes  int64
	w      *outbox.Writer
	d      *outbox.Delivery
	// bytesPerRow is the last batch's encoded size per row.
	bytesPerRow int
}

// NewSink returns the writer of a Kafka sink over rel, whose changes have
// rel's columns, and starts its delivery goroutine. The epochs left in the
// outbox by an earlier run are queued for delivery.
func NewSink(cfg *SinkConfig, rel *catalog.Relation, env SinkEnv) (*Sink, error) {
	s := &Sink{cfg: cfg}
	s.enc = encoder{format: cfg.Format, nowMillis: func() int64 { return time.Now().UnixMilli() }}
	var names []string
	var cols []int
	for i, c := range rel.Columns {
		s.enc.types = append(s.enc.types, c.Type)
		if !c.Hidden {
			names, cols = append(names, c.Name), append(cols, i)
		}
	}
	s.enc.value = jsonenc.NewRow(names, cols)
	if len(cfg.PrimaryKey) > 0 {
		var keyCols []int
		for _, k := range cfg.PrimaryKey {
			keyCols = append(keyCols, columnIndex(rel.Columns, k))
		}
		s.enc.key = jsonenc.NewRow(cfg.PrimaryKey, keyCols)
	}
	pending, err := outbox.Read(env.Outbox)
	if err != nil {
		return nil, fmt.Errorf("kafka sink %s: reading its outbox: %w", cfg.Name, err)
	}
	dcfg := outbox.Config{Name: "kafka sink " + cfg.Name, Dest: fmt.Sprint(cfg.Brokers), MaxBytes: cfg.MaxOutboxBytes, MaxBatchBytes: maxTxnBytes}
	s.d = outbox.Start(dcfg, &target{cfg: cfg}, env.Commits, env.Log, pending)
	s.w = outbox.NewWriter(env.Outbox, s.d)
	return s, nil
}

// Write encodes b's changes.
func (s *Sink) Write(_ context.Context, b *exec.Batch) error {
	if int(b.Rec.NumCols()) != len(s.enc.types) {
		return fmt.Errorf("kafka sink %s: a batch of %d columns, want %d", s.cfg.Name, b.Rec.NumCols(), len(s.enc.types))
	}
	// Sized as the last batch's bytes per row, so appends seldom regrow it.
	chunk, n := s.enc.encodeBatch(make([]byte, 0, s.bytesPerRow*b.Len()+64), b)
	if b.Len() > 0 {
		s.bytesPerRow = len(chunk)/b.Len() + 1
	}
	if n > 0 {
		s.chunks = append(s.chunks, chunk)
		s.bytes += int64(len(chunk))
	}
	return nil
}

// Barrier ends epoch b.Epoch: its records go into the outbox and to
// delivery.
func (s *Sink) Barrier(_ context.Context, b *barrier.Barrier) error {
	if err := s.w.Barrier(b.Epoch, s.chunks, s.bytes); err != nil {
		return err
	}
	s.chunks, s.bytes = nil, 0
	return nil
}

// DeliveryError returns the last delivery error if nothing was delivered
// since, else nil.
func (s *Sink) DeliveryError() error { return s.d.Err() }

// Close stops delivery. Epochs not delivered stay in the outbox for the
// next start (or are cleared with the sink when it is dropped).
func (s *Sink) Close() { s.d.Close() }

var errCorruptChunk = errors.New("kafka sink: corrupt outbox chunk")
