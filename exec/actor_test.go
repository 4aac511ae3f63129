package exec

import (
	"context"
	"fmt"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/streamsql/streamsql/barrier"
	"github.com/streamsql/streamsql/types"
)

// recordingMulti records what a two-input operator receives.
type recordingMulti struct {
	events chan string
}

func (r *recordingMulti) OnBatch(_ context.Context, input int, b *Batch, _ Output) error {
	defer b.Release()
	r.events <- fmt.Sprintf("batch %d from %d", b.Len(), input)
	return nil
}

func (r *recordingMulti) OnBarrier(_ context.Context, b *barrier.Barrier, _ Output) error {
	r.events <- fmt.Sprintf("barrier %d", b.Epoch)
	return nil
}

func (r *recordingMulti) Close() {}

func rows(mem memory.Allocator, n int) Message {
	bs := newBuilders(mem, []types.T{types.Int64T})
	defer releaseBuilders(bs)
	for i := 0; i < n; i++ {
		bs[0].AppendNull()
	}
	return Message{Batch: NewBatch(buildRecord(SchemaOf([]types.T{types.Int64T}), bs, n), nil)}
}

func startTwoInputActor(t *testing.T, mode barrier.Mode) (in [2]chan Message, rec *recordingMulti, acks chan uint64, done chan error) {
	rec = &recordingMulti{events: make(chan string, 100)}
	node := NewMultiNode(rec, 2, OutputFunc(func(context.Context, Message) error { return nil }))
	in = [2]chan Message{make(chan Message, 10), make(chan Message, 10)}
	acks = make(chan uint64, 10)
	a := &Actor{
		ID:     1,
		Inputs: []<-chan Message{in[0], in[1]},
		Heads:  []Output{node.Port(0), node.Port(1)},
		Mode:   mode,
		Ack:    func(b *barrier.Barrier) { acks <- b.Epoch },
	}
	done = make(chan error, 1)
	go func() { done <- a.Run(context.Background()) }()
	return in, rec, acks, done
}

// TestActorAlignsExactlyOnce checks that an input that delivered barrier n
// is not read until barrier n arrives on the other input.
func TestActorAlignsExactlyOnce(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
	defer mem.AssertSize(t, 0)
	in, rec, acks, done := startTwoInputActor(t, barrier.ExactlyOnce)
	in[0] <- rows(mem, 1)
	in[0] <- Message{Barrier: &barrier.Barrier{Epoch: 1}}
	in[0] <- rows(mem, 2) // epoch 2: must wait for alignment
	if got := <-rec.events; got != "batch 1 from 0" {
		t.Fatalf("got %q", got)
	}
	in[1] <- rows(mem, 3)
	if got := <-rec.events; got != "batch 3 from 1" {
		t.Fatalf("input 1 should be read while input 0 is blocked; got %q", got)
	}
	in[1] <- Message{Barrier: &barrier.Barrier{Epoch: 1}}
	if got := <-rec.events; got != "barrier 1" {
		t.Fatalf("got %q", got)
	}
	if e := <-acks; e != 1 {
		t.Fatalf("ack %d", e)
	}
	if got := <-rec.events; got != "batch 2 from 0" {
		t.Fatalf("after alignment the blocked input resumes; got %q", got)
	}
	close(in[0])
	close(in[1])
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}

// TestActorAtLeastOnceDoesNotBlock checks that in at-least-once mode records
// after barrier n are processed before barrier n arrives on the other input.
func TestActorAtLeastOnceDoesNotBlock(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
	defer mem.AssertSize(t, 0)
	in, rec, acks, done := startTwoInputActor(t, barrier.AtLeastOnce)
	in[0] <- Message{Barrier: &barrier.Barrier{Epoch: 1}}
	in[0] <- rows(mem, 2)
	if got := <-rec.events; got != "batch 2 from 0" {
		t.Fatalf("got %q", got)
	}
	in[1] <- Message{Barrier: &barrier.Barrier{Epoch: 1}}
	if got := <-rec.events; got != "barrier 1" {
		t.Fatalf("got %q", got)
	}
	if e := <-acks; e != 1 {
		t.Fatalf("ack %d", e)
	}
	close(in[0])
	close(in[1])
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}

// TestActorClosedInputCountsAsArrived checks that a closed input does not
// hold up alignment.
func TestActorClosedInputCountsAsArrived(t *testing.T) {
	in, rec, acks, done := startTwoInputActor(t, barrier.ExactlyOnce)
	close(in[1])
	in[0] <- Message{Barrier: &barrier.Barrier{Epoch: 1}}
	if got := <-rec.events; got != "barrier 1" {
		t.Fatalf("got %q", got)
	}
	if e := <-acks; e != 1 {
		t.Fatalf("ack %d", e)
	}
	close(in[0])
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}

// failingMulti fails on its first batch from input 0 (or panics).
type failingMulti struct {
	recordingMulti
	panics bool
}

func (f *failingMulti) OnBatch(ctx context.Context, input int, b *Batch, out Output) error {
	if input == 0 {
		b.Release()
		if f.panics {
			panic("boom")
		}
		return fmt.Errorf("boom")
	}
	return f.recordingMulti.OnBatch(ctx, input, b, out)
}

// TestActorFailedKeepsAcknowledging checks that a multi-input dataflow that
// fails (by error or panic) while an input's barrier is held for alignment
// still acknowledges that epoch and the next ones, so the rest of the system
// keeps committing.
func TestActorFailedKeepsAcknowledging(t *testing.T) {
	for _, panics := range []bool{false, true} {
		mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
		op := &failingMulti{recordingMulti: recordingMulti{events: make(chan string, 100)}, panics: panics}
		node := NewMultiNode(op, 2, OutputFunc(func(context.Context, Message) error { return nil }))
		in := [2]chan Message{make(chan Message, 10), make(chan Message, 10)}
		acks := make(chan uint64, 10)
		failed := make(chan error, 1)
		a := &Actor{ID: 1, Inputs: []<-chan Message{in[0], in[1]}, Heads: []Output{node.Port(0), node.Port(1)},
			Mode: barrier.ExactlyOnce, Ack: func(b *barrier.Barrier) { acks <- b.Epoch }, OnError: func(err error) { failed <- err }}
		done := make(chan error, 1)
		go func() { done <- a.Run(context.Background()) }()
		in[1] <- Message{Barrier: &barrier.Barrier{Epoch: 1}} // held for alignment
		in[0] <- rows(mem, 1)                                 // fails
		if err := <-failed; err == nil {
			t.Fatal("no failure reported")
		}
		in[0] <- Message{Barrier: &barrier.Barrier{Epoch: 1}}
		in[0] <- rows(mem, 2)
		in[0] <- Message{Barrier: &barrier.Barrier{Epoch: 2}}
		in[1] <- Message{Barrier: &barrier.Barrier{Epoch: 2}}
		for want := uint64(1); want <= 2; want++ {
			if e := <-acks; e != want {
				t.Fatalf("panics=%v: ack %d, want %d", panics, e, want)
			}
		}
		close(in[0])
		close(in[1])
		if err := <-done; err == nil {
			t.Fatalf("panics=%v: Run returned no error", panics)
		}
		mem.AssertSize(t, 0)
	}
}
