package kafka

import (
	"context"
	"fmt"
	"log/slog"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

// Delivery limits.
const (
	// maxTxnBytes bounds the records of one transaction: committed epochs
	// are grouped into one transaction up to it (an epoch is never split).
	maxTxnBytes = 32 << 20
	// minBackoff and maxBackoff bound the wait before a failed delivery is
	// tried again.
	minBackoff = 100 * time.Millisecond
	maxBackoff = 10 * time.Second
	// deliveryTimeout bounds one attempt's produce and commit.
	deliveryTimeout = 30 * time.Second
)

// delivery produces a sink's committed epochs to Kafka, in epoch order, on
// its own goroutine (see Sink).
//
// Goroutine safety: add, deliveredEpoch and close are called by the sink's
// actor; everything else runs on the delivery goroutine.
type delivery struct {
	cfg     *SinkConfig
	commits Committer
	log     *slog.Logger

	mu sync.Mutex
	// queue holds the epochs not yet delivered, in order; queued is the
	// size of their chunks.
	queue   []epochChunks
	queued  int64
	lastErr error
	wake    chan struct{}

	// delivered is the last epoch known to be in Kafka.
	delivered atomic.Uint64

	ctx    context.Context
	cancel context.CancelFunc
	done   chan struct{}

	cl   *kgo.Client   // nil until connected, and after a failure
	recs []kgo.Record  // reused across transactions
	ptrs []*kgo.Record // the same, for ProduceSync
}

func startDelivery(cfg *SinkConfig, commits Committer, log *slog.Logger, pending []epochChunks) *delivery {
	d := &delivery{cfg: cfg, commits: commits, log: log, wake: make(chan struct{}, 1), done: make(chan struct{})}
	for _, e := range pending {
		d.queue = append(d.queue, e)
		d.queued += e.bytes
	}
	d.ctx, d.cancel = context.WithCancel(context.Background())
	go d.run()
	return d
}

// add queues an epoch for delivery once it commits. It fails if the
// undelivered epochs would exceed the outbox limit.
func (d *delivery) add(e epochChunks) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.queued+e.bytes > d.cfg.MaxOutboxBytes {
		return fmt.Errorf("kafka sink %s: %d bytes of changes are waiting for delivery to %v, over sink.outbox.max.bytes = %d (last delivery error: %v)",
			d.cfg.Name, d.queued+e.bytes, d.cfg.Brokers, d.cfg.MaxOutboxBytes, d.lastErr)
	}
	d.queue = append(d.queue, e)
	d.queued += e.bytes
	select {
	case d.wake <- struct{}{}:
	default:
	}
	return nil
}

// deliveredEpoch returns the last epoch known to be delivered.
func (d *delivery) deliveredEpoch() uint64 { return d.delivered.Load() }

// close stops the goroutine and closes the client.
func (d *delivery) close() {
	d.cancel()
	<-d.done
}

func (d *delivery) run() {
	defer close(d.done)
	defer func() {
		if d.cl != nil {
			d.cl.Close()
		}
	}()
	backoff := minBackoff
	for {
		err := d.step()
		if d.ctx.Err() != nil {
			return
		}
		if err == nil {
			backoff = minBackoff
			continue
		}
		d.mu.Lock()
		d.lastErr = err
		d.mu.Unlock()
		d.log.Warn("kafka sink delivery failed; retrying", "sink", d.cfg.Name, "err", err, "backoff", backoff)
		if d.cl != nil {
			// A new producer fences whatever this one left open and reads
			// back what was committed.
			d.cl.Close()
			d.cl = nil
		}
		select {
		case <-time.After(backoff):
		case <-d.ctx.Done():
			return
		}
		backoff = min(2*backoff, maxBackoff)
	}
}

// step connects if needed, then waits for committed epochs and delivers
// them.
func (d *delivery) step() error {
	if d.cl == nil {
		if err := d.connect(); err != nil {
			return err
		}
	}
	batch, err := d.next()
	if err != nil || len(batch) == 0 {
		return err
	}
	if err := d.deliver(batch); err != nil {
		return err
	}
	last := batch[len(batch)-1].epoch
	d.mu.Lock()
	for range batch {
		d.queued -= d.queue[0].bytes
		d.queue = d.queue[1:]
	}
	d.lastErr = nil
	d.mu.Unlock()
	d.delivered.Store(last)
	return nil
}

// next waits for the oldest queued epoch to commit and returns the
// committed epochs from it, up to maxTxnBytes. It returns nothing when
// the goroutine is to stop.
func (d *delivery) next() ([]epochChunks, error) {
	for {
		d.mu.Lock()
		var first uint64
		if len(d.queue) > 0 {
			first = d.queue[0].epoch
		}
		d.mu.Unlock()
		if first == 0 {
			select {
			case <-d.wake:
				continue
			case <-d.ctx.Done():
				return nil, nil
			}
		}
		if err := d.commits.WaitCommitted(d.ctx, first); err != nil {
			if d.ctx.Err() != nil {
				return nil, nil
			}
			<-d.ctx.Done() // the coordinator stopped: so does the server
			return nil, nil
		}
		committed := d.commits.Committed()
		d.mu.Lock()
		defer d.mu.Unlock()
		var n int64
		for i, e := range d.queue {
			if e.epoch > committed || (i > 0 && n+e.bytes > maxTxnBytes) {
				return d.queue[:i:i], nil
			}
			n += e.bytes
		}
		return d.queue[:len(d.queue):len(d.queue)], nil
	}
}

// connect creates the producer, fences its predecessors (exactly once),
// and drops from the queue the epochs the progress topic says were
// delivered.
func (d *delivery) connect() error {
	opts, err := d.cfg.Security.ClientOpts()
	if err != nil {
		return err
	}
	opts = append(opts,
		kgo.SeedBrokers(d.cfg.Brokers...),
		kgo.DefaultProduceTopic(d.cfg.Topic),
		kgo.RecordDeliveryTimeout(deliveryTimeout),
		kgo.ProducerBatchMaxBytes(4<<20),
	)
	if d.cfg.ExactlyOnce {
		opts = append(opts, kgo.TransactionalID(d.cfg.TransactionalID), kgo.TransactionTimeout(time.Minute))
	} else {
		opts = append(opts, kgo.DisableIdempotentWrite()) // brokers without transactions may lack it too
	}
	cl, err := kgo.NewClient(opts...)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(d.ctx, deliveryTimeout)
	defer cancel()
	if d.cfg.ExactlyOnce {
		// InitProducerID: aborts a transaction the previous producer of
		// this transactional.id left open, and waits for one it was
		// committing.
		if _, _, err := cl.ProducerID(ctx); err != nil {
			cl.Close()
			return fmt.Errorf("initializing the transactional producer: %w", err)
		}
	}
	epoch, err := readProgress(ctx, cl, d.cfg)
	if err != nil {
		cl.Close()
		return fmt.Errorf("reading progress topic %s: %w", d.cfg.ProgressTopic, err)
	}
	d.cl = cl
	d.mu.Lock()
	for len(d.queue) > 0 && d.queue[0].epoch <= epoch {
		d.queued -= d.queue[0].bytes
		d.queue = d.queue[1:]
	}
	d.mu.Unlock()
	if epoch > d.delivered.Load() {
		d.delivered.Store(epoch)
	}
	return nil
}

// deliver produces batch and a progress record naming its last epoch, in
// one transaction if exactly once.
func (d *delivery) deliver(batch []epochChunks) error {
	defer func() { clear(d.recs); clear(d.ptrs) }() // keep no delivered chunk alive
	d.recs = d.recs[:0]
	for _, e := range batch {
		for _, c := range e.chunks {
			r := chunkReader{rest: c}
			for {
				key, value, ok, err := r.next()
				if err != nil {
					return err
				}
				if !ok {
					break
				}
				d.recs = append(d.recs, kgo.Record{Topic: d.cfg.Topic, Key: key, Value: value})
			}
		}
	}
	last := batch[len(batch)-1].epoch
	d.recs = append(d.recs, kgo.Record{
		Topic: d.cfg.ProgressTopic,
		Key:   []byte(d.cfg.TransactionalID),
		Value: strconv.AppendUint(nil, last, 10),
	})
	d.ptrs = d.ptrs[:0]
	for i := range d.recs {
		d.ptrs = append(d.ptrs, &d.recs[i])
	}
	ctx, cancel := context.WithTimeout(d.ctx, deliveryTimeout)
	defer cancel()
	if !d.cfg.ExactlyOnce {
		// At least once: the progress record follows the data, so that a
		// retry after it is seen skips the epochs.
		if err := d.cl.ProduceSync(ctx, d.ptrs[:len(d.ptrs)-1]...).FirstErr(); err != nil {
			return err
		}
		return d.cl.ProduceSync(ctx, d.ptrs[len(d.ptrs)-1]).FirstErr()
	}
	if err := d.cl.BeginTransaction(); err != nil {
		return err
	}
	if err := d.cl.ProduceSync(ctx, d.ptrs...).FirstErr(); err != nil {
		_ = d.cl.EndTransaction(ctx, kgo.TryAbort)
		return err
	}
	// An error here leaves the outcome unknown; connect (after it) learns
	// it from the progress topic.
	return d.cl.EndTransaction(ctx, kgo.TryCommit)
}
