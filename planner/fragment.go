package planner

import (
	"fmt"
	"strings"

	"github.com/streamsql/streamsql/sql"
	"github.com/streamsql/streamsql/types"
)

// Partitioning is how a view's dataflow runs on several actors. The plan is
// cut below Op, a partitioned operator: the part under Op (scans and what
// they feed) runs as one actor, which ends in a hash exchange per input of
// Op; Op and the stateless operators above it, down to the view's
// Materialize, run as N actors. Every row of Op's input i goes to the actor
// owning the virtual node of its key Keys[i] (state.VNode of the columns'
// memcomparable encoding with types KeyTypes), so each actor holds every
// row of the groups or join keys of its virtual nodes and its state tables
// hold only their keys; the actors' Materializes write disjoint view keys,
// because the view's key determines Op's partition key.
type Partitioning struct {
	// Op is a *HashAgg (keyed by its group columns) or a *Join (keyed by
	// its join keys on each side).
	Op       Node
	Keys     [][]int
	KeyTypes []types.T
	// ViewKeys are the view's columns holding the partition key (a subset
	// of its key): a view row belongs to the actor its values hash to.
	ViewKeys []int
}

// Partition returns how p can run on several actors, or nil if it must run
// as one: the plan has no partitioned operator reached from its
// Materialize through projections and filters only; the operator keeps
// state that is not confined to its partition key (global aggregates,
// null-aware anti joins, joins without equality keys);
// or the view's key does not determine the partition key (two actors could
// then change the same view row in the same epoch, in either order).
func Partition(p *StreamPlan) *Partitioning {
	// toView maps the current node's columns to the view's columns.
	toView := make(map[int]int, len(p.Root.Cols))
	for i := range p.Root.Cols {
		toView[i] = i
	}
	inKey := make(map[int]bool, len(p.Root.Key))
	for _, k := range p.Root.Key {
		inKey[k] = true
	}
	// covered reports whether every column of cols maps to a view key
	// column.
	covered := func(cols []int) bool {
		for _, c := range cols {
			v, ok := toView[c]
			if !ok || !inKey[v] {
				return false
			}
		}
		return len(cols) > 0
	}
	viewCols := func(cols []int) []int {
		out := make([]int, len(cols))
		for i, c := range cols {
			out[i] = toView[c]
		}
		return out
	}
	n := p.Root.Input
	for {
		switch x := n.(type) {
		case *Filter:
			n = x.Input
			continue
		case *Project:
			next := make(map[int]int, len(x.Exprs))
			for i, e := range x.Exprs {
				if ref, ok := e.(*sql.InputRef); ok {
					if v, ok := toView[i]; ok {
						if _, dup := next[ref.Index]; !dup {
							next[ref.Index] = v
						}
					}
				}
			}
			toView, n = next, x.Input
			continue
		case *HashAgg:
			// A windowed aggregation cleans by watermark per virtual node:
			// every actor gets every watermark and cleans its own groups.
			if len(x.GroupCols) == 0 || !covered(seq(len(x.GroupCols))) {
				return nil
			}
			return &Partitioning{Op: x, Keys: [][]int{x.GroupCols}, KeyTypes: x.GroupTypes, ViewKeys: viewCols(seq(len(x.GroupCols)))}
		case *Join:
			if !partitionableJoin(x) {
				return nil
			}
			nl := len(x.Left.Columns())
			right := make([]int, len(x.RightKeys))
			for i, k := range x.RightKeys {
				right[i] = nl + k
			}
			// The side whose key columns are never NULL-padded must be
			// determined by the view's key.
			var side []int
			switch {
			case x.Type != sql.RightJoin && covered(x.LeftKeys):
				side = x.LeftKeys
			case (x.Type == sql.InnerJoin || x.Type == sql.RightJoin) && covered(right):
				side = right
			default:
				return nil
			}
			return &Partitioning{Op: x, Keys: [][]int{x.LeftKeys, x.RightKeys}, KeyTypes: x.KeyTypes, ViewKeys: viewCols(side)}
		}
		return nil
	}
}

// partitionableJoin reports whether every state access of join j is within
// one join key, or within the virtual nodes of its actor: equality keys,
// not null-aware (which counts every right row). Watermark cleaning (window
// and interval joins) deletes and scans per virtual node, its time indexes
// being keyed by virtual node first, and every actor gets every watermark.
func partitionableJoin(j *Join) bool {
	switch j.Type {
	case sql.InnerJoin, sql.LeftJoin, sql.RightJoin, sql.SemiJoin, sql.AntiJoin:
	default:
		return false
	}
	return len(j.LeftKeys) > 0 && j.Left != j.Right
}

// Describe renders the partitioning at parallelism n for EXPLAIN: the
// exchanges into the partitioned operator and on which columns.
func (pt *Partitioning) Describe(n int) string {
	var ins []string
	for i, in := range pt.Op.Inputs() {
		cols := in.Columns()
		var names []string
		for _, k := range pt.Keys[i] {
			names = append(names, cols[k].Name)
		}
		ins = append(ins, "HashShard("+strings.Join(names, ", ")+")")
	}
	op := "HashAgg"
	if _, ok := pt.Op.(*Join); ok {
		op = "HashJoin"
	}
	return fmt.Sprintf("Parallelism { actors: %d, virtual_nodes: 256, exchange: %s into %s }", n, strings.Join(ins, " and "), op)
}
