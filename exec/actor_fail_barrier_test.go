package exec

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/streamsql/streamsql/barrier"
)

// TestActorAcksBarrierThatFails checks that a single-input actor whose
// dataflow fails on a barrier still acknowledges that barrier (and the
// later ones), so that the other dataflows go on committing.
func TestActorAcksBarrierThatFails(t *testing.T) {
	in := make(chan Message, 4)
	acks := make(chan uint64, 4)
	var failed error
	a := &Actor{
		ID:     1,
		Inputs: []<-chan Message{in},
		Heads: []Output{OutputFunc(func(_ context.Context, m Message) error {
			if m.Barrier != nil && m.Barrier.Epoch == 1 {
				return errors.New("sink full")
			}
			return nil
		})},
		Ack:     func(b *barrier.Barrier) { acks <- b.Epoch },
		OnError: func(err error) { failed = err },
	}
	done := make(chan error, 1)
	go func() { done <- a.Run(context.Background()) }()
	in <- Message{Barrier: &barrier.Barrier{Epoch: 1}}
	in <- Message{Barrier: &barrier.Barrier{Epoch: 2}}
	for want := uint64(1); want <= 2; want++ {
		select {
		case e := <-acks:
			if e != want {
				t.Fatalf("ack %d, want %d", e, want)
			}
		case <-time.After(5 * time.Second):
			t.Fatalf("barrier %d not acknowledged", want)
		}
	}
	close(in)
	if err := <-done; err == nil || failed == nil {
		t.Fatalf("Run returned %v, OnError saw %v", err, failed)
	}
}
