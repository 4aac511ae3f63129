package exec

import (
	"slices"
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
// When fragment 0 runs on several reader actors, each seals its own tables
// and an epoch waits for all of them (SealedBy).
//
// Sealed and SealedBy are called by the view's (reader) actors, Gathered by
// the gather actor, each with its barriers in epoch order; ack is called
// with the gather's barriers in epoch order, on whichever goroutine
// completes one.
type ParallelAck struct {
	ack func(*barrier.Barrier)

	mu sync.Mutex
	// bySealer is the last epoch each reader actor sealed; sealed the
	// least of them.
	bySealer []uint64
	sealed   uint64
	// gathered are the barriers the gather has aligned and that wait for
	// the view's actor.
	gathered []*barrier.Barrier
}

// NewParallelAck returns a ParallelAck that acknowledges with ack.
func NewParallelAck(ack func(*barrier.Barrier)) *ParallelAck {
	return NewReadersAck(1, ack)
}

// NewReadersAck returns a ParallelAck for a dataflow whose fragment 0 runs
// on readers actors.
func NewReadersAck(readers int, ack func(*barrier.Barrier)) *ParallelAck {
	return &ParallelAck{ack: ack, bySealer: make([]uint64, readers)}
}

// Sealed records that the view's actor has sealed its tables of b's epoch
// (and of every earlier one).
func (p *ParallelAck) Sealed(b *barrier.Barrier) { p.SealedBy(0, b) }

// SealedBy records that reader actor r has sealed its tables of b's epoch
// (and of every earlier one).
func (p *ParallelAck) SealedBy(r int, b *barrier.Barrier) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.bySealer[r] = max(p.bySealer[r], b.Epoch)
	p.sealed = slices.Min(p.bySealer)
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
	d.WireReaderAcks([]*Actor{view}, func(_ int, b *barrier.Barrier) { seal(b) }, ack)
}

// WireReaderAcks is WireAcks for a dataflow whose fragment 0 runs on
// several reader actors: readers[0] drives the dataflow's Heads,
// readers[r] those of Readers[r-1]. Each seals its own tables of an epoch
// with seal(r, b), and the epoch is acknowledged once all have and the
// gather has aligned it.
func (d *Dataflow) WireReaderAcks(readers []*Actor, seal func(r int, b *barrier.Barrier), ack func(*barrier.Barrier)) {
	acks := NewReadersAck(len(readers), ack)
	for r, a := range readers {
		a.Ack = func(b *barrier.Barrier) {
			seal(r, b)
			acks.SealedBy(r, b)
		}
		if r == 0 {
			a.Downstream = d.Exchanges
		} else {
			a.Downstream = d.Readers[r-1].Exchanges
		}
	}
	d.Gather.Ack = acks.Gathered
}
