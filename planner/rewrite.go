package planner

import (
	"github.com/streamsql/streamsql/sql"
	"github.com/streamsql/streamsql/types"
)

// pushDown is the planner's rewrite pass over a bound query: it moves filter
// conjuncts into joins, where equalities between the two inputs become join
// keys and conditions on one input filter that input before the join.
// Without it, FROM a, b WHERE a.k = b.k would join every pair of rows.
func pushDown(rel sql.Rel) sql.Rel {
	switch r := rel.(type) {
	case *sql.Filter:
		return pushFilter(pushDown(r.Input), r.Pred)
	case *sql.Join:
		j := *r
		j.Left, j.Right = pushDown(r.Left), pushDown(r.Right)
		return pushIntoJoin(&j, nil)
	case *sql.Project:
		in := pushDown(r.Input)
		if inner, ok := in.(*sql.Project); ok && composable(r.Exprs, inner.Exprs) {
			// One projection instead of two.
			exprs := make([]sql.Expr, len(r.Exprs))
			for i, e := range r.Exprs {
				exprs[i], _ = substitute(e, inner.Exprs)
			}
			return &sql.Project{Input: inner.Input, Exprs: exprs, Cols: r.Cols}
		}
		return &sql.Project{Input: in, Exprs: r.Exprs, Cols: r.Cols}
	default:
		// Other operators pass the rewrite to their inputs. Filters above
		// them stay above: above a window or an aggregation they see its
		// results, under an ASOF join they would change which right row
		// is the closest.
		ins := sql.Inputs(rel)
		if len(ins) == 0 {
			return rel
		}
		out := make([]sql.Rel, len(ins))
		for i, in := range ins {
			out[i] = pushDown(in)
		}
		return sql.WithInputs(rel, out)
	}
}

// pushFilter places a filter of pred over rel, which has been through
// pushDown (so its own subtree is not rewritten again: queries joining
// many tables would take quadratic time).
func pushFilter(rel sql.Rel, pred sql.Expr) sql.Rel {
	switch x := rel.(type) {
	case *sql.Join:
		return pushIntoJoin(x, sql.Conjuncts(pred))
	case *sql.Project:
		// Filter the projection's input instead, with the projected
		// expressions in place of the columns, so that the predicate reaches
		// the joins below (the merged columns of JOIN USING, subqueries in
		// FROM).
		if p, ok := substitute(pred, x.Exprs); ok {
			return &sql.Project{Input: pushFilter(x.Input, p), Exprs: x.Exprs, Cols: x.Cols}
		}
	}
	return &sql.Filter{Input: rel, Pred: pred}
}

// pushIntoJoin places the conjuncts of a filter above j, and of j's own
// condition, where they belong: a conjunct over one input only filters that
// input (if the join type allows: not the NULL-padded side of an outer join
// for a filter above it, not the preserved side for an ON condition), an
// equality between the inputs becomes a key of an inner join, and the rest
// stays in the join's condition (inner joins) or in a filter above it. j's
// inputs have been through pushDown.
func pushIntoJoin(j *sql.Join, above []sql.Expr) sql.Rel {
	nl := len(j.Left.Columns())
	var leftPreds, rightPreds, cond, remain []sql.Expr
	out := *j
	// Conditions above the join.
	for _, c := range above {
		switch side := sql.SideOf(c, nl); {
		case !j.Type.KeepsRight():
			// Semi and anti joins output the left columns only.
			leftPreds = append(leftPreds, c)
		case side == 1 && (j.Type == sql.InnerJoin || j.Type == sql.LeftJoin):
			leftPreds = append(leftPreds, c)
		case side == 2 && (j.Type == sql.InnerJoin || j.Type == sql.RightJoin):
			rightPreds = append(rightPreds, sql.ShiftRefs(c, -nl))
		case side == 3 && j.Type == sql.InnerJoin:
			cond = append(cond, c)
		default:
			remain = append(remain, c)
		}
	}
	// The join's own condition.
	for _, c := range sql.Conjuncts(j.Cond) {
		switch side := sql.SideOf(c, nl); {
		case side == 1 && (j.Type == sql.InnerJoin || j.Type == sql.RightJoin || j.Type == sql.SemiJoin):
			leftPreds = append(leftPreds, c)
		case side == 2 && (j.Type == sql.InnerJoin || j.Type == sql.LeftJoin || !j.Type.KeepsRight()):
			rightPreds = append(rightPreds, sql.ShiftRefs(c, -nl))
		default:
			cond = append(cond, c)
		}
	}
	out.Cond = nil
	var rest []sql.Expr
	for _, c := range cond {
		if call, ok := c.(*sql.Call); ok && call.Fn == sql.FnEq {
			l, r := call.Args[0], call.Args[1]
			ls, rs := sql.SideOf(l, nl), sql.SideOf(r, nl)
			if ls == 2 && rs == 1 {
				l, r, ls, rs = r, l, rs, ls
			}
			if ls == 1 && rs == 2 && sql.KeyCompatible(l.Type(), r.Type()) {
				out.LeftKeys = append(append([]sql.Expr(nil), out.LeftKeys...), l)
				out.RightKeys = append(append([]sql.Expr(nil), out.RightKeys...), sql.ShiftRefs(r, -nl))
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
		return &sql.Filter{Input: &out, Pred: conjunction(remain)}
	}
	return &out
}

// unhashableKeys moves the keys of j that cannot be hash keys (see
// sql.KeyCompatible) into its condition. A null-aware anti join (NOT IN)
// becomes an anti join on the condition that x <> y is not true.
func unhashableKeys(j *sql.Join, nl int) {
	var lk, rk, moved []sql.Expr
	for i, l := range j.LeftKeys {
		r := j.RightKeys[i]
		if sql.KeyCompatible(l.Type(), r.Type()) {
			lk, rk = append(lk, l), append(rk, r)
			continue
		}
		args := []sql.Expr{l, sql.ShiftRefs(r, nl)}
		if j.Type == sql.NullAwareAntiJoin {
			ne := &sql.Call{Fn: sql.FnNe, T: types.BoolT, Args: args}
			isTrue := &sql.Call{Fn: sql.FnIsTrue, T: types.BoolT, Args: []sql.Expr{ne}}
			moved = append(moved, &sql.Call{Fn: sql.FnNot, T: types.BoolT, Args: []sql.Expr{isTrue}})
		} else {
			moved = append(moved, &sql.Call{Fn: sql.FnEq, T: types.BoolT, Args: args})
		}
	}
	if len(moved) == 0 {
		return
	}
	if j.Type == sql.NullAwareAntiJoin {
		j.Type = sql.AntiJoin
	}
	j.LeftKeys, j.RightKeys = lk, rk
	j.Cond = conjunction(append(sql.Conjuncts(j.Cond), moved...))
}

func conjunction(cs []sql.Expr) sql.Expr {
	switch len(cs) {
	case 0:
		return nil
	case 1:
		return cs[0]
	}
	return &sql.Call{Fn: sql.FnAnd, Args: cs, T: cs[0].Type()}
}

// substitute replaces the column references of e with the expressions they
// refer to. It declines (false) when one of those is volatile (now()),
// whose value must not be computed twice.
func substitute(e sql.Expr, exprs []sql.Expr) (sql.Expr, bool) {
	ok := true
	out := sql.Rewrite(e, func(x sql.Expr) sql.Expr {
		if ref, isRef := x.(*sql.InputRef); isRef {
			if volatile(exprs[ref.Index]) {
				ok = false
			}
			return exprs[ref.Index]
		}
		return x
	})
	return out, ok
}

func volatile(e sql.Expr) bool {
	found := false
	sql.Walk(e, func(x sql.Expr) bool {
		if c, ok := x.(*sql.Call); ok && (c.Fn == sql.FnNow || sql.Volatile(c.Fn)) {
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
func composable(exprs, inner []sql.Expr) bool {
	uses := make([]int, len(inner))
	for _, e := range exprs {
		sql.Walk(e, func(x sql.Expr) bool {
			if ref, ok := x.(*sql.InputRef); ok {
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
		case *sql.InputRef, *sql.Const:
			continue
		}
		if uses[i] > 1 {
			return false
		}
	}
	return true
}
