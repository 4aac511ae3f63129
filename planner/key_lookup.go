package planner

import (
	"github.com/streamsql/streamsql/ir"
	"github.com/streamsql/streamsql/types"
)

// PinnedKey returns, for the first key columns of a relation (key are their
// indexes, ts the relation's column types), the constant expressions a
// predicate pins each to: an AND of conjuncts among which `col = constant`
// or `col IN (constants)`. It stops at the first key column not pinned; nil
// means a scan under pred must read the whole relation. The expressions
// have the column's type (texts of any width) and no column references;
// evaluating them is the caller's business (exec.KeyRanges).
func PinnedKey(pred ir.Expr, key []int, ts []types.T) [][]ir.Expr {
	if pred == nil {
		return nil
	}
	conjuncts := splitAnd(pred, nil)
	var pinned [][]ir.Expr
	for _, col := range key {
		consts := pinnedBy(conjuncts, col, ts[col])
		if consts == nil {
			break
		}
		pinned = append(pinned, consts)
	}
	return pinned
}

// splitAnd appends the conjuncts of e to dst.
func splitAnd(e ir.Expr, dst []ir.Expr) []ir.Expr {
	if c, ok := e.(*ir.Call); ok && c.Fn == ir.FnAnd {
		for _, a := range c.Args {
			dst = splitAnd(a, dst)
		}
		return dst
	}
	return append(dst, e)
}

// pinnedBy returns the constants of the first conjunct that pins column col
// (of type t), or nil.
func pinnedBy(conjuncts []ir.Expr, col int, t types.T) []ir.Expr {
	for _, c := range conjuncts {
		var consts []ir.Expr
		switch x := c.(type) {
		case *ir.Call:
			if x.Fn != ir.FnEq || len(x.Args) != 2 {
				continue
			}
			switch {
			case isColumn(x.Args[0], col):
				consts = x.Args[1:]
			case isColumn(x.Args[1], col):
				consts = x.Args[:1]
			}
		case *ir.InList:
			if !x.Negate && isColumn(x.Arg, col) {
				consts = x.List
			}
		}
		if len(consts) > 0 && allConstants(consts, t) {
			return consts
		}
	}
	return nil
}

// allConstants reports whether every expression has no column reference and
// encodes as a key of type t (the same type, or texts of any width).
func allConstants(es []ir.Expr, t types.T) bool {
	for _, e := range es {
		et := e.Type()
		if et != t && (et.Kind != types.Text || t.Kind != types.Text) {
			return false
		}
		refs := false
		ir.Walk(e, func(x ir.Expr) bool {
			if _, ok := x.(*ir.InputRef); ok {
				refs = true
			}
			return !refs
		})
		if refs {
			return false
		}
	}
	return true
}

func isColumn(e ir.Expr, col int) bool {
	r, ok := e.(*ir.InputRef)
	return ok && r.Index == col
}
