package sql

import (
	"fmt"
	"strconv"
	"strings"

	pg_query "github.com/pganalyze/pg_query_go/v6"
	"github.com/streamsql/streamsql/ir"
	"github.com/streamsql/streamsql/sqlerr"
	"github.com/streamsql/streamsql/types"
)

// scope is the set of columns an expression may reference: the output of
// the FROM clause.
type scope struct {
	cols []scopeCol
}

type scopeCol struct {
	// table is the alias or name of the relation the column comes from.
	table string
	name  string
	t     types.T
	// hidden columns (row ids) are left out of * but can be named.
	hidden bool
	// usingDup marks a side's own copy of a JOIN USING column: it is
	// reachable qualified only (l.k, l.*), as the merged column takes the
	// unqualified name.
	usingDup bool
	// src is the relation column this is, whose column privileges naming
	// it needs (zero: a derived column, checked where it was derived).
	src columnSrc
}

// columnSrc names a column of a relation (rel 0: none).
type columnSrc struct {
	rel uint32
	col string
}

// visible reports whether the column appears in an unqualified *.
func (c scopeCol) visible() bool { return !c.hidden && !c.usingDup }

// exprCtx says what an expression being bound may contain.
type exprCtx struct {
	scope *scope
	// aggs, when not nil, collects aggregate calls: each is replaced by an
	// aggRef. When nil, aggregates are an error naming clause.
	aggs   *[]ir.AggCall
	clause string
	// inAgg is set while binding an aggregate's arguments.
	inAgg bool
	// subs, when not nil, collects scalar subqueries (WHERE and HAVING);
	// when nil, scalar subqueries are an error naming clause.
	subs *subqueries
	// wins, when not nil, collects window function calls (the select list
	// and ORDER BY); when nil, they are an error naming clause. inWindow is
	// set while binding a window function's arguments.
	wins     *windowCollector
	inWindow bool
	// srfs, when not nil, collects the arguments of set-returning calls
	// (the select list): each call is replaced by an srfRef. When nil,
	// they are an error naming clause.
	srfs *[]ir.Expr
}

// aggRef stands for aggregate Index of the enclosing query until the binder
// rewrites it into a reference to the aggregation's output.
type aggRef struct {
	Index int
	T     types.T
}

func (e *aggRef) Type() types.T  { return e.T }
func (e *aggRef) String() string { return fmt.Sprintf("agg#%d", e.Index) }

// bindExpr binds one expression node.
func (b *binder) bindExpr(ctx *exprCtx, n *pg_query.Node) (ir.Expr, error) {
	switch x := n.Node.(type) {
	case *pg_query.Node_ColumnRef:
		return b.bindColumnRef(ctx, x.ColumnRef)
	case *pg_query.Node_AConst:
		return b.bindConst(x.AConst)
	case *pg_query.Node_TypeCast:
		return b.bindTypeCast(ctx, x.TypeCast)
	case *pg_query.Node_AExpr:
		return b.bindAExpr(ctx, x.AExpr)
	case *pg_query.Node_BoolExpr:
		return b.bindBoolExpr(ctx, x.BoolExpr)
	case *pg_query.Node_NullTest:
		arg, err := b.bindExpr(ctx, x.NullTest.Arg)
		if err != nil {
			return nil, err
		}
		arg = b.defaultType(arg)
		fn := ir.FnIsNull
		if x.NullTest.Nulltesttype == pg_query.NullTestType_IS_NOT_NULL {
			fn = ir.FnIsNotNull
		}
		return b.resolveCall(fn, []ir.Expr{arg}, x.NullTest.Location)
	case *pg_query.Node_BooleanTest:
		return b.bindBooleanTest(ctx, x.BooleanTest)
	case *pg_query.Node_CaseExpr:
		return b.bindCase(ctx, x.CaseExpr)
	case *pg_query.Node_CoalesceExpr:
		args, err := b.bindExprs(ctx, x.CoalesceExpr.Args)
		if err != nil {
			return nil, err
		}
		return b.resolveCommonCall(ir.FnCoalesce, "COALESCE", args, x.CoalesceExpr.Location)
	case *pg_query.Node_MinMaxExpr:
		args, err := b.bindExprs(ctx, x.MinMaxExpr.Args)
		if err != nil {
			return nil, err
		}
		fn, name := ir.FnGreatest, "GREATEST"
		if x.MinMaxExpr.Op == pg_query.MinMaxOp_IS_LEAST {
			fn, name = ir.FnLeast, "LEAST"
		}
		return b.resolveCommonCall(fn, name, args, x.MinMaxExpr.Location)
	case *pg_query.Node_FuncCall:
		return b.bindFuncCall(ctx, x.FuncCall)
	case *pg_query.Node_GroupingFunc:
		return b.bindGroupingFunc(ctx, x.GroupingFunc)
	case *pg_query.Node_SqlvalueFunction:
		return b.bindSQLValueFunction(x.SqlvalueFunction)
	case *pg_query.Node_SubLink:
		if x.SubLink.SubLinkType == pg_query.SubLinkType_EXPR_SUBLINK {
			return b.bindScalarSubquery(ctx, x.SubLink)
		}
		if x.SubLink.SubLinkType == pg_query.SubLinkType_ARRAY_SUBLINK {
			return b.bindArraySubquery(ctx, x.SubLink)
		}
		return b.bindMarkSubquery(ctx, x.SubLink)
	case *pg_query.Node_ParamRef:
		if b.funcs.params != nil {
			return b.bindFunctionParam(ctx, x.ParamRef)
		}
		return b.bindParamRef(x.ParamRef)
	case *pg_query.Node_RowExpr:
		return b.bindRow(ctx, x.RowExpr)
	case *pg_query.Node_AIndirection:
		return b.bindIndirection(ctx, x.AIndirection)
	case *pg_query.Node_CollateClause:
		return b.bindCollate(ctx, x.CollateClause)
	case *pg_query.Node_AArrayExpr:
		return b.bindArrayExpr(ctx, x.AArrayExpr)
	case *pg_query.Node_SetToDefault:
		return nil, b.errAt(x.SetToDefault.Location, sqlerr.Unsupported("DEFAULT in this position"))
	}
	return nil, sqlerr.Unsupported("expression %T", n.Node)
}

func (b *binder) bindExprs(ctx *exprCtx, ns []*pg_query.Node) ([]ir.Expr, error) {
	out := make([]ir.Expr, len(ns))
	for i, n := range ns {
		e, err := b.bindExpr(ctx, n)
		if err != nil {
			return nil, err
		}
		out[i] = e
	}
	return out, nil
}

func (b *binder) bindColumnRef(ctx *exprCtx, ref *pg_query.ColumnRef) (ir.Expr, error) {
	var parts []string
	for _, f := range ref.Fields {
		switch v := f.Node.(type) {
		case *pg_query.Node_String_:
			parts = append(parts, v.String_.Sval)
		case *pg_query.Node_AStar:
			return nil, b.errAt(ref.Location, sqlerr.New(sqlerr.SyntaxError, "* is not allowed in this position"))
		}
	}
	name := strings.Join(parts, ".")
	if ctx.scope == nil {
		return nil, b.errAt(ref.Location, sqlerr.New(sqlerr.UndefinedColumn, "column \"%s\" does not exist", name))
	}
	var table, col string
	switch len(parts) {
	case 1:
		col = parts[0]
	case 2:
		table, col = parts[0], parts[1]
	case 3:
		if parts[0] != "public" {
			if e, ok, err := b.structColumnRef(ctx, parts, ref.Location); ok {
				return e, err
			}
			return nil, b.errAt(ref.Location, sqlerr.New(sqlerr.UndefinedTable, "missing FROM-clause entry for table \"%s\"", parts[1]))
		}
		table, col = parts[1], parts[2]
	default:
		return nil, b.errAt(ref.Location, sqlerr.Unsupported("column reference %s", name))
	}
	found, tableSeen, ambiguous := ctx.scope.lookup(table, col)
	if ambiguous {
		return nil, b.errAt(ref.Location, sqlerr.New(sqlerr.AmbiguousColumn, "column reference \"%s\" is ambiguous", name))
	}
	for d := 0; found < 0 && d < len(b.outer); d++ {
		// A correlated reference to an enclosing query.
		i, _, amb := b.outer[d].lookup(table, col)
		if amb {
			return nil, b.errAt(ref.Location, sqlerr.New(sqlerr.AmbiguousColumn, "column reference \"%s\" is ambiguous", name))
		}
		if i >= 0 {
			c := b.outer[d].cols[i]
			b.noteRead(c)
			return &outerRef{Depth: d + 1, Index: i, T: c.t, Name: c.name}, nil
		}
	}
	if found < 0 {
		if e, ok, err := b.structColumnRef(ctx, parts, ref.Location); ok {
			return e, err
		}
		if table != "" && !tableSeen {
			return nil, b.errAt(ref.Location, sqlerr.New(sqlerr.UndefinedTable, "missing FROM-clause entry for table \"%s\"", table))
		}
		return nil, b.errAt(ref.Location, sqlerr.New(sqlerr.UndefinedColumn, "column \"%s\" does not exist", name))
	}
	c := ctx.scope.cols[found]
	b.noteRead(c)
	return &ir.InputRef{Index: found, T: c.t, Name: c.name}, nil
}

// bindConst binds a literal. Integers that fit are integer, larger ones
// bigint or numeric; decimal literals are numeric; strings are of unknown
// type until the context gives them one, as in PostgreSQL.
func (b *binder) bindConst(c *pg_query.A_Const) (ir.Expr, error) {
	if c.Isnull {
		return &ir.Const{Value: types.Null, T: types.UnknownT}, nil
	}
	switch v := c.Val.(type) {
	case *pg_query.A_Const_Ival:
		return &ir.Const{Value: types.DInt(int64(v.Ival.Ival)), T: types.Int32T}, nil
	case *pg_query.A_Const_Fval:
		s := v.Fval.Fval
		if !strings.ContainsAny(s, ".eE") {
			if i, err := strconv.ParseInt(s, 10, 64); err == nil {
				return &ir.Const{Value: types.DInt(i), T: types.Int64T}, nil
			}
		}
		d, err := types.ParseText(types.NumericT, s)
		if err != nil {
			return nil, b.errAt(c.Location, sqlerr.Wrap(err))
		}
		return &ir.Const{Value: d, T: types.NumericT}, nil
	case *pg_query.A_Const_Sval:
		k := &ir.Const{Value: types.DText(v.Sval.Sval), T: types.UnknownT}
		if b.litLoc == nil {
			b.litLoc = map[*ir.Const]int32{}
		}
		b.litLoc[k] = c.Location
		return k, nil
	case *pg_query.A_Const_Boolval:
		return &ir.Const{Value: types.DBool(v.Boolval.Boolval), T: types.BoolT}, nil
	case *pg_query.A_Const_Bsval:
		return nil, b.errAt(c.Location, sqlerr.Unsupported("bit string literals"))
	}
	return nil, b.errAt(c.Location, sqlerr.Unsupported("constant %T", c.Val))
}

// unsupportedTypes are PostgreSQL types streamsql knows by name but does not
// implement; they get 0A000 rather than "does not exist".
var unsupportedTypes = map[string]bool{
	"json": true, "jsonb": true, "bytea": true, "uuid": true, "time": true, "timetz": true,
	"money": true, "inet": true, "cidr": true, "macaddr": true, "bit": true, "varbit": true,
	"xml": true, "point": true, "oid": true, "regclass": true, "tsvector": true, "int4range": true,
	"serial": true, "bigserial": true, "smallserial": true, "serial4": true, "serial8": true,
}

// bindTypeName resolves a type name with its modifiers.
func (b *binder) bindTypeName(tn *pg_query.TypeName) (types.T, error) {
	var name string
	for _, n := range tn.Names {
		if s, ok := n.Node.(*pg_query.Node_String_); ok {
			name = s.String_.Sval
		}
	}
	if len(tn.ArrayBounds) > 0 {
		// int[], int[][] and integer ARRAY are one type: arrays of any
		// dimension, as in PostgreSQL (only one-dimensional values exist).
		elem := &pg_query.TypeName{Names: tn.Names, Typmods: tn.Typmods, Typemod: tn.Typemod, Location: tn.Location}
		et, err := b.bindTypeName(elem)
		if err != nil {
			return types.T{}, err
		}
		return types.ArrayOf(et), nil
	}
	if tn.PctType || tn.Setof {
		return types.T{}, b.errAt(tn.Location, sqlerr.Unsupported("type %s", name))
	}
	var mods []int32
	for _, m := range tn.Typmods {
		c, ok := m.Node.(*pg_query.Node_AConst)
		if !ok {
			return types.T{}, b.errAt(tn.Location, sqlerr.New(sqlerr.SyntaxError, "type modifiers must be simple constants"))
		}
		iv, ok := c.AConst.Val.(*pg_query.A_Const_Ival)
		if !ok {
			return types.T{}, b.errAt(tn.Location, sqlerr.New(sqlerr.SyntaxError, "type modifiers must be simple constants"))
		}
		mods = append(mods, iv.Ival.Ival)
	}
	if name == "interval" {
		// Interval modifiers are a field mask and a precision; values are
		// stored at full precision whatever they say.
		return types.IntervalT, nil
	}
	if t, ok, err := b.dialectType(name, tn.Location); ok {
		return t, err
	}
	t, ok := types.FromName(name, mods)
	if !ok {
		if _, known := types.FromName(name, nil); known {
			return types.T{}, b.errAt(tn.Location, sqlerr.New(sqlerr.InvalidParameterValue, "invalid type modifier for type %s", name))
		}
		if unsupportedTypes[name] {
			return types.T{}, b.errAt(tn.Location, sqlerr.Unsupported("type %s", name))
		}
		return types.T{}, b.errAt(tn.Location, sqlerr.New(sqlerr.UndefinedObject, "type \"%s\" does not exist", name))
	}
	return t, nil
}

// intervalField returns the unit named by an INTERVAL '...' <field> typmod,
// or "" if there is none. The smallest field of a range (DAY TO SECOND) is the
// unit of a bare number.
func intervalField(tn *pg_query.TypeName) string {
	if len(tn.Typmods) == 0 {
		return ""
	}
	c, ok := tn.Typmods[0].Node.(*pg_query.Node_AConst)
	if !ok {
		return ""
	}
	iv, ok := c.AConst.Val.(*pg_query.A_Const_Ival)
	if !ok {
		return ""
	}
	// Bits of PostgreSQL's INTERVAL_MASK.
	mask := iv.Ival.Ival
	const (
		month  = 1 << 1
		year   = 1 << 2
		day    = 1 << 3
		hour   = 1 << 10
		minute = 1 << 11
		second = 1 << 12
	)
	if mask == 0x7FFF { // INTERVAL_FULL_RANGE: no field given
		return ""
	}
	switch {
	case mask&second != 0:
		return "second"
	case mask&minute != 0:
		return "minute"
	case mask&hour != 0:
		return "hour"
	case mask&day != 0:
		return "day"
	case mask&month != 0:
		return "month"
	case mask&year != 0:
		return "year"
	}
	return ""
}

func (b *binder) bindTypeCast(ctx *exprCtx, tc *pg_query.TypeCast) (ir.Expr, error) {
	if e, ok, err := b.bindCatalogCast(ctx, tc); ok {
		return e, err
	}
	t, err := b.bindTypeName(tc.TypeName)
	if err != nil {
		return nil, err
	}
	if e, ok, err := b.bindCatalogTextCast(ctx, tc, t); ok {
		return e, err
	}
	if lit := tc.Arg.GetAConst(); lit != nil && (t.Kind == types.Float32 || t.Kind == types.Float64) {
		if f, ok := lit.Val.(*pg_query.A_Const_Fval); ok {
			// A decimal literal cast to a float is read as that float, not
			// through numeric, whose range and scale are smaller than
			// PostgreSQL's.
			d, err := types.ParseText(t, f.Fval.Fval)
			if err != nil {
				return nil, b.errAt(lit.Location, sqlerr.Wrap(err))
			}
			return &ir.Const{Value: d, T: t}, nil
		}
	}
	if ae := tc.Arg.GetAArrayExpr(); ae != nil && len(ae.Elements) == 0 && t.Kind == types.Array {
		return &ir.Const{Value: types.DArray(nil), T: t}, nil
	}
	arg, err := b.bindExpr(ctx, tc.Arg)
	if err != nil {
		return nil, err
	}
	if t.Kind == types.Interval {
		if c, ok := arg.(*ir.Const); ok && c.T.Kind == types.Unknown && !c.Value.Null {
			if field := intervalField(tc.TypeName); field != "" {
				iv, err := types.ParseIntervalWithField(c.Value.S, field)
				if err != nil {
					return nil, b.errAt(tc.Location, sqlerr.Wrap(err))
				}
				return &ir.Const{Value: types.DInterval(iv), T: types.IntervalT}, nil
			}
		}
	}
	return b.castTo(arg, t, tc.Location, true)
}

// castTo converts e to type t. Untyped literals are parsed as t; other values
// get a Cast node if the cast exists (explicit casts allow more than
// implicit ones).
func (b *binder) castTo(e ir.Expr, t types.T, loc int32, explicit bool) (ir.Expr, error) {
	if p, ok := untypedParam(e); ok {
		if t.Kind == types.Unknown {
			return e, nil
		}
		// The parameter takes the type (without modifiers); a cast then
		// applies any modifiers.
		var err error
		if e, err = b.resolveParam(p, t, loc); err != nil {
			return nil, err
		}
	}
	if c, ok := e.(*ir.Const); ok && c.T.Kind == types.Unknown {
		if c.Value.Null {
			return &ir.Const{Value: types.Null, T: t}, nil
		}
		if t.Kind == types.Text && t.Width > 0 && explicit {
			// An explicit cast to varchar(n) truncates, where the input rule
			// ParseText applies (assignment) rejects a longer value.
			return &ir.Cast{Arg: &ir.Const{Value: c.Value, T: types.TextT}, T: t}, nil
		}
		d, err := b.parseLiteral(t, c.Value.S)
		if err != nil {
			if l, ok := b.litLoc[c]; ok {
				loc = l
			}
			return nil, b.errAt(loc, sqlerr.Wrap(err))
		}
		return &ir.Const{Value: d, T: t}, nil
	}
	if r, ok := e.(*ir.Call); ok && r.Fn == ir.FnRow && t.Kind == types.Struct {
		return b.castRow(r, t, loc, explicit)
	}
	from := e.Type()
	if types.Identical(from, t) && (t.Kind != types.Text || (t.Width == 0 || from.Width == t.Width) && (!explicit || from.Bpchar == t.Bpchar)) &&
		(t.Kind != types.Numeric || from.HasTypmod == t.HasTypmod && from.Precision == t.Precision) {
		return e, nil
	}
	if !ir.CastAllowed(from, t) {
		return nil, b.errAt(loc, sqlerr.New(sqlerr.CannotCoerce, "cannot cast type %s to %s", from, t))
	}
	return b.zoneCast(e, t), nil
}

// coerce converts e to t where PostgreSQL would do so implicitly (function
// arguments, operands, CASE branches).
func (b *binder) coerce(e ir.Expr, t types.T, loc int32) (ir.Expr, error) {
	from := e.Type()
	if from.Kind == t.Kind && types.Identical(from, t) {
		return e, nil
	}
	if _, ok := ir.ImplicitCastCost(from, t); !ok && from.Kind != t.Kind {
		return nil, b.errAt(loc, sqlerr.New(sqlerr.DatatypeMismatch, "cannot convert %s to %s implicitly", from, t))
	}
	return b.castTo(e, t, loc, false)
}

// defaultType gives an untyped literal the type text, as PostgreSQL does when
// nothing else decides.
func (b *binder) defaultType(e ir.Expr) ir.Expr {
	if p, ok := untypedParam(e); ok {
		return b.defaultParamType(p)
	}
	if c, ok := e.(*ir.Const); ok && c.T.Kind == types.Unknown {
		t := &ir.Const{Value: c.Value, T: types.TextT}
		if c.Value.Null {
			t.Value = types.Null
		}
		if b.defaulted == nil {
			b.defaulted = map[*ir.Const]*ir.Const{}
		}
		b.defaulted[t] = c
		return t
	}
	return e
}

// untypedColumn returns the untyped literal that column col of rel, a
// projection, was made of by defaultType.
func (b *binder) untypedColumn(rel ir.Rel, col int) (*ir.Const, bool) {
	p, ok := rel.(*ir.Project)
	if !ok {
		return nil, false
	}
	c, ok := p.Exprs[col].(*ir.Const)
	if !ok {
		return nil, false
	}
	lit, ok := b.defaulted[c]
	return lit, ok
}

// retypeUntyped gives column col of rel, an untyped literal (see
// untypedColumn), type t: the literal is read as a t.
func (b *binder) retypeUntyped(rel ir.Rel, col int, lit *ir.Const, t types.T) error {
	e, err := b.castTo(lit, t, -1, false)
	if err != nil {
		return err
	}
	p := rel.(*ir.Project)
	p.Exprs[col] = e
	p.Cols[col].Type = t
	return nil
}

// resolveCall picks the overload of fn that fits args with the cheapest
// implicit conversions and returns the call with its arguments converted.
func (b *binder) resolveCall(fn string, args []ir.Expr, loc int32) (ir.Expr, error) {
	if e, ok := b.nullSafeArrayCall(fn, args, loc); ok {
		return e, nil
	}
	if o := untypedOperandOverload(fn, args); o != nil {
		return b.callOverload(o, args, loc)
	}
	var best *ir.Overload
	bestCost := -1
	ambiguous := false
	for _, o := range preferMatches(ir.FunctionOverloads(fn), args) {
		cost, ok := overloadCost(o, args)
		if !ok {
			continue
		}
		switch {
		case best == nil || cost < bestCost:
			best, bestCost, ambiguous = o, cost, false
		case cost == bestCost:
			ambiguous = true
		}
	}
	if best == nil {
		return nil, b.errAt(loc, noSuchFunction(fn, args))
	}
	if ambiguous && allUnknown(args) {
		best = preferredCandidate(fn, args, bestCost)
		if best == nil {
			return nil, b.errAt(loc, sqlerr.New(ambiguousFunction, "could not choose a best candidate for %s", describeCall(fn, args)).
				WithHint("Add explicit type casts."))
		}
	}
	return b.callOverload(best, args, loc)
}

// preferMatches narrows the overloads that args convert to as PostgreSQL's
// func_select_candidate does before anything else: it keeps those with the
// most arguments of exactly the argument's type, then those with the most
// arguments either exact or of the preferred type of the argument's category
// (so sqrt(int) is sqrt(double precision), not sqrt(numeric), and
// power(int, numeric) is power(numeric, numeric)). Untyped arguments count for
// neither. The cheapest of the survivors is chosen by the caller.
func preferMatches(os []*ir.Overload, args []ir.Expr) []*ir.Overload {
	var cands []*ir.Overload
	for _, o := range os {
		if _, ok := overloadCost(o, args); ok {
			cands = append(cands, o)
		}
	}
	if len(cands) < 2 {
		return cands
	}
	exact := func(o *ir.Overload, i int) bool {
		return args[i].Type().Kind == o.Args[min(i, len(o.Args)-1)].Kind
	}
	preferred := func(o *ir.Overload, i int) bool {
		if exact(o, i) {
			return true
		}
		at := args[i].Type()
		pt := o.Args[min(i, len(o.Args)-1)]
		ac, _ := typeCategory(at)
		pc, pref := typeCategory(pt)
		return pref && ac == pc && ac != 0
	}
	for _, match := range []func(*ir.Overload, int) bool{exact, preferred} {
		most, kept := -1, cands[:0:0]
		for _, o := range cands {
			n := 0
			for i, a := range args {
				if a.Type().Kind != types.Unknown && match(o, i) {
					n++
				}
			}
			switch {
			case n > most:
				most, kept = n, append(kept[:0], o)
			case n == most:
				kept = append(kept, o)
			}
		}
		cands = kept
	}
	return cands
}

// callOverload converts args to the argument types of o and returns the call.
func (b *binder) callOverload(o *ir.Overload, args []ir.Expr, loc int32) (ir.Expr, error) {
	conv := make([]ir.Expr, len(args))
	for i, a := range args {
		pt := o.Args[len(o.Args)-1]
		if i < len(o.Args) {
			pt = o.Args[i]
		}
		c, err := b.castTo(a, pt, loc, false)
		if err != nil {
			return nil, err
		}
		conv[i] = c
	}
	return b.zoneCall(&ir.Call{Fn: o.Fn, Args: conv, T: o.Result}), nil
}

// untypedOperandOverload applies PostgreSQL's first rule for a binary
// operator with one untyped literal operand: the literal is taken to have the
// other operand's type if the operator exists for two operands of that type
// (so date - '2024-01-01' subtracts dates). It returns nil otherwise.
func untypedOperandOverload(fn string, args []ir.Expr) *ir.Overload {
	if _, isOp := operatorSymbols[fn]; !isOp || len(args) != 2 {
		return nil
	}
	l, r := args[0].Type(), args[1].Type()
	known := l
	switch {
	case l.Kind == types.Unknown && r.Kind != types.Unknown:
		known = r
	case r.Kind == types.Unknown && l.Kind != types.Unknown:
	default:
		return nil
	}
	for _, o := range ir.FunctionOverloads(fn) {
		if !o.Variadic && len(o.Args) == 2 && o.Args[0].Kind == known.Kind && o.Args[1].Kind == known.Kind {
			return o
		}
	}
	return nil
}

// ambiguousFunction is SQLSTATE 42725 (ambiguous_function).
const ambiguousFunction = "42725"

// typeCategory is PostgreSQL's type category of t, and whether t is the
// preferred type of its category.
func typeCategory(t types.T) (cat byte, preferred bool) {
	switch t.Kind {
	case types.Int16, types.Int32, types.Int64, types.Numeric, types.Float32:
		return 'N', false
	case types.Float64:
		return 'N', true
	case types.Text:
		return 'S', true
	case types.Date, types.Timestamp:
		return 'D', false
	case types.TimestampTZ:
		return 'D', true
	case types.Interval:
		return 'T', true
	case types.Bool:
		return 'B', true
	}
	return 0, false
}

// preferredCandidate resolves a call whose arguments are all untyped
// literals between overloads of equal cost as PostgreSQL does: if at every
// argument position all the candidates take types of one category, the one
// candidate taking that category's preferred type wins (abs('-5') is
// abs(double precision)). It returns nil if that leaves no single candidate.
func preferredCandidate(fn string, args []ir.Expr, cost int) *ir.Overload {
	var cands []*ir.Overload
	for _, o := range ir.FunctionOverloads(fn) {
		if c, ok := overloadCost(o, args); ok && c == cost {
			cands = append(cands, o)
		}
	}
	argType := func(o *ir.Overload, i int) types.T {
		if i < len(o.Args) {
			return o.Args[i]
		}
		return o.Args[len(o.Args)-1]
	}
	for i := range args {
		cat, _ := typeCategory(argType(cands[0], i))
		for _, o := range cands[1:] {
			if c, _ := typeCategory(argType(o, i)); c != cat {
				return nil
			}
		}
		var kept []*ir.Overload
		for _, o := range cands {
			if _, pref := typeCategory(argType(o, i)); pref {
				kept = append(kept, o)
			}
		}
		if len(kept) > 0 {
			cands = kept
		}
	}
	if len(cands) != 1 {
		return nil
	}
	return cands[0]
}

func allUnknown(args []ir.Expr) bool {
	for _, a := range args {
		if a.Type().Kind != types.Unknown {
			return false
		}
	}
	return len(args) > 0
}

// overloadCost is the total implicit conversion cost of calling o with args.
func overloadCost(o *ir.Overload, args []ir.Expr) (int, bool) {
	if o.Variadic {
		if len(args) < len(o.Args) {
			return 0, false
		}
	} else if len(args) != len(o.Args) {
		return 0, false
	}
	total := 0
	for i, a := range args {
		pt := o.Args[len(o.Args)-1]
		if i < len(o.Args) {
			pt = o.Args[i]
		}
		c, ok := ir.ImplicitCastCost(a.Type(), pt)
		if !ok {
			return 0, false
		}
		total += c
	}
	return total, true
}

var operatorSymbols = map[string]string{
	ir.FnAdd: "+", ir.FnSub: "-", ir.FnMul: "*", ir.FnDiv: "/", ir.FnMod: "%", ir.FnEq: "=", ir.FnNe: "<>",
	ir.FnBitAnd: "&", ir.FnBitOr: "|", ir.FnBitXor: "#",
	ir.FnLt: "<", ir.FnLe: "<=", ir.FnGt: ">", ir.FnGe: ">=", ir.FnConcatOp: "||", ir.FnLike: "~~", ir.FnILike: "~~*",
	ir.FnRegexMatch: "~", ir.FnRegexIMatch: "~*",
}

func describeCall(fn string, args []ir.Expr) string {
	ts := make([]string, len(args))
	for i, a := range args {
		ts[i] = a.Type().String()
	}
	if fn == ir.FnIntDiv {
		fn = "div"
	}
	if sym, ok := operatorSymbols[fn]; ok {
		if len(ts) == 1 {
			return fmt.Sprintf("%s %s", sym, ts[0])
		}
		return fmt.Sprintf("%s %s %s", ts[0], sym, ts[1])
	}
	return fmt.Sprintf("%s(%s)", fn, strings.Join(ts, ", "))
}

func noSuchFunction(fn string, args []ir.Expr) *sqlerr.Error {
	if _, ok := operatorSymbols[fn]; ok {
		return sqlerr.New(sqlerr.UndefinedFunction, "operator does not exist: %s", describeCall(fn, args)).
			WithHint("No operator matches the given name and argument types. You might need to add explicit type casts.")
	}
	return sqlerr.New(sqlerr.UndefinedFunction, "function %s does not exist", describeCall(fn, args)).
		WithHint("No function matches the given name and argument types. You might need to add explicit type casts.")
}

// commonType finds the type every expression converts to implicitly, as
// PostgreSQL's select_common_type does for CASE, COALESCE, IN and VALUES.
func (b *binder) commonType(es []ir.Expr, what string, loc int32) (types.T, error) {
	var t types.T
	found := false
	for _, e := range es {
		et := e.Type()
		if et.Kind == types.Unknown {
			continue
		}
		if !found {
			t, found = et, true
			continue
		}
		if et.Kind == types.Array && t.Kind == types.Array {
			elem, err := b.commonType([]ir.Expr{&ir.Const{Value: types.Null, T: t.ElemT()}, &ir.Const{Value: types.Null, T: et.ElemT()}}, what, loc)
			if err != nil {
				return types.T{}, err
			}
			t = types.ArrayOf(elem)
			continue
		}
		if et.Kind == t.Kind {
			if et.Kind == types.Numeric && !types.Identical(et, t) {
				t = types.NumericT
			}
			if et.Kind == types.Text && et.Width != t.Width {
				t = types.TextT
			}
			continue
		}
		if _, ok := ir.ImplicitCastCost(t, et); ok {
			t = et
		} else if _, ok := ir.ImplicitCastCost(et, t); !ok {
			return types.T{}, b.errAt(loc, sqlerr.New(sqlerr.DatatypeMismatch, "%s types %s and %s cannot be matched", what, t, et))
		}
	}
	if !found {
		return types.TextT, nil
	}
	return t, nil
}

// resolveCommonCall converts args to their common type and calls fn.
func (b *binder) resolveCommonCall(fn, what string, args []ir.Expr, loc int32) (ir.Expr, error) {
	t, err := b.commonType(args, what, loc)
	if err != nil {
		return nil, err
	}
	conv := make([]ir.Expr, len(args))
	for i, a := range args {
		if conv[i], err = b.coerce(a, t, loc); err != nil {
			return nil, err
		}
	}
	return b.resolveCall(fn, conv, loc)
}

// bindNullIf binds NULLIF(l, r). It compares in the common type of l and r
// but, as PostgreSQL, keeps l's type where PostgreSQL has an = operator
// between the two types (within the integers, the floats, and the dates and
// timestamps): NULLIF(smallint, int) is a smallint. Its value is l's or NULL,
// so the cast back to l's type is exact.
func (b *binder) bindNullIf(l, r ir.Expr, loc int32) (ir.Expr, error) {
	e, err := b.resolveCommonCall(ir.FnNullIf, "NULLIF", []ir.Expr{l, r}, loc)
	if err != nil {
		return nil, err
	}
	lt, rt := l.Type(), r.Type()
	if types.Identical(lt, e.Type()) || crossTypeEqFamily(lt.Kind) == 0 || crossTypeEqFamily(lt.Kind) != crossTypeEqFamily(rt.Kind) {
		return e, nil
	}
	return b.castTo(e, lt, loc, false)
}

// crossTypeEqFamily numbers the groups of types among which PostgreSQL has
// cross-type = operators (int24eq, float48eq, date_eq_timestamp, ...); 0 is
// none.
func crossTypeEqFamily(k types.Kind) int {
	switch k {
	case types.Int16, types.Int32, types.Int64:
		return 1
	case types.Float32, types.Float64:
		return 2
	case types.Date, types.Timestamp, types.TimestampTZ:
		return 3
	}
	return 0
}

func opName(names []*pg_query.Node) string {
	var s string
	for _, n := range names {
		if v, ok := n.Node.(*pg_query.Node_String_); ok {
			s = v.String_.Sval
		}
	}
	return s
}

var binaryOps = map[string]string{
	"+": ir.FnAdd, "-": ir.FnSub, "*": ir.FnMul, "/": ir.FnDiv, "%": ir.FnMod,
	"&": ir.FnBitAnd, "|": ir.FnBitOr, "#": ir.FnBitXor,
	"=": ir.FnEq, "<>": ir.FnNe, "!=": ir.FnNe, "<": ir.FnLt, "<=": ir.FnLe, ">": ir.FnGt, ">=": ir.FnGe,
	"||": ir.FnConcatOp, "~~": ir.FnLike, "~~*": ir.FnILike, "^": ir.FnPower,
}

func (b *binder) bindAExpr(ctx *exprCtx, a *pg_query.A_Expr) (ir.Expr, error) {
	op := opName(a.Name)
	switch a.Kind {
	case pg_query.A_Expr_Kind_AEXPR_OP:
		if a.Lexpr == nil {
			r, err := b.bindExpr(ctx, a.Rexpr)
			if err != nil {
				return nil, err
			}
			switch op {
			case "-":
				return b.resolveCall(ir.FnNeg, []ir.Expr{r}, a.Location)
			case "+":
				return r, nil
			case "@":
				return b.resolveCall(ir.FnAbs, []ir.Expr{r}, a.Location)
			case "|/":
				return b.resolveCall(ir.FnSqrt, []ir.Expr{r}, a.Location)
			case "||/":
				return b.resolveCall(ir.FnCbrt, []ir.Expr{r}, a.Location)
			}
			return nil, b.errAt(a.Location, sqlerr.Unsupported("prefix operator %s", op))
		}
		l, err := b.bindExpr(ctx, a.Lexpr)
		if err != nil {
			return nil, err
		}
		r, err := b.bindExpr(ctx, a.Rexpr)
		if err != nil {
			return nil, err
		}
		if e, err := b.bindJSONBOperator(op, l, r, a.Location); e != nil || err != nil {
			return e, err
		}
		if e, err := b.bindStructOperator(op, l, r, isRowExpr(a.Lexpr) && isRowExpr(a.Rexpr), a.Location); e != nil || err != nil {
			return e, err
		}
		if e, err := b.bindArrayOperator(op, l, r, a.Location); e != nil || err != nil {
			return e, err
		}
		if op == "||" && !byteaConcat(l, r) {
			// || accepts any operand that is not an untyped literal by
			// converting it to text, as PostgreSQL's anynonarray || text does.
			l, r = b.textOperand(l), b.textOperand(r)
		}
		if fn, negate, ok := regexOp(op); ok {
			call, err := b.resolveCall(fn, []ir.Expr{l, r}, a.Location)
			if err != nil || !negate {
				return call, err
			}
			return &ir.Call{Fn: ir.FnNot, Args: []ir.Expr{call}, T: types.BoolT}, nil
		}
		fn, ok := binaryOps[op]
		if !ok {
			return nil, b.errAt(a.Location, sqlerr.Unsupported("operator %s", op))
		}
		l, r = widenReal(l, r)
		return b.resolveCall(fn, []ir.Expr{l, r}, a.Location)
	case pg_query.A_Expr_Kind_AEXPR_LIKE, pg_query.A_Expr_Kind_AEXPR_ILIKE:
		l, err := b.bindExpr(ctx, a.Lexpr)
		if err != nil {
			return nil, err
		}
		r, err := b.bindExpr(ctx, a.Rexpr)
		if err != nil {
			return nil, err
		}
		fn := ir.FnLike
		if a.Kind == pg_query.A_Expr_Kind_AEXPR_ILIKE {
			fn = ir.FnILike
		}
		call, err := b.resolveCall(fn, []ir.Expr{l, r}, a.Location)
		if err != nil {
			return nil, err
		}
		if strings.HasPrefix(op, "!") {
			return &ir.Call{Fn: ir.FnNot, Args: []ir.Expr{call}, T: types.BoolT}, nil
		}
		return call, nil
	case pg_query.A_Expr_Kind_AEXPR_DISTINCT, pg_query.A_Expr_Kind_AEXPR_NOT_DISTINCT:
		l, err := b.bindExpr(ctx, a.Lexpr)
		if err != nil {
			return nil, err
		}
		r, err := b.bindExpr(ctx, a.Rexpr)
		if err != nil {
			return nil, err
		}
		fn := ir.FnIsDistinct
		if a.Kind == pg_query.A_Expr_Kind_AEXPR_NOT_DISTINCT {
			fn = ir.FnIsNotDistinct
		}
		return b.resolveCommonCall(fn, "IS DISTINCT FROM", []ir.Expr{l, r}, a.Location)
	case pg_query.A_Expr_Kind_AEXPR_NULLIF:
		l, err := b.bindExpr(ctx, a.Lexpr)
		if err != nil {
			return nil, err
		}
		r, err := b.bindExpr(ctx, a.Rexpr)
		if err != nil {
			return nil, err
		}
		return b.bindNullIf(l, r, a.Location)
	case pg_query.A_Expr_Kind_AEXPR_IN:
		return b.bindInList(ctx, a, op == "<>")
	case pg_query.A_Expr_Kind_AEXPR_BETWEEN, pg_query.A_Expr_Kind_AEXPR_NOT_BETWEEN,
		pg_query.A_Expr_Kind_AEXPR_BETWEEN_SYM, pg_query.A_Expr_Kind_AEXPR_NOT_BETWEEN_SYM:
		return b.bindBetween(ctx, a)
	case pg_query.A_Expr_Kind_AEXPR_OP_ANY, pg_query.A_Expr_Kind_AEXPR_OP_ALL:
		return b.bindAnyAll(ctx, a, op)
	case pg_query.A_Expr_Kind_AEXPR_SIMILAR:
		return b.bindSimilar(ctx, a, op == "!~")
	}
	return nil, b.errAt(a.Location, sqlerr.Unsupported("operator %s", op))
}

// regexOp maps the regular expression match operators to their function and
// whether the result is negated.
func regexOp(op string) (fn string, negate, ok bool) {
	switch op {
	case "~":
		return ir.FnRegexMatch, false, true
	case "~*":
		return ir.FnRegexIMatch, false, true
	case "!~":
		return ir.FnRegexMatch, true, true
	case "!~*":
		return ir.FnRegexIMatch, true, true
	}
	return "", false, false
}

// bindSimilar binds x [NOT] SIMILAR TO p [ESCAPE e], which the parser gives
// as x ~ similar_to_escape(p [, e]) (or !~).
func (b *binder) bindSimilar(ctx *exprCtx, a *pg_query.A_Expr, negate bool) (ir.Expr, error) {
	l, err := b.bindExpr(ctx, a.Lexpr)
	if err != nil {
		return nil, err
	}
	r, err := b.bindExpr(ctx, a.Rexpr)
	if err != nil {
		return nil, err
	}
	call, err := b.resolveCall(ir.FnRegexMatch, []ir.Expr{l, r}, a.Location)
	if err != nil || !negate {
		return call, err
	}
	return &ir.Call{Fn: ir.FnNot, Args: []ir.Expr{call}, T: types.BoolT}, nil
}

// textOperand converts a typed non-text operand of || to text, by a cast
// (PostgreSQL's anynonarray || text casts: true || 'a' is truea).
func (b *binder) textOperand(e ir.Expr) ir.Expr {
	t := e.Type()
	if t.Kind == types.Unknown || t.Kind == types.Text {
		return e
	}
	return b.zoneCast(e, types.TextT)
}

// outputText converts a typed non-text argument of concat, concat_ws or
// format to text by its type's output function, as PostgreSQL does: a
// boolean is t or f there, not the true or false of a cast.
func (b *binder) outputText(e ir.Expr) ir.Expr {
	switch e.Type().Kind {
	case types.Bool:
		return &ir.Case{Whens: []ir.When{
			{Cond: e, Then: &ir.Const{Value: types.DText("t"), T: types.TextT}},
			{Cond: &ir.Call{Fn: ir.FnNot, Args: []ir.Expr{e}, T: types.BoolT}, Then: &ir.Const{Value: types.DText("f"), T: types.TextT}},
		}, Else: &ir.Const{Value: types.Null, T: types.TextT}, T: types.TextT}
	}
	return b.textOperand(e)
}

func (b *binder) bindInList(ctx *exprCtx, a *pg_query.A_Expr, negate bool) (ir.Expr, error) {
	arg, err := b.bindExpr(ctx, a.Lexpr)
	if err != nil {
		return nil, err
	}
	list, ok := a.Rexpr.Node.(*pg_query.Node_List)
	if !ok {
		return nil, b.errAt(a.Location, sqlerr.Unsupported("IN with a subquery"))
	}
	items, err := b.bindExprs(ctx, list.List.Items)
	if err != nil {
		return nil, err
	}
	t, err := b.commonType(append([]ir.Expr{arg}, items...), "IN", a.Location)
	if err != nil {
		return nil, err
	}
	if arg, err = b.coerce(arg, t, a.Location); err != nil {
		return nil, err
	}
	for i := range items {
		if items[i], err = b.coerce(items[i], t, a.Location); err != nil {
			return nil, err
		}
	}
	if t.Kind == types.Struct {
		return b.structInList(arg, items, negate, a.Location)
	}
	// The comparison must exist for the type.
	if _, err := b.resolveCall(ir.FnEq, []ir.Expr{arg, arg}, a.Location); err != nil {
		return nil, err
	}
	return &ir.InList{Arg: arg, List: items, Negate: negate}, nil
}

func (b *binder) bindBetween(ctx *exprCtx, a *pg_query.A_Expr) (ir.Expr, error) {
	arg, err := b.bindExpr(ctx, a.Lexpr)
	if err != nil {
		return nil, err
	}
	list, ok := a.Rexpr.Node.(*pg_query.Node_List)
	if !ok || len(list.List.Items) != 2 {
		return nil, b.errAt(a.Location, sqlerr.New(sqlerr.SyntaxError, "malformed BETWEEN"))
	}
	lo, err := b.bindExpr(ctx, list.List.Items[0])
	if err != nil {
		return nil, err
	}
	hi, err := b.bindExpr(ctx, list.List.Items[1])
	if err != nil {
		return nil, err
	}
	between := func(lo, hi ir.Expr) (ir.Expr, error) {
		ge, err := b.resolveCall(ir.FnGe, []ir.Expr{arg, lo}, a.Location)
		if err != nil {
			return nil, err
		}
		le, err := b.resolveCall(ir.FnLe, []ir.Expr{arg, hi}, a.Location)
		if err != nil {
			return nil, err
		}
		return &ir.Call{Fn: ir.FnAnd, Args: []ir.Expr{ge, le}, T: types.BoolT}, nil
	}
	e, err := between(lo, hi)
	if err != nil {
		return nil, err
	}
	if a.Kind == pg_query.A_Expr_Kind_AEXPR_BETWEEN_SYM || a.Kind == pg_query.A_Expr_Kind_AEXPR_NOT_BETWEEN_SYM {
		swapped, err := between(hi, lo)
		if err != nil {
			return nil, err
		}
		e = &ir.Call{Fn: ir.FnOr, Args: []ir.Expr{e, swapped}, T: types.BoolT}
	}
	if a.Kind == pg_query.A_Expr_Kind_AEXPR_NOT_BETWEEN || a.Kind == pg_query.A_Expr_Kind_AEXPR_NOT_BETWEEN_SYM {
		e = &ir.Call{Fn: ir.FnNot, Args: []ir.Expr{e}, T: types.BoolT}
	}
	return e, nil
}

func (b *binder) bindBoolExpr(ctx *exprCtx, be *pg_query.BoolExpr) (ir.Expr, error) {
	args, err := b.bindExprs(ctx, be.Args)
	if err != nil {
		return nil, err
	}
	for i, a := range args {
		if args[i], err = b.requireBool(a, "argument of "+boolOpName(be.Boolop), be.Location); err != nil {
			return nil, err
		}
	}
	switch be.Boolop {
	case pg_query.BoolExprType_AND_EXPR:
		return &ir.Call{Fn: ir.FnAnd, Args: args, T: types.BoolT}, nil
	case pg_query.BoolExprType_OR_EXPR:
		return &ir.Call{Fn: ir.FnOr, Args: args, T: types.BoolT}, nil
	}
	return &ir.Call{Fn: ir.FnNot, Args: args, T: types.BoolT}, nil
}

func boolOpName(t pg_query.BoolExprType) string {
	switch t {
	case pg_query.BoolExprType_AND_EXPR:
		return "AND"
	case pg_query.BoolExprType_OR_EXPR:
		return "OR"
	}
	return "NOT"
}

// requireBool checks that e is boolean (an untyped literal is parsed as one).
func (b *binder) requireBool(e ir.Expr, what string, loc int32) (ir.Expr, error) {
	switch e.Type().Kind {
	case types.Bool:
		return e, nil
	case types.Unknown:
		return b.castTo(e, types.BoolT, loc, false)
	}
	return nil, b.errAt(loc, sqlerr.New(sqlerr.DatatypeMismatch, "%s must be type boolean, not type %s", what, e.Type()))
}

func (b *binder) bindBooleanTest(ctx *exprCtx, bt *pg_query.BooleanTest) (ir.Expr, error) {
	arg, err := b.bindExpr(ctx, bt.Arg)
	if err != nil {
		return nil, err
	}
	if arg, err = b.requireBool(arg, "argument of IS TRUE", bt.Location); err != nil {
		return nil, err
	}
	isTrue := &ir.Call{Fn: ir.FnIsTrue, Args: []ir.Expr{arg}, T: types.BoolT}
	isFalse := &ir.Call{Fn: ir.FnIsFalse, Args: []ir.Expr{arg}, T: types.BoolT}
	not := func(e ir.Expr) ir.Expr { return &ir.Call{Fn: ir.FnNot, Args: []ir.Expr{e}, T: types.BoolT} }
	switch bt.Booltesttype {
	case pg_query.BoolTestType_IS_TRUE:
		return isTrue, nil
	case pg_query.BoolTestType_IS_NOT_TRUE:
		return not(isTrue), nil
	case pg_query.BoolTestType_IS_FALSE:
		return isFalse, nil
	case pg_query.BoolTestType_IS_NOT_FALSE:
		return not(isFalse), nil
	case pg_query.BoolTestType_IS_UNKNOWN:
		return &ir.Call{Fn: ir.FnIsNull, Args: []ir.Expr{arg}, T: types.BoolT}, nil
	case pg_query.BoolTestType_IS_NOT_UNKNOWN:
		return &ir.Call{Fn: ir.FnIsNotNull, Args: []ir.Expr{arg}, T: types.BoolT}, nil
	}
	return nil, b.errAt(bt.Location, sqlerr.Unsupported("boolean test"))
}

func (b *binder) bindCase(ctx *exprCtx, c *pg_query.CaseExpr) (ir.Expr, error) {
	var operand ir.Expr
	var err error
	if c.Arg != nil {
		if operand, err = b.bindExpr(ctx, c.Arg); err != nil {
			return nil, err
		}
	}
	var conds, results []ir.Expr
	for _, w := range c.Args {
		cw := w.GetCaseWhen()
		cond, err := b.bindExpr(ctx, cw.Expr)
		if err != nil {
			return nil, err
		}
		if operand != nil {
			if cond, err = b.resolveCall(ir.FnEq, []ir.Expr{operand, cond}, cw.Location); err != nil {
				return nil, err
			}
		} else if cond, err = b.requireBool(cond, "argument of CASE/WHEN", cw.Location); err != nil {
			return nil, err
		}
		res, err := b.bindExpr(ctx, cw.Result)
		if err != nil {
			return nil, err
		}
		conds = append(conds, cond)
		results = append(results, res)
	}
	var els ir.Expr = &ir.Const{Value: types.Null, T: types.UnknownT}
	if c.Defresult != nil {
		if els, err = b.bindExpr(ctx, c.Defresult); err != nil {
			return nil, err
		}
	}
	t, err := b.commonType(append(append([]ir.Expr{}, results...), els), "CASE", c.Location)
	if err != nil {
		return nil, err
	}
	out := &ir.Case{T: t}
	for i := range conds {
		r, err := b.coerce(results[i], t, c.Location)
		if err != nil {
			return nil, err
		}
		out.Whens = append(out.Whens, ir.When{Cond: conds[i], Then: r})
	}
	if out.Else, err = b.coerce(els, t, c.Location); err != nil {
		return nil, err
	}
	return out, nil
}

func (b *binder) bindSQLValueFunction(f *pg_query.SQLValueFunction) (ir.Expr, error) {
	now := &ir.Call{Fn: ir.FnNow, T: types.TimestampTZT}
	switch f.Op {
	case pg_query.SQLValueFunctionOp_SVFOP_CURRENT_TIMESTAMP, pg_query.SQLValueFunctionOp_SVFOP_CURRENT_TIMESTAMP_N:
		return now, nil
	case pg_query.SQLValueFunctionOp_SVFOP_LOCALTIMESTAMP, pg_query.SQLValueFunctionOp_SVFOP_LOCALTIMESTAMP_N:
		return b.zoneCast(now, types.TimestampT), nil
	case pg_query.SQLValueFunctionOp_SVFOP_CURRENT_DATE:
		return b.zoneCast(now, types.DateT), nil
	}
	if e, ok := b.bindSessionValue(f.Op); ok {
		return e, nil
	}
	if e, ok := b.bindUserValue(f.Op); ok {
		return e, nil
	}
	return nil, b.errAt(f.Location, sqlerr.Unsupported("%s", strings.TrimPrefix(f.Op.String(), "SVFOP_")))
}

// functionAliases maps PostgreSQL spellings to streamsql's function names.
var functionAliases = map[string]string{
	"char_length": ir.FnLength, "character_length": ir.FnLength, "substring": ir.FnSubstr,
	"ceiling": ir.FnCeil, "pow": ir.FnPower, "trim": ir.FnTrim, "log10": ir.FnLog10, "div": ir.FnIntDiv,
	"current_timestamp": ir.FnNow, "transaction_timestamp": ir.FnNow, "statement_timestamp": ir.FnNow,
}

func funcName(names []*pg_query.Node) string {
	var parts []string
	for _, n := range names {
		if s, ok := n.Node.(*pg_query.Node_String_); ok {
			parts = append(parts, s.String_.Sval)
		}
	}
	if len(parts) == 2 && parts[0] == "pg_catalog" {
		return parts[1]
	}
	return strings.Join(parts, ".")
}

var unsupportedAggregates = map[string]bool{
	"json_agg": true, "jsonb_agg": true, "percentile_cont": true,
	"percentile_disc": true, "mode": true, "bit_and": true, "bit_or": true,
}

func (b *binder) bindFuncCall(ctx *exprCtx, f *pg_query.FuncCall) (ir.Expr, error) {
	name := JSONAlias(funcName(f.Funcname))
	if f.Over != nil {
		return b.bindWindowCall(ctx, name, f)
	}
	// first_value and last_value are also aggregates with an ORDER BY of
	// their own (RisingWave's form): first_value(x ORDER BY t).
	if windowFunctions[name] && !(ir.AggregateNames[name] && len(f.AggOrder) > 0) {
		return nil, b.errAt(f.Location, sqlerr.New(sqlerr.WrongObjectType, "window function %s requires an OVER clause", name))
	}
	if ir.AggregateNames[name] {
		return b.bindAggregate(ctx, name, f)
	}
	if isSetReturning(name) || ir.ArraySRFs[name] != "" {
		return b.bindSRF(ctx, f)
	}
	if unsupportedAggregates[name] {
		return nil, b.errAt(f.Location, sqlerr.Unsupported("aggregate function %s", name))
	}
	if f.AggStar || f.AggDistinct || f.AggFilter != nil || len(f.AggOrder) > 0 {
		return nil, b.errAt(f.Location, sqlerr.New(sqlerr.WrongObjectType, "%s is not an aggregate function", name))
	}
	args, e, handled, err := b.bindUserCall(ctx, f)
	if handled || err != nil {
		return e, err
	}
	if name == "generate_series" {
		return nil, b.errAt(f.Location, sqlerr.Unsupported("generate_series outside FROM"))
	}
	if args == nil {
		if args, err = b.bindExprs(ctx, f.Args); err != nil {
			return nil, err
		}
	}
	if alias, ok := functionAliases[name]; ok {
		name = alias
	}
	if e, ok := b.bindSessionFunc(name, args); ok {
		return e, nil
	}
	if e, ok, err := b.bindCatalogFunc(name, args, f.Location); ok {
		return e, err
	}
	switch name {
	case "position":
		// position(a IN b) parses as position(b, a).
		name = ir.FnStrpos
	case "extract", ir.FnDatePart, ir.FnDateTrunc:
		if name == "extract" {
			name = ir.FnExtract
		}
		if len(args) == 2 {
			if c, ok := args[0].(*ir.Const); ok && !c.Value.Null {
				args[0] = &ir.Const{Value: types.DText(strings.ToLower(c.Value.S)), T: types.UnknownT}
			}
			if name == ir.FnDateTrunc && args[1].Type().Kind == types.Date {
				// PostgreSQL converts a date to timestamptz, the preferred
				// type of its category, for date_trunc.
				args[1] = b.zoneCast(args[1], types.TimestampTZT)
			}
		}
	case ir.FnDateBin:
		if len(args) == 3 && args[1].Type().Kind == types.Date && args[2].Type().Kind == types.Date {
			// As for date_trunc, two dates go to timestamptz, the preferred
			// type of their category.
			args[1] = b.zoneCast(args[1], types.TimestampTZT)
			args[2] = b.zoneCast(args[2], types.TimestampTZT)
		}
	case "pg_typeof":
		if len(args) == 1 {
			return &ir.Const{Value: types.DText(types.WithoutTypmod(args[0].Type()).String()), T: types.TextT}, nil
		}
	case ir.FnNow:
		if len(args) != 0 {
			return nil, b.errAt(f.Location, noSuchFunction(name, args))
		}
	case ir.FnConcat, ir.FnConcatWS:
		for i, a := range args {
			args[i] = b.outputText(a)
		}
	case ir.FnFormat:
		for i, a := range args {
			if i > 0 {
				args[i] = b.outputText(a)
			}
		}
	case ir.FnCoalesce, ir.FnGreatest, ir.FnLeast:
		return b.resolveCommonCall(name, strings.ToUpper(name), args, f.Location)
	case ir.FnNullIf:
		if len(args) != 2 {
			return b.resolveCommonCall(name, "NULLIF", args, f.Location)
		}
		return b.bindNullIf(args[0], args[1], f.Location)
	}
	if isMapFunction(name) || (name == "cardinality" && len(args) == 1 && args[0].Type().Kind == types.Map) {
		return b.bindMapCall(name, args, f.Location)
	}
	if ir.IsArrayFunction(name) {
		return b.bindArrayCall(name, args, f.Location)
	}
	if ir.IsJSONBPolyFunction(name) {
		return b.bindJSONBPolyCall(name, args, f.Location)
	}
	if ir.FunctionOverloads(name) == nil {
		return nil, b.errAt(f.Location, noSuchFunction(name, args))
	}
	if ir.Volatile(name) && b.volatile == nil {
		b.volatile = &volatileUse{fn: name, loc: f.Location}
	}
	return b.resolveCall(name, args, f.Location)
}

// widenReal converts both operands of a binary operator to double
// precision when one is real and the other another number type:
// PostgreSQL has cross-type real/double operators and prefers double
// precision, so 1.1::numeric < 1.1::real compares as doubles (true) and
// 1 + 1.5::real is double precision.
func widenReal(l, r ir.Expr) (ir.Expr, ir.Expr) {
	lt, rt := l.Type(), r.Type()
	mixed := func(a, b types.T) bool {
		return a.Kind == types.Float32 && b.IsNumeric() && b.Kind != types.Float32
	}
	if !mixed(lt, rt) && !mixed(rt, lt) {
		return l, r
	}
	widen := func(e ir.Expr) ir.Expr {
		if e.Type().Kind == types.Float64 {
			return e
		}
		return &ir.Cast{Arg: e, T: types.Float64T}
	}
	return widen(l), widen(r)
}

// nullSafeArrayCall types IS [NOT] NULL, IS [NOT] DISTINCT FROM, coalesce
// and nullif over arrays (already of one type, see resolveCommonCall),
// which the overload table does not list; ok is false for other calls.
func (b *binder) nullSafeArrayCall(fn string, args []ir.Expr, loc int32) (ir.Expr, bool) {
	if len(args) == 0 || !types.IsNested(args[0].Type()) {
		return nil, false
	}
	switch fn {
	case ir.FnIsNull, ir.FnIsNotNull, ir.FnIsDistinct, ir.FnIsNotDistinct:
		return &ir.Call{Fn: fn, Args: args, T: types.BoolT}, true
	case ir.FnCoalesce, ir.FnNullIf:
		return &ir.Call{Fn: fn, Args: args, T: args[0].Type()}, true
	}
	return nil, false
}
