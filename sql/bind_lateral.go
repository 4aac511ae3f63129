package sql

import (
	pg_query "github.com/pganalyze/pg_query_go/v6"
	"github.com/streamsql/streamsql/ir"
	"github.com/streamsql/streamsql/sqlerr"
)

// LATERAL subqueries in FROM. A LATERAL subquery sees the columns of the
// FROM items before it: it is bound with their scope as the enclosing
// query's (its references to them are outer references) and decorrelated
// over their domain as a dependent subquery is (bind_decorrelate.go): for
// D = SELECT DISTINCT <the outer columns it references> FROM <left>, the
// subquery's rows for every value of D, tagged with it, are joined with
// the left input on D's columns, matched NULL-safely. Comma, CROSS JOIN
// and JOIN ... ON make an inner join, LEFT JOIN ... ON a left join, which
// keeps a left row the subquery has no row for. The ON condition is part
// of the join's condition. A LATERAL subquery without outer references is
// a plain subquery in FROM.

// lateralSubselect returns the LATERAL subquery a FROM item is, or nil.
func lateralSubselect(n *pg_query.Node) *pg_query.RangeSubselect {
	if rs := n.GetRangeSubselect(); rs != nil && rs.Lateral {
		return rs
	}
	return nil
}

// bindLateral joins left (with scope lsc) with the LATERAL subquery rs by
// a join of type typ (inner or left) on the condition quals, if any. It
// returns ok false, binding nothing, for a right or full join of a
// subquery without outer references, which binds as a plain subquery.
func (b *binder) bindLateral(rs *pg_query.RangeSubselect, typ ir.JoinType, quals *pg_query.Node, left ir.Rel, lsc *scope) (ir.Rel, *scope, bool, error) {
	sel := rs.Subquery.GetSelectStmt()
	if sel == nil {
		return nil, nil, false, sqlerr.Unsupported("this kind of subquery in FROM")
	}
	saved := b.outer
	b.outer = append([]*scope{lsc}, saved...)
	sub, err := b.bindQuery(sel)
	b.outer = saved
	if err != nil {
		return nil, nil, false, err
	}
	d := newDependent(markScalar, sub)
	if typ == ir.RightJoin || typ == ir.FullJoin {
		for _, e := range d.domain {
			if r, ok := e.(*ir.InputRef); ok {
				return nil, nil, false, sqlerr.New(sqlerr.InvalidColumnReference, "invalid reference to FROM-clause entry for table \"%s\"", lsc.cols[r.Index].table).
					WithDetail("The combining JOIN type must be INNER or LEFT for a LATERAL reference.")
			}
		}
		return nil, nil, false, nil
	}
	alias := ""
	var colAliases []*pg_query.Node
	if rs.Alias != nil {
		alias = rs.Alias.Aliasname
		colAliases = rs.Alias.Colnames
	}
	rsc := derivedScope(sub, alias)
	if err := applyColumnAliases(rsc, colAliases); err != nil {
		return nil, nil, false, err
	}
	sc := concatScopes(lsc, rsc)
	nl, ns := width(left), width(sub)
	var on ir.Expr
	if quals != nil {
		subs := &subqueries{}
		if on, err = b.bindExpr(&exprCtx{scope: sc, clause: "JOIN conditions", subs: subs}, quals); err != nil {
			return nil, nil, false, err
		}
		if on, err = b.requireBool(on, "argument of JOIN/ON", exprLocation(quals)); err != nil {
			return nil, nil, false, err
		}
		if len(subs.joins) > 0 {
			return nil, nil, false, b.errAt(exprLocation(quals), sqlerr.Unsupported("subqueries in the ON condition of a LATERAL join"))
		}
	}
	if len(d.domain) == 0 {
		j := &ir.Join{Type: typ, Left: left, Right: sub}
		splitJoinCondition(j, nl, on)
		return j, sc, true, nil
	}
	domain := withTextCompanions(d.domain)
	nd := len(domain)
	dc := &decorrelator{domain: domainRel(left, domain), nd: nd, refs: d.refs}
	per, err := dc.rel(sub)
	if err != nil {
		return nil, nil, false, err
	}
	// per: the subquery's columns, then the domain's.
	j := &ir.Join{Type: typ, Left: left, Right: per}
	splitJoinCondition(j, nl, on)
	matchNullSafe(j, domain, colRefs(per, seq(ns, nd)))
	return reorder(j, seq(0, nl+ns)), sc, true, nil
}
