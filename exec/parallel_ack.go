package exec

import (
	"sync"

	"github.com/streamsql/streamsql/barrier"
)

// ParallelAck acknowledges the barriers of a parallel dataflow
// (BuildParallelStream) once both of the goroutines that finish an epoch
// have: the gather actor, whose alignment of barrier n means every
// partitioned actor has sealed its tables of epoch n, and the view's actor,
// which seals the tables it writes itself (pause gates, backfill positions)
// when barrier n has passed all its inputs.
//
// The two finish in either order. The view's actor seals after the barrier
// has left it through the exchanges, and by then the partitioned actors
// and the gather may have passed it already; acknowledging at the gather
// alone let the coordinator commit epoch n without the view's actor's
// writes of epoch n, which then went into the next commit. A crash between
// the two commits left the committed backfill positions (or kept changes of
// a paused view) an epoch behind the view's rows: after the restart the
// backfill read the last chunk again and the view counted its rows twice.
//
// Sealed is called by the view's actor, Gathered by the gather actor, each
// with its barriers in epoch order; ack is called with the gather's
// barriers in epoch order, on whichever goroutine completes one.
type ParallelAck struct {
	ack func(*barrier.Barrier)

	mu     sync.Mutex
	sealed uint64 // the last epoch the view's actor sealed
	// gathered are the barriers the gather has aligned and that wait for
	// the view's actor.
	gathered []*barrier.Barrier
}

// NewParallelAck returns a ParallelAck that acknowledges with ack.
func NewParallelAck(ack func(*barrier.Barrier)) *ParallelAck {
	return &ParallelAck{ack: ack}
}

// Sealed records that the view's actor has sealed its tables of b's epoch
// (and of every earlier one).
func (p *ParallelAck) Sealed(b *barrier.Barrier) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.sealed = max(p.sealed, b.Epoch)
	p.flush()
}

// Gathered records that b has passed the gather actor.
func (p *ParallelAck) Gathered(b *barrier.Barrier) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.gathered = append(p.gathered, b)
	p.flush()
}

// flush acknowledges the gathered barriers the view's actor has sealed.
func (p *ParallelAck) flush() {
	n := 0
	for _, b := range p.gathered {
		if b.Epoch > p.sealed {
			break
		}
		p.ack(b)
		n++
	}
	p.gathered = append(p.gathered[:0], p.gathered[n:]...)
}

// WireAcks sets the acknowledgements of a parallel dataflow whose leaves
// view (the view's actor) reads: view seals its own tables of an epoch with
// seal when the epoch's barrier has passed it, and the epoch is
// acknowledged with ack once, in addition, the gather actor has aligned it
// (ParallelAck). It also makes view's barriers go on to the exchanges.
func (d *Dataflow) WireAcks(view *Actor, seal, ack func(*barrier.Barrier)) {
	acks := NewParallelAck(ack)
	view.Ack = func(b *barrier.Barrier) {
		seal(b)
		acks.Sealed(b)
	}
	view.Downstream = d.Exchanges
	d.Gather.Ack = acks.Gathered
}
