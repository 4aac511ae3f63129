package exec

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/streamsql/streamsql/barrier"
	"github.com/streamsql/streamsql/types"
)

// TestParallelAckWaitsForTheViewActor acknowledges a parallel dataflow's
// epochs in both orders of its two finishing goroutines: an epoch the
// gather has aligned is not acknowledged before the view's actor has sealed
// it (else the coordinator could commit it without the view's actor's
// backfill positions and kept changes), and epochs are acknowledged in
// order, each once, with several in flight.
func TestParallelAckWaitsForTheViewActor(t *testing.T) {
	var acked []uint64
	p := NewParallelAck(func(b *barrier.Barrier) { acked = append(acked, b.Epoch) })
	b := func(e uint64) *barrier.Barrier { return &barrier.Barrier{Epoch: e} }
	check := func(when string, want ...uint64) {
		t.Helper()
		if !slices.Equal(acked, want) {
			t.Fatalf("%s: acknowledged %v, want %v", when, acked, want)
		}
	}
	p.Gathered(b(1)) // the gather first: the view's actor has not sealed
	check("gathered 1")
	p.Sealed(b(1))
	check("sealed 1", 1)
	p.Sealed(b(2)) // the view's actor first
	p.Sealed(b(3))
	check("sealed 2 and 3", 1)
	p.Gathered(b(2))
	check("gathered 2", 1, 2)
	p.Gathered(b(3))
	p.Gathered(b(4))
	p.Gathered(b(5))
	check("gathered 3 to 5", 1, 2, 3)
	p.Sealed(b(5)) // an actor acknowledges an epoch once, its last alignment
	check("sealed 5", 1, 2, 3, 4, 5)
	if fmt.Sprint(p.gathered) != "[]" {
		t.Fatalf("barriers left waiting: %v", p.gathered)
	}
}

// TestParallelAckWaitsForEveryReader acknowledges an epoch of a dataflow
// whose sources are read by three reader actors only once every reader has
// sealed it and the gather has aligned it.
func TestParallelAckWaitsForEveryReader(t *testing.T) {
	var acked []uint64
	p := NewReadersAck(3, func(b *barrier.Barrier) { acked = append(acked, b.Epoch) })
	b := func(e uint64) *barrier.Barrier { return &barrier.Barrier{Epoch: e} }
	check := func(when string, want ...uint64) {
		t.Helper()
		if !slices.Equal(acked, want) {
			t.Fatalf("%s: acknowledged %v, want %v", when, acked, want)
		}
	}
	p.Gathered(b(1))
	p.SealedBy(0, b(1))
	p.SealedBy(2, b(1))
	check("readers 0 and 2 sealed 1")
	p.SealedBy(1, b(2)) // reader 1 is ahead
	check("reader 1 sealed 2", 1)
	p.Gathered(b(2))
	check("gathered 2", 1)
	p.SealedBy(0, b(2))
	p.SealedBy(2, b(3))
	check("every reader sealed 2", 1, 2)
}

// TestParallelAckAfterViewActorSeals runs a parallel dataflow's actors (the
// view's actor, two partitioned actors, the gather) and holds the view's
// actor in its sealing of each epoch until the gather has passed the
// epoch's barrier: the epoch must not be acknowledged before the view's
// actor has sealed it. (The gather acknowledged on its own, and so, when
// the view's actor was descheduled between sending a barrier on and
// sealing, the coordinator committed epochs without its backfill positions.)
func TestParallelAckAfterViewActorSeals(t *testing.T) {
	ctx := context.Background()
	mem := memory.NewGoAllocator()
	const n = 2
	toActors := []chan Message{make(chan Message, 4), make(chan Message, 4)}
	d := &Dataflow{Exchanges: []*Exchange{NewExchange(mem, []int{0}, []types.T{types.Int64T}, toActors)}}
	merge := NewMerge(n, nil, OutputFunc(func(context.Context, Message) error { return nil }))
	d.Gather = &Actor{ID: 1}
	for i := range n {
		g := make(chan Message, 4)
		x := NewExchange(mem, nil, nil, []chan Message{g})
		d.Actors = append(d.Actors, &Actor{ID: 1, Inputs: []<-chan Message{toActors[i]}, Heads: []Output{x}, Ops: []interface{ Close() }{x}, Downstream: []*Exchange{x}})
		d.Gather.Inputs = append(d.Gather.Inputs, g)
		d.Gather.Heads = append(d.Gather.Heads, merge.Port(i))
	}
	in := make(chan Message, 4)
	view := &Actor{ID: 1, Inputs: []<-chan Message{in}, Heads: []Output{d.Exchanges[0]}, Ops: []interface{ Close() }{d.Exchanges[0]}}

	var mu sync.Mutex
	var acked []uint64
	gathered := make(chan uint64, 4)
	seal := func(b *barrier.Barrier) {
		if got := <-gathered; got != b.Epoch {
			t.Errorf("the gather passed barrier %d, the view's actor seals %d", got, b.Epoch)
		}
		mu.Lock()
		defer mu.Unlock()
		if slices.Contains(acked, b.Epoch) {
			t.Errorf("epoch %d acknowledged before the view's actor sealed it", b.Epoch)
		}
	}
	d.WireAcks(view, seal, func(b *barrier.Barrier) {
		mu.Lock()
		defer mu.Unlock()
		acked = append(acked, b.Epoch)
	})
	gatherAck := d.Gather.Ack
	d.Gather.Ack = func(b *barrier.Barrier) {
		gatherAck(b)
		gathered <- b.Epoch
	}
	var wg sync.WaitGroup
	for _, a := range append(slices.Clone(d.Actors), d.Gather, view) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := a.Run(ctx); err != nil {
				t.Error(err)
			}
		}()
	}
	for e := uint64(1); e <= 3; e++ {
		in <- Message{Barrier: &barrier.Barrier{Epoch: e}}
	}
	in <- Message{Barrier: &barrier.Barrier{Epoch: 4, Kind: barrier.Final}}
	wg.Wait()
	if !slices.Equal(acked, []uint64{1, 2, 3, 4}) {
		t.Fatalf("acknowledged %v, want [1 2 3 4]", acked)
	}
}
