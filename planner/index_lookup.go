package planner

import (
	"github.com/streamsql/streamsql/catalog"
	"github.com/streamsql/streamsql/ir"
	"github.com/streamsql/streamsql/types"
)

// IndexLookup is how a scan reads a table through one of its secondary
// indexes: the entries whose first len(Eq) columns equal one of their
// constants and, when Lower or Upper is set, whose next column is within
// those bounds. The rows found must still be checked against the predicate
// (exec.IndexRowRanges).
type IndexLookup struct {
	Index *catalog.Index
	Eq    [][]ir.Expr
	// Lower and Upper bound the index column after the pinned ones; nil is
	// unbounded. The Incl flags make a bound inclusive.
	Lower, Upper         ir.Expr
	LowerIncl, UpperIncl bool
}

// Ranged reports whether the lookup bounds the column after the pinned ones.
func (l *IndexLookup) Ranged() bool { return l.Lower != nil || l.Upper != nil }

// ChooseIndex returns the index of rel that best narrows a scan under pred:
// the one with the most leading columns pinned to constants by `col =
// constant` or `col IN (constants)` conjuncts, then bounded by `col <, <=,
// >, >= constant` (and BETWEEN) on the next. It returns nil when no index
// helps. Columns whose key order or equality differs from SQL's (interval,
// arrays) are never looked up.
func ChooseIndex(pred ir.Expr, rel *catalog.Relation) *IndexLookup {
	if pred == nil || len(rel.Indexes) == 0 {
		return nil
	}
	conjuncts := splitAnd(pred, nil)
	ts := rel.Types()
	var best *IndexLookup
	bestScore := 0
	for i := range rel.Indexes {
		idx := &rel.Indexes[i]
		l := &IndexLookup{Index: idx}
		for _, col := range idx.Columns {
			if !indexable(ts[col]) {
				break
			}
			consts := pinnedBy(conjuncts, col, ts[col])
			if consts == nil {
				l.bound(conjuncts, col, ts[col])
				break
			}
			l.Eq = append(l.Eq, consts)
		}
		score := 2 * len(l.Eq)
		if l.Ranged() {
			score++
		}
		if score > bestScore {
			best, bestScore = l, score
		}
	}
	return best
}

// indexable reports whether lookups of a column of type t may use the key
// encoding: equal keys for equal values, key order for SQL order.
func indexable(t types.T) bool {
	return t.Kind != types.Interval && t.Kind != types.Array
}

// bound sets the lookup's bounds on column col from the first conjuncts
// comparing it with a constant.
func (l *IndexLookup) bound(conjuncts []ir.Expr, col int, t types.T) {
	for _, c := range conjuncts {
		x, ok := c.(*ir.Call)
		if !ok || len(x.Args) != 2 {
			continue
		}
		fn := x.Fn
		var k ir.Expr
		switch {
		case isColumn(x.Args[0], col):
			k = x.Args[1]
		case isColumn(x.Args[1], col):
			k = x.Args[0]
			// constant < col is col > constant
			switch fn {
			case ir.FnLt:
				fn = ir.FnGt
			case ir.FnLe:
				fn = ir.FnGe
			case ir.FnGt:
				fn = ir.FnLt
			case ir.FnGe:
				fn = ir.FnLe
			}
		default:
			continue
		}
		if !allConstants([]ir.Expr{k}, t) {
			continue
		}
		switch fn {
		case ir.FnGt, ir.FnGe:
			if l.Lower == nil {
				l.Lower, l.LowerIncl = k, fn == ir.FnGe
			}
		case ir.FnLt, ir.FnLe:
			if l.Upper == nil {
				l.Upper, l.UpperIncl = k, fn == ir.FnLe
			}
		}
	}
}
