package exec

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"runtime/debug"
	"time"

	"github.com/streamsql/streamsql/barrier"
)

// Actor is the goroutine that drives one dataflow: it reads its input
// channels (one per upstream stream) and pushes every message into the
// operator chain of that input (Heads[i]); chains of several inputs meet in
// multi-input operators (see MultiPort) and end, usually, in a Dispatcher.
//
// Barrier alignment lives here, once for the whole dataflow. In ExactlyOnce
// mode, an input that has delivered barrier n is not read again until
// barrier n has arrived on every input (a closed input counts as arrived),
// so every operator's state for epoch n holds exactly the records of epochs
// <= n. In AtLeastOnce mode no input is ever blocked.
//
// Contract: on every input, barrier epochs increase. After barrier n has
// arrived on every input (and so passed every operator), Ack is called with
// it. The actor stops after a Final barrier, a StopActor mutation naming it,
// or when all its inputs are closed.
type Actor struct {
	ID     uint32
	Inputs []<-chan Message
	Heads  []Output
	Mode   barrier.Mode
	// Ops are closed when the actor stops.
	Ops []interface{ Close() }
	// Ack is called once per barrier, after it has passed the dataflow.
	Ack func(b *barrier.Barrier)
	// Aligned, if set, is told how long each barrier took to align: from its
	// arrival on the first input to its arrival on the last.
	Aligned func(epoch uint64, d time.Duration)
	// OnError is called if the dataflow fails; the actor then drains its
	// inputs, still acknowledging barriers, so that the rest of the system
	// keeps committing, until it is stopped.
	OnError func(err error)
	Log     *slog.Logger
	// Downstream are the exchanges to the actors of the next fragments of a
	// parallel dataflow. After the actor fails it still sends them every
	// barrier it acknowledges, so that they too go on aligning and
	// acknowledging.
	Downstream []*Exchange

	lastEpoch []uint64
	// delivering is the barrier being pushed into the chain, until it has
	// passed: if the chain fails on it, fail still acknowledges it.
	delivering *barrier.Barrier
}

// inputMessage is a message read from input Input (Closed: the input ended).
type inputMessage struct {
	Input  int
	M      Message
	Closed bool
}

// Run runs the actor until it stops or ctx is done. It closes the operators
// when it returns. A panic in an operator is a bug: the actor fails as for an
// error (the view is marked failed) instead of taking the process down.
func (a *Actor) Run(ctx context.Context) (err error) {
	defer func() {
		for _, op := range a.Ops {
			op.Close()
		}
	}()
	defer func() {
		if r := recover(); r != nil {
			err = a.fail(ctx, fmt.Errorf("exec: actor %d panicked: %v\n%s", a.ID, r, debug.Stack()))
		}
	}()
	a.lastEpoch = make([]uint64, len(a.Inputs))
	if len(a.Inputs) == 1 {
		return a.runSingle(ctx)
	}
	return a.runMulti(ctx)
}

// runSingle is the loop of an actor with one input: no alignment needed.
func (a *Actor) runSingle(ctx context.Context) error {
	for {
		var m Message
		var ok bool
		select {
		case m, ok = <-a.Inputs[0]:
		case <-ctx.Done():
			return ctx.Err()
		}
		if !ok {
			return nil
		}
		stop, err := a.deliver(ctx, 0, m)
		if err != nil {
			if canceled(ctx, err) {
				return err
			}
			return a.fail(ctx, err)
		}
		if b := m.Barrier; b != nil {
			a.ack(b)
			if stop {
				return nil
			}
		}
	}
}

// runMulti reads every input through a forwarder goroutine that stops
// reading its input after forwarding a barrier until the actor releases it.
func (a *Actor) runMulti(ctx context.Context) error {
	n := len(a.Inputs)
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	merged := make(chan inputMessage)
	release := make([]chan struct{}, n)
	for i := range release {
		release[i] = make(chan struct{}, 1)
	}
	for i, in := range a.Inputs {
		go forwardInput(ctx, i, in, merged, release[i])
	}
	aligner := barrier.NewAligner(n, a.Mode)
	held := make([]bool, n) // forwarder i waits for release
	// failed is the error that stopped the dataflow: from then on the loop
	// drops batches but goes on aligning and acknowledging barriers through
	// the same forwarders (new readers would lose the barriers they hold).
	var failed error
	var alignStart time.Time
	var pending *barrier.Barrier // the barrier being aligned
	releaseReadable := func() {
		for i := range held {
			if held[i] && aligner.Readable(i) {
				held[i] = false
				release[i] <- struct{}{}
			}
		}
	}
	for {
		var im inputMessage
		select {
		case im = <-merged:
		case <-ctx.Done():
			return ctx.Err()
		}
		var step barrier.Step
		stop := false
		switch {
		case im.Closed:
			if failed == nil {
				if err := a.Heads[im.Input].Emit(ctx, Message{EndOfStream: true}); err != nil {
					if canceled(ctx, err) {
						return err
					}
					failed = a.markFailed(err)
				}
			}
			step = aligner.OnClose(im.Input)
		case im.M.Barrier != nil:
			b := im.M.Barrier
			held[im.Input] = true
			if pending == nil || pending.Epoch != b.Epoch {
				// The first input's barrier of an epoch (in both modes).
				alignStart = time.Now()
			}
			if failed == nil {
				var err error
				if stop, err = a.deliverSafe(ctx, im.Input, im.M); err != nil {
					if canceled(ctx, err) {
						return err
					}
					failed = a.markFailed(err)
				}
			} else {
				// A failed dataflow still aligns and acknowledges barriers,
				// so that the rest of the system keeps committing.
				stop = a.stopsAt(b)
			}
			pending = b
			step = aligner.OnBarrier(im.Input, b.Epoch)
		default:
			if failed != nil {
				im.M.Release()
			} else if _, err := a.deliverSafe(ctx, im.Input, im.M); err != nil {
				if canceled(ctx, err) {
					return err
				}
				failed = a.markFailed(err)
			}
		}
		// An alignment completes with the last input's barrier, or when the
		// last input it waited for closes.
		if pending != nil && step.Complete == pending.Epoch {
			if a.Aligned != nil {
				a.Aligned(pending.Epoch, time.Since(alignStart))
			}
			if failed != nil {
				a.forwardFailed(ctx, pending)
			}
			a.ack(pending)
			if stop || a.stopsAt(pending) {
				return failed
			}
			pending = nil
		}
		if step.Aborted != 0 && a.Log != nil {
			a.Log.Warn("checkpoint alignment abandoned: a later barrier arrived first", "actor", a.ID, "epoch", step.Aborted)
		}
		if aligner.AllClosed() {
			return failed
		}
		releaseReadable()
	}
}

// forwardInput copies input i's messages to merged; after each barrier it
// waits for a token on release before reading on.
func forwardInput(ctx context.Context, i int, in <-chan Message, merged chan<- inputMessage, release <-chan struct{}) {
	for {
		var m Message
		var ok bool
		select {
		case m, ok = <-in:
		case <-ctx.Done():
			return
		}
		select {
		case merged <- inputMessage{Input: i, M: m, Closed: !ok}:
		case <-ctx.Done():
			m.Release()
			return
		}
		if !ok {
			return
		}
		if m.Barrier != nil {
			select {
			case <-release:
			case <-ctx.Done():
				return
			}
		}
	}
}

// deliver pushes m into input i's chain; it reports whether m is a barrier
// at which the actor stops.
func (a *Actor) deliver(ctx context.Context, i int, m Message) (stop bool, err error) {
	if b := m.Barrier; b != nil {
		if b.Epoch <= a.lastEpoch[i] {
			return false, fmt.Errorf("exec: actor %d input %d: barrier epoch %d after %d", a.ID, i, b.Epoch, a.lastEpoch[i])
		}
		a.lastEpoch[i] = b.Epoch
		stop = a.stopsAt(b)
		a.delivering = b
	}
	if err := a.Heads[i].Emit(ctx, m); err != nil {
		return stop, err
	}
	a.delivering = nil
	return stop, nil
}

// deliverSafe is deliver with an operator's panic turned into an error.
func (a *Actor) deliverSafe(ctx context.Context, i int, m Message) (stop bool, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("exec: actor %d panicked: %v\n%s", a.ID, r, debug.Stack())
		}
	}()
	return a.deliver(ctx, i, m)
}

// canceled reports whether err is ctx's end: the actor is being stopped
// (server shutdown) while a send was blocked, which is no failure.
func canceled(ctx context.Context, err error) bool {
	return ctx.Err() != nil && errors.Is(err, ctx.Err())
}

// markFailed reports err as the dataflow's failure and returns it.
func (a *Actor) markFailed(err error) error {
	if a.Log != nil {
		a.Log.Error("dataflow actor failed; its view no longer follows its inputs", "actor", a.ID, "err", err)
	}
	if a.OnError != nil {
		a.OnError(err)
	}
	return err
}

// forwardFailed sends b to the downstream exchanges of a failed actor.
func (a *Actor) forwardFailed(ctx context.Context, b *barrier.Barrier) {
	for _, x := range a.Downstream {
		if err := x.ForwardBarrier(ctx, b); err != nil {
			return // ctx is done
		}
	}
}

func (a *Actor) ack(b *barrier.Barrier) {
	if a.Ack != nil {
		a.Ack(b)
	}
}

func (a *Actor) stopsAt(b *barrier.Barrier) bool {
	if b.Kind == barrier.Final {
		return true
	}
	for _, m := range b.Mutations {
		if s, ok := m.(*StopActor); ok && s.Actor == a.ID {
			return true
		}
	}
	return false
}

// fail reports err and drains the inputs until the actor is stopped,
// acknowledging each barrier once it has arrived on every input.
func (a *Actor) fail(ctx context.Context, err error) error {
	a.markFailed(err)
	if b := a.delivering; b != nil && len(a.Inputs) == 1 {
		// The chain failed on b, which has arrived on the only input.
		a.delivering = nil
		a.forwardFailed(ctx, b)
		a.ack(b)
		if a.stopsAt(b) {
			return err
		}
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	merged := make(chan inputMessage)
	for i, in := range a.Inputs {
		go func(i int, in <-chan Message) {
			for {
				select {
				case m, ok := <-in:
					select {
					case merged <- inputMessage{Input: i, M: m, Closed: !ok}:
					case <-ctx.Done():
						return
					}
					if !ok {
						return
					}
				case <-ctx.Done():
					return
				}
			}
		}(i, in)
	}
	arrived := map[uint64]int{}
	open := len(a.Inputs)
	for {
		select {
		case im := <-merged:
			if im.Closed {
				open--
				if open == 0 {
					return err
				}
				continue
			}
			im.M.Release()
			if b := im.M.Barrier; b != nil {
				arrived[b.Epoch]++
				if arrived[b.Epoch] == open {
					delete(arrived, b.Epoch)
					a.forwardFailed(ctx, b)
					a.ack(b)
					if a.stopsAt(b) {
						return err
					}
				}
			}
		case <-ctx.Done():
			return err
		}
	}
}
