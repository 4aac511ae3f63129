package planner

import (
	"github.com/streamsql/streamsql/sql"
)

// pushDown is the planner's rewrite pass over a bound query: it moves filter
// conjuncts into joins, where equalities between the two inputs become join
// keys and conditions on one input filter that input before the join.
// Without it, FROM a, b WHERE a.k = b.k would join every pair of rows.
func pushDown(rel sql.Rel) sql.Rel {
	switch r := rel.(type) {
	case *sql.Filter:
		in := pushDown(r.Input)
		if j, ok := in.(*sql.Join); ok {
			return pushIntoJoin(j, sql.Conjuncts(r.Pred))
		}
		return &sql.Filter{Input: in, Pred: r.Pred}
	case *sql.Join:
		j := *r
		j.Left, j.Right = pushDown(r.Left), pushDown(r.Right)
		return pushIntoJoin(&j, nil)
	case *sql.Project:
		return &sql.Project{Input: pushDown(r.Input), Exprs: r.Exprs, Cols: r.Cols}
	case *sql.Aggregate:
		a := *r
		a.Input = pushDown(r.Input)
		return &a
	case *sql.Sort:
		return &sql.Sort{Input: pushDown(r.Input), Keys: r.Keys}
	case *sql.Limit:
		return &sql.Limit{Input: pushDown(r.Input), Offset: r.Offset, Count: r.Count}
	case *sql.UnionAll:
		u := &sql.UnionAll{Cols: r.Cols}
		for _, in := range r.Inputs {
			u.Inputs = append(u.Inputs, pushDown(in))
		}
		return u
	}
	return rel
}

// pushIntoJoin places the conjuncts of a filter above j, and of j's own
// condition, where they belong: a conjunct over one input only filters that
// input (if the join type allows: not the NULL-padded side of an outer join
// for a filter above it, not the preserved side for an ON condition), an
// equality between the inputs becomes a key of an inner join, and the rest
// stays in the join's condition (inner joins) or in a filter above it.
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
			if ls == 1 && rs == 2 && l.Type() == r.Type() {
				out.LeftKeys = append(append([]sql.Expr(nil), out.LeftKeys...), l)
				out.RightKeys = append(append([]sql.Expr(nil), out.RightKeys...), sql.ShiftRefs(r, -nl))
				continue
			}
		}
		rest = append(rest, c)
	}
	out.Cond = conjunction(rest)
	if len(leftPreds) > 0 {
		out.Left = pushDown(&sql.Filter{Input: out.Left, Pred: conjunction(leftPreds)})
	}
	if len(rightPreds) > 0 {
		out.Right = pushDown(&sql.Filter{Input: out.Right, Pred: conjunction(rightPreds)})
	}
	if len(remain) > 0 {
		return &sql.Filter{Input: &out, Pred: conjunction(remain)}
	}
	return &out
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
