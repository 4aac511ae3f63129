package exec

import (
	"context"
	"fmt"
	"sync/atomic"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/streamsql/streamsql/barrier"
)

// AddOutput is a barrier mutation: once the barrier carrying it has passed
// the dispatcher of relation Relation, the dispatcher also sends every later
// message to Ch (the input of actor Actor).
type AddOutput struct {
	Relation uint32
	Actor    uint32
	Ch       chan<- Message
}

// RemoveOutput is a barrier mutation: after the barrier carrying it, the
// dispatcher of relation Relation stops sending to actor Actor (to every
// input of the actor that reads the relation).
type RemoveOutput struct {
	Relation uint32
	Actor    uint32
}

// StopActor is a barrier mutation: actor Actor stops after processing the
// barrier carrying it.
type StopActor struct {
	Actor uint32
}

func (m *AddOutput) String() string {
	return fmt.Sprintf("add-output(rel %d -> actor %d)", m.Relation, m.Actor)
}
func (m *RemoveOutput) String() string {
	return fmt.Sprintf("remove-output(rel %d -> actor %d)", m.Relation, m.Actor)
}
func (m *StopActor) String() string { return fmt.Sprintf("stop(actor %d)", m.Actor) }

type dispatchTarget struct {
	actor uint32
	ch    chan<- Message
}

// Dispatcher is the end of a relation's stream: it broadcasts every message
// to the inputs of the actors that read the relation. Outputs are added and
// removed only by barrier mutations, so every output sees whole epochs.
//
// A Dispatcher is driven by one goroutine at a time (its actor, or for a
// table the holder of the table's write lock). Sends block while an output's
// channel is full (backpressure) until ctx is done.
//
// It remembers the last watermark of each column and sends them to an
// output added by a barrier right after that barrier, so that a view created
// over a relation whose watermarks have stopped moving still gets them.
//
// A dispatcher may also hand its stream to a log (SetLog): the relation's
// retained history.
type Dispatcher struct {
	relation   uint32
	outs       []dispatchTarget
	watermarks []*barrier.Watermark // the last one of each column
	// nOuts is len(outs), for Outputs from other goroutines.
	nOuts atomic.Int32
	log   atomic.Pointer[logWriter]
}

// logWriter boxes the writer SetLog installs.
type logWriter struct{ w SinkWriter }

// SetLog makes the dispatcher hand every later batch to w before sending
// it, and every barrier before sending it on, so that what w writes and
// seals at barrier n belongs to epoch n as the relation's rows do (for a
// view, the barrier has not been acknowledged yet; for a table, not
// injected). w runs on the dispatcher's goroutine and must not keep a
// batch; an error from it fails the stream as a send error does. It may
// be called from any goroutine: w sees the stream from some batch on,
// whole batches only. SetLog(nil) removes the log; a call that is writing
// may still be under way.
func (d *Dispatcher) SetLog(w SinkWriter) {
	if w == nil {
		d.log.Store(nil)
		return
	}
	d.log.Store(&logWriter{w: w})
}

// NewDispatcher returns a dispatcher for relation's stream with no outputs.
func NewDispatcher(relation uint32) *Dispatcher {
	return &Dispatcher{relation: relation}
}

// Outputs returns the number of outputs; any goroutine may call it.
func (d *Dispatcher) Outputs() int { return int(d.nOuts.Load()) }

// Emit broadcasts m; barrier mutations for this dispatcher take effect after
// the barrier is sent.
func (d *Dispatcher) Emit(ctx context.Context, m Message) error {
	if l := d.log.Load(); l != nil {
		if err := d.toLog(ctx, l.w, m); err != nil {
			if m.Batch != nil {
				m.Batch.Release()
			}
			return err
		}
	}
	if m.Batch != nil {
		n := len(d.outs)
		if n == 0 {
			m.Batch.Release()
			return nil
		}
		// One reference per output; receivers share the read-only Ops.
		if n > 1 {
			settleNullCounts(m.Batch.Rec)
		}
		for i := 1; i < n; i++ {
			m.Batch.Rec.Retain()
		}
		for i, o := range d.outs {
			msg := Message{Batch: &Batch{Rec: m.Batch.Rec, Ops: m.Batch.Ops}}
			if err := send(ctx, o.ch, msg); err != nil {
				for j := i; j < n; j++ {
					m.Batch.Rec.Release()
				}
				return err
			}
		}
		return nil
	}
	for _, o := range d.outs {
		if err := send(ctx, o.ch, m); err != nil {
			return err
		}
	}
	switch {
	case m.Barrier != nil:
		return d.applyMutations(ctx, m.Barrier)
	case m.Watermark != nil:
		d.remember(m.Watermark)
	}
	return nil
}

// toLog hands m to the log w.
func (d *Dispatcher) toLog(ctx context.Context, w SinkWriter, m Message) error {
	switch {
	case m.Batch != nil:
		return w.Write(ctx, m.Batch)
	case m.Barrier != nil:
		return w.Barrier(ctx, m.Barrier)
	}
	return nil
}

// remember keeps w as the last watermark of its column.
func (d *Dispatcher) remember(w *barrier.Watermark) {
	for i, old := range d.watermarks {
		if old.Column == w.Column {
			d.watermarks[i] = w
			return
		}
	}
	d.watermarks = append(d.watermarks, w)
}

func (d *Dispatcher) applyMutations(ctx context.Context, b *barrier.Barrier) error {
	for _, mu := range b.Mutations {
		switch mu := mu.(type) {
		case *AddOutput:
			if mu.Relation == d.relation {
				d.outs = append(d.outs, dispatchTarget{actor: mu.Actor, ch: mu.Ch})
				for _, w := range d.watermarks {
					if err := send(ctx, mu.Ch, Message{Watermark: w}); err != nil {
						return err
					}
				}
			}
		case *RemoveOutput:
			if mu.Relation == d.relation {
				// An actor may read a relation more than once (self-joins).
				kept := d.outs[:0:0]
				for _, o := range d.outs {
					if o.actor != mu.Actor {
						kept = append(kept, o)
					}
				}
				d.outs = kept
			}
		}
	}
	d.nOuts.Store(int32(len(d.outs)))
	return nil
}

func send(ctx context.Context, ch chan<- Message, m Message) error {
	select {
	case ch <- m:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// AddOutputNow adds an output immediately. It is only for wiring dataflows
// before any message flows (startup); afterwards outputs change through
// AddOutput mutations.
func (d *Dispatcher) AddOutputNow(actor uint32, ch chan<- Message) {
	d.outs = append(d.outs, dispatchTarget{actor: actor, ch: ch})
	d.nOuts.Store(int32(len(d.outs)))
}

// settleNullCounts computes the null count of every array of rec, nested ones
// included, before rec is shared by several goroutines: Arrow computes an
// unknown null count (a slice's, a struct field's) on the first NullN and
// stores it, which would be a write racing with the other readers.
func settleNullCounts(rec arrow.RecordBatch) {
	for _, col := range rec.Columns() {
		settleArrayNullCounts(col)
	}
}

func settleArrayNullCounts(arr arrow.Array) {
	arr.NullN()
	switch a := arr.(type) {
	case *array.Struct:
		for i := 0; i < a.NumField(); i++ {
			settleArrayNullCounts(a.Field(i))
		}
	case array.ListLike:
		settleArrayNullCounts(a.ListValues())
	case *array.Dictionary:
		settleArrayNullCounts(a.Dictionary())
	}
}
