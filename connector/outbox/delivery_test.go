package outbox

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"runtime"
	"slices"
	"sync"
	"testing"
)

// committer is a Committer whose commits the test makes.
type committer struct {
	mu        sync.Mutex
	committed uint64
	changed   chan struct{}
}

func newCommitter() *committer { return &committer{changed: make(chan struct{})} }

func (c *committer) commit(epoch uint64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.committed = epoch
	close(c.changed)
	c.changed = make(chan struct{})
}

func (c *committer) Committed() uint64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.committed
}

func (c *committer) WaitCommitted(ctx context.Context, epoch uint64) error {
	for {
		c.mu.Lock()
		done, ch := c.committed >= epoch, c.changed
		c.mu.Unlock()
		if done {
			return nil
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// fakeTarget records delivered epochs; it fails the deliveries the test
// asks it to, and reports on Connect the last epoch it holds.
type fakeTarget struct {
	mu        sync.Mutex
	held      []uint64
	failNext  int
	connects  int
	delivered chan struct{}
}

func (f *fakeTarget) Connect(context.Context) (uint64, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.connects++
	if len(f.held) == 0 {
		return 0, nil
	}
	return f.held[len(f.held)-1], nil
}

func (f *fakeTarget) Deliver(_ context.Context, batch []Epoch) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.failNext > 0 {
		f.failNext--
		return errors.New("target down")
	}
	for _, e := range batch {
		f.held = append(f.held, e.Epoch)
	}
	f.delivered <- struct{}{}
	return nil
}

func (f *fakeTarget) Disconnect() {}

func (f *fakeTarget) epochs() []uint64 {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.held)
}

// TestDelivery delivers only committed epochs, in order, each once: the
// pending epochs the target already holds are dropped at Connect, a failed
// delivery is retried after a new Connect, and the queue limit refuses an
// epoch past it.
func TestDelivery(t *testing.T) {
	c := newCommitter()
	f := &fakeTarget{held: []uint64{1, 2}, failNext: 1, delivered: make(chan struct{}, 10)}
	pending := []Epoch{{Epoch: 2, Bytes: 1}, {Epoch: 3, Bytes: 1}}
	d := Start(Config{Name: "sink s", Dest: "x", MaxBytes: 4, MaxBatchBytes: 100}, f, c, slog.New(slog.NewTextHandler(io.Discard, nil)), pending)
	defer d.Close()
	if err := d.add(Epoch{Epoch: 5, Bytes: 2}); err != nil {
		t.Fatal(err)
	}
	if err := d.add(Epoch{Epoch: 6, Bytes: 2}); err == nil {
		t.Fatal("an epoch past MaxBytes was queued")
	}
	c.commit(3)
	<-f.delivered
	if got := f.epochs(); !slices.Equal(got, []uint64{1, 2, 3}) {
		t.Fatalf("target holds %v, want [1 2 3]", got)
	}
	for d.Delivered() < 3 { // set once Deliver has returned
		runtime.Gosched()
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.connects != 2 || d.Delivered() != 3 || d.Err() != nil {
		t.Fatalf("connects %d, delivered %d, err %v; want 2, 3, nil (one retry)", f.connects, d.Delivered(), d.Err())
	}
}
