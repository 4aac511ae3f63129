package exec

import (
	"context"
	"fmt"
	"sync/atomic"

	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/streamsql/streamsql/sqlerr"
	"github.com/streamsql/streamsql/state"
)

// Budget bounds the memory one batch query holds: the Arrow buffers its
// operators allocate (through Allocator), the rows its scratch state
// tables buffer (hash join build sides, aggregation states; see Track), and
// what operators report keeping in Go memory (Reserve). Operators call Check
// where that memory grows; it fails with 53200 (out_of_memory) once the sum
// exceeds the limit, and the query's run ends through its usual error path,
// which releases what it holds.
//
// A Budget belongs to one query, driven by one goroutine, except for the
// allocator's counter, which is safe for concurrent use.
type Budget struct {
	limit    int64
	arrow    atomic.Int64
	reserved int64
	tables   []*state.Table
	peak     int64
}

// NewBudget returns a budget of limit bytes (limit > 0).
func NewBudget(limit int64) *Budget {
	return &Budget{limit: limit}
}

// Allocator returns an allocator that allocates from mem and counts the
// bytes it holds against the budget. It never fails itself: Check does.
func (b *Budget) Allocator(mem memory.Allocator) memory.Allocator {
	return &countingAllocator{mem: mem, n: &b.arrow}
}

// Track counts the uncommitted bytes of t, a scratch state table of the
// query, against the budget.
func (b *Budget) Track(t *state.Table) { b.tables = append(b.tables, t) }

// Reserve counts n more bytes (n < 0: fewer) that an operator keeps
// outside Arrow buffers and state tables.
func (b *Budget) Reserve(n int64) { b.reserved += n }

// Used returns the bytes counted against the budget now.
func (b *Budget) Used() int64 {
	n := b.arrow.Load() + b.reserved
	for _, t := range b.tables {
		n += t.UncommittedBytes()
	}
	return n
}

// Peak returns the most bytes a Check has seen in use.
func (b *Budget) Peak() int64 { return b.peak }

// Check fails with 53200 if the bytes in use plus extra (memory the caller
// is about to hold, or holds without having reported it) exceed the limit.
// A nil budget never fails.
func (b *Budget) Check(extra int64) error {
	if b == nil {
		return nil
	}
	used := b.Used() + extra
	b.peak = max(b.peak, used)
	if used <= b.limit {
		return nil
	}
	e := sqlerr.New(sqlerr.OutOfMemory, "out of memory")
	e.Detail = fmt.Sprintf("The query needs more than query_memory_limit (%s).", FormatBytes(b.limit))
	return e.WithHint("Raise query_memory_limit (SET query_memory_limit = '4GB'), or make the query hold fewer rows at once.")
}

// FormatBytes renders n bytes with the largest unit (kB, MB, GB, TB; 1024
// each, as PostgreSQL's memory settings) that divides it, or in bytes.
func FormatBytes(n int64) string {
	units := []string{"TB", "GB", "MB", "kB"}
	for i, u := range units {
		size := int64(1) << (10 * (len(units) - i))
		if n >= size && n%size == 0 {
			return fmt.Sprintf("%d%s", n/size, u)
		}
	}
	return fmt.Sprintf("%dB", n)
}

// countingAllocator allocates from mem and keeps the bytes it holds in n.
type countingAllocator struct {
	mem memory.Allocator
	n   *atomic.Int64
}

func (a *countingAllocator) Allocate(size int) []byte {
	b := a.mem.Allocate(size)
	a.n.Add(int64(len(b)))
	return b
}

func (a *countingAllocator) Reallocate(size int, b []byte) []byte {
	old := len(b)
	b = a.mem.Reallocate(size, b)
	a.n.Add(int64(len(b) - old))
	return b
}

func (a *countingAllocator) Free(b []byte) {
	a.n.Add(-int64(len(b)))
	a.mem.Free(b)
}

// budgetCheck checks the budget before passing each batch on: every edge
// of a batch plan's dataflow is one, so memory that grows while batches
// flow is noticed within a batch.
type budgetCheck struct {
	b    *Budget
	next Output
}

// Emit passes m on, or releases it and fails if the budget is exceeded.
func (c *budgetCheck) Emit(ctx context.Context, m Message) error {
	if m.Batch != nil {
		if err := c.b.Check(0); err != nil {
			m.Batch.Release()
			return err
		}
	}
	return c.next.Emit(ctx, m)
}
