package planner

import (
	"github.com/streamsql/streamsql/ir"
)

// AppendOnly reports whether the stream of n (in a streaming plan) only
// ever inserts rows: it reads append-only relations (APPEND ONLY tables,
// sources, views that emit on window close) through operators that never
// retract. Aggregations over such streams keep no retraction state (min and
// max keep only the current value).
func AppendOnly(n Node) bool {
	switch n := n.(type) {
	case *Scan:
		return n.Relation.AppendOnly
	case *Filter, *Project, *HopWindow, *Expand, *Unnest, *Materialize, *LateFilter:
		return AppendOnly(n.Inputs()[0])
	case *HashAgg:
		return n.EmitOnWindowClose
	case *TopN:
		return n.EmitOnWindowClose
	case *EowcGate:
		return true
	case *Join:
		// An inner join of inserts is inserts; outer joins retract the
		// NULL-padded rows they replace.
		return n.Type == ir.InnerJoin && AppendOnly(n.Left) && AppendOnly(n.Right)
	case *Union:
		for _, in := range n.Ins {
			if !AppendOnly(in) {
				return false
			}
		}
		return true
	}
	return false
}
