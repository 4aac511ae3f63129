package planner

import (
	"fmt"
	"slices"
	"strings"

	"github.com/streamsql/streamsql/ir"
	"github.com/streamsql/streamsql/types"
)

// Fragments is how a view's dataflow runs on several actors: its plan cut
// into fragments at hash exchanges. Fragment 0 reads the plan's leaves and
// runs as one actor (the view's actor: scans, backfills, pause gates and
// whatever stays unpartitioned above them), or, when its leaves are all
// sources split among Readers readers (CutSourceFragments), as Readers
// actors, each reading its share of the splits through the same stateless
// chain. Every other fragment runs as N
// actors, actor i owning the virtual nodes state.VNodeRange(i, N) of its
// partition key; the last one ends in the view's Materialize (each actor
// writes the view rows of its virtual nodes). An Exchange repartitions the
// rows of its Input, produced by fragment From (one actor, or N), among the
// N actors of fragment To, by the virtual node of the key columns Keys.
//
// A plan is cut before every partitioned operator (a grouped aggregation,
// an equi-join, a TopN per group, window functions with PARTITION BY) whose input is not already partitioned by the operator's
// key, and before the Materialize when the last fragment is not
// partitioned by columns of the view's key, so that two actors never
// change the same view row.
type Fragments struct {
	Exchanges []*Exchange
	// Frags[0] is the leaf fragment (Root nil); the last is the one that
	// ends in the Materialize.
	Frags []*Fragment
	// ViewKeys are the view's columns (a subset of its key) by which the
	// last fragment's rows are partitioned, of types ViewKeyTypes: a view
	// row belongs to the actor its values hash to.
	ViewKeys     []int
	ViewKeyTypes []types.T
	// Readers is the number of actors of fragment 0 (at least 1).
	Readers int
}

// Fragment is a part of the plan that runs on one set of actors.
type Fragment struct {
	// Root is the fragment's top node, whose rows go to the exchange Out
	// (or, for the last fragment, to the Materialize).
	Root Node
	// Ins are the indexes of the exchanges into the fragment, Out the one
	// out of it (-1 for the last fragment and for fragment 0, which has
	// several: every exchange whose From is 0).
	Ins []int
	Out int
}

// Exchange is a hash exchange between two fragments.
type Exchange struct {
	Input    Node
	Keys     []int
	KeyTypes []types.T
	From, To int
	// Net is set when the rows are repartitioned from several actors, their
	// partition key is not part of their stream key and the receiving
	// operator needs each row's changes in order (see ordered): the changes of
	// one row may then come from different actors in one epoch (a join
	// output row whose both sides moved to another join key), in any order,
	// so the receiving side nets out each epoch's changes and passes them
	// on at its barrier (exec.NetChanges).
	Net bool
}

// distribution is how the rows of a node are spread over actors: on one
// actor (frag 0), or by the virtual node of one of the equivalent key
// column lists keys (nil: by none the planner knows of).
type distribution struct {
	frag  int
	keys  [][]int
	types []types.T
}

// fragmenter cuts a plan bottom-up.
type fragmenter struct {
	f *Fragments
}

// CutFragments returns how p runs on several actors, or nil if it must run as
// one: it has no partitioned operator, or a part that reads several
// actors' rows is not one the runtime can split (an operator whose state
// is not confined to one partition key above a partitioned one: global
// aggregates, TopN without groups, window functions without PARTITION BY;
// a union of partitioned and unpartitioned inputs).
func CutFragments(p *StreamPlan) *Fragments {
	return cut(p, 1)
}

// CutSourceFragments is CutFragments for a plan whose every leaf is a scan
// of a source that readers actors read a share of each: fragment 0 runs as
// readers actors, so it must hold only stateless operators (scans, filters,
// projections), and a plan with no partitioned operator is cut before its
// Materialize, by the view's key. It returns nil if fragment 0 would hold
// anything else.
func CutSourceFragments(p *StreamPlan, readers int) *Fragments {
	if readers <= 1 {
		return CutFragments(p)
	}
	return cut(p, readers)
}

func cut(p *StreamPlan, readers int) *Fragments {
	fr := &fragmenter{f: &Fragments{Frags: []*Fragment{{Out: -1}}, Readers: readers}}
	d, ok := fr.visit(p.Root.Input)
	if !ok || (d.frag == 0 && readers == 1) {
		return nil
	}
	m := p.Root
	if readers > 1 {
		if d.frag == 0 && !stateless(m.Input) {
			return nil
		}
		for _, x := range fr.f.Exchanges {
			if x.From == 0 && !stateless(x.Input) {
				return nil
			}
		}
	}
	top := d.frag
	fr.f.ViewKeys, fr.f.ViewKeyTypes = nil, nil
	for _, k := range d.keys {
		if subset(k, m.Key) {
			fr.f.ViewKeys, fr.f.ViewKeyTypes = k, d.types
			break
		}
	}
	if fr.f.ViewKeys == nil {
		// Repartition by the view's key before the Materialize (also the
		// rows of several readers of a stateless plan).
		ts := make([]types.T, len(m.Key))
		for i, k := range m.Key {
			ts[i] = m.Cols[k].Type
		}
		top = fr.exchange(m.Input, d, m.Key, ts)
		fr.f.ViewKeys, fr.f.ViewKeyTypes = m.Key, ts
	}
	fr.f.Frags[top].Root = m.Input
	fr.compact(top)
	return fr.f
}

// stateless reports whether n and the nodes below it are scans, filters and
// projections only, which keep no state and can run on every reader.
func stateless(n Node) bool {
	switch n.(type) {
	case *Scan:
		return true
	case *Filter, *Project:
		return stateless(n.Inputs()[0])
	}
	return false
}

// compact drops the fragments merged into others and renumbers the rest,
// top (the one ending in the Materialize) last.
func (fr *fragmenter) compact(top int) {
	f := fr.f
	renum := make([]int, len(f.Frags))
	frags := []*Fragment{f.Frags[0]}
	for i, x := range f.Frags {
		if i > 0 && i != top && x.Root != nil {
			renum[i] = len(frags)
			frags = append(frags, x)
		}
	}
	renum[top] = len(frags)
	frags = append(frags, f.Frags[top])
	for _, x := range f.Exchanges {
		x.From, x.To = renum[x.From], renum[x.To]
	}
	f.Frags = frags
}

// visit returns the distribution of n's rows, cutting the plan below n
// where n needs its inputs repartitioned; ok is false if n cannot run
// with the distribution of its inputs.
func (fr *fragmenter) visit(n Node) (distribution, bool) {
	in := n.Inputs()
	ds := make([]distribution, len(in))
	parallel := false
	for i, c := range in {
		var ok bool
		if ds[i], ok = fr.visit(c); !ok {
			return distribution{}, false
		}
		parallel = parallel || ds[i].frag != 0
	}
	if keys, ts, ok := partitionKey(n); ok {
		return fr.partitioned(n, in, ds, keys, ts), true
	}
	if !parallel {
		return distribution{}, true
	}
	switch n := n.(type) {
	case *Filter:
		return ds[0], true
	case *Project:
		return projectDistribution(n, ds[0]), true
	}
	return distribution{}, false
}

// partitioned places n, partitioned on keys[i] of each input i, in a
// fragment of its own or in that of inputs already partitioned so.
func (fr *fragmenter) partitioned(n Node, in []Node, ds []distribution, keys [][]int, ts []types.T) distribution {
	// Inputs already partitioned by n's key stay in their fragment, which
	// n joins; the others are exchanged into it.
	to := -1
	for i, d := range ds {
		if d.frag != 0 && d.partitionedBy(keys[i], ts) {
			switch {
			case to < 0:
				to = d.frag
			case to != d.frag:
				// Two fragments partitioned alike: their actors i meet.
				fr.mergeFrags(to, d.frag)
				ds[i].frag = to
			}
		}
	}
	if to < 0 {
		to = fr.newFrag()
	}
	for i, d := range ds {
		if !(d.frag == to && d.partitionedBy(keys[i], ts)) {
			fr.exchangeTo(in[i], d, keys[i], ts, to, ordered(n))
		}
	}
	return distribution{frag: to, keys: outputKeys(n, keys), types: ts}
}

// exchange cuts below a new fragment reading n's rows by keys.
func (fr *fragmenter) exchange(n Node, d distribution, keys []int, ts []types.T) int {
	// n is the top of d's fragment.
	to := fr.newFrag()
	fr.exchangeTo(n, d, keys, ts, to, true)
	return to
}

// exchangeTo cuts between n, with distribution d, and fragment to, whose
// operator reading n's rows needs, if order, each stream key's changes in
// the order they were made.
func (fr *fragmenter) exchangeTo(n Node, d distribution, keys []int, ts []types.T, to int, order bool) {
	x := &Exchange{Input: n, Keys: keys, KeyTypes: ts, From: d.frag, To: to,
		Net: order && d.frag != 0 && !d.keyedBy(n.StreamKey())}
	fr.f.Exchanges = append(fr.f.Exchanges, x)
	i := len(fr.f.Exchanges) - 1
	fr.f.Frags[to].Ins = append(fr.f.Frags[to].Ins, i)
	if d.frag != 0 {
		fr.f.Frags[d.frag].Out = i
		fr.f.Frags[d.frag].Root = n
	}
}

func (fr *fragmenter) newFrag() int {
	fr.f.Frags = append(fr.f.Frags, &Fragment{Out: -1})
	return len(fr.f.Frags) - 1
}

// mergeFrags moves fragment b's inputs into a (b stays, empty and
// unreachable, so that indexes do not move; compact drops it).
func (fr *fragmenter) mergeFrags(a, b int) {
	for _, i := range fr.f.Frags[b].Ins {
		fr.f.Exchanges[i].To = a
	}
	fr.f.Frags[a].Ins = append(fr.f.Frags[a].Ins, fr.f.Frags[b].Ins...)
	fr.f.Frags[b].Ins = nil
	fr.f.Frags[b].Root = nil
}

// partitionedBy reports whether d's rows are spread over several actors by
// the virtual node of keys (of types ts).
func (d distribution) partitionedBy(keys []int, ts []types.T) bool {
	if !slices.EqualFunc(d.types, ts, func(a, b types.T) bool { return a == b }) {
		return false
	}
	for _, k := range d.keys {
		if slices.Equal(k, keys) {
			return true
		}
	}
	return false
}

// keyedBy reports whether the stream key key determines which actor a
// row is on: one of d's partition keys is made of key's columns.
func (d distribution) keyedBy(key []int) bool {
	for _, k := range d.keys {
		if subset(k, key) {
			return true
		}
	}
	return false
}

// projectDistribution maps d through p: a partition key survives if p
// passes all of its columns on.
func projectDistribution(p *Project, d distribution) distribution {
	out := distribution{frag: d.frag, types: d.types}
	pos := map[int]int{}
	for i, e := range p.Exprs {
		if ref, ok := e.(*ir.InputRef); ok {
			if _, dup := pos[ref.Index]; !dup {
				pos[ref.Index] = i
			}
		}
	}
next:
	for _, k := range d.keys {
		mapped := make([]int, len(k))
		for j, c := range k {
			i, ok := pos[c]
			if !ok {
				continue next
			}
			mapped[j] = i
		}
		out.keys = append(out.keys, mapped)
	}
	return out
}

// ordered reports whether partitioned operator n needs the changes of each
// input row in order. A join and the Materialize keep one entry per input
// stream key, as do the value sets of min, max and DISTINCT aggregates: an
// insert of a key before the delete of its old version would be undone by
// the delete. The other aggregates' states are sums over the rows, which
// any interleaving of the actors' ordered streams keeps those of a
// multiset of rows (no row's count goes below zero), and are emitted only
// at the barrier.
func ordered(n Node) bool {
	if a, ok := n.(*HashAgg); ok {
		return slices.ContainsFunc(a.ValueSets, func(slot int) bool { return slot >= 0 })
	}
	return true
}

// partitionKey returns the partition key of each input of n, of types ts,
// if n is an operator whose every state access is within one value of it.
func partitionKey(n Node) (keys [][]int, ts []types.T, ok bool) {
	switch x := n.(type) {
	case *HashAgg:
		// A windowed aggregation cleans by watermark per virtual node:
		// every actor gets every watermark and cleans its own groups.
		if len(x.GroupCols) == 0 {
			return nil, nil, false
		}
		return [][]int{x.GroupCols}, x.GroupTypes, true
	case *Join:
		if !partitionableJoin(x) {
			return nil, nil, false
		}
		return [][]int{x.LeftKeys, x.RightKeys}, x.KeyTypes, true
	case *TopN:
		// A TopN per group keeps each group's rows under its group key;
		// dropping final groups by watermark is per virtual node.
		if len(x.GroupCols) == 0 || x.Sequence {
			return nil, nil, false
		}
		return [][]int{x.GroupCols}, x.GroupTypes(), true
	case *Window:
		// Window functions read and write one partition at a time; cleaning
		// by watermark walks the actor's own partitions.
		if len(x.PartitionCols) == 0 || x.Table < 0 {
			return nil, nil, false
		}
		return [][]int{x.PartitionCols}, x.PartitionTypes, true
	case *SessionWindow:
		// Sessions are per partition; dropping final sessions walks the
		// actor's virtual nodes of its index.
		if len(x.PartitionCols) == 0 || x.Key == nil {
			return nil, nil, false
		}
		return [][]int{x.PartitionCols}, x.PartitionTypes(), true
	case *AsofJoin:
		// Every state access is within one join key.
		if len(x.LeftKeys) == 0 || x.Left == x.Right {
			return nil, nil, false
		}
		return [][]int{x.LeftKeys, x.RightKeys}, x.KeyTypes, true
	}
	return nil, nil, false
}

// outputKeys returns the columns of partitioned operator n's output that
// hold its partition key: an aggregation's group columns, a join's key
// columns of the sides that are never NULL-padded.
func outputKeys(n Node, keys [][]int) [][]int {
	switch x := n.(type) {
	case *HashAgg:
		return [][]int{seq(len(x.GroupCols))}
	case *Join:
		nl := len(x.Left.Columns())
		right := make([]int, len(x.RightKeys))
		for i, k := range x.RightKeys {
			right[i] = nl + k
		}
		switch x.Type {
		case ir.InnerJoin:
			return [][]int{x.LeftKeys, right}
		case ir.RightJoin:
			return [][]int{right}
		}
		return [][]int{x.LeftKeys}
	case *TopN:
		// Its output rows are input rows (and a rank after them).
		return [][]int{x.GroupCols}
	case *Window:
		// Input columns, then the calls' results.
		return [][]int{x.PartitionCols}
	case *SessionWindow:
		// Input columns, then window_start and window_end.
		return [][]int{x.PartitionCols}
	case *AsofJoin:
		// Left columns, then right ones, NULL-padded in an outer join.
		if x.Outer {
			return [][]int{x.LeftKeys}
		}
		nl := len(x.Left.Columns())
		right := make([]int, len(x.RightKeys))
		for i, k := range x.RightKeys {
			right[i] = nl + k
		}
		return [][]int{x.LeftKeys, right}
	}
	return nil
}

// subset reports whether every column of cols is in set (and cols is not
// empty).
func subset(cols, set []int) bool {
	for _, c := range cols {
		if !slices.Contains(set, c) {
			return false
		}
	}
	return len(cols) > 0
}

// partitionableJoin reports whether every state access of join j is within
// one join key, or within the virtual nodes of its actor: equality keys,
// not null-aware (which counts every right row). Watermark cleaning (window
// and interval joins) deletes and scans per virtual node, its time indexes
// being keyed by virtual node first, and every actor gets every watermark.
func partitionableJoin(j *Join) bool {
	switch j.Type {
	case ir.InnerJoin, ir.LeftJoin, ir.RightJoin, ir.SemiJoin, ir.AntiJoin:
	default:
		return false
	}
	return len(j.LeftKeys) > 0 && j.Left != j.Right
}

// Describe renders the fragments at parallelism n for EXPLAIN, one line per
// fragment, the view's actor first.
func (f *Fragments) Describe(n int) []string {
	out := []string{fmt.Sprintf("Parallelism { actors: %d, virtual_nodes: 256, fragments: %d }", n, f.count())}
	for i, fr := range f.Frags {
		var ins []string
		for _, x := range fr.Ins {
			ins = append(ins, f.Exchanges[x].describe())
		}
		top := "none"
		if fr.Root != nil {
			top = nodeName(fr.Root)
			if len(fr.Ins) == 1 && f.Exchanges[fr.Ins[0]].Input == fr.Root {
				top = "none"
			}
		}
		switch {
		case i == 0 && f.Readers > 1:
			out = append(out, fmt.Sprintf("  Fragment 0 { actors: %d, reads: sources, splits shared among %d readers }", f.Readers, f.Readers))
		case i == 0:
			out = append(out, "  Fragment 0 { actors: 1, reads: sources and upstreams }")
		case i == len(f.Frags)-1:
			out = append(out, fmt.Sprintf("  Fragment %d { actors: %d, top: %s, exchanges in: %s, into: Materialize }", i, n, top, strings.Join(ins, ", ")))
		default:
			out = append(out, fmt.Sprintf("  Fragment %d { actors: %d, top: %s, exchanges in: %s }", i, n, top, strings.Join(ins, ", ")))
		}
	}
	return out
}

// SingleProducer reports whether every exchange reads from fragment 0 run
// as one actor: no actor merges the streams of several producers.
func (f *Fragments) SingleProducer() bool {
	if f.Readers > 1 {
		return false
	}
	for _, x := range f.Exchanges {
		if x.From != 0 {
			return false
		}
	}
	return true
}

// count is the number of fragments.
func (f *Fragments) count() int { return len(f.Frags) }

func (x *Exchange) describe() string {
	cols := x.Input.Columns()
	var names []string
	for _, k := range x.Keys {
		names = append(names, cols[k].Name)
	}
	s := fmt.Sprintf("HashShard(%s) from fragment %d", strings.Join(names, ", "), x.From)
	if x.Net {
		s += " netted per epoch"
	}
	return s
}

// nodeName is the operator name EXPLAIN gives n.
func nodeName(n Node) string {
	switch x := n.(type) {
	case *HashAgg:
		return "HashAgg"
	case *Join:
		return "HashJoin"
	case *AsofJoin:
		return "AsofJoin"
	case *Window:
		return "OverWindow"
	case *Project:
		return "Project over " + nodeName(x.Input)
	case *Filter:
		return "Filter over " + nodeName(x.Input)
	}
	return fmt.Sprintf("%T", n)[len("*planner."):]
}
