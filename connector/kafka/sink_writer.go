package kafka

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"github.com/streamsql/streamsql/connector/jsonenc"
	"log/slog"
	"time"

	"github.com/streamsql/streamsql/barrier"
	"github.com/streamsql/streamsql/catalog"
	"github.com/streamsql/streamsql/exec"
	"github.com/streamsql/streamsql/state"
)

// Committer tells when epochs commit: the checkpoint coordinator.
type Committer interface {
	// WaitCommitted blocks until epoch is committed, ctx is done or the
	// coordinator stops.
	WaitCommitted(ctx context.Context, epoch uint64) error
	// Committed returns the last committed epoch.
	Committed() uint64
}

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
// Exactly once through an outbox. Write encodes changes into chunks of
// records kept in memory; Barrier(n) puts epoch n's chunks into the outbox
// table under (n, seq), seals the table for n (so they are part of
// checkpoint n) and hands them to the delivery goroutine. Delivery waits
// until epoch n is committed, then produces the chunks of the committed
// epochs and a progress record naming the last of them, in one Kafka
// transaction under the sink's stable transactional.id, and commits it.
// The next Barrier deletes the delivered epochs from the outbox.
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
	cfg    *SinkConfig
	enc    encoder
	outbox *state.Table
	// chunks are the current epoch's encoded records; bytes their size.
	chunks [][]byte
	bytes  int64
	// deleted is the last epoch deleted from the outbox.
	deleted uint64
	d       *delivery
	keyBuf  []byte
	// bytesPerRow is the last batch's encoded size per row.
	bytesPerRow int
}

// NewSink returns the writer of a Kafka sink over rel, whose changes have
// rel's columns, and starts its delivery goroutine. The epochs left in the
// outbox by an earlier run are queued for delivery.
func NewSink(cfg *SinkConfig, rel *catalog.Relation, env SinkEnv) (*Sink, error) {
	s := &Sink{cfg: cfg, outbox: env.Outbox}
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
	pending, err := readOutbox(env.Outbox)
	if err != nil {
		return nil, fmt.Errorf("kafka sink %s: reading its outbox: %w", cfg.Name, err)
	}
	s.d = startDelivery(cfg, env.Commits, env.Log, pending)
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
// delivery, and the epochs delivered since the last barrier leave the
// outbox.
func (s *Sink) Barrier(_ context.Context, b *barrier.Barrier) error {
	if d := s.d.deliveredEpoch(); d > s.deleted {
		s.outbox.DeleteRange(nil, outboxKey(nil, d+1, 0))
		s.deleted = d
	}
	if len(s.chunks) > 0 {
		// Delivery waits for the epoch to commit, which it cannot before
		// this returns: queueing first leaves no outbox writes behind if
		// the queue is full.
		err := s.d.add(epochChunks{epoch: b.Epoch, chunks: s.chunks, bytes: s.bytes})
		if err != nil {
			return err
		}
		for i, c := range s.chunks {
			s.keyBuf = outboxKey(s.keyBuf[:0], b.Epoch, uint32(i))
			s.outbox.Put(s.keyBuf, c)
		}
		s.chunks, s.bytes = nil, 0
	}
	s.outbox.Seal(b.Epoch)
	return nil
}

// Close stops delivery. Epochs not delivered stay in the outbox for the
// next start (or are cleared with the sink when it is dropped).
func (s *Sink) Close() { s.d.close() }

// outboxKey appends the outbox key of chunk seq of epoch: both big-endian,
// so the outbox is in epoch order.
func outboxKey(buf []byte, epoch uint64, seq uint32) []byte {
	buf = binary.BigEndian.AppendUint64(buf, epoch)
	return binary.BigEndian.AppendUint32(buf, seq)
}

var errCorruptChunk = errors.New("kafka sink: corrupt outbox chunk")

// readOutbox returns the outbox's epochs, in order. It runs before the
// sink's actor starts, so it reads the table as its owner.
func readOutbox(t *state.Table) ([]epochChunks, error) {
	it, err := t.NewIter(nil, nil)
	if err != nil {
		return nil, err
	}
	defer it.Close()
	var out []epochChunks
	for ok := it.First(); ok; ok = it.Next() {
		k := it.Key()
		if len(k) != 12 {
			return nil, fmt.Errorf("outbox key %x", k)
		}
		epoch := binary.BigEndian.Uint64(k)
		if len(out) == 0 || out[len(out)-1].epoch != epoch {
			out = append(out, epochChunks{epoch: epoch})
		}
		e := &out[len(out)-1]
		c := append([]byte(nil), it.Value()...)
		e.chunks = append(e.chunks, c)
		e.bytes += int64(len(c))
	}
	return out, it.Error()
}

// epochChunks are the encoded records of one epoch.
type epochChunks struct {
	epoch  uint64
	chunks [][]byte
	bytes  int64
}
