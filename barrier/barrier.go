// Package barrier defines checkpoint barriers and watermarks, the in-band
// messages that flow between the data batches of every stream, and the
// machinery around them: the Aligner state machine that multi-input operators
// use to align barriers (Flink's BarrierBuffer and BarrierTracker), and the
// checkpoint coordinator that injects barriers, collects acknowledgements and
// commits epochs.
//
// Epochs are numbered 1, 2, 3, ...; barrier n closes epoch n: every record
// before it on a stream belongs to epoch n, every record after it to n+1. A
// checkpoint of epoch n is the state every operator had after processing
// exactly the records of epochs <= n.
//
// This package imports only the standard library.
package barrier

import "fmt"

// Kind says what a barrier asks of the operators it passes.
type Kind uint8

const (
	// Checkpoint barriers make every stateful operator seal its changed state
	// for the epoch; the coordinator commits the epoch once every sink has
	// acknowledged it.
	Checkpoint Kind = iota
	// Final is the last barrier of a stream that is being shut down (a dropped
	// view, a finished batch query); operators seal as for Checkpoint and then
	// stop.
	Final
	// Tick closes an epoch without checkpointing it (with a checkpoint
	// frequency above 1): operators seal and emit the epoch's changes as for
	// Checkpoint, but the epoch is made durable and visible to reads only
	// with the next Checkpoint barrier.
	Tick
)

func (k Kind) String() string {
	switch k {
	case Checkpoint:
		return "checkpoint"
	case Final:
		return "final"
	case Tick:
		return "tick"
	}
	return fmt.Sprintf("kind(%d)", k)
}

// Mutation is a change to the running dataflows carried in-band by a barrier,
// so that it takes effect at the same point of every stream: adding or
// removing a downstream view, stopping a dataflow. The concrete types belong to
// the packages that act on them.
type Mutation interface {
	String() string
}

// Barrier separates epoch Epoch from epoch Epoch+1 in a stream. Barriers are
// immutable once injected and are shared by every stream they travel on.
type Barrier struct {
	Epoch uint64
	Kind  Kind
	// Time is when the coordinator injected the barrier, in microseconds
	// since the Unix epoch; it never decreases from one barrier to the next.
	// It is now() for every operator of a streaming plan in epoch Epoch:
	// temporal filters evaluate their conditions at it.
	Time int64
	// Mutations are applied by the operators they concern when the barrier
	// passes them, after the operator has sealed the epoch.
	Mutations []Mutation
}

func (b *Barrier) String() string {
	if len(b.Mutations) == 0 {
		return fmt.Sprintf("barrier(%d, %s)", b.Epoch, b.Kind)
	}
	return fmt.Sprintf("barrier(%d, %s, %v)", b.Epoch, b.Kind, b.Mutations)
}

// Watermark promises that no later row on the stream has a value below Value
// in column Column (event time). Value is in the column's physical unit
// (microseconds for timestamps).
type Watermark struct {
	Column int
	Value  int64
}
