package exec

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/streamsql/streamsql/barrier"
)

// Actor is the goroutine that drives one chain of operators: it reads its
// input channel and pushes every message through the chain, whose last
// output is usually a Dispatcher.
//
// Contract: the first message of the input is a batch or barrier after the
// barrier at which the actor was attached; barrier epochs never decrease (a
// barrier at or below the last one seen is an error). After a barrier has
// passed the whole chain, Ack is called with it. The actor stops after a
// Final barrier, a StopActor mutation naming it, or when its input closes.
type Actor struct {
	ID    uint32
	Input <-chan Message
	Ops   []Operator
	Out   Output
	// Prelude, if set, runs before the input is read, with the head of the
	// chain (backfill of a new view).
	Prelude func(ctx context.Context, head Output) error
	// Ack is called after each barrier has passed the chain.
	Ack func(b *barrier.Barrier)
	// OnError is called if the chain fails; the actor then drains its input,
	// still acknowledging barriers, so that the rest of the system keeps
	// committing, until it is stopped.
	OnError func(err error)
	Log     *slog.Logger

	lastEpoch uint64
}

// Run runs the actor until it stops or ctx is done. It closes the operators
// when it returns.
func (a *Actor) Run(ctx context.Context) error {
	defer func() {
		for _, op := range a.Ops {
			op.Close()
		}
	}()
	head := Chain(a.Ops, a.Out)
	if a.Prelude != nil {
		if err := a.Prelude(ctx, head); err != nil {
			return a.fail(ctx, err)
		}
	}
	for {
		var m Message
		var ok bool
		select {
		case m, ok = <-a.Input:
		case <-ctx.Done():
			return ctx.Err()
		}
		if !ok {
			return nil
		}
		if b := m.Barrier; b != nil {
			if b.Epoch <= a.lastEpoch {
				m.Release()
				return a.fail(ctx, fmt.Errorf("exec: actor %d: barrier epoch %d after %d", a.ID, b.Epoch, a.lastEpoch))
			}
			a.lastEpoch = b.Epoch
		}
		if err := head.Emit(ctx, m); err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			return a.fail(ctx, err)
		}
		if b := m.Barrier; b != nil {
			if a.Ack != nil {
				a.Ack(b)
			}
			if a.stopsAt(b) {
				return nil
			}
		}
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

// fail reports err and drains the input until the actor is stopped.
func (a *Actor) fail(ctx context.Context, err error) error {
	if a.Log != nil {
		a.Log.Error("dataflow actor failed; its view no longer follows its inputs", "actor", a.ID, "err", err)
	}
	if a.OnError != nil {
		a.OnError(err)
	}
	for {
		select {
		case m, ok := <-a.Input:
			if !ok {
				return err
			}
			m.Release()
			if b := m.Barrier; b != nil {
				if a.Ack != nil {
					a.Ack(b)
				}
				if a.stopsAt(b) {
					return err
				}
			}
		case <-ctx.Done():
			return err
		}
	}
}
