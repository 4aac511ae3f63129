//go:build unix

package exec

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/streamsql/streamsql/barrier"
	"github.com/streamsql/streamsql/ir"
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
	// source keeps full: each of its barriers waits behind the queue, about
	// alignSlowQueue*alignSlowPace (24-28 ms), before it reaches the actor.
	alignSlowQueue = 6
	alignSlowPace  = 4 * time.Millisecond
	// Rows per batch of each input: the slow input carries 1K rows/s.
	alignFastRows = 64
	alignSlowRows = 4
	// alignFastPeriod is the pace of the fast input under load=paced, one
	// batch per period: 12.8K rows/s, 12.8 times the slow input, and about a
	// quarter of what the join takes on one core of the development machine
	// with these batches (load=saturated, at-least-once).
	alignFastPeriod = 5 * time.Millisecond
	// Distinct rows each input cycles through (inserted, then deleted, so
	// that the join state stays bounded).
	alignCycleRows = 8192
)

// BenchmarkAlignment runs a real two-input Actor over an inner HashJoin
// (MultiNode, state in an in-memory store committed as soon as the actor
// acknowledges each barrier) in both checkpoint modes, with skewed inputs:
// the coordinator injects each barrier into both sources at the same moment,
// but the right input's barrier reaches the actor alignSlowQueue *
// alignSlowPace later than the left's, because the right input comes through
// a slow upstream stage with a full queue; the left (fast) input carries 12.8
// times the rows or more. Two loads of the fast input:
//
//   - load=paced: the fast source sends one batch every alignFastPeriod on a
//     fixed schedule (it does not slow down when the actor does not read), so
//     the latency of its rows can be measured from their scheduled time;
//   - load=saturated: the fast source sends as fast as the actor reads, to
//     show the fast input's throughput.
//
// One op is one barrier interval. Metrics:
//
//   - align-p50-ms, align-p99-ms: the durations the actor reports through its
//     Aligned callback (what streamsql_alignments shows); in at-least-once
//     mode the actor restarts that clock at every barrier's arrival, so
//     these are about 0 there;
//   - gap-p50-ms, gap-p99-ms: alignment time measured here at the actor's
//     heads, from the arrival of barrier n on the first input to its arrival
//     on the second, in both modes;
//   - fast-rows/s: rows of the fast input the join processed per second;
//   - load=paced only: lat-p50-ms, lat-p99-ms: from a fast batch's scheduled
//     send time until the join has processed it and emitted its output (the
//     latency a downstream operator or sink sees); vis-p50-ms, vis-p99-ms:
//     from the scheduled send time until the checkpoint that holds the batch
//     has committed (when a SELECT on the view can see it).
//
// In exactly-once mode the fast input is not read from the arrival of its
// barrier until the slow input's barrier arrives; in at-least-once mode it is
// never blocked, and the rows it delivers meanwhile enter the pending
// checkpoint instead of the next one.
//
// The slow stage waits (it does not spin), as an upstream on another core
// or machine would, so that it does not take CPU from the measured actor on
// a small machine.
func BenchmarkAlignment(b *testing.B) {
	for _, paced := range []bool{true, false} {
		for _, mode := range []barrier.Mode{barrier.ExactlyOnce, barrier.AtLeastOnce} {
			load := "paced"
			if !paced {
				load = "saturated"
			}
			b.Run(fmt.Sprintf("load=%s/mode=%s", load, mode), func(b *testing.B) { benchAlignment(b, mode, paced) })
		}
	}
}

// alignSource cycles through its records, sending each as an insert batch,
// then all of them again as delete batches, and sends barrier n as soon as
// the coordinator injects it (between two batches). It closes out after the
// last barrier. With a period it sends one batch per period on a fixed
// schedule from start, recording each batch's scheduled time on stamps
// before sending it; without, it sends as fast as out takes batches.
type alignSource struct {
	recs     []*Batch // the cycle's rows; never sent themselves
	barriers chan uint64
	last     uint64
	period   time.Duration
	stamps   chan time.Time
}

func (s *alignSource) run(ctx context.Context, out chan<- Message, start time.Time) {
	defer close(out)
	next := start
	for i := 0; ; i++ {
		if s.period > 0 {
			next = next.Add(s.period)
			if !s.waitUntil(ctx, out, next) {
				return
			}
			s.stamps <- next
		}
		rec := s.recs[i%len(s.recs)]
		op := Insert
		if (i/len(s.recs))%2 == 1 {
			op = Delete
		}
		rec.Rec.Retain()
		m := Message{Batch: &Batch{Rec: rec.Rec, Ops: alignOps(op, rec.Len())}}
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

// waitUntil waits until t, sending the barriers injected meanwhile; it
// returns false after the last one.
func (s *alignSource) waitUntil(ctx context.Context, out chan<- Message, t time.Time) bool {
	timer := time.NewTimer(time.Until(t))
	defer timer.Stop()
	for {
		select {
		case <-timer.C:
			return true
		case e := <-s.barriers:
			if !s.sendBarrier(ctx, out, e) {
				return false
			}
		case <-ctx.Done():
			return false
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

// alignOpsBy are the shared, read-only ops of the alignment batches.
var alignOpsBy = map[Op][]Op{
	Insert: make([]Op, max(alignFastRows, alignSlowRows)),
	Delete: slices.Repeat([]Op{Delete}, max(alignFastRows, alignSlowRows)),
}

func alignOps(op Op, n int) []Op { return alignOpsBy[op][:n:n] }

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

// alignSample is one fast batch of load=paced: its scheduled send time,
// when the join had processed it, and how many barriers the actor had
// acknowledged by then (the batch belongs to the next acknowledged one).
type alignSample struct {
	sched, done time.Time
	acked       int
}

// alignHead records when each barrier reaches the actor's head of one input
// and counts the input's rows up to the last barrier, then passes the
// message on. With stamps (the fast input under load=paced) it also records
// a sample per batch scheduled after start.
type alignHead struct {
	next     Output
	last     uint64
	arrivals map[uint64]time.Time
	rows     int64 // rows before the last barrier
	done     bool  // the last barrier has arrived

	stamps  <-chan time.Time
	start   time.Time
	acks    *[]uint64
	samples []alignSample
}

func (h *alignHead) Emit(ctx context.Context, m Message) error {
	switch {
	case m.Barrier != nil:
		h.arrivals[m.Barrier.Epoch] = time.Now()
		h.done = m.Barrier.Epoch == h.last
	case m.Batch != nil && h.stamps != nil:
		sched := <-h.stamps
		counted := !h.done
		if counted {
			h.rows += int64(m.Batch.Len())
		}
		if err := h.next.Emit(ctx, m); err != nil {
			return err
		}
		if counted && !sched.Before(h.start) {
			h.samples = append(h.samples, alignSample{sched: sched, done: time.Now(), acked: len(*h.acks)})
		}
		return nil
	case m.Batch != nil && !h.done:
		h.rows += int64(m.Batch.Len())
	}
	return h.next.Emit(ctx, m)
}

// rate returns the input's rows per second from start to its last barrier.
func (h *alignHead) rate(start time.Time) float64 {
	return float64(h.rows) / h.arrivals[h.last].Sub(start).Seconds()
}

func benchAlignment(b *testing.B, mode barrier.Mode, paced bool) {
	mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
	defer mem.AssertSize(b, 0)
	store, err := state.Open(state.MemoryDir, state.Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer store.Close()
	var out countRows
	node := NewMultiNode(newJoinDriver(mem, ir.InnerJoin, store).j, 2, &out)

	// Both inputs cycle through alignCycleRows rows whose keys come from a
	// domain of alignCycleRows: about one match per probe.
	rng := rand.New(rand.NewPCG(9, 10))
	var sources [2]*alignSource
	for side, rows := range []int{alignFastRows, alignSlowRows} {
		g := newJoinBatchBuilder(mem, side)
		s := &alignSource{barriers: make(chan uint64, 1), last: uint64(b.N)}
		for id := int64(0); id < alignCycleRows; id++ {
			g.add(Insert, benchJoinRow{k: scrambleKey(rng.Int64N(alignCycleRows)), id: id, p: id})
			if len(g.ops) == rows {
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
	if paced {
		sources[0].period = alignFastPeriod
		sources[0].stamps = make(chan time.Time, 4*alignChannel)
	}

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	fast := make(chan Message, alignChannel)
	slowQ := make(chan Message, alignSlowQueue)
	slow := make(chan Message, alignChannel)
	var acks []uint64 // acknowledged epochs, in order
	heads := [2]*alignHead{
		{next: node.Port(0), last: uint64(b.N), arrivals: map[uint64]time.Time{}, stamps: sources[0].stamps, acks: &acks},
		{next: node.Port(1), last: uint64(b.N), arrivals: map[uint64]time.Time{}},
	}
	var aligned []time.Duration
	commits := make(chan uint64, b.N+1)
	actor := &Actor{
		ID:     1,
		Inputs: []<-chan Message{fast, slow},
		Heads:  []Output{heads[0], heads[1]},
		Mode:   mode,
		Ack: func(bar *barrier.Barrier) {
			acks = append(acks, bar.Epoch)
			commits <- bar.Epoch
		},
		Aligned: func(_ uint64, d time.Duration) { aligned = append(aligned, d) },
	}

	var committer sync.WaitGroup
	var commitErr error
	committed := map[uint64]time.Time{}
	committer.Go(func() {
		for e := range commits {
			if _, err := store.Commit(e); err != nil && commitErr == nil {
				commitErr = err
			}
			committed[e] = time.Now()
		}
	})
	var workers sync.WaitGroup
	workers.Go(func() { sources[1].run(ctx, slowQ, time.Now()) })
	workers.Go(func() { slowStage(ctx, slowQ, slow) })
	if !paced {
		workers.Go(func() { sources[0].run(ctx, fast, time.Now()) })
	}
	// Let the pipelines fill before the first barrier.
	time.Sleep(alignInterval)

	b.ResetTimer()
	start := time.Now()
	heads[0].start = start
	if paced {
		workers.Go(func() { sources[0].run(ctx, fast, start) })
	}
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
	committer.Wait()
	if runErr != nil {
		b.Fatal(runErr)
	}
	if commitErr != nil {
		b.Fatal(commitErr)
	}

	var gaps []time.Duration
	for e := uint64(1); e <= uint64(b.N); e++ {
		t0, ok0 := heads[0].arrivals[e]
		t1, ok1 := heads[1].arrivals[e]
		if !ok0 || !ok1 {
			b.Fatalf("barrier %d did not reach both inputs", e)
		}
		gaps = append(gaps, max(t0.Sub(t1), t1.Sub(t0)))
	}
	b.ReportMetric(percentileMs(aligned, 50), "align-p50-ms")
	b.ReportMetric(percentileMs(aligned, 99), "align-p99-ms")
	b.ReportMetric(percentileMs(gaps, 50), "gap-p50-ms")
	b.ReportMetric(percentileMs(gaps, 99), "gap-p99-ms")
	b.ReportMetric(heads[0].rate(start), "fast-rows/s")
	if paced {
		var lat, vis []time.Duration
		for _, s := range heads[0].samples {
			lat = append(lat, s.done.Sub(s.sched))
			if s.acked < len(acks) {
				vis = append(vis, committed[acks[s.acked]].Sub(s.sched))
			}
		}
		b.ReportMetric(percentileMs(lat, 50), "lat-p50-ms")
		b.ReportMetric(percentileMs(lat, 99), "lat-p99-ms")
		b.ReportMetric(percentileMs(vis, 50), "vis-p50-ms")
		b.ReportMetric(percentileMs(vis, 99), "vis-p99-ms")
	}
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
