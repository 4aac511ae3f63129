package exec

import (
	"context"
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/streamsql/streamsql/barrier"
	"github.com/streamsql/streamsql/planner"
)

// WriteFunc performs the write of a plan's planner.Write: it is given every
// row the write's input produced (records owned by the caller, which
// releases them after it returns) and emits to out the rows it wrote, every
// column of the table. The engine supplies it (Env.Write): it owns the
// table's writer, its lock and the statement's row locks, and writes the
// rows through the table's TableWrite (or a transaction's overlay).
type WriteFunc func(ctx context.Context, n *planner.Write, rows []arrow.RecordBatch, out Output) error

// StatementWrite is the operator of a planner.Write in a batch plan. A
// statement is all or nothing, so it buffers its whole input and, at the
// barrier that ends it, hands the rows to the write (WriteFunc) at once;
// what the write emits (the rows written) is its output. It is for batch
// plans only, and writes once: a plan's Write is its root, over one input.
type StatementWrite struct {
	n     *planner.Write
	write WriteFunc
	recs  []arrow.RecordBatch
	done  bool
}

// NewStatementWrite returns the operator of n, writing through write.
func NewStatementWrite(n *planner.Write, write WriteFunc) *StatementWrite {
	return &StatementWrite{n: n, write: write}
}

// OnBatch buffers b's rows (inserts: a batch plan's rows).
func (s *StatementWrite) OnBatch(_ context.Context, b *Batch, _ Output) error {
	if b.Rec.NumRows() == 0 {
		b.Release()
		return nil
	}
	s.recs = append(s.recs, b.Rec)
	b.Rec = nil
	return nil
}

// OnBarrier writes the buffered rows.
func (s *StatementWrite) OnBarrier(ctx context.Context, _ *barrier.Barrier, out Output) error {
	if s.done {
		return fmt.Errorf("exec: the write into %s ended twice", s.n.Table.Name)
	}
	s.done = true
	defer s.release()
	return s.write(ctx, s.n, s.recs, out)
}

func (s *StatementWrite) release() {
	for _, r := range s.recs {
		r.Release()
	}
	s.recs = nil
}

// Close releases rows not written.
func (s *StatementWrite) Close() { s.release() }
