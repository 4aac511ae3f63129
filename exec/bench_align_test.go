package exec

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/streamsql/streamsql/barrier"
	"github.com/streamsql/streamsql/state"
)

// Parameters of BenchmarkAlignment.
const (
	// alignInterval is the barrier interval: the coordinator injects barrier
	// n into both sources at n*alignInterval.
	alignInterval = 50 * time.Millisecond
	// alignChannel is the capacity of the actor's input channels (the
	// engine's inputBuffer).
	alignChannel = 16
	// The slow input comes through an upstream stage that forwards one batch
	// per alignSlowPace from a queue of alignSlowQueue batches, which its
	// source keeps full: each barrier waits behind the queue, about
	// alignSlowQueue*alignSlowPace.
	alignSlowQueue = 6
	alignSlowPace  = 4 * time.Millisecond
	// Rows per batch of each input, and distinct rows each input cycles
	// through (inserted, then deleted, so that the state stays bounded).
	alignBatchRows = 64
	alignCycleRows = 8192
)

// BenchmarkAlignment runs a real two-input Actor over an inner HashJoin
// (MultiNode, state in an in-memory store committed at every aligned
// barrier) in both checkpoint modes, with skewed inputs: the coordinator
// injects each barrier into both sources at the same moment, but the right
// input's barrier reaches the actor about alignSlowQueue*alignSlowPace later
// than the left's, because the right input comes through a slow upstream
// stage with a queue. The left (fast) input is a source that produces as
// fast as the actor consumes.
//
// One op is one barrier interval. Metrics: align-p50-ms and align-p99-ms are
// the durations the actor reports through its Aligned callback;
// skew-p50-ms and skew-p99-ms are measured here, from the arrival of each
// barrier on the first input to its arrival on the second (at the actor's
// heads); fast-rows/s and slow-rows/s are the rows of each input the join
// processed per second. In exactly-once mode the fast input is blocked
// while a barrier aligns; in at-least-once mode it never is.
//
// The slow stage waits (it does not spin), as an upstream on another core
// or machine would, so that it does not take CPU from the measured actor on
// a small machine.
func BenchmarkAlignment(b *testing.B) {
	for _, join := range []bool{true, false} {
		for _, mode := range []barrier.Mode{barrier.ExactlyOnce, barrier.AtLeastOnce} {
			op := "join"
			if !join {
				op = "sum"
			}
			b.Run(fmt.Sprintf("op=%s/mode=%s", op, mode), func(b *testing.B) { benchAlignment(b, mode, join) })
		}
	}
}

// sumMulti is a cheap MultiOperator: it adds up the id column of every
// batch.
type sumMulti struct{ sum int64 }

func (s *sumMulti) OnBatch(_ context.Context, _ int, b *Batch, _ Output) error {
	for _, v := range b.Rec.Column(1).(*array.Int64).Int64Values() {
		s.sum += v
	}
	b.Release()
	return nil
}

func (s *sumMulti) OnBarrier(context.Context, *barrier.Barrier, Output) error { return nil }
func (s *sumMulti) Close()                                                    {}

// alignSource cycles through its records, sending each as an insert batch,
// then all of them again as delete batches, and sends barrier n as soon as
// the coordinator injects it (between two batches). It closes out after the
// last barrier.
type alignSource struct {
	recs     []*Batch // the cycle's rows; never sent themselves
	barriers chan uint64
	last     uint64
}

func (s *alignSource) run(ctx context.Context, out chan<- Message) {
	defer close(out)
	for i := 0; ; i++ {
		rec := s.recs[i%len(s.recs)]
		op := Insert
		if (i/len(s.recs))%2 == 1 {
			op = Delete
		}
		rec.Rec.Retain()
		m := Message{Batch: &Batch{Rec: rec.Rec, Ops: alignOps[op]}}
		for m.Batch != nil {
			select {
			case out <- m:
				m.Batch = nil
			case e := <-s.barriers:
				if !s.sendBarrier(ctx, out, e) {
					m.Release()
					return
				}
			case <-ctx.Done():
				m.Release()
				return
			}
		}
		select {
		case e := <-s.barriers:
			if !s.sendBarrier(ctx, out, e) {
				return
			}
		default:
		}
	}
}

// sendBarrier sends barrier e; it returns false after the last one.
func (s *alignSource) sendBarrier(ctx context.Context, out chan<- Message, e uint64) bool {
	select {
	case out <- Message{Barrier: &barrier.Barrier{Epoch: e}}:
	case <-ctx.Done():
		return false
	}
	return e < s.last
}

// alignOps are the shared, read-only ops of every alignment batch.
var alignOps = map[Op][]Op{
	Insert: make([]Op, alignBatchRows),
	Delete: slices.Repeat([]Op{Delete}, alignBatchRows),
}

// slowStage forwards in to out, each batch alignSlowPace after the previous
// one; barriers pass at once.
func slowStage(ctx context.Context, in <-chan Message, out chan<- Message) {
	defer close(out)
	next := time.Now()
	for m := range in {
		if m.Batch != nil {
			next = next.Add(alignSlowPace)
			if now := time.Now(); next.Before(now) {
				next = now
			}
			time.Sleep(time.Until(next))
		}
		select {
		case out <- m:
		case <-ctx.Done():
			m.Release()
			for m := range in {
				m.Release()
			}
			return
		}
	}
}

// alignHead records when each barrier reaches the actor's head of one input
// and counts the input's rows up to the last barrier, then passes the
// message on.
type alignHead struct {
	next     Output
	last     uint64
	arrivals map[uint64]time.Time
	rows     int64 // rows before the last barrier
	done     bool  // the last barrier has arrived
}

func (h *alignHead) Emit(ctx context.Context, m Message) error {
	switch {
	case m.Barrier != nil:
		h.arrivals[m.Barrier.Epoch] = time.Now()
		h.done = m.Barrier.Epoch == h.last
	case m.Batch != nil && !h.done:
		h.rows += int64(m.Batch.Len())
	}
	return h.next.Emit(ctx, m)
}

// rate returns the input's rows per second from start to its last barrier.
func (h *alignHead) rate(start time.Time) float64 {
	return float64(h.rows) / h.arrivals[h.last].Sub(start).Seconds()
}

func benchAlignment(b *testing.B, mode barrier.Mode, join bool) {
	mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
	defer mem.AssertSize(b, 0)
	store, err := state.Open(state.MemoryDir, state.Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer store.Close()
	var op MultiOperator = &sumMulti{}
	if join {
		op = newJoinDriver(mem, InnerJoin, store, [2]state.TableID{1, 2}).j
	}
	var out countRows
	node := NewMultiNode(op, 2, &out)

	// Both inputs cycle through alignCycleRows rows whose keys come from a
	// domain of alignCycleRows: about one match per probe.
	rng := rand.New(rand.NewPCG(9, 10))
	var sources [2]*alignSource
	for side := range 2 {
		g := newJoinBatchBuilder(mem, side)
		s := &alignSource{barriers: make(chan uint64, 1), last: uint64(b.N)}
		for id := int64(0); id < alignCycleRows; id++ {
			g.add(Insert, benchJoinRow{k: scrambleKey(rng.Int64N(alignCycleRows)), id: id, p: id})
			if len(g.ops) == alignBatchRows {
				s.recs = append(s.recs, g.batch())
			}
		}
		g.release()
		sources[side] = s
	}
	defer func() {
		for _, s := range sources {
			for _, r := range s.recs {
				r.Release()
			}
		}
	}()

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	fast := make(chan Message, alignChannel)
	slowQ := make(chan Message, alignSlowQueue)
	slow := make(chan Message, alignChannel)
	heads := [2]*alignHead{
		{next: node.Port(0), last: uint64(b.N), arrivals: map[uint64]time.Time{}},
		{next: node.Port(1), last: uint64(b.N), arrivals: map[uint64]time.Time{}},
	}
	var aligned []time.Duration
	commits := make(chan uint64, b.N+1)
	actor := &Actor{
		ID:      1,
		Inputs:  []<-chan Message{fast, slow},
		Heads:   []Output{heads[0], heads[1]},
		Mode:    mode,
		Ack:     func(bar *barrier.Barrier) { commits <- bar.Epoch },
		Aligned: func(_ uint64, d time.Duration) { aligned = append(aligned, d) },
	}

	var wg sync.WaitGroup
	var commitErr error
	wg.Go(func() {
		for e := range commits {
			if _, err := store.Commit(e); err != nil && commitErr == nil {
				commitErr = err
			}
		}
	})
	var workers sync.WaitGroup
	workers.Go(func() { sources[0].run(ctx, fast) })
	workers.Go(func() { sources[1].run(ctx, slowQ) })
	workers.Go(func() { slowStage(ctx, slowQ, slow) })
	// Let both pipelines fill before the first barrier.
	time.Sleep(alignInterval)

	b.ResetTimer()
	start := time.Now()
	workers.Go(func() {
		for e := 1; e <= b.N; e++ {
			time.Sleep(time.Until(start.Add(time.Duration(e) * alignInterval)))
			for _, s := range sources {
				s.barriers <- uint64(e)
			}
		}
	})
	runErr := actor.Run(ctx)
	b.StopTimer()
	cancel()
	workers.Wait()
	close(commits)
	wg.Wait()
	if runErr != nil {
		b.Fatal(runErr)
	}
	if commitErr != nil {
		b.Fatal(commitErr)
	}

	var skews []time.Duration
	for e := uint64(1); e <= uint64(b.N); e++ {
		t0, ok0 := heads[0].arrivals[e]
		t1, ok1 := heads[1].arrivals[e]
		if !ok0 || !ok1 {
			b.Fatalf("barrier %d did not reach both inputs", e)
		}
		skews = append(skews, max(t0.Sub(t1), t1.Sub(t0)))
	}
	b.ReportMetric(percentileMs(aligned, 50), "align-p50-ms")
	b.ReportMetric(percentileMs(aligned, 99), "align-p99-ms")
	b.ReportMetric(percentileMs(skews, 50), "skew-p50-ms")
	b.ReportMetric(percentileMs(skews, 99), "skew-p99-ms")
	b.ReportMetric(heads[0].rate(start), "fast-rows/s")
	b.ReportMetric(heads[1].rate(start), "slow-rows/s")
}

// percentileMs returns the p-th percentile of ds in milliseconds (nearest
// rank), 0 for none.
func percentileMs(ds []time.Duration, p int) float64 {
	if len(ds) == 0 {
		return 0
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	i := (len(s)*p + 99) / 100
	return float64(s[max(i-1, 0)]) / float64(time.Millisecond)
}
