package barrier

import "fmt"

// Mode selects the checkpoint guarantee of multi-input operators.
type Mode uint8

const (
	// ExactlyOnce aligns barriers (Flink's BarrierBuffer): once barrier n has
	// arrived on an input, that input is not read again until barrier n has
	// arrived on every input, so the snapshot holds exactly epochs <= n.
	ExactlyOnce Mode = iota
	// AtLeastOnce never blocks an input (Flink's BarrierTracker): the operator
	// snapshots when the last barrier n arrives, by which time records after
	// barrier n on faster inputs may already be in the snapshot; after recovery
	// those records are applied again.
	AtLeastOnce
)

func (m Mode) String() string {
	if m == AtLeastOnce {
		return "at_least_once"
	}
	return "exactly_once"
}

// Step is what the operator must do after feeding the Aligner an event.
type Step struct {
	// Complete is the epoch whose barrier has now arrived on every open input:
	// the operator writes its state for that epoch and forwards the barrier.
	// Zero if no alignment completed.
	Complete uint64
	// Aborted is an epoch whose alignment was abandoned because a later
	// barrier arrived first (the checkpoint is subsumed). Zero if none.
	Aborted uint64
}

// Aligner is the barrier alignment state machine of one multi-input
// operator. It does no I/O and starts no goroutines: the runtime asks it which
// inputs may be read and tells it about barriers and closed inputs. It is not
// safe for concurrent use.
//
// Invariants: barriers on one input arrive with increasing epochs; an input
// that has closed counts as having delivered every later barrier.
type Aligner struct {
	mode    Mode
	closed  []bool
	arrived []bool
	// aligning is the epoch being aligned, or 0.
	aligning uint64
	count    int
	// done is the last epoch completed (or aborted); barriers at or below it are
	// late and ignored.
	done uint64
	// pending holds, for AtLeastOnce, the arrival counts of epochs not yet seen
	// on every input.
	pending map[uint64]int
}

// NewAligner returns an Aligner for n inputs.
func NewAligner(n int, mode Mode) *Aligner {
	return &Aligner{
		mode:    mode,
		closed:  make([]bool, n),
		arrived: make([]bool, n),
		pending: map[uint64]int{},
	}
}

// Mode returns the aligner's mode.
func (a *Aligner) Mode() Mode { return a.mode }

// Readable reports whether input i may be read now: it is open and, in
// ExactlyOnce mode, has not yet delivered the barrier being aligned.
func (a *Aligner) Readable(i int) bool {
	if a.closed[i] {
		return false
	}
	return a.mode == AtLeastOnce || !a.arrived[i]
}

// Aligning returns the epoch being aligned, or 0.
func (a *Aligner) Aligning() uint64 { return a.aligning }

// open returns the number of inputs that have not closed.
func (a *Aligner) open() int {
	n := 0
	for _, c := range a.closed {
		if !c {
			n++
		}
	}
	return n
}

// OnBarrier records that barrier epoch arrived on input i.
func (a *Aligner) OnBarrier(i int, epoch uint64) Step {
	if a.closed[i] {
		panic(fmt.Sprintf("barrier: barrier %d on closed input %d", epoch, i))
	}
	if epoch <= a.done {
		return Step{}
	}
	if a.mode == AtLeastOnce {
		return a.trackBarrier(epoch)
	}
	var step Step
	if a.aligning != 0 && epoch > a.aligning {
		// A later checkpoint overtook the one being aligned: abort it and align
		// the new one. Inputs blocked for the old epoch are released.
		step.Aborted = a.aligning
		a.done = a.aligning
		a.reset()
	}
	if a.aligning == 0 {
		a.aligning = epoch
	}
	if !a.arrived[i] {
		a.arrived[i] = true
		a.count++
	}
	if a.count >= a.open() {
		step.Complete = a.aligning
		a.done = a.aligning
		a.reset()
	}
	return step
}

// trackBarrier is OnBarrier for AtLeastOnce: count arrivals per epoch; the
// epoch completes when it has arrived on every open input, and every older
// pending epoch is aborted.
func (a *Aligner) trackBarrier(epoch uint64) Step {
	a.pending[epoch]++
	if a.pending[epoch] < a.open() {
		return Step{}
	}
	var step Step
	for e := range a.pending {
		if e < epoch && e > step.Aborted {
			step.Aborted = e
		}
		if e <= epoch {
			delete(a.pending, e)
		}
	}
	step.Complete = epoch
	a.done = epoch
	return step
}

// OnClose records that input i has ended. Closing may complete an alignment
// that was only waiting for i.
func (a *Aligner) OnClose(i int) Step {
	if a.closed[i] {
		return Step{}
	}
	a.closed[i] = true
	if a.mode == AtLeastOnce {
		open := a.open()
		var step Step
		for e, c := range a.pending {
			if c >= open && open > 0 && e > step.Complete {
				step.Complete = e
			}
		}
		if step.Complete != 0 {
			for e := range a.pending {
				if e <= step.Complete {
					delete(a.pending, e)
				}
			}
			a.done = step.Complete
		}
		return step
	}
	if a.arrived[i] {
		a.arrived[i] = false
		a.count--
	}
	if a.aligning != 0 && a.count >= a.open() {
		step := Step{Complete: a.aligning}
		a.done = a.aligning
		a.reset()
		return step
	}
	return Step{}
}

// AllClosed reports whether every input has ended.
func (a *Aligner) AllClosed() bool { return a.open() == 0 }

func (a *Aligner) reset() {
	a.aligning = 0
	a.count = 0
	for i := range a.arrived {
		a.arrived[i] = false
	}
}
