package barrier

import (
	"context"
	"errors"
	"fmt"
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
	// The timed-out checkpoint is not committed on its own: its changes
	// commit with the next one, and it stays reported as timed out.
	c.Ack(1, e1)
	time.Sleep(20 * time.Millisecond)
	if got := log.get(); len(got) != 0 {
		t.Fatalf("commits %v after the timed-out checkpoint completed", got)
	}
	c.Ack(1, e1+1)
	wait(t, c, e1+1)
	if got := log.get(); len(got) != 1 || got[0] != e1+1 {
		t.Fatalf("commits %v, want %d", got, e1+1)
	}
	if s := statusOf(c, e1); s != StatusTimedOut {
		t.Fatalf("epoch %d status %q after the next commit, want %s", e1, s, StatusTimedOut)
	}
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

// TestCoordinatorCheckpointFrequency checks that with a frequency of 3 only
// every third timer barrier is a checkpoint, that ticks are committed with
// the next checkpoint and are not in the history, and that a barrier somebody
// waits for is always a checkpoint.
func TestCoordinatorCheckpointFrequency(t *testing.T) {
	log := &commitLog{}
	c := NewCoordinator(0, Options{Interval: 5 * time.Millisecond, CheckpointFrequency: 3, Commit: log.commit})
	src := newRecordingSource()
	c.AddSource(src)
	c.Start()
	t.Cleanup(c.Stop)
	// Timer barriers 1..6: 3 and 6 are checkpoints.
	for range 6 {
		<-src.injected
	}
	wait(t, c, 6)
	src.mu.Lock()
	for _, b := range src.barriers[:6] {
		want := Tick
		if b.Epoch%3 == 0 {
			want = Checkpoint
		}
		if b.Kind != want {
			t.Errorf("barrier %d is a %s, want %s", b.Epoch, b.Kind, want)
		}
	}
	src.mu.Unlock()
	if got := log.get(); len(got) < 2 || got[0] != 3 || got[1] != 6 {
		t.Fatalf("commits %v, want 3, 6, ...", got)
	}
	for _, r := range c.History() {
		if r.Epoch%3 != 0 {
			t.Fatalf("tick %d in the history", r.Epoch)
		}
	}
	// An epoch somebody triggers is committed without waiting for the
	// frequency, also when it was injected as a tick.
	e := c.Checkpoint()
	wait(t, c, e)
	src.mu.Lock()
	for _, b := range src.barriers {
		if b.Epoch == e && b.Kind != Checkpoint {
			t.Errorf("requested barrier %d is a %s", e, b.Kind)
		}
	}
	src.mu.Unlock()
	var tick uint64
	for tick == 0 {
		src.mu.Lock()
		if b := src.barriers[len(src.barriers)-1]; b.Kind == Tick {
			tick = b.Epoch
		}
		src.mu.Unlock()
		<-src.injected
	}
	c.Trigger(tick)
	wait(t, c, tick)
}

// TestCoordinatorFatalCommit checks that a commit error wrapping ErrFatal
// stops the coordinator and is what every waiter gets.
func TestCoordinatorFatalCommit(t *testing.T) {
	disk := fmt.Errorf("no space left on device: %w", ErrFatal)
	c := NewCoordinator(0, Options{Interval: time.Hour, Commit: func(uint64) error { return disk }})
	c.Start()
	t.Cleanup(c.Stop)
	e := c.Checkpoint()
	if err := c.WaitCommitted(context.Background(), e); err != disk {
		t.Fatalf("waiting for epoch %d: %v, want %v", e, err, disk)
	}
	if err := c.WaitCommitted(context.Background(), e+5); err != disk {
		t.Fatalf("waiting for a later epoch: %v", err)
	}
	if c.Err() != disk || statusOf(c, e) != StatusFailed {
		t.Fatalf("Err %v, status %q", c.Err(), statusOf(c, e))
	}
}

// TestCheckpointStageTimes checks that a committed checkpoint's record holds
// its injection and alignment times in order, the alignment taken at the
// last actor's acknowledgement, after the injection.
func TestCheckpointStageTimes(t *testing.T) {
	log := &commitLog{}
	c, src := newTestCoordinator(t, log, Options{})
	c.AddRunningActor(7)
	e := c.Checkpoint()
	<-src.injected
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := c.WaitInjected(ctx, e); err != nil {
		t.Fatal(err)
	}
	c.Ack(7, e)
	wait(t, c, e)
	var r CheckpointRecord
	for _, x := range c.History() {
		if x.Epoch == e {
			r = x
		}
	}
	if r.Injected.IsZero() || r.Aligned.IsZero() {
		t.Fatalf("record %+v lacks its injection or alignment time", r)
	}
	if r.Injected.Before(r.Started) || r.Aligned.Before(r.Injected) || r.Finished.Before(r.Aligned) {
		t.Fatalf("stage times out of order: started %v injected %v aligned %v finished %v",
			r.Started, r.Injected, r.Aligned, r.Finished)
	}
}
