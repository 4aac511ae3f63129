package barrier

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"
)

// recordingSource records the barriers injected into it.
type recordingSource struct {
	mu       sync.Mutex
	barriers []*Barrier
	injected chan uint64
}

func newRecordingSource() *recordingSource {
	return &recordingSource{injected: make(chan uint64, 100)}
}

func (s *recordingSource) Inject(_ context.Context, b *Barrier) error {
	s.mu.Lock()
	s.barriers = append(s.barriers, b)
	s.mu.Unlock()
	s.injected <- b.Epoch
	return nil
}

type commitLog struct {
	mu      sync.Mutex
	epochs  []uint64
	failing int // fail this many commits first
}

func (l *commitLog) commit(e uint64) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.failing > 0 {
		l.failing--
		return errors.New("disk full")
	}
	l.epochs = append(l.epochs, e)
	return nil
}

func (l *commitLog) get() []uint64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]uint64(nil), l.epochs...)
}

func newTestCoordinator(t *testing.T, log *commitLog, opts Options) (*Coordinator, *recordingSource) {
	opts.Interval = time.Hour // only explicit barriers
	opts.Commit = log.commit
	c := NewCoordinator(0, opts)
	src := newRecordingSource()
	c.AddSource(src)
	c.Start()
	t.Cleanup(c.Stop)
	return c, src
}

func wait(t *testing.T, c *Coordinator, epoch uint64) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := c.WaitCommitted(ctx, epoch); err != nil {
		t.Fatalf("waiting for epoch %d: %v", epoch, err)
	}
}

func statusOf(c *Coordinator, epoch uint64) string {
	for _, r := range c.History() {
		if r.Epoch == epoch {
			return r.Status
		}
	}
	return ""
}

// TestCoordinatorCommitsAfterAllAcks checks that an epoch commits only once
// every actor expected for it has acknowledged it, and that an actor added by
// a Change is expected from the next epoch on.
func TestCoordinatorCommitsAfterAllAcks(t *testing.T) {
	log := &commitLog{}
	c, src := newTestCoordinator(t, log, Options{})
	e := c.Schedule(Change{AddActors: []uint32{7}})
	wait(t, c, e) // no actor expected for the epoch that adds it
	e2 := c.Checkpoint()
	<-src.injected
	<-src.injected
	if got := log.get(); len(got) != 1 {
		t.Fatalf("committed %v before actor 7 acknowledged epoch %d", got, e2)
	}
	c.Ack(7, e2)
	wait(t, c, e2)
	if got := log.get(); len(got) != 2 || got[1] != e2 {
		t.Fatalf("commits %v", got)
	}
	if s := statusOf(c, e2); s != StatusCompleted {
		t.Fatalf("status %q", s)
	}
}

// TestCoordinatorSubsumesAbandonedEpoch checks that an epoch an actor skipped
// (it acknowledged a later one) is committed together with that later one.
func TestCoordinatorSubsumesAbandonedEpoch(t *testing.T) {
	log := &commitLog{}
	c, src := newTestCoordinator(t, log, Options{MaxInFlight: 2})
	c.AddRunningActor(1)
	e1 := c.Checkpoint()
	<-src.injected
	c.Trigger(e1 + 1)
	<-src.injected
	c.Ack(1, e1+1) // alignment of e1 abandoned
	wait(t, c, e1+1)
	if got := log.get(); len(got) != 1 || got[0] != e1+1 {
		t.Fatalf("commits %v, want only %d", got, e1+1)
	}
	if s := statusOf(c, e1); s != StatusSubsumed {
		t.Fatalf("epoch %d status %q, want %s", e1, s, StatusSubsumed)
	}
}

// TestCoordinatorTimeout checks that a checkpoint that does not complete in
// time is reported and stops holding back the next barrier.
func TestCoordinatorTimeout(t *testing.T) {
	log := &commitLog{}
	c, src := newTestCoordinator(t, log, Options{Timeout: 20 * time.Millisecond})
	c.AddRunningActor(1)
	e1 := c.Checkpoint()
	<-src.injected
	// With one checkpoint in flight, the next barrier waits until e1 times out.
	c.Trigger(e1 + 1)
	for {
		if got := <-src.injected; got == e1+1 {
			break
		}
	}
	if s := statusOf(c, e1); s != StatusTimedOut {
		t.Fatalf("epoch %d status %q, want %s", e1, s, StatusTimedOut)
	}
	c.Ack(1, e1)
	c.Ack(1, e1+1)
	wait(t, c, e1+1)
}

// TestCoordinatorRetriesFailedCommit checks that a failing commit is
// reported and retried until it succeeds.
func TestCoordinatorRetriesFailedCommit(t *testing.T) {
	log := &commitLog{failing: 2}
	c, _ := newTestCoordinator(t, log, Options{})
	e := c.Checkpoint()
	wait(t, c, e)
	if got := log.get(); len(got) != 1 || got[0] != e {
		t.Fatalf("commits %v", got)
	}
	if c.LastError() != nil {
		t.Fatalf("last error %v after success", c.LastError())
	}
}

// TestCoordinatorStopWakesWaiters checks that waiters return when the
// coordinator stops.
func TestCoordinatorStopWakesWaiters(t *testing.T) {
	log := &commitLog{}
	c := NewCoordinator(0, Options{Interval: time.Hour, Commit: log.commit})
	c.AddRunningActor(1)
	c.Start()
	e := c.Checkpoint()
	done := make(chan error, 1)
	go func() { done <- c.WaitCommitted(context.Background(), e) }()
	c.Stop()
	if err := <-done; !errors.Is(err, ErrStopped) {
		t.Fatalf("got %v", err)
	}
}
