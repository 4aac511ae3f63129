// Package exec runs dataflows: streaming operators over Arrow record batches
// with per-row change operations, the actors (goroutines) that drive chains
// of operators, the dispatchers that fan streams out, and barrier alignment
// for operators with several inputs.
//
// Ownership: a *Batch belongs to exactly one holder at a time, and its Rec
// and Ops are read-only once emitted (a dispatcher shares them between its
// outputs). Passing a
// batch to Output.Emit or Operator.OnBatch passes its ownership; the receiver
// releases it (Batch.Release) or passes it on. A dispatcher with several
// outputs retains the record once per extra output.
package exec

import (
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/streamsql/streamsql/barrier"
)

// Op is the change a row of a batch makes to the stream's relation.
type Op uint8

const (
	// Insert adds the row.
	Insert Op = iota
	// Delete removes one copy of the row.
	Delete
	// UpdateDelete removes the old version of an updated row; the UpdateInsert
	// that follows it in the same batch adds the new version. Consumers may
	// treat the pair as a Delete and an Insert.
	UpdateDelete
	// UpdateInsert adds the new version of an updated row.
	UpdateInsert
)

// IsInsert reports whether op adds a row (Insert or UpdateInsert).
func (op Op) IsInsert() bool { return op == Insert || op == UpdateInsert }

func (op Op) String() string {
	switch op {
	case Insert:
		return "+"
	case Delete:
		return "-"
	case UpdateDelete:
		return "U-"
	case UpdateInsert:
		return "U+"
	}
	return fmt.Sprintf("op(%d)", op)
}

// Batch is a set of row changes: row i of Rec with operation Ops[i].
type Batch struct {
	Rec arrow.RecordBatch
	Ops []Op
}

// NewBatch wraps rec; ops may be nil for all-insert batches. It takes over
// the caller's reference to rec.
func NewBatch(rec arrow.RecordBatch, ops []Op) *Batch {
	if ops == nil {
		ops = make([]Op, rec.NumRows())
	}
	return &Batch{Rec: rec, Ops: ops}
}

// Len returns the number of rows.
func (b *Batch) Len() int { return int(b.Rec.NumRows()) }

// Release releases the batch's record.
func (b *Batch) Release() {
	if b.Rec != nil {
		b.Rec.Release()
		b.Rec = nil
	}
}

// Message is one element of a stream: exactly one field is set.
type Message struct {
	Batch     *Batch
	Barrier   *barrier.Barrier
	Watermark *barrier.Watermark
	// EndOfStream is sent by the runtime down an input's chain when the
	// input's channel closes, so that multi-input operators stop waiting for
	// its barriers.
	EndOfStream bool
}

func (m Message) String() string {
	switch {
	case m.Batch != nil:
		return fmt.Sprintf("batch(%d rows)", m.Batch.Len())
	case m.Barrier != nil:
		return m.Barrier.String()
	case m.Watermark != nil:
		return fmt.Sprintf("watermark(col %d, %d)", m.Watermark.Column, m.Watermark.Value)
	case m.EndOfStream:
		return "end of stream"
	}
	return "empty message"
}

// Release releases the message's batch, if any.
func (m Message) Release() {
	if m.Batch != nil {
		m.Batch.Release()
	}
}
