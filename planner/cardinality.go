package planner

import (
	"math"

	"github.com/streamsql/streamsql/catalog"
	"github.com/streamsql/streamsql/ir"
)

// RowCounts returns an estimate of the rows a stored relation (a table or a
// materialized view) holds, and whether it has one. Batch planning uses it
// to order joins and to choose lookup joins (index_join.go); views are
// planned without it, so that their plans do not depend on the data.
type RowCounts func(rel *catalog.Relation) (rows float64, ok bool)

// rows calls rc, if it is set, never returning fewer than one row.
func (rc RowCounts) rows(rel *catalog.Relation) (float64, bool) {
	if rc == nil || rel.Kind == catalog.SystemTable || rel.Kind == catalog.Source {
		return 0, false
	}
	n, ok := rc(rel)
	return math.Max(1, n), ok
}

// BatchOptions are the options of a batch query's plan.
type BatchOptions struct {
	// Rows, if set, estimates the sizes of the relations the query reads.
	Rows RowCounts
}

// deriveRows estimates the rows of an input that is neither a scan nor a
// filter from the estimates of its inputs (rc is set). The guesses are
// PostgreSQL's in spirit, without statistics: an equi-join returns about
// as many rows as its larger input, a grouping at most maxDistinct groups
// per column.
func deriveRows(rel ir.Rel, rc RowCounts) float64 {
	switch r := rel.(type) {
	case *ir.Project:
		return estimateRows(r.Input, rc)
	case *ir.Sort:
		return estimateRows(r.Input, rc)
	case *ir.Limit:
		n := estimateRows(r.Input, rc)
		if r.Count >= 0 {
			n = math.Min(n, float64(r.Count))
		}
		return math.Max(1, n)
	case *ir.Values:
		return math.Max(1, float64(len(r.Rows)))
	case *ir.Aggregate:
		if len(r.GroupBy) == 0 {
			return 1
		}
		return math.Max(1, math.Min(estimateRows(r.Input, rc), math.Pow(maxDistinct, float64(len(r.GroupBy)))))
	case *ir.UnionAll:
		n := 0.0
		for _, in := range r.Inputs {
			n += estimateRows(in, rc)
		}
		return math.Max(1, n)
	case *ir.Join:
		l, rr := estimateRows(r.Left, rc), estimateRows(r.Right, rc)
		switch r.Type {
		case ir.SemiJoin, ir.AntiJoin, ir.NullAwareAntiJoin:
			return l
		}
		n := l * rr
		if len(r.LeftKeys) > 0 {
			// An input whose key is among the join keys matches each row of
			// the other at most once.
			n = math.Max(l, rr)
			if uniqueOn(r.Right, r.RightKeys) {
				n = l
			}
			if uniqueOn(r.Left, r.LeftKeys) {
				n = math.Min(n, rr)
			}
		} else if r.Cond != nil {
			n /= 3
		}
		switch r.Type {
		case ir.LeftJoin:
			n = math.Max(n, l)
		case ir.RightJoin:
			n = math.Max(n, rr)
		case ir.FullJoin:
			n = math.Max(n, l+rr)
		}
		return math.Max(1, n)
	}
	return defaultRows
}

// uniqueOn reports whether no two rows of rel, a stored relation with a key
// (possibly filtered and projected), have the same values of keys.
func uniqueOn(rel ir.Rel, keys []ir.Expr) bool {
	ls, ok := asLookupSide(rel)
	if !ok {
		return false
	}
	r := ls.scan.Relation
	if !r.PrimaryKey && r.Kind != catalog.MaterializedView {
		return false
	}
	for _, k := range r.Key {
		found := false
		for _, e := range keys {
			if ref, ok := e.(*ir.InputRef); ok && ls.cols[ref.Index] == k {
				found = true
			}
		}
		if !found {
			return false
		}
	}
	return len(r.Key) > 0
}
