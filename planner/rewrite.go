package planner

import (
	"github.com/streamsql/streamsql/ir"
	"github.com/streamsql/streamsql/types"
)

// pushDown is the planner's rewrite pass over a bound query: it moves filter
// conjuncts into joins, where equalities between the two inputs become join
// keys and conditions on one input filter that input before the join.
// Without it, FROM a, b WHERE a.k = b.k would join every pair of rows.
func pushDown(rel ir.Rel) ir.Rel {
	switch r := rel.(type) {
	case *ir.Filter:
		return pushFilter(pushDown(r.Input), r.Pred)
	case *ir.Join:
		j := *r
		j.Left, j.Right = pushDown(r.Left), pushDown(r.Right)
		return pushIntoJoin(&j, nil)
	case *ir.Project:
		in := pushDown(r.Input)
		if inner, ok := in.(*ir.Project); ok && composable(r.Exprs, inner.Exprs) {
			// One projection instead of two.
			exprs := make([]ir.Expr, len(r.Exprs))
			for i, e := range r.Exprs {
				exprs[i], _ = substitute(e, inner.Exprs)
			}
			return &ir.Project{Input: inner.Input, Exprs: exprs, Cols: r.Cols}
		}
		return &ir.Project{Input: in, Exprs: r.Exprs, Cols: r.Cols}
	default:
		// Other operators pass the rewrite to their inputs. Filters above
		// them stay above: above a window or an aggregation they see its
		// results, under an ASOF join they would change which right row
		// is the closest.
		ins := ir.Inputs(rel)
		if len(ins) == 0 {
			return rel
		}
		out := make([]ir.Rel, len(ins))
		for i, in := range ins {
			out[i] = pushDown(in)
		}
		return ir.WithInputs(rel, out)
	}
}

// pushFilter places a filter of pred over rel, which has been through
// pushDown (so its own subtree is not rewritten again: queries joining
// many tables would take quadratic time).
func pushFilter(rel ir.Rel, pred ir.Expr) ir.Rel {
	switch x := rel.(type) {
	case *ir.Join:
		return pushIntoJoin(x, ir.Conjuncts(pred))
	case *ir.Project:
		// Filter the projection's input instead, with the projected
		// expressions in place of the columns, so that the predicate reaches
		// the joins below (the merged columns of JOIN USING, subqueries in
		// FROM).
		if p, ok := substitute(pred, x.Exprs); ok {
			return &ir.Project{Input: pushFilter(x.Input, p), Exprs: x.Exprs, Cols: x.Cols}
		}
	}
	return &ir.Filter{Input: rel, Pred: pred}
}

// pushIntoJoin places the conjuncts of a filter above j, and of j's own
// condition, where they belong: a conjunct over one input only filters that
// input (if the join type allows: not the NULL-padded side of an outer join
// for a filter above it, not the preserved side for an ON condition), an
// equality between the inputs becomes a key of an inner join, and the rest
// stays in the join's condition (inner joins) or in a filter above it. j's
// inputs have been through pushDown.
func pushIntoJoin(j *ir.Join, above []ir.Expr) ir.Rel {
	nl := len(j.Left.Columns())
	var leftPreds, rightPreds, cond, remain []ir.Expr
	out := *j
	// Conditions above the join.
	for _, c := range above {
		switch side := ir.SideOf(c, nl); {
		case !j.Type.KeepsRight():
			// Semi and anti joins output the left columns only.
			leftPreds = append(leftPreds, c)
		case side == 1 && (j.Type == ir.InnerJoin || j.Type == ir.LeftJoin):
			leftPreds = append(leftPreds, c)
		case side == 2 && (j.Type == ir.InnerJoin || j.Type == ir.RightJoin):
			rightPreds = append(rightPreds, ir.ShiftRefs(c, -nl))
		case side == 3 && j.Type == ir.InnerJoin:
			cond = append(cond, c)
		default:
			remain = append(remain, c)
		}
	}
	// The join's own condition.
	for _, c := range ir.Conjuncts(j.Cond) {
		switch side := ir.SideOf(c, nl); {
		case side == 1 && (j.Type == ir.InnerJoin || j.Type == ir.RightJoin || j.Type == ir.SemiJoin):
			leftPreds = append(leftPreds, c)
		case side == 2 && (j.Type == ir.InnerJoin || j.Type == ir.LeftJoin || !j.Type.KeepsRight()):
			rightPreds = append(rightPreds, ir.ShiftRefs(c, -nl))
		default:
			cond = append(cond, c)
		}
	}
	out.Cond = nil
	var rest []ir.Expr
	for _, c := range cond {
		if call, ok := c.(*ir.Call); ok && call.Fn == ir.FnEq {
			l, r := call.Args[0], call.Args[1]
			ls, rs := ir.SideOf(l, nl), ir.SideOf(r, nl)
			if ls == 2 && rs == 1 {
				l, r, ls, rs = r, l, rs, ls
			}
			if ls == 1 && rs == 2 && ir.KeyCompatible(l.Type(), r.Type()) {
				out.LeftKeys = append(append([]ir.Expr(nil), out.LeftKeys...), l)
				out.RightKeys = append(append([]ir.Expr(nil), out.RightKeys...), ir.ShiftRefs(r, -nl))
				continue
			}
		}
		rest = append(rest, c)
	}
	out.Cond = conjunction(rest)
	unhashableKeys(&out, nl)
	if len(leftPreds) > 0 {
		out.Left = pushFilter(out.Left, conjunction(leftPreds))
	}
	if len(rightPreds) > 0 {
		out.Right = pushFilter(out.Right, conjunction(rightPreds))
	}
	if len(remain) > 0 {
		return &ir.Filter{Input: &out, Pred: conjunction(remain)}
	}
	return &out
}

// unhashableKeys moves the keys of j that cannot be hash keys (see
// ir.KeyCompatible) into its condition. A null-aware anti join (NOT IN)
// becomes an anti join on the condition that x <> y is not true.
func unhashableKeys(j *ir.Join, nl int) {
	var lk, rk, moved []ir.Expr
	for i, l := range j.LeftKeys {
		r := j.RightKeys[i]
		if ir.KeyCompatible(l.Type(), r.Type()) {
			lk, rk = append(lk, l), append(rk, r)
			continue
		}
		args := []ir.Expr{l, ir.ShiftRefs(r, nl)}
		if j.Type == ir.NullAwareAntiJoin {
			ne := &ir.Call{Fn: ir.FnNe, T: types.BoolT, Args: args}
			isTrue := &ir.Call{Fn: ir.FnIsTrue, T: types.BoolT, Args: []ir.Expr{ne}}
			moved = append(moved, &ir.Call{Fn: ir.FnNot, T: types.BoolT, Args: []ir.Expr{isTrue}})
		} else {
			moved = append(moved, &ir.Call{Fn: ir.FnEq, T: types.BoolT, Args: args})
		}
	}
	if len(moved) == 0 {
		return
	}
	if j.Type == ir.NullAwareAntiJoin {
		j.Type = ir.AntiJoin
	}
	j.LeftKeys, j.RightKeys = lk, rk
	j.Cond = conjunction(append(ir.Conjuncts(j.Cond), moved...))
}

func conjunction(cs []ir.Expr) ir.Expr {
	switch len(cs) {
	case 0:
		return nil
	case 1:
		return cs[0]
	}
	return &ir.Call{Fn: ir.FnAnd, Args: cs, T: cs[0].Type()}
}

// substitute replaces the column references of e with the expressions they
// refer to. It declines (false) when one of those is volatile (now()),
// whose value must not be computed twice.
func substitute(e ir.Expr, exprs []ir.Expr) (ir.Expr, bool) {
	ok := true
	out := ir.Rewrite(e, func(x ir.Expr) ir.Expr {
		if ref, isRef := x.(*ir.InputRef); isRef {
			if volatile(exprs[ref.Index]) {
				ok = false
			}
			return exprs[ref.Index]
		}
		return x
	})
	return out, ok
}

func volatile(e ir.Expr) bool {
	found := false
	ir.Walk(e, func(x ir.Expr) bool {
		if c, ok := x.(*ir.Call); ok && (c.Fn == ir.FnNow || ir.Volatile(c.Fn)) {
			found = true
		}
		return !found
	})
	return found
}

// composable reports whether a projection of exprs over a projection of
// inner can be one projection without computing anything twice: every
// inner expression other than a column or a constant is used at most once,
// and none is volatile.
func composable(exprs, inner []ir.Expr) bool {
	uses := make([]int, len(inner))
	for _, e := range exprs {
		ir.Walk(e, func(x ir.Expr) bool {
			if ref, ok := x.(*ir.InputRef); ok {
				uses[ref.Index]++
			}
			return true
		})
	}
	for i, e := range inner {
		if volatile(e) {
			return false
		}
		switch e.(type) {
		case *ir.InputRef, *ir.Const:
			continue
		}
		if uses[i] > 1 {
			return false
		}
	}
	return true
}
