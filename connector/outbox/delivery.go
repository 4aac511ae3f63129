package outbox

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"
)

// Retry bounds: the wait before a failed delivery is tried again.
const (
	minBackoff = 100 * time.Millisecond
	maxBackoff = 10 * time.Second
)

// Committer tells when epochs commit: the checkpoint coordinator.
type Committer interface {
	// WaitCommitted blocks until epoch is committed, ctx is done or the
	// coordinator stops.
	WaitCommitted(ctx context.Context, epoch uint64) error
	// Committed returns the last committed epoch.
	Committed() uint64
}

// Target is the external system a Delivery writes to. Its methods are
// called on the delivery goroutine only.
type Target interface {
	// Connect connects (again, after a failure) and returns the last epoch
	// the target holds, read back from it. It must fence whatever an
	// earlier connection left open, so that no older write commits after
	// it returns.
	Connect(ctx context.Context) (delivered uint64, err error)
	// Deliver writes batch, committed epochs in order, and the record that
	// its last epoch is delivered, atomically. An error may leave the
	// outcome unknown: Connect, which follows it, learns it.
	Deliver(ctx context.Context, batch []Epoch) error
	// Disconnect drops the connection (after a failure, or at Close).
	Disconnect()
}

// Config is a Delivery's configuration.
type Config struct {
	// Name names the sink in errors and logs ("kafka sink s").
	Name string
	// Dest names the target in errors (its address).
	Dest string
	// MaxBytes bounds the chunks of the epochs not yet delivered
	// (sink.outbox.max.bytes).
	MaxBytes int64
	// MaxBatchBytes bounds the chunks handed to one Deliver: committed
	// epochs are grouped up to it (an epoch is never split).
	MaxBatchBytes int64
}

// Delivery delivers a sink's committed epochs to its Target, in epoch
// order, on its own goroutine. It never blocks the sink's barriers: a
// failure is retried with backoff (100 ms doubling to 10 s) while the
// undelivered epochs stay queued, up to Config.MaxBytes.
//
// Goroutine safety: add, Delivered, Err and Close may be called from any
// goroutine (the sink's actor, the engine's status queries); everything
// else runs on the delivery goroutine.
type Delivery struct {
	cfg     Config
	target  Target
	commits Committer
	log     *slog.Logger

	mu sync.Mutex
	// queue holds the epochs not yet delivered, in order; queued is the
	// size of their chunks.
	queue   []Epoch
	queued  int64
	lastErr error
	wake    chan struct{}

	// delivered is the last epoch known to be in the target.
	delivered atomic.Uint64

	ctx       context.Context
	cancel    context.CancelFunc
	done      chan struct{}
	connected bool
}

// Start starts delivering pending (the epochs an earlier run left in the
// outbox) and the epochs added later.
func Start(cfg Config, target Target, commits Committer, log *slog.Logger, pending []Epoch) *Delivery {
	d := &Delivery{cfg: cfg, target: target, commits: commits, log: log, wake: make(chan struct{}, 1), done: make(chan struct{})}
	for _, e := range pending {
		d.queue = append(d.queue, e)
		d.queued += e.Bytes
	}
	d.ctx, d.cancel = context.WithCancel(context.Background())
	go d.run()
	return d
}

// add queues an epoch for delivery once it commits. It fails if the
// undelivered epochs would exceed Config.MaxBytes.
func (d *Delivery) add(e Epoch) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.queued+e.Bytes > d.cfg.MaxBytes {
		return fmt.Errorf("%s: %d bytes of changes are waiting for delivery to %s, over sink.outbox.max.bytes = %d (last delivery error: %v)",
			d.cfg.Name, d.queued+e.Bytes, d.cfg.Dest, d.cfg.MaxBytes, d.lastErr)
	}
	d.queue = append(d.queue, e)
	d.queued += e.Bytes
	select {
	case d.wake <- struct{}{}:
	default:
	}
	return nil
}

// Delivered returns the last epoch known to be delivered.
func (d *Delivery) Delivered() uint64 { return d.delivered.Load() }

// Err returns the error of the last delivery attempt if it failed and no
// attempt has succeeded since, else nil.
func (d *Delivery) Err() error {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.lastErr
}

// Close stops the goroutine and disconnects the target.
func (d *Delivery) Close() {
	d.cancel()
	<-d.done
}

func (d *Delivery) run() {
	defer close(d.done)
	defer func() {
		if d.connected {
			d.target.Disconnect()
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
		d.log.Warn("sink delivery failed; retrying", "sink", d.cfg.Name, "err", err, "backoff", backoff)
		if d.connected {
			d.target.Disconnect()
			d.connected = false
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
func (d *Delivery) step() error {
	if !d.connected {
		if err := d.connect(); err != nil {
			return err
		}
	}
	batch := d.next()
	if len(batch) == 0 {
		return nil
	}
	if err := d.target.Deliver(d.ctx, batch); err != nil {
		return err
	}
	last := batch[len(batch)-1].Epoch
	d.mu.Lock()
	for range batch {
		d.queued -= d.queue[0].Bytes
		d.queue[0] = Epoch{} // keep no delivered chunk alive
		d.queue = d.queue[1:]
	}
	d.lastErr = nil
	d.mu.Unlock()
	d.delivered.Store(last)
	return nil
}

// next waits for the oldest queued epoch to commit and returns the
// committed epochs from it, up to Config.MaxBatchBytes. It returns nothing
// when the goroutine is to stop.
func (d *Delivery) next() []Epoch {
	for {
		d.mu.Lock()
		var first uint64
		if len(d.queue) > 0 {
			first = d.queue[0].Epoch
		}
		d.mu.Unlock()
		if first == 0 {
			select {
			case <-d.wake:
				continue
			case <-d.ctx.Done():
				return nil
			}
		}
		if err := d.commits.WaitCommitted(d.ctx, first); err != nil {
			<-d.ctx.Done() // the coordinator stopped: so does the server
			return nil
		}
		committed := d.commits.Committed()
		d.mu.Lock()
		defer d.mu.Unlock()
		var n int64
		for i, e := range d.queue {
			if e.Epoch > committed || (i > 0 && n+e.Bytes > d.cfg.MaxBatchBytes) {
				return d.queue[:i:i]
			}
			n += e.Bytes
		}
		return d.queue[:len(d.queue):len(d.queue)]
	}
}

// connect connects the target, clears the last error (the target is
// back) and drops from the queue the epochs it already holds.
func (d *Delivery) connect() error {
	epoch, err := d.target.Connect(d.ctx)
	if err != nil {
		return err
	}
	d.connected = true
	d.mu.Lock()
	d.lastErr = nil
	for len(d.queue) > 0 && d.queue[0].Epoch <= epoch {
		d.queued -= d.queue[0].Bytes
		d.queue = d.queue[1:]
	}
	d.mu.Unlock()
	if epoch > d.delivered.Load() {
		d.delivered.Store(epoch)
	}
	return nil
}
