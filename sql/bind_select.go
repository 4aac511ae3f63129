package sql

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	pg_query "github.com/pganalyze/pg_query_go/v6"
	"github.com/streamsql/streamsql/catalog"
	"github.com/streamsql/streamsql/ir"
	"github.com/streamsql/streamsql/sqlerr"
	"github.com/streamsql/streamsql/types"
)

func itoa(i int64) string { return strconv.FormatInt(i, 10) }

func sprintType(v any) string { return fmt.Sprintf("%T", v) }

// exprLocation returns the location of an expression node, or -1.
func exprLocation(n *pg_query.Node) int32 {
	if n == nil {
		return -1
	}
	switch x := n.Node.(type) {
	case *pg_query.Node_ColumnRef:
		return x.ColumnRef.Location
	case *pg_query.Node_AConst:
		return x.AConst.Location
	case *pg_query.Node_TypeCast:
		return x.TypeCast.Location
	case *pg_query.Node_AExpr:
		return x.AExpr.Location
	case *pg_query.Node_BoolExpr:
		return x.BoolExpr.Location
	case *pg_query.Node_FuncCall:
		return x.FuncCall.Location
	case *pg_query.Node_NullTest:
		return x.NullTest.Location
	case *pg_query.Node_CaseExpr:
		return x.CaseExpr.Location
	case *pg_query.Node_ResTarget:
		return x.ResTarget.Location
	case *pg_query.Node_SortBy:
		return x.SortBy.Location
	case *pg_query.Node_ParamRef:
		return x.ParamRef.Location
	}
	return -1
}

// target is one output column of a SELECT being bound.
type target struct {
	expr   ir.Expr
	name   string
	hidden bool
	loc    int32
}

// bindQuery binds a SELECT (or VALUES) statement.
func (b *binder) bindQuery(sel *pg_query.SelectStmt) (ir.Rel, error) {
	if sel.WithClause != nil {
		// CTEs are visible in this query and the queries nested in it.
		saved, savedDepth := b.ctes, b.cteDepth
		b.ctes, b.cteDepth = cloneCTEs(saved, savedDepth)
		b.depth++
		defer func() { b.ctes, b.cteDepth = saved, savedDepth; b.depth-- }()
		if err := b.bindWith(sel.WithClause); err != nil {
			return nil, err
		}
	}
	switch {
	case sel.Op != pg_query.SetOperation_SETOP_NONE:
		return b.bindSetOp(sel)
	case sel.IntoClause != nil:
		return nil, sqlerr.Unsupported("SELECT INTO")
	case len(sel.LockingClause) > 0:
		return nil, sqlerr.Unsupported("FOR UPDATE/SHARE")
	}
	if len(sel.ValuesLists) > 0 {
		rel, err := b.bindValues(sel.ValuesLists)
		if err != nil {
			return nil, err
		}
		return b.bindSortLimit(sel, rel, nil, nil)
	}

	input, sc, err := b.bindFrom(sel.FromClause)
	if err != nil {
		return nil, err
	}
	if sel.WhereClause != nil {
		if input, err = b.bindWhereClause(input, sc, sel.WhereClause); err != nil {
			return nil, err
		}
	}

	var aggs []ir.AggCall
	selectSubs := &subqueries{}
	wins, err := b.newWindowCollector(sel.WindowClause)
	if err != nil {
		return nil, err
	}
	var srfs []ir.Expr
	ctx := &exprCtx{scope: sc, aggs: &aggs, clause: "SELECT", subs: selectSubs, wins: wins, srfs: &srfs}
	targets, err := b.bindTargets(ctx, sc, sel.TargetList)
	if err != nil {
		return nil, err
	}

	// GROUP BY items are input expressions, output ordinals or output names.
	gc, err := b.bindGroupClause(sc, targets, sel.GroupClause, sel.GroupDistinct)
	if err != nil {
		return nil, err
	}
	groupBy, groupNames := gc.exprs, gc.names

	var having ir.Expr
	havingSubs := &subqueries{}
	if sel.HavingClause != nil {
		hctx := &exprCtx{scope: sc, aggs: &aggs, clause: "HAVING", subs: havingSubs}
		if having, err = b.bindExpr(hctx, sel.HavingClause); err != nil {
			return nil, err
		}
		if having, err = b.requireBool(having, "argument of HAVING", exprLocation(sel.HavingClause)); err != nil {
			return nil, err
		}
	}

	distinct := false
	var on *distinctOn
	if isDistinctOn(sel.DistinctClause) {
		if on, targets, err = b.bindDistinctOn(ctx, targets, sel.DistinctClause); err != nil {
			return nil, err
		}
	} else if len(sel.DistinctClause) > 0 {
		distinct = true
	}

	// ORDER BY items name an output column or add a hidden one.
	sortKeys, targets, err := b.bindOrderBy(ctx, targets, sel.SortClause, distinct)
	if err != nil {
		return nil, err
	}
	if err := b.checkTargetsOrderable(targets, sortKeys, distinct); err != nil {
		return nil, err
	}
	var withinDistinct []ir.SortKey
	if on != nil {
		if withinDistinct, err = on.checkOrder(b, sortKeys); err != nil {
			return nil, err
		}
	}
	if err := b.finishWindows(ctx, wins); err != nil {
		return nil, err
	}

	// Over an aggregation, the correlation keys of subqueries are rewritten
	// to the aggregation's output.
	var rewriteKey func(ir.Expr) (ir.Expr, error)
	var rewriteWindow func(ir.Expr, int32) (ir.Expr, error)
	if len(aggs) > 0 || len(groupBy) > 0 || having != nil || gc.sets != nil {
		groupKeys := make([]string, len(groupBy))
		agg := &ir.Aggregate{Input: input, GroupBy: groupBy, Aggs: aggs}
		for i, g := range groupBy {
			groupKeys[i] = g.String()
			agg.Cols = append(agg.Cols, ir.Column{Name: groupNames[i], Type: g.Type()})
		}
		for _, a := range aggs {
			name := a.Func
			if name == ir.AggCountStar {
				name = ir.AggCount
			}
			agg.Cols = append(agg.Cols, ir.Column{Name: name, Type: a.T})
		}
		rw := &groupRewriter{b: b, keys: groupKeys, agg: agg}
		for i := range targets {
			if targets[i].expr, err = rw.rewrite(targets[i].expr, targets[i].loc); err != nil {
				return nil, err
			}
		}
		input = b.intervalKeyed(agg)
		if needsGroupingSets(gc, aggs) {
			if input, err = b.groupingSetsRel(agg, gc); err != nil {
				return nil, err
			}
		}
		if having != nil {
			if having, err = rw.rewrite(having, exprLocation(sel.HavingClause)); err != nil {
				return nil, err
			}
			if len(havingSubs.joins) > 0 {
				var resolve func(ir.Expr) ir.Expr
				if input, resolve, err = joinScalarSubqueries(input, havingSubs, rw.rewriteKey); err != nil {
					return nil, err
				}
				having = resolve(having)
			}
			input = &ir.Filter{Input: input, Pred: having}
		}
		rewriteKey = rw.rewriteKey
		rewriteWindow = rw.rewrite
	}
	var resolveSubs func(ir.Expr) ir.Expr
	if len(selectSubs.joins) > 0 {
		var resolve func(ir.Expr) ir.Expr
		if input, resolve, err = joinScalarSubqueries(input, selectSubs, rewriteKey); err != nil {
			return nil, err
		}
		for i := range targets {
			targets[i].expr = resolve(targets[i].expr)
		}
		resolveSubs = resolve
	}
	if len(srfs) > 0 {
		if wins.used() {
			return nil, sqlerr.Unsupported("set-returning functions together with window functions")
		}
		rewrite := func(e ir.Expr) (ir.Expr, error) {
			var err error
			if rewriteWindow != nil {
				if e, err = rewriteWindow(e, -1); err != nil {
					return nil, err
				}
			}
			if resolveSubs != nil {
				e = resolveSubs(e)
			}
			return e, nil
		}
		if input, err = placeSRFs(input, srfs, rewrite, targets); err != nil {
			return nil, err
		}
	}
	if wins.used() {
		if input, err = b.placeWindows(input, wins, rewriteWindow, resolveSubs, targets); err != nil {
			return nil, err
		}
	}

	proj := &ir.Project{Input: input}
	for _, t := range targets {
		e := t.expr
		if e.Type().Kind == types.Unknown {
			e = b.defaultType(e)
		}
		proj.Exprs = append(proj.Exprs, e)
		proj.Cols = append(proj.Cols, ir.Column{Name: t.name, Type: e.Type(), Hidden: t.hidden})
	}
	var rel ir.Rel = proj
	if distinct {
		d := &ir.Aggregate{Input: proj, Cols: proj.Cols}
		for i, c := range proj.Cols {
			d.GroupBy = append(d.GroupBy, &ir.InputRef{Index: i, T: c.Type, Name: c.Name})
		}
		rel = b.intervalKeyed(d)
	}
	if on != nil {
		rel = on.topN(proj, withinDistinct)
	}
	return b.bindSortLimit(sel, rel, sortKeys, nil)
}

// bindSortLimit adds ORDER BY (already resolved to output columns in keys,
// or resolved here for VALUES) and LIMIT/OFFSET on top of rel.
func (b *binder) bindSortLimit(sel *pg_query.SelectStmt, rel ir.Rel, keys []ir.SortKey, _ []target) (ir.Rel, error) {
	if keys == nil && len(sel.SortClause) > 0 {
		// VALUES: ORDER BY ordinals or column names only.
		for _, s := range sel.SortClause {
			sb := s.GetSortBy()
			idx, ok := outputColumn(rel.Columns(), sb.Node)
			if !ok {
				return nil, b.errAt(sb.Location, sqlerr.Unsupported("ORDER BY expressions over VALUES or a set operation (order by output names or ordinals)"))
			}
			keys = append(keys, sortKey(idx, sb))
		}
	}
	if len(keys) > 0 {
		rel = &ir.Sort{Input: rel, Keys: keys}
	}
	if sel.LimitCount == nil && sel.LimitOffset == nil {
		return rel, nil
	}
	withTies := sel.LimitOption == pg_query.LimitOption_LIMIT_OPTION_WITH_TIES
	if !withTies && sel.LimitCount != nil {
		// RisingWave's LIMIT n WITH TIES.
		withTies = b.takeLimitWithTies(exprLocation(sel.LimitCount))
	}
	if c := sel.LimitCount.GetAConst(); withTies && c != nil && c.Isnull {
		return nil, sqlerr.New(sqlerr.InvalidRowCountInLimit, "row count cannot be null in FETCH FIRST ... WITH TIES clause")
	}
	count, err := b.limitValue(sel.LimitCount, "LIMIT")
	if err != nil {
		return nil, err
	}
	offset, err := b.limitValue(sel.LimitOffset, "OFFSET")
	if err != nil {
		return nil, err
	}
	if offset < 0 {
		offset = 0
	}
	return &ir.Limit{Input: rel, Count: count, Offset: offset, WithTies: withTies}, nil
}

// limitValue reads a LIMIT or OFFSET constant; -1 means none.
func (b *binder) limitValue(n *pg_query.Node, what string) (int64, error) {
	if n == nil {
		return -1, nil
	}
	e, err := b.bindExpr(&exprCtx{clause: what}, n)
	if err != nil {
		return 0, err
	}
	if cast, isCast := e.(*ir.Cast); isCast {
		if _, isParam := cast.Arg.(*Param); isParam {
			return -1, nil // preparing: the value comes with BindParams
		}
	}
	if p, isParam := e.(*Param); isParam {
		// Preparing: the parameter is a bigint unless declared otherwise;
		// its value comes with BindParams.
		if p.T.Kind == types.Unknown {
			_, err := b.resolveParam(p, types.Int64T, exprLocation(n))
			return -1, err
		}
		if !p.T.IsNumeric() {
			return 0, b.errAt(exprLocation(n), sqlerr.New(sqlerr.DatatypeMismatch, "argument of %s must be type bigint, not type %s", what, p.T))
		}
		return -1, nil
	}
	c, ok := e.(*ir.Const)
	if !ok {
		if cast, isCast := e.(*ir.Cast); isCast {
			c, ok = cast.Arg.(*ir.Const)
		}
	}
	if !ok {
		return 0, b.errAt(exprLocation(n), sqlerr.Unsupported("non-constant %s", what))
	}
	if c.Value.Null {
		return -1, nil
	}
	var v int64
	switch c.T.Kind {
	case types.Int16, types.Int32, types.Int64:
		v = c.Value.I
	case types.Numeric, types.Float32, types.Float64:
		// PostgreSQL converts the value to bigint, rounding.
		d, err := types.ParseText(types.Int64T, c.Value.Text(c.T))
		if err != nil {
			f, ferr := strconv.ParseFloat(c.Value.Text(c.T), 64)
			if ferr != nil || math.IsNaN(f) || math.Abs(f) >= 9.2e18 {
				return 0, b.errAt(exprLocation(n), sqlerr.New(sqlerr.NumericValueOutOfRange, "bigint out of range"))
			}
			if c.T.Kind == types.Numeric {
				f = math.Round(f)
			} else {
				f = math.RoundToEven(f)
			}
			d = types.DInt(int64(f))
		}
		v = d.I
	case types.Unknown:
		d, err := types.ParseText(types.Int64T, c.Value.S)
		if err != nil {
			return 0, b.errAt(exprLocation(n), sqlerr.Wrap(err))
		}
		v = d.I
	default:
		return 0, b.errAt(exprLocation(n), sqlerr.New(sqlerr.DatatypeMismatch, "argument of %s must be type bigint, not type %s", what, c.T))
	}
	if v < 0 {
		return 0, b.errAt(exprLocation(n), sqlerr.New(sqlerr.InvalidRowCountInLimit, "%s must not be negative", what))
	}
	return v, nil
}

func sortKey(idx int, sb *pg_query.SortBy) ir.SortKey {
	k := ir.SortKey{Column: idx, Desc: sb.SortbyDir == pg_query.SortByDir_SORTBY_DESC}
	switch sb.SortbyNulls {
	case pg_query.SortByNulls_SORTBY_NULLS_FIRST:
		k.NullsFirst = true
	case pg_query.SortByNulls_SORTBY_NULLS_LAST:
		k.NullsFirst = false
	default:
		k.NullsFirst = k.Desc
	}
	return k
}

// outputColumn resolves an ORDER BY or GROUP BY item that is an ordinal or
// the name of an output column.
func outputColumn(cols []ir.Column, n *pg_query.Node) (int, bool) {
	if c := n.GetAConst(); c != nil {
		if iv, ok := c.Val.(*pg_query.A_Const_Ival); ok {
			i := int(iv.Ival.Ival) - 1
			vis := 0
			for k, col := range cols {
				if col.Hidden {
					continue
				}
				if vis == i {
					return k, true
				}
				vis++
			}
			return -1, false
		}
	}
	if cr := n.GetColumnRef(); cr != nil && len(cr.Fields) == 1 {
		if s := cr.Fields[0].GetString_(); s != nil {
			found := -1
			for k, col := range cols {
				if !col.Hidden && col.Name == s.Sval {
					if found >= 0 {
						return -1, false
					}
					found = k
				}
			}
			return found, found >= 0
		}
	}
	return -1, false
}

// bindTargets binds the select list, expanding * to the visible columns.
func (b *binder) bindTargets(ctx *exprCtx, sc *scope, list []*pg_query.Node) ([]target, error) {
	var out []target
	for _, n := range list {
		rt := n.GetResTarget()
		if cr := rt.Val.GetColumnRef(); cr != nil {
			last := cr.Fields[len(cr.Fields)-1]
			if _, ok := last.Node.(*pg_query.Node_AStar); ok {
				table := ""
				if len(cr.Fields) >= 2 {
					table = cr.Fields[len(cr.Fields)-2].GetString_().Sval
				}
				matched := false
				for i, c := range sc.cols {
					if table != "" && c.table != table {
						continue
					}
					matched = true
					if c.hidden || table == "" && c.usingDup {
						continue
					}
					b.noteRead(c)
					out = append(out, target{expr: &ir.InputRef{Index: i, T: c.t, Name: c.name}, name: c.name, loc: rt.Location})
				}
				if table != "" && !matched {
					return nil, b.errAt(cr.Location, sqlerr.New(sqlerr.UndefinedTable, "missing FROM-clause entry for table \"%s\"", table))
				}
				if table == "" && len(sc.cols) == 0 {
					return nil, b.errAt(cr.Location, sqlerr.New(sqlerr.SyntaxError, "SELECT * with no tables specified is not valid"))
				}
				continue
			}
		}
		if ts, ok, err := b.expandFieldStar(ctx, rt); ok {
			if err != nil {
				return nil, err
			}
			out = append(out, ts...)
			continue
		}
		e, err := b.bindExpr(ctx, rt.Val)
		if err != nil {
			return nil, err
		}
		name := rt.Name
		if name == "" {
			name = columnName(rt.Val)
		}
		out = append(out, target{expr: e, name: name, loc: rt.Location})
	}
	return out, nil
}

// columnName derives an output column name as PostgreSQL's FigureColname does.
func columnName(n *pg_query.Node) string {
	name, _ := figureColumnName(n)
	return name
}

// Strengths of a derived column name, as in PostgreSQL's FigureColnameInternal:
// a cast or a CASE names a column only when what it wraps gives no strong name.
const (
	nameNone   = 0 // ?column?
	nameWeak   = 1 // a cast's type name, or "case"
	nameStrong = 2 // a column, function or keyword name
)

// figureColumnName returns a column's derived name and how strong it is.
func figureColumnName(n *pg_query.Node) (string, int) {
	switch x := n.Node.(type) {
	case *pg_query.Node_ColumnRef:
		last := x.ColumnRef.Fields[len(x.ColumnRef.Fields)-1]
		if s := last.GetString_(); s != nil {
			return s.Sval, nameStrong
		}
	case *pg_query.Node_FuncCall:
		name := funcName(x.FuncCall.Funcname)
		if i := strings.LastIndex(name, "."); i >= 0 {
			name = name[i+1:]
		}
		return name, nameStrong
	case *pg_query.Node_TypeCast:
		if name, strength := figureColumnName(x.TypeCast.Arg); strength == nameStrong {
			return name, strength
		}
		return castColumnName(x.TypeCast.TypeName), nameWeak
	case *pg_query.Node_AArrayExpr:
		return "array", nameStrong
	case *pg_query.Node_RowExpr:
		return "row", nameStrong
	case *pg_query.Node_GroupingFunc:
		return "grouping", nameStrong
	case *pg_query.Node_AIndirection:
		// A subscript is named after what it is taken from, a field
		// selection after the field.
		if ind := x.AIndirection.Indirection; len(ind) > 0 && ind[len(ind)-1].GetString_() != nil {
			return ind[len(ind)-1].GetString_().Sval, nameStrong
		}
		return figureColumnName(x.AIndirection.Arg)
	case *pg_query.Node_CaseExpr:
		if x.CaseExpr.Defresult != nil {
			if name, strength := figureColumnName(x.CaseExpr.Defresult); strength == nameStrong {
				return name, strength
			}
		}
		return "case", nameWeak
	case *pg_query.Node_CoalesceExpr:
		return "coalesce", nameStrong
	case *pg_query.Node_MinMaxExpr:
		if x.MinMaxExpr.Op == pg_query.MinMaxOp_IS_LEAST {
			return "least", nameStrong
		}
		return "greatest", nameStrong
	case *pg_query.Node_SqlvalueFunction:
		return sqlValueFunctionName(x.SqlvalueFunction.Op), nameStrong
	case *pg_query.Node_AExpr:
		if x.AExpr.Kind == pg_query.A_Expr_Kind_AEXPR_NULLIF {
			return "nullif", nameStrong
		}
	case *pg_query.Node_SubLink:
		return subLinkColumnName(x.SubLink)
	}
	return "?column?", nameNone
}

// castColumnName is the name a cast gives a column: its type's last name.
func castColumnName(tn *pg_query.TypeName) string {
	var name string
	for _, n := range tn.Names {
		if s := n.GetString_(); s != nil {
			name = s.Sval
		}
	}
	if strings.HasPrefix(name, typePlaceholder) {
		return "?column?" // a STRUCT<...> or MAP(...) spelled by the dialect
	}
	return name
}

func sqlValueFunctionName(op pg_query.SQLValueFunctionOp) string {
	switch op {
	case pg_query.SQLValueFunctionOp_SVFOP_CURRENT_DATE:
		return "current_date"
	case pg_query.SQLValueFunctionOp_SVFOP_LOCALTIMESTAMP, pg_query.SQLValueFunctionOp_SVFOP_LOCALTIMESTAMP_N:
		return "localtimestamp"
	}
	return "current_timestamp"
}

// subLinkColumnName names EXISTS "exists" and a scalar subquery after its
// output column.
func subLinkColumnName(sl *pg_query.SubLink) (string, int) {
	switch sl.SubLinkType {
	case pg_query.SubLinkType_EXISTS_SUBLINK:
		return "exists", nameStrong
	case pg_query.SubLinkType_ARRAY_SUBLINK:
		return "array", nameStrong
	case pg_query.SubLinkType_EXPR_SUBLINK:
		if sub := sl.Subselect.GetSelectStmt(); sub != nil && len(sub.TargetList) > 0 {
			if rt := sub.TargetList[0].GetResTarget(); rt != nil {
				if rt.Name != "" {
					return rt.Name, nameStrong
				}
				name, _ := figureColumnName(rt.Val)
				return name, nameStrong
			}
		}
	}
	return "?column?", nameNone
}

// bindGroupItem binds one GROUP BY item; it returns the expression over the
// FROM scope and the name of the group column.
func (b *binder) bindGroupItem(sc *scope, targets []target, n *pg_query.Node) (ir.Expr, string, error) {
	if c := n.GetAConst(); c != nil {
		iv, ok := c.Val.(*pg_query.A_Const_Ival)
		if !ok || c.Isnull {
			return nil, "", b.errAt(c.Location, sqlerr.New(sqlerr.SyntaxError, "non-integer constant in GROUP BY"))
		}
		i := int(iv.Ival.Ival) - 1
		if i < 0 || i >= len(targets) {
			return nil, "", b.errAt(c.Location, sqlerr.New(sqlerr.InvalidColumnReference, "GROUP BY position %d is not in select list", i+1))
		}
		if containsAgg(targets[i].expr) {
			return nil, "", b.errAt(c.Location, sqlerr.New(sqlerr.GroupingError, "aggregate functions are not allowed in GROUP BY"))
		}
		if containsWindow(targets[i].expr) {
			return nil, "", b.errAt(targets[i].loc, sqlerr.New(windowingError, "window functions are not allowed in GROUP BY"))
		}
		return targets[i].expr, targets[i].name, nil
	}
	ctx := &exprCtx{scope: sc, clause: "GROUP BY"}
	e, err := b.bindExpr(ctx, n)
	if err != nil {
		// A name that is not an input column may be an output column alias.
		if cr := n.GetColumnRef(); cr != nil && len(cr.Fields) == 1 && sqlerr.Code(err) == sqlerr.UndefinedColumn {
			name := cr.Fields[0].GetString_().GetSval()
			for _, t := range targets {
				if t.name == name {
					if containsAgg(t.expr) {
						return nil, "", b.errAt(cr.Location, sqlerr.New(sqlerr.GroupingError, "aggregate functions are not allowed in GROUP BY"))
					}
					if containsWindow(t.expr) {
						return nil, "", b.errAt(cr.Location, sqlerr.New(windowingError, "window functions are not allowed in GROUP BY"))
					}
					return t.expr, t.name, nil
				}
			}
		}
		return nil, "", err
	}
	return e, columnName(n), nil
}

func containsAgg(e ir.Expr) bool {
	found := false
	ir.Walk(e, func(x ir.Expr) bool {
		if _, ok := x.(*aggRef); ok {
			found = true
		}
		return !found
	})
	return found
}

// bindOrderBy resolves ORDER BY items to output columns, appending hidden
// output columns for expressions that are not in the select list.
func (b *binder) bindOrderBy(ctx *exprCtx, targets []target, items []*pg_query.Node, distinct bool) ([]ir.SortKey, []target, error) {
	var keys []ir.SortKey
	for _, n := range items {
		sb := n.GetSortBy()
		if len(sb.UseOp) > 0 {
			return nil, nil, b.errAt(sb.Location, sqlerr.Unsupported("ORDER BY ... USING"))
		}
		cols := make([]ir.Column, len(targets))
		for i, t := range targets {
			cols[i] = ir.Column{Name: t.name, Hidden: t.hidden}
		}
		if c := sb.Node.GetAConst(); c != nil {
			iv, ok := c.Val.(*pg_query.A_Const_Ival)
			if !ok || c.Isnull {
				return nil, nil, b.errAt(c.Location, sqlerr.New(sqlerr.SyntaxError, "non-integer constant in ORDER BY"))
			}
			idx, ok := outputColumn(cols, sb.Node)
			if !ok {
				return nil, nil, b.errAt(c.Location, sqlerr.New(sqlerr.InvalidColumnReference, "ORDER BY position %d is not in select list", iv.Ival.Ival))
			}
			keys = append(keys, sortKey(idx, sb))
			continue
		}
		if idx, ok := outputColumn(cols, sb.Node); ok {
			keys = append(keys, sortKey(idx, sb))
			continue
		}
		e, err := b.bindExpr(ctx, sb.Node)
		if err != nil {
			return nil, nil, err
		}
		idx := -1
		for i, t := range targets {
			if t.expr.String() == e.String() {
				idx = i
				break
			}
		}
		if idx < 0 {
			if distinct {
				return nil, nil, b.errAt(exprLocation(sb.Node), sqlerr.New(sqlerr.InvalidColumnReference, "for SELECT DISTINCT, ORDER BY expressions must appear in select list"))
			}
			targets = append(targets, target{expr: e, name: columnName(sb.Node), hidden: true, loc: sb.Location})
			idx = len(targets) - 1
		}
		keys = append(keys, sortKey(idx, sb))
	}
	return keys, targets, nil
}

// groupRewriter turns expressions over the FROM scope into expressions over
// an Aggregate's output: group-by expressions become references to group
// columns, aggregate calls to aggregate columns. Any other column reference
// is a grouping error.
type groupRewriter struct {
	b    *binder
	keys []string
	agg  *ir.Aggregate
}

// rewriteKey rewrites the correlation key of a subquery over the
// aggregation.
func (r *groupRewriter) rewriteKey(e ir.Expr) (ir.Expr, error) {
	out, err := r.rewrite(e, -1)
	if sqlerr.Code(err) == sqlerr.GroupingError {
		name := e.String()
		if ref, ok := e.(*ir.InputRef); ok {
			name = ref.Name
		}
		return nil, sqlerr.New(sqlerr.GroupingError, "subquery uses ungrouped column \"%s\" from outer query", name)
	}
	return out, err
}

func (r *groupRewriter) rewrite(e ir.Expr, loc int32) (ir.Expr, error) {
	switch e.(type) {
	case *scalarRef, *winRef, *outerRef, *srfRef:
		// Outer references are constant over the aggregation.
		// Window calls are rewritten by placeWindows, set-returning
		// calls by placeSRFs.
		return e, nil
	}
	if a, ok := e.(*aggRef); ok {
		i := len(r.agg.GroupBy) + a.Index
		return &ir.InputRef{Index: i, T: a.T, Name: r.agg.Cols[i].Name}, nil
	}
	s := e.String()
	for i, k := range r.keys {
		if s == k {
			// The group column's type, which an untyped literal takes too.
			return &ir.InputRef{Index: i, T: r.agg.Cols[i].Type, Name: r.agg.Cols[i].Name}, nil
		}
	}
	var err error
	switch n := e.(type) {
	case *ir.InputRef:
		return nil, r.b.errAt(loc, sqlerr.New(sqlerr.GroupingError, "column \"%s\" must appear in the GROUP BY clause or be used in an aggregate function", n.Name))
	case *ir.Const, *Param:
		return e, nil
	case *ir.Call:
		args := make([]ir.Expr, len(n.Args))
		for i, a := range n.Args {
			if args[i], err = r.rewrite(a, loc); err != nil {
				return nil, err
			}
		}
		return &ir.Call{Fn: n.Fn, Args: args, T: n.T}, nil
	case *ir.Cast:
		arg, err := r.rewrite(n.Arg, loc)
		if err != nil {
			return nil, err
		}
		return &ir.Cast{Arg: arg, T: n.T, Assignment: n.Assignment}, nil
	case *ir.Case:
		out := &ir.Case{T: n.T}
		for _, w := range n.Whens {
			c, err := r.rewrite(w.Cond, loc)
			if err != nil {
				return nil, err
			}
			t, err := r.rewrite(w.Then, loc)
			if err != nil {
				return nil, err
			}
			out.Whens = append(out.Whens, ir.When{Cond: c, Then: t})
		}
		if out.Else, err = r.rewrite(n.Else, loc); err != nil {
			return nil, err
		}
		return out, nil
	case *ir.InList:
		out := &ir.InList{Negate: n.Negate}
		if out.Arg, err = r.rewrite(n.Arg, loc); err != nil {
			return nil, err
		}
		for _, item := range n.List {
			x, err := r.rewrite(item, loc)
			if err != nil {
				return nil, err
			}
			out.List = append(out.List, x)
		}
		return out, nil
	}
	return nil, sqlerr.New(sqlerr.InternalError, "cannot rewrite %T over an aggregation", e)
}

// bindValues binds a VALUES list: each column gets the common type of its
// values.
func (b *binder) bindValues(lists []*pg_query.Node) (ir.Rel, error) {
	var rows [][]ir.Expr
	width := -1
	for _, l := range lists {
		items := l.GetList().GetItems()
		if width >= 0 && len(items) != width {
			return nil, b.errAt(exprLocation(items[0]), sqlerr.New(sqlerr.SyntaxError, "VALUES lists must all be the same length"))
		}
		width = len(items)
		row, err := b.bindExprs(&exprCtx{clause: "VALUES"}, items)
		if err != nil {
			return nil, err
		}
		rows = append(rows, row)
	}
	v := &ir.Values{Rows: rows}
	for c := 0; c < width; c++ {
		col := make([]ir.Expr, len(rows))
		for r := range rows {
			col[r] = rows[r][c]
		}
		t, err := b.commonType(col, "VALUES", exprLocation(lists[0]))
		if err != nil {
			return nil, err
		}
		for r := range rows {
			if rows[r][c], err = b.coerce(rows[r][c], t, -1); err != nil {
				return nil, err
			}
		}
		v.Cols = append(v.Cols, ir.Column{Name: "column" + itoa(int64(c+1)), Type: t})
	}
	return v, nil
}

// bindFromItem binds one FROM item and returns it with the scope it opens.
func (b *binder) bindFromItem(n *pg_query.Node) (ir.Rel, *scope, error) {
	switch x := n.Node.(type) {
	case *pg_query.Node_RangeVar:
		if rel, sc, ok := b.cteRef(x.RangeVar); ok {
			return rel, sc, nil
		}
		rel, err := b.lookup(x.RangeVar)
		if err != nil {
			return nil, nil, err
		}
		if rel.Kind == catalog.View {
			return b.expandView(rel, x.RangeVar)
		}
		if rel.Kind == catalog.Sink {
			return nil, nil, b.errAt(x.RangeVar.Location, sqlerr.New(sqlerr.WrongObjectType, "\"%s\" is a sink; a sink cannot be read", rel.Name))
		}
		alias := ""
		var colAliases []*pg_query.Node
		if x.RangeVar.Alias != nil {
			alias = x.RangeVar.Alias.Aliasname
			colAliases = x.RangeVar.Alias.Colnames
		}
		sc := b.tableScope(rel, alias)
		if err := applyColumnAliases(sc, colAliases); err != nil {
			return nil, nil, b.errAt(x.RangeVar.Location, err.(*sqlerr.Error))
		}
		return &ir.Scan{Relation: rel, Alias: alias}, sc, nil
	case *pg_query.Node_RangeSubselect:
		sub, err := b.bindQuery(x.RangeSubselect.Subquery.GetSelectStmt())
		if err != nil {
			return nil, nil, err
		}
		alias := ""
		var colAliases []*pg_query.Node
		if x.RangeSubselect.Alias != nil {
			alias = x.RangeSubselect.Alias.Aliasname
			colAliases = x.RangeSubselect.Alias.Colnames
		}
		sc := derivedScope(sub, alias)
		if err := applyColumnAliases(sc, colAliases); err != nil {
			return nil, nil, err
		}
		return sub, sc, nil
	case *pg_query.Node_RangeFunction:
		return b.bindRangeFunction(x.RangeFunction)
	case *pg_query.Node_JoinExpr:
		return b.bindJoinExpr(x.JoinExpr)
	case *pg_query.Node_RangeTableSample:
		return nil, nil, b.errAt(x.RangeTableSample.Location, sqlerr.Unsupported("TABLESAMPLE"))
	}
	return nil, nil, sqlerr.Unsupported("FROM item %s", typeName(n.Node))
}

// derivedScope is the scope of a subquery in FROM named alias.
func derivedScope(sub ir.Rel, alias string) *scope {
	sc := &scope{}
	for _, c := range sub.Columns() {
		sc.cols = append(sc.cols, scopeCol{table: alias, name: c.Name, t: c.Type, hidden: c.Hidden})
	}
	return sc
}

// applyColumnAliases renames the visible columns of sc in order.
func applyColumnAliases(sc *scope, aliases []*pg_query.Node) error {
	i := 0
	for _, a := range aliases {
		for i < len(sc.cols) && !sc.cols[i].visible() {
			i++
		}
		if i >= len(sc.cols) {
			return sqlerr.New(sqlerr.InvalidColumnReference, "table has %d columns available but %d columns specified", countVisible(sc), len(aliases))
		}
		sc.cols[i].name = a.GetString_().Sval
		i++
	}
	return nil
}

func countVisible(sc *scope) int {
	n := 0
	for _, c := range sc.cols {
		if c.visible() {
			n++
		}
	}
	return n
}

func (b *binder) bindRangeFunction(rf *pg_query.RangeFunction) (ir.Rel, *scope, error) {
	if calls := unnestCalls(rf); calls != nil {
		return b.bindUnnest(rf, calls, nil, nil)
	}
	if len(rf.Functions) == 1 && !rf.IsRowsfrom {
		if f := rf.Functions[0].GetList().GetItems()[0].GetFuncCall(); f != nil && isTimeWindow(funcName(f.Funcname)) {
			return b.bindTimeWindow(rf, f, funcName(f.Funcname))
		}
	}
	if rf.Lateral || rf.Ordinality || rf.IsRowsfrom || len(rf.Functions) != 1 {
		return nil, nil, sqlerr.Unsupported("this form of function in FROM")
	}
	items := rf.Functions[0].GetList().GetItems()
	f := items[0].GetFuncCall()
	if f != nil && funcName(f.Funcname) == "generate_subscripts" {
		return b.bindGenerateSubscripts(rf, f)
	}
	if f != nil && funcName(f.Funcname) == "pg_options_to_table" {
		return b.bindOptionsToTable(rf, f)
	}
	if f == nil || funcName(f.Funcname) != "generate_series" {
		name := "function"
		if f != nil {
			name = funcName(f.Funcname)
		}
		return nil, nil, sqlerr.Unsupported("table function %s", name)
	}
	if len(f.Args) < 2 || len(f.Args) > 3 {
		return nil, nil, b.errAt(f.Location, sqlerr.New(sqlerr.UndefinedFunction, "function generate_series with %d arguments does not exist", len(f.Args)))
	}
	// The arguments see no FROM item, only the queries around (an empty
	// scope then the outer ones).
	args, err := b.bindExprs(&exprCtx{scope: &scope{}, clause: "FROM"}, f.Args)
	if err != nil {
		return nil, nil, err
	}
	gs, err := b.seriesOf(args, f.Location)
	if err != nil {
		return nil, nil, err
	}
	return b.seriesScope(rf, f, gs)
}

// seriesScope names the column of a function in FROM that returns one
// column (generate_series, generate_subscripts) after its alias.
func (b *binder) seriesScope(rf *pg_query.RangeFunction, f *pg_query.FuncCall, gs *ir.GenerateSeries) (ir.Rel, *scope, error) {
	t := gs.Col.Type
	alias := ""
	if rf.Alias != nil {
		alias = rf.Alias.Aliasname
		gs.Col.Name = alias
		if len(rf.Alias.Colnames) > 1 {
			return nil, nil, b.errAt(f.Location, sqlerr.New(sqlerr.InvalidColumnReference,
				"table \"%s\" has 1 columns available but %d columns specified", alias, len(rf.Alias.Colnames)))
		}
		if len(rf.Alias.Colnames) > 0 {
			gs.Col.Name = rf.Alias.Colnames[0].GetString_().Sval
		}
	}
	sc := &scope{cols: []scopeCol{{table: alias, name: gs.Col.Name, t: t}}}
	if alias == "" {
		sc.cols[0].table = funcName(f.Funcname)
	}
	return gs, sc, nil
}

var _ = catalog.Table
