package sql

import (
	"strconv"

	pg_query "github.com/pganalyze/pg_query_go/v6"
	"github.com/streamsql/streamsql/ir"
	"github.com/streamsql/streamsql/sqlerr"
	"github.com/streamsql/streamsql/types"
)

// ARRAY(subquery) is array_agg over the subquery, in the order of its ORDER
// BY, and '{}' when it has no rows: a scalar subquery, correlated or not,
// decorrelated like the others (bind_subquery.go). A plain SELECT x FROM
// ... WHERE ... ORDER BY ... becomes SELECT array_agg(x ORDER BY ...) FROM
// ... WHERE ...; any other (GROUP BY, DISTINCT, LIMIT, set operations)
// becomes SELECT array_agg(a ORDER BY o1, ...) FROM (subquery with its sort
// keys as columns o1, ...) AS s(a, o1, ...).

func (b *binder) bindArraySubquery(ctx *exprCtx, s *pg_query.SubLink) (ir.Expr, error) {
	sel := s.Subselect.GetSelectStmt()
	if sel == nil {
		return nil, b.errAt(s.Location, sqlerr.Unsupported("this kind of subquery"))
	}
	var agg *pg_query.SelectStmt
	if plainArraySelect(sel) {
		c := copySelect(sel)
		val := sel.TargetList[0].GetResTarget().Val
		c.TargetList = []*pg_query.Node{pg_query.MakeResTargetNodeWithVal(arrayAggCall(val, resolveSortKeys(sel), s.Location), s.Location)}
		c.SortClause = nil
		agg = c
	} else {
		if sel.Op == pg_query.SetOperation_SETOP_NONE && len(sel.TargetList) != 1 {
			return nil, b.errAt(s.Location, sqlerr.New(sqlerr.SyntaxError, "subquery must return only one column"))
		}
		inner := copySelect(sel)
		colnames := []*pg_query.Node{pg_query.MakeStrNode("a")}
		var order []*pg_query.Node
		keys := resolveSortKeys(sel)
		if len(keys) > 0 {
			if sel.Op != pg_query.SetOperation_SETOP_NONE {
				return nil, b.errAt(s.Location, sqlerr.Unsupported("ORDER BY on a set operation in ARRAY(...)"))
			}
			inner.TargetList = append([]*pg_query.Node(nil), sel.TargetList...)
			for i, k := range keys {
				sb := k.GetSortBy()
				name := "o" + strconv.Itoa(i+1)
				inner.TargetList = append(inner.TargetList, pg_query.MakeResTargetNodeWithVal(sb.Node, s.Location))
				colnames = append(colnames, pg_query.MakeStrNode(name))
				ob := copySortBy(sb)
				ob.Node = pg_query.MakeColumnRefNode([]*pg_query.Node{pg_query.MakeStrNode(name)}, s.Location)
				order = append(order, &pg_query.Node{Node: &pg_query.Node_SortBy{SortBy: ob}})
			}
		}
		from := &pg_query.Node{Node: &pg_query.Node_RangeSubselect{RangeSubselect: &pg_query.RangeSubselect{
			Subquery: &pg_query.Node{Node: &pg_query.Node_SelectStmt{SelectStmt: inner}},
			Alias:    &pg_query.Alias{Aliasname: "array", Colnames: colnames},
		}}}
		a := pg_query.MakeColumnRefNode([]*pg_query.Node{pg_query.MakeStrNode("a")}, s.Location)
		agg = &pg_query.SelectStmt{
			Op:         pg_query.SetOperation_SETOP_NONE,
			TargetList: []*pg_query.Node{pg_query.MakeResTargetNodeWithVal(arrayAggCall(a, order, s.Location), s.Location)},
			FromClause: []*pg_query.Node{from},
		}
	}
	e, err := b.bindScalarSubquery(ctx, &pg_query.SubLink{
		SubLinkType: pg_query.SubLinkType_EXPR_SUBLINK,
		Subselect:   &pg_query.Node{Node: &pg_query.Node_SelectStmt{SelectStmt: agg}},
		Location:    s.Location,
	})
	if err != nil {
		return nil, err
	}
	t := e.Type()
	return &ir.Call{Fn: ir.FnCoalesce, Args: []ir.Expr{e, &ir.Const{Value: types.DArray(nil), T: t}}, T: t}, nil
}

// plainArraySelect reports whether sel is SELECT x FROM ... [WHERE ...]
// [ORDER BY ...] and no more, whose x array_agg can take directly.
func plainArraySelect(sel *pg_query.SelectStmt) bool {
	if sel.Op != pg_query.SetOperation_SETOP_NONE || len(sel.TargetList) != 1 || len(sel.FromClause) == 0 ||
		len(sel.GroupClause) > 0 || sel.HavingClause != nil || len(sel.DistinctClause) > 0 ||
		sel.LimitCount != nil || sel.LimitOffset != nil || len(sel.WindowClause) > 0 || len(sel.ValuesLists) > 0 {
		return false
	}
	rt := sel.TargetList[0].GetResTarget()
	if rt == nil || rt.Val.GetColumnRef() != nil && isStar(rt.Val.GetColumnRef()) {
		return false
	}
	// An aggregate or window call in x needs the subquery as it is.
	return !hasCall(rt.Val)
}

// hasCall reports whether n has a function call (which could be an
// aggregate) or a subquery.
func hasCall(n *pg_query.Node) bool {
	found := false
	var walk func(n *pg_query.Node)
	walk = func(n *pg_query.Node) {
		if n == nil || found {
			return
		}
		switch x := n.Node.(type) {
		case *pg_query.Node_FuncCall, *pg_query.Node_SubLink:
			found = true
		case *pg_query.Node_AExpr:
			walk(x.AExpr.Lexpr)
			walk(x.AExpr.Rexpr)
		case *pg_query.Node_TypeCast:
			walk(x.TypeCast.Arg)
		case *pg_query.Node_ColumnRef, *pg_query.Node_AConst, *pg_query.Node_ParamRef:
		default:
			found = true // not looked into: assume the worst
		}
	}
	walk(n)
	return found
}

// resolveSortKeys returns sel's ORDER BY with ordinals (ORDER BY 1) and
// output names replaced by the target expressions, as copies.
func resolveSortKeys(sel *pg_query.SelectStmt) []*pg_query.Node {
	var out []*pg_query.Node
	for _, n := range sel.SortClause {
		sb := copySortBy(n.GetSortBy())
		if c := sb.Node.GetAConst(); c != nil {
			if iv, ok := c.Val.(*pg_query.A_Const_Ival); ok {
				if k := int(iv.Ival.Ival); k >= 1 && k <= len(sel.TargetList) {
					sb.Node = sel.TargetList[k-1].GetResTarget().Val
				}
			}
		} else if cr := sb.Node.GetColumnRef(); cr != nil && len(cr.Fields) == 1 {
			name := cr.Fields[0].GetString_().GetSval()
			for _, t := range sel.TargetList {
				if rt := t.GetResTarget(); rt != nil && rt.Name != "" && rt.Name == name {
					sb.Node = rt.Val
				}
			}
		}
		out = append(out, &pg_query.Node{Node: &pg_query.Node_SortBy{SortBy: sb}})
	}
	return out
}

func arrayAggCall(arg *pg_query.Node, order []*pg_query.Node, loc int32) *pg_query.Node {
	return &pg_query.Node{Node: &pg_query.Node_FuncCall{FuncCall: &pg_query.FuncCall{
		Funcname:   []*pg_query.Node{pg_query.MakeStrNode("array_agg")},
		Args:       []*pg_query.Node{arg},
		AggOrder:   order,
		Funcformat: pg_query.CoercionForm_COERCE_EXPLICIT_CALL,
		Location:   loc,
	}}}
}

// copySelect returns a shallow copy of sel (the parse tree is shared by
// every execution of a prepared statement and must not change).
func copySelect(sel *pg_query.SelectStmt) *pg_query.SelectStmt {
	return &pg_query.SelectStmt{
		DistinctClause: sel.DistinctClause, IntoClause: sel.IntoClause, TargetList: sel.TargetList,
		FromClause: sel.FromClause, WhereClause: sel.WhereClause, GroupClause: sel.GroupClause,
		GroupDistinct: sel.GroupDistinct, HavingClause: sel.HavingClause, WindowClause: sel.WindowClause,
		ValuesLists: sel.ValuesLists, SortClause: sel.SortClause, LimitOffset: sel.LimitOffset,
		LimitCount: sel.LimitCount, LimitOption: sel.LimitOption, LockingClause: sel.LockingClause,
		WithClause: sel.WithClause, Op: sel.Op, All: sel.All, Larg: sel.Larg, Rarg: sel.Rarg,
	}
}

func copySortBy(sb *pg_query.SortBy) *pg_query.SortBy {
	return &pg_query.SortBy{Node: sb.Node, SortbyDir: sb.SortbyDir, SortbyNulls: sb.SortbyNulls, UseOp: sb.UseOp, Location: sb.Location}
}
