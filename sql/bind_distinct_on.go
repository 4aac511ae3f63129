package sql

import (
	pg_query "github.com/pganalyze/pg_query_go/v6"
	"github.com/streamsql/streamsql/ir"
	"github.com/streamsql/streamsql/sqlerr"
)

// isDistinctOn reports whether a SELECT's DISTINCT clause is DISTINCT ON
// (exprs): plain DISTINCT is a list of one empty node.
func isDistinctOn(clause []*pg_query.Node) bool {
	return len(clause) > 1 || len(clause) == 1 && clause[0] != nil && clause[0].Node != nil
}

// distinctOn is a bound DISTINCT ON clause: the target index of each
// expression and where it is in the text.
type distinctOn struct {
	cols []int
	locs []int32
}

// bindDistinctOn resolves DISTINCT ON items as ORDER BY items are resolved
// (output ordinals, output names, or expressions, added as hidden targets
// when not in the select list).
func (b *binder) bindDistinctOn(ctx *exprCtx, targets []target, items []*pg_query.Node) (*distinctOn, []target, error) {
	d := &distinctOn{}
	for _, n := range items {
		loc := exprLocation(n)
		cols := make([]ir.Column, len(targets))
		for i, t := range targets {
			cols[i] = ir.Column{Name: t.name, Hidden: t.hidden}
		}
		idx := -1
		if c := n.GetAConst(); c != nil {
			iv, ok := c.Val.(*pg_query.A_Const_Ival)
			if !ok || c.Isnull {
				return nil, nil, b.errAt(c.Location, sqlerr.New(sqlerr.SyntaxError, "non-integer constant in DISTINCT ON"))
			}
			if idx, ok = outputColumn(cols, n); !ok {
				return nil, nil, b.errAt(c.Location, sqlerr.New(sqlerr.InvalidColumnReference, "DISTINCT ON position %d is not in select list", iv.Ival.Ival))
			}
		} else if i, ok := outputColumn(cols, n); ok {
			idx = i
		} else {
			e, err := b.bindExpr(ctx, n)
			if err != nil {
				return nil, nil, err
			}
			for i, t := range targets {
				if t.expr.String() == e.String() {
					idx = i
					break
				}
			}
			if idx < 0 {
				targets = append(targets, target{expr: e, name: columnName(n), hidden: true, loc: loc})
				idx = len(targets) - 1
			}
		}
		d.cols = append(d.cols, idx)
		d.locs = append(d.locs, loc)
	}
	return d, targets, nil
}

// checkOrder applies PostgreSQL's rule that DISTINCT ON expressions match
// the initial ORDER BY expressions: the ORDER BY items that are DISTINCT ON
// items come first, and if ORDER BY has other items, every DISTINCT ON item
// is among those first ones (42P10 otherwise). As in PostgreSQL, an ORDER BY
// item that repeats an earlier one (the same output column, in any
// direction) is dropped first: it cannot order rows that the earlier one
// leaves tied. It returns the ORDER BY keys that order the rows within a
// DISTINCT ON group: those after the first ones.
func (d *distinctOn) checkOrder(b *binder, keys []ir.SortKey) ([]ir.SortKey, error) {
	keys = dropRepeatedKeys(keys)
	errAt := func(col int) error {
		loc := int32(-1)
		for i, c := range d.cols {
			if c == col {
				loc = d.locs[i]
				break
			}
		}
		return b.errAt(loc, sqlerr.New(sqlerr.InvalidColumnReference, "SELECT DISTINCT ON expressions must match initial ORDER BY expressions"))
	}
	in := func(col int) bool {
		for _, c := range d.cols {
			if c == col {
				return true
			}
		}
		return false
	}
	lead := 0
	for lead < len(keys) && in(keys[lead].Column) {
		lead++
	}
	for _, k := range keys[lead:] {
		if in(k.Column) {
			return nil, errAt(k.Column)
		}
	}
	if lead < len(keys) {
		for _, c := range d.cols {
			matched := false
			for _, k := range keys[:lead] {
				matched = matched || k.Column == c
			}
			if !matched {
				return nil, errAt(c)
			}
		}
	}
	return keys[lead:], nil
}

// dropRepeatedKeys returns keys without the keys on a column an earlier key
// orders by, in a new slice if it drops any.
func dropRepeatedKeys(keys []ir.SortKey) []ir.SortKey {
	var out []ir.SortKey
	for i, k := range keys {
		repeated := false
		for _, e := range keys[:i] {
			repeated = repeated || e.Column == k.Column
		}
		switch {
		case repeated && out == nil:
			out = append([]ir.SortKey(nil), keys[:i]...)
		case !repeated && out != nil:
			out = append(out, k)
		}
	}
	if out == nil {
		return keys
	}
	return out
}

// topN keeps the first row, in within-group order, of each DISTINCT ON group
// of rel's rows.
func (d *distinctOn) topN(rel ir.Rel, within []ir.SortKey) ir.Rel {
	return &ir.TopN{Input: rel, Group: d.cols, Keys: within, Limit: 1, Kind: ir.RowNumber}
}
