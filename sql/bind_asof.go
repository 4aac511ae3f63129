package sql

import (
	pg_query "github.com/pganalyze/pg_query_go/v6"
	"github.com/streamsql/streamsql/ir"
	"github.com/streamsql/streamsql/sqlerr"
)

// fromItemLocation returns the location of a FROM item's first token, where
// it has one (relations and functions).
func fromItemLocation(n *pg_query.Node) (int32, bool) {
	switch x := n.Node.(type) {
	case *pg_query.Node_RangeVar:
		return x.RangeVar.Location, true
	case *pg_query.Node_RangeFunction:
		if items := x.RangeFunction.Functions; len(items) == 1 {
			if f := items[0].GetList().GetItems()[0].GetFuncCall(); f != nil {
				return f.Location, true
			}
		}
	}
	return 0, false
}

// asofJoin turns a bound join into an ASOF join: its condition must be the
// equalities of the keys and one inequality between a left and a right
// expression.
func (b *binder) asofJoin(j *ir.Join, nl int, loc int32) (ir.Rel, error) {
	if j.Type != ir.InnerJoin && j.Type != ir.LeftJoin {
		return nil, b.errAt(loc, sqlerr.Unsupported("ASOF with a join other than JOIN and LEFT JOIN"))
	}
	conds := ir.Conjuncts(j.Cond)
	bad := sqlerr.New(sqlerr.FeatureNotSupported,
		"the condition of ASOF JOIN must be equalities between the inputs and one comparison (>=, >, <=, <) of a left expression with a right one")
	if len(conds) != 1 {
		return nil, b.errAt(loc, bad)
	}
	call, ok := conds[0].(*ir.Call)
	flip := map[string]string{ir.FnGe: ir.FnLe, ir.FnGt: ir.FnLt, ir.FnLe: ir.FnGe, ir.FnLt: ir.FnGt}
	if !ok || len(call.Args) != 2 || flip[call.Fn] == "" {
		return nil, b.errAt(loc, bad)
	}
	l, r, op := call.Args[0], call.Args[1], call.Fn
	if ir.SideOf(l, nl) == 2 && ir.SideOf(r, nl) == 1 {
		l, r, op = r, l, flip[op]
	}
	if ir.SideOf(l, nl) != 1 || ir.SideOf(r, nl) != 2 || !ir.KeyCompatible(l.Type(), r.Type()) {
		return nil, b.errAt(loc, bad)
	}
	return &ir.AsofJoin{Left: j.Left, Right: j.Right, LeftKeys: j.LeftKeys, RightKeys: j.RightKeys,
		LeftTime: l, RightTime: ir.ShiftRefs(r, -nl), Op: op, Outer: j.Type == ir.LeftJoin}, nil
}
