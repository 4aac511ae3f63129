package barrier

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"time"
)

// Source is where the coordinator injects barriers: a table's change stream,
// a connector, the catalog. Inject seals the source's own state for the epoch
// (everything it produced before the barrier belongs to epoch b.Epoch) and
// sends the barrier downstream. The coordinator calls Inject from one
// goroutine, for every registered source, once per epoch, in epoch order.
type Source interface {
	Inject(ctx context.Context, b *Barrier) error
}

// Change is a change to the running dataflows that must happen at an epoch
// boundary; see Coordinator.Schedule.
type Change struct {
	// Mutations travel on the barrier.
	Mutations []Mutation
	// AddActors must acknowledge every epoch after the barrier.
	AddActors []uint32
	// RemoveActors acknowledge the barrier and nothing after it.
	RemoveActors []uint32
	// AfterInject, if set, runs on the injecting goroutine once the barrier
	// has been injected into every source and before the next barrier is, so
	// that what it writes to a source's state lands in the next epoch.
	AfterInject func(epoch uint64)
}

// Options configures a Coordinator.
type Options struct {
	// Interval between barriers when nothing asks for one sooner.
	Interval time.Duration
	// CheckpointFrequency makes every CheckpointFrequency-th barrier of the
	// interval timer a checkpoint (default 1: every barrier); the others are
	// Tick barriers, committed with the next checkpoint. A barrier somebody
	// waits for (Trigger, Checkpoint, Schedule) is always a checkpoint.
	CheckpointFrequency int
	// MaxInFlight is the number of injected but uncommitted epochs beyond
	// which no barrier is injected (default 1).
	MaxInFlight int
	// Commit makes an epoch durable once every source has injected its
	// barrier and every actor has acknowledged it; it must also make durable
	// every earlier epoch not committed (subsumed ones and ticks). It is
	// called from one goroutine, with increasing epochs. On error the epoch
	// is retried, unless the error wraps ErrFatal: then the coordinator
	// stops, and every waiter gets that error.
	Commit func(epoch uint64) error
	// Timeout is how long a checkpoint may take before it is reported as
	// timed out and stops holding back the next barrier (0: no timeout).
	Timeout time.Duration
	// Clock is the time barriers carry (default time.Now).
	Clock  func() time.Time
	Logger *slog.Logger
}

// Checkpoint statuses in the history.
const (
	StatusInProgress = "in_progress"
	StatusCompleted  = "completed"
	StatusFailed     = "failed"
	// StatusSubsumed: a later checkpoint overtook this one during alignment;
	// its changes were committed with that checkpoint.
	StatusSubsumed = "subsumed"
	// StatusTimedOut: not completed within the checkpoint timeout: it was
	// aborted and the next checkpoint injected at once; its changes commit
	// with the next checkpoint that completes.
	StatusTimedOut = "timed_out"
)

// CheckpointRecord describes one checkpoint (epoch) in the history.
type CheckpointRecord struct {
	Epoch uint64
	// Started is when the barrier's injection began, Finished when the epoch
	// committed (zero while in progress).
	Started, Finished time.Time
	// Injected is when the barrier had reached every source, Aligned when
	// every actor had also acknowledged it (its dataflows had processed the
	// epoch and written their state); zero until then.
	Injected, Aligned time.Time
	Status            string
	// Error is the last commit error of a failed attempt.
	Error string
}

// historySize is the number of checkpoints the history keeps.
const historySize = 1000

// ErrStopped is returned by waits on a stopped coordinator.
var ErrStopped = errors.New("barrier: coordinator stopped")

// ErrFatal marks a commit error after which no epoch can be committed (the
// store failed); see Options.Commit.
var ErrFatal = errors.New("barrier: fatal commit error")

// Coordinator injects barriers into the sources, collects the actors'
// acknowledgements and commits epochs in order. It is safe for concurrent
// use.
type Coordinator struct {
	opts Options

	mu sync.Mutex
	// started is the last epoch whose injection has begun; injected the last
	// one whose injection has finished; committed the last one committed.
	started, injected, committed uint64
	sources                      []Source
	actors                       map[uint32]*actorSpan
	epochs                       map[uint64]*epochState
	changes                      []Change
	wantEpoch                    uint64 // inject at least up to this epoch without waiting for the timer
	// wantCheckpoint is the epoch a waiter needs committed; the barrier
	// injected while lastCheckpoint < wantCheckpoint is a checkpoint.
	// lastCheckpoint is the last epoch injected as a checkpoint.
	wantCheckpoint, lastCheckpoint uint64
	// commitSignal is closed (and replaced) whenever an epoch is injected or
	// committed, waking the waiters.
	commitSignal chan struct{}
	stopped      bool
	lastErr      error
	// fatal is the error that stopped the coordinator (see ErrFatal).
	fatal error
	// history holds the last historySize checkpoints, oldest first.
	history []CheckpointRecord
	// lastTime is the Time of the last barrier injected.
	lastTime int64

	wake       chan struct{}
	commitWake chan struct{}
	done       chan struct{}
	wg         sync.WaitGroup
}

type actorSpan struct {
	first, last uint64 // last == 0: still running
}

type epochState struct {
	injected bool
	// checkpoint is false for Tick barriers.
	checkpoint bool
	waiting    map[uint32]bool
	// subsumed is set when an actor acknowledged a later epoch without this
	// one (its alignment of this epoch was abandoned): the epoch cannot be
	// committed on its own and is committed with the next complete one.
	subsumed bool
	// timedOut is set when the epoch was not committed within the
	// checkpoint timeout; it no longer counts against MaxInFlight.
	timedOut bool
	started  time.Time
}

// NewCoordinator returns a coordinator whose first epoch will be
// committed+1.
func NewCoordinator(committed uint64, opts Options) *Coordinator {
	if opts.MaxInFlight <= 0 {
		opts.MaxInFlight = 1
	}
	if opts.CheckpointFrequency <= 0 {
		opts.CheckpointFrequency = 1
	}
	if opts.Interval <= 0 {
		opts.Interval = time.Second
	}
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	if opts.Clock == nil {
		opts.Clock = time.Now
	}
	return &Coordinator{
		opts:           opts,
		started:        committed,
		injected:       committed,
		committed:      committed,
		lastCheckpoint: committed,
		actors:         map[uint32]*actorSpan{},
		epochs:         map[uint64]*epochState{},
		commitSignal:   make(chan struct{}),
		wake:           make(chan struct{}, 1),
		commitWake:     make(chan struct{}, 1),
		done:           make(chan struct{}),
	}
}

// Start launches the injection and commit loops.
func (c *Coordinator) Start() {
	c.wg.Add(2)
	go c.injectLoop()
	go c.commitLoop()
}

// Stop stops both loops after the barrier being injected has reached every
// source and the epoch being committed is committed, and wakes every waiter
// with ErrStopped. The sources' downstream actors must keep running until
// Stop returns.
func (c *Coordinator) Stop() {
	c.mu.Lock()
	if !c.stopped {
		c.stopped = true
		close(c.done)
		close(c.commitSignal)
	}
	c.mu.Unlock()
	c.wg.Wait()
}

// AddSource registers a source; it receives every barrier from the next one
// injected.
func (c *Coordinator) AddSource(s Source) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.sources = append(c.sources, s)
}

// RemoveSource unregisters a source.
func (c *Coordinator) RemoveSource(s Source) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for i, x := range c.sources {
		if x == s {
			c.sources = append(c.sources[:i:i], c.sources[i+1:]...)
			return
		}
	}
}

// AddRunningActor registers an actor that acknowledges every epoch after
// committed (used when dataflows are rebuilt at startup).
func (c *Coordinator) AddRunningActor(id uint32) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.actors[id] = &actorSpan{first: c.started + 1}
}

// Schedule attaches ch to the next barrier and asks for that barrier to be
// injected now. It returns the barrier's epoch.
func (c *Coordinator) Schedule(ch Change) uint64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.changes = append(c.changes, ch)
	e := c.started + 1
	c.wantLocked(e)
	return e
}

// Trigger asks for epoch to be committed without waiting for the interval
// (group commit: writers of one epoch share its barrier): it is injected now
// as a checkpoint, or if it was injected as a tick, a checkpoint barrier
// follows now.
func (c *Coordinator) Trigger(epoch uint64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.wantLocked(epoch)
}

// Checkpoint injects a checkpoint barrier now and returns its epoch; wait
// for it with WaitCommitted.
func (c *Coordinator) Checkpoint() uint64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	e := c.started + 1
	c.wantLocked(e)
	return e
}

// wantLocked asks for a checkpoint at epoch or later to be injected now,
// unless one already was. c.mu must be held.
func (c *Coordinator) wantLocked(epoch uint64) {
	if epoch <= c.lastCheckpoint {
		return
	}
	epoch = max(epoch, c.started+1)
	c.wantCheckpoint = max(c.wantCheckpoint, epoch)
	if epoch > c.wantEpoch {
		c.wantEpoch = epoch
	}
	c.poke(c.wake)
}

func (c *Coordinator) poke(ch chan struct{}) {
	select {
	case ch <- struct{}{}:
	default:
	}
}

// Committed returns the last committed epoch.
func (c *Coordinator) Committed() uint64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.committed
}

// LastError returns the last commit error, if the last commit attempt failed.
func (c *Coordinator) LastError() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.lastErr
}

// WaitCommitted blocks until epoch is committed, ctx is done or the
// coordinator stops.
func (c *Coordinator) WaitCommitted(ctx context.Context, epoch uint64) error {
	for {
		c.mu.Lock()
		if c.committed >= epoch {
			c.mu.Unlock()
			return nil
		}
		if c.stopped {
			c.mu.Unlock()
			return c.stoppedErrLocked()
		}
		sig := c.commitSignal
		c.mu.Unlock()
		select {
		case <-sig:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// stoppedErrLocked is what waits on a stopped coordinator return. c.mu must
// be held.
func (c *Coordinator) stoppedErrLocked() error {
	if c.fatal != nil {
		return c.fatal
	}
	return ErrStopped
}

// Err returns the fatal commit error that stopped the coordinator, if any.
func (c *Coordinator) Err() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.fatal
}

// WaitInjected blocks until the barrier of epoch has been injected into every
// source.
func (c *Coordinator) WaitInjected(ctx context.Context, epoch uint64) error {
	for {
		c.mu.Lock()
		if c.injected >= epoch {
			c.mu.Unlock()
			return nil
		}
		if c.stopped {
			c.mu.Unlock()
			return c.stoppedErrLocked()
		}
		sig := c.commitSignal
		c.mu.Unlock()
		select {
		case <-sig:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// Ack records that actor has processed barrier epoch.
func (c *Coordinator) Ack(actor uint32, epoch uint64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	st := c.epochs[epoch]
	if st == nil || !st.waiting[actor] {
		return
	}
	delete(st.waiting, actor)
	if len(st.waiting) == 0 && st.injected {
		c.update(epoch, func(r *CheckpointRecord) { r.Aligned = time.Now() })
	}
	// Earlier epochs the actor never acknowledged were abandoned by its
	// alignment: they are subsumed by this one.
	for e, old := range c.epochs {
		if e < epoch && old.waiting[actor] {
			delete(old.waiting, actor)
			old.subsumed = true
		}
	}
	c.poke(c.commitWake)
}

// signalLocked wakes every waiter of WaitCommitted and WaitInjected. c.mu
// must be held.
func (c *Coordinator) signalLocked() {
	if c.stopped {
		return
	}
	close(c.commitSignal)
	c.commitSignal = make(chan struct{})
}

func (c *Coordinator) injectLoop() {
	defer c.wg.Done()
	timer := time.NewTimer(c.opts.Interval)
	defer timer.Stop()
	// With a checkpoint timeout, look at the in-flight checkpoints often
	// enough to notice one timing out.
	var timeouts <-chan time.Time
	if c.opts.Timeout > 0 {
		t := time.NewTicker(c.opts.Timeout / 4)
		defer t.Stop()
		timeouts = t.C
	}
	for {
		select {
		case <-c.done:
			return
		case <-timeouts:
		case <-timer.C:
			c.mu.Lock()
			if c.wantEpoch < c.started+1 {
				c.wantEpoch = c.started + 1
			}
			c.mu.Unlock()
			timer.Reset(c.opts.Interval)
		case <-c.wake:
		}
		for c.injectNext() {
		}
	}
}

// injectNext injects the next barrier if one is wanted and the in-flight
// limit allows; it reports whether it did.
// LastBarrierTime returns the Time of the last barrier injected (0 before
// the first).
func (c *Coordinator) LastBarrierTime() int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.lastTime
}

func (c *Coordinator) injectNext() bool {
	c.mu.Lock()
	if c.stopped || c.wantEpoch <= c.started || c.inFlightLocked() >= c.opts.MaxInFlight {
		c.mu.Unlock()
		return false
	}
	c.started++
	e := c.started
	changes := c.changes
	c.changes = nil
	kind := Tick
	if c.wantCheckpoint > c.lastCheckpoint || e-c.lastCheckpoint >= uint64(c.opts.CheckpointFrequency) || len(changes) > 0 {
		kind = Checkpoint
		c.lastCheckpoint = e
	}
	now := c.opts.Clock().UnixMicro()
	c.lastTime = max(c.lastTime, now)
	b := &Barrier{Epoch: e, Kind: kind, Time: c.lastTime}
	for _, ch := range changes {
		b.Mutations = append(b.Mutations, ch.Mutations...)
		for _, id := range ch.AddActors {
			c.actors[id] = &actorSpan{first: e + 1}
		}
		for _, id := range ch.RemoveActors {
			if a := c.actors[id]; a != nil {
				a.last = e
			}
		}
	}
	st := &epochState{checkpoint: kind == Checkpoint, waiting: map[uint32]bool{}, started: time.Now()}
	for id, a := range c.actors {
		if a.first <= e && (a.last == 0 || a.last >= e) {
			st.waiting[id] = true
		}
		if a.last != 0 && a.last < e {
			delete(c.actors, id)
		}
	}
	c.epochs[e] = st
	if st.checkpoint {
		c.record(CheckpointRecord{Epoch: e, Started: time.Now(), Status: StatusInProgress})
	}
	sources := append([]Source(nil), c.sources...)
	c.mu.Unlock()

	// A barrier is injected into every source even if Stop is called
	// meanwhile: a barrier that reached only some streams would leave their
	// mutations half applied.
	for _, s := range sources {
		if err := s.Inject(context.Background(), b); err != nil {
			c.opts.Logger.Error("barrier injection failed", "epoch", e, "err", err)
		}
	}
	for _, ch := range changes {
		if ch.AfterInject != nil {
			ch.AfterInject(e)
		}
	}
	c.mu.Lock()
	st.injected = true
	c.injected = e
	injected := time.Now()
	c.update(e, func(r *CheckpointRecord) {
		r.Injected = injected
		if len(st.waiting) == 0 {
			r.Aligned = injected
		}
	})
	c.signalLocked()
	if len(st.waiting) == 0 {
		c.poke(c.commitWake)
	}
	c.mu.Unlock()
	return true
}

func (c *Coordinator) commitLoop() {
	defer c.wg.Done()
	retry := time.NewTimer(time.Hour)
	defer retry.Stop()
	for {
		select {
		case <-c.done:
			return
		case <-c.commitWake:
		case <-retry.C:
		}
		for {
			c.mu.Lock()
			e := c.committableLocked()
			c.mu.Unlock()
			if e == 0 {
				break
			}
			if err := c.opts.Commit(e); err != nil {
				c.mu.Lock()
				c.lastErr = err
				c.update(e, func(r *CheckpointRecord) { r.Status, r.Error = StatusFailed, err.Error() })
				if errors.Is(err, ErrFatal) {
					c.failLocked(err)
					c.mu.Unlock()
					c.opts.Logger.Error("checkpoint commit failed; no later checkpoint can commit", "epoch", e, "err", err)
					return
				}
				c.mu.Unlock()
				c.opts.Logger.Error("checkpoint commit failed; retrying", "epoch", e, "err", err)
				retry.Reset(100 * time.Millisecond)
				break
			}
			c.mu.Lock()
			now := time.Now()
			for old := c.committed + 1; old < e; old++ {
				c.update(old, func(r *CheckpointRecord) {
					if r.Status != StatusTimedOut {
						r.Status = StatusSubsumed
					}
					r.Finished = now
				})
				delete(c.epochs, old)
			}
			c.committed = e
			c.lastErr = nil
			c.update(e, func(r *CheckpointRecord) { r.Status, r.Finished, r.Error = StatusCompleted, now, "" })
			delete(c.epochs, e)
			c.signalLocked()
			c.poke(c.wake)
			c.mu.Unlock()
		}
	}
}

// committableLocked returns the epoch to commit next, or 0: the first
// checkpoint epoch after the committed one that is complete (injected
// everywhere and acknowledged by every actor) and neither subsumed nor timed
// out, provided every epoch before it is complete but subsumed, timed out or
// a tick. c.mu must be held.
func (c *Coordinator) committableLocked() uint64 {
	for e := c.committed + 1; ; e++ {
		st := c.epochs[e]
		if st == nil || !st.injected || len(st.waiting) > 0 {
			return 0
		}
		if st.checkpoint && !st.subsumed && !st.timedOut {
			return e
		}
	}
}

// failLocked stops the coordinator after a fatal commit error: nothing is
// injected or committed any more, and every waiter returns err. c.mu must
// be held.
func (c *Coordinator) failLocked(err error) {
	if c.stopped {
		return
	}
	c.fatal = err
	c.stopped = true
	close(c.done)
	close(c.commitSignal)
}

// inFlightLocked counts the injected, uncommitted epochs that have not
// timed out, marking those that just did. c.mu must be held.
func (c *Coordinator) inFlightLocked() int {
	n := 0
	for e := c.committed + 1; e <= c.started; e++ {
		st := c.epochs[e]
		if st == nil || (!st.checkpoint && st.injected && len(st.waiting) == 0) {
			// A complete tick waits for the next checkpoint, holding
			// nothing back.
			continue
		}
		if !st.timedOut && c.opts.Timeout > 0 && time.Since(st.started) > c.opts.Timeout {
			st.timedOut = true
			c.update(e, func(r *CheckpointRecord) { r.Status = StatusTimedOut })
			// The next checkpoint proceeds now and commits what this one
			// holds once it completes.
			c.wantCheckpoint = max(c.wantCheckpoint, c.started+1)
			c.wantEpoch = max(c.wantEpoch, c.started+1)
			c.opts.Logger.Warn("checkpoint timed out; injecting the next barrier without waiting for it",
				"epoch", e, "timeout", c.opts.Timeout)
		}
		if !st.timedOut {
			n++
		}
	}
	return n
}

// record appends r to the history. c.mu must be held.
func (c *Coordinator) record(r CheckpointRecord) {
	if len(c.history) == historySize {
		copy(c.history, c.history[1:])
		c.history = c.history[:historySize-1]
	}
	c.history = append(c.history, r)
}

// update changes the history record of epoch, if it is still kept. c.mu
// must be held.
func (c *Coordinator) update(epoch uint64, fn func(*CheckpointRecord)) {
	for i := len(c.history) - 1; i >= 0; i-- {
		if c.history[i].Epoch == epoch {
			fn(&c.history[i])
			return
		}
		if c.history[i].Epoch < epoch {
			return
		}
	}
}

// History returns the recent checkpoints, oldest first.
func (c *Coordinator) History() []CheckpointRecord {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]CheckpointRecord(nil), c.history...)
}
