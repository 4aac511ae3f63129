package exec

import (
	"context"
	"fmt"
	"strings"
	"sync/atomic"
	"time"

	"github.com/streamsql/streamsql/planner"
)

// Stats counts, for every operator of one dataflow, the rows it emitted and
// the time spent in it. It is built from the plan before the dataflow
// (NewStats) and handed to the build in Env.Stats, which wraps each node's
// output in a counter; the counters are read while the dataflow runs.
//
// Counting is per message (one atomic add of a batch's row count, two clock
// reads), never per row. Time is measured inclusively (a node's output
// counter times everything downstream of it, since operators push), and a
// node's own time is derived on reading: the time of its inputs' outputs
// minus the time of its own output.
//
// Goroutine safety: the counters are written by the goroutine driving the
// dataflow and may be read (Snapshot) from any goroutine.
type Stats struct {
	// Nodes are the plan's nodes in preorder (root first, inputs in order).
	Nodes  []*NodeStats
	byNode map[planner.Node]*NodeStats
}

// NodeStats are one operator's counters.
type NodeStats struct {
	// ID numbers the node in preorder from 0 (the root); Parent is the
	// parent's ID (-1 for the root), Inputs the inputs' IDs.
	ID, Parent int
	Inputs     []int
	// Name is the operator's kind ("HashAgg", "Scan", ...).
	Name string
	Node planner.Node

	rows    atomic.Int64 // rows emitted
	batches atomic.Int64
	// inclusive is the time spent downstream of the node (in its output's
	// Emit), in nanoseconds; leaf is a leaf's whole run (batch plans).
	inclusive atomic.Int64
	leaf      atomic.Int64
}

// NewStats returns the counters of a plan rooted at root.
func NewStats(root planner.Node) *Stats {
	s := &Stats{byNode: map[planner.Node]*NodeStats{}}
	var walk func(n planner.Node, parent int) int
	walk = func(n planner.Node, parent int) int {
		ns := &NodeStats{ID: len(s.Nodes), Parent: parent, Name: NodeName(n), Node: n}
		s.Nodes = append(s.Nodes, ns)
		s.byNode[n] = ns
		for _, in := range n.Inputs() {
			ns.Inputs = append(ns.Inputs, walk(in, ns.ID))
		}
		return ns.ID
	}
	walk(root, -1)
	return s
}

// NodeName is the operator name of a plan node: its type name.
func NodeName(n planner.Node) string {
	name := fmt.Sprintf("%T", n)
	return name[strings.LastIndexByte(name, '.')+1:]
}

// wrap returns next counting the output of node n. It returns next itself
// when s is nil or does not know n.
func (s *Stats) wrap(n planner.Node, next Output) Output {
	if s == nil {
		return next
	}
	ns := s.byNode[n]
	if ns == nil {
		return next
	}
	return &countingOutput{stats: ns, next: next}
}

// Wrap is wrap for callers outside the package that build the output of a
// plan's root themselves.
func (s *Stats) Wrap(n planner.Node, next Output) Output { return s.wrap(n, next) }

// leafRan records that the leaf at plan leaf index i ran for d (batch runs,
// where the leaf's own time is its run minus what its output took).
func (s *Stats) leafRan(n planner.Node, d time.Duration) {
	if s == nil {
		return
	}
	if ns := s.byNode[n]; ns != nil {
		ns.leaf.Add(int64(d))
	}
}

// countingOutput counts the messages node stats emits into next.
type countingOutput struct {
	stats *NodeStats
	next  Output
}

func (c *countingOutput) Emit(ctx context.Context, m Message) error {
	if m.Batch != nil {
		c.stats.rows.Add(m.Batch.Rec.NumRows())
		c.stats.batches.Add(1)
	}
	start := time.Now()
	err := c.next.Emit(ctx, m)
	c.stats.inclusive.Add(int64(time.Since(start)))
	return err
}

// NodeSnapshot is a reading of one operator's counters.
type NodeSnapshot struct {
	ID, Parent int
	Name       string
	Node       planner.Node
	// RowsIn are the rows its inputs emitted, RowsOut those it emitted.
	RowsIn, RowsOut, BatchesOut int64
	// Time is the time spent in the operator itself, not downstream.
	Time time.Duration
}

// Snapshot reads every node's counters, in preorder.
func (s *Stats) Snapshot() []NodeSnapshot {
	out := make([]NodeSnapshot, len(s.Nodes))
	incl := make([]int64, len(s.Nodes))
	for i, ns := range s.Nodes {
		incl[i] = ns.inclusive.Load()
		out[i] = NodeSnapshot{ID: ns.ID, Parent: ns.Parent, Name: ns.Name, Node: ns.Node,
			RowsOut: ns.rows.Load(), BatchesOut: ns.batches.Load()}
	}
	for i, ns := range s.Nodes {
		var own int64
		if len(ns.Inputs) == 0 {
			own = ns.leaf.Load() - incl[i]
		} else {
			for _, in := range ns.Inputs {
				out[i].RowsIn += out[in].RowsOut
				own += incl[in]
			}
			own -= incl[i]
		}
		// The counters are read one after the other while the dataflow
		// runs: a reading may be a batch apart.
		out[i].Time = time.Duration(max(own, 0))
	}
	return out
}

// Find returns the snapshot of node n in snap, or nil.
func Find(snap []NodeSnapshot, n planner.Node) *NodeSnapshot {
	for i := range snap {
		if snap[i].Node == n {
			return &snap[i]
		}
	}
	return nil
}
