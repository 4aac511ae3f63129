package kafka

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/streamsql/streamsql/connector/outbox"
	"github.com/twmb/franz-go/pkg/kgo"
)

// Delivery limits.
const (
	// maxTxnBytes bounds the records of one transaction: committed epochs
	// are grouped into one transaction up to it (an epoch is never split).
	maxTxnBytes = 32 << 20
	// deliveryTimeout bounds one attempt's produce and commit.
	deliveryTimeout = 30 * time.Second
)

// target is the outbox.Target of a Kafka sink: it produces batches of
// committed epochs and a progress record naming the last of them, in one
// transaction if exactly once.
type target struct {
	cfg  *SinkConfig
	cl   *kgo.Client   // nil until connected, and after a failure
	recs []kgo.Record  // reused across transactions
	ptrs []*kgo.Record // the same, for ProduceSync
}

// Connect creates the producer, fences its predecessors (exactly once),
// and reads the last delivered epoch from the progress topic.
func (t *target) Connect(ctx context.Context) (uint64, error) {
	opts, err := t.cfg.Security.ClientOpts()
	if err != nil {
		return 0, err
	}
	opts = append(opts,
		kgo.SeedBrokers(t.cfg.Brokers...),
		kgo.DefaultProduceTopic(t.cfg.Topic),
		kgo.RecordDeliveryTimeout(deliveryTimeout),
		kgo.ProducerBatchMaxBytes(4<<20),
	)
	if t.cfg.ExactlyOnce {
		opts = append(opts, kgo.TransactionalID(t.cfg.TransactionalID), kgo.TransactionTimeout(time.Minute))
	} else {
		opts = append(opts, kgo.DisableIdempotentWrite()) // brokers without transactions may lack it too
	}
	cl, err := kgo.NewClient(opts...)
	if err != nil {
		return 0, err
	}
	ctx, cancel := context.WithTimeout(ctx, deliveryTimeout)
	defer cancel()
	if t.cfg.ExactlyOnce {
		// InitProducerID: aborts a transaction the previous producer of
		// this transactional.id left open, and waits for one it was
		// committing.
		if _, _, err := cl.ProducerID(ctx); err != nil {
			cl.Close()
			return 0, fmt.Errorf("initializing the transactional producer: %w", err)
		}
	}
	epoch, err := readProgress(ctx, cl, t.cfg)
	if err != nil {
		cl.Close()
		return 0, fmt.Errorf("reading progress topic %s: %w", t.cfg.ProgressTopic, err)
	}
	t.cl = cl
	return epoch, nil
}

// Disconnect closes the producer: a new one fences whatever this one left
// open and reads back what was committed.
func (t *target) Disconnect() {
	if t.cl != nil {
		t.cl.Close()
		t.cl = nil
	}
}

// Deliver produces batch and a progress record naming its last epoch, in
// one transaction if exactly once.
func (t *target) Deliver(ctx context.Context, batch []outbox.Epoch) error {
	defer func() { clear(t.recs); clear(t.ptrs) }() // keep no delivered chunk alive
	t.recs = t.recs[:0]
	for _, e := range batch {
		for _, c := range e.Chunks {
			r := chunkReader{rest: c}
			for {
				key, value, ok, err := r.next()
				if err != nil {
					return err
				}
				if !ok {
					break
				}
				t.recs = append(t.recs, kgo.Record{Topic: t.cfg.Topic, Key: key, Value: value})
			}
		}
	}
	last := batch[len(batch)-1].Epoch
	t.recs = append(t.recs, kgo.Record{
		Topic: t.cfg.ProgressTopic,
		Key:   []byte(t.cfg.TransactionalID),
		Value: strconv.AppendUint(nil, last, 10),
	})
	t.ptrs = t.ptrs[:0]
	for i := range t.recs {
		t.ptrs = append(t.ptrs, &t.recs[i])
	}
	ctx, cancel := context.WithTimeout(ctx, deliveryTimeout)
	defer cancel()
	if !t.cfg.ExactlyOnce {
		// At least once: the progress record follows the data, so that a
		// retry after it is seen skips the epochs.
		if err := t.cl.ProduceSync(ctx, t.ptrs[:len(t.ptrs)-1]...).FirstErr(); err != nil {
			return err
		}
		return t.cl.ProduceSync(ctx, t.ptrs[len(t.ptrs)-1]).FirstErr()
	}
	if err := t.cl.BeginTransaction(); err != nil {
		return err
	}
	if err := t.cl.ProduceSync(ctx, t.ptrs...).FirstErr(); err != nil {
		_ = t.cl.EndTransaction(ctx, kgo.TryAbort)
		return err
	}
	// An error here leaves the outcome unknown; Connect (after it) learns
	// it from the progress topic.
	return t.cl.EndTransaction(ctx, kgo.TryCommit)
}
