package sql

import (
	"fmt"
	"strings"

	pg_query "github.com/pganalyze/pg_query_go/v6"
	"github.com/streamsql/streamsql/ir"
	"github.com/streamsql/streamsql/sqlerr"
	"github.com/streamsql/streamsql/types"
)

// Structs in expressions: ROW(...) and (a, b) constructors, field access
// (s).f, casts between rows and struct types, and comparison field by
// field. The calls are typed here (IsStructFunction); the evaluator has a
// kernel for each name.

// bindRow binds ROW(a, b, ...) and (a, b, ...): an anonymous record whose
// fields are named f1, f2, ...; untyped literals are text fields (kept
// untyped in the call, so that a cast to a struct type parses them as
// its fields).
func (b *binder) bindRow(ctx *exprCtx, r *pg_query.RowExpr) (ir.Expr, error) {
	args, err := b.bindExprs(ctx, r.Args)
	if err != nil {
		return nil, err
	}
	ts := make([]types.T, len(args))
	for i, a := range args {
		if _, ok := untypedParam(a); ok {
			args[i] = b.defaultType(a)
		}
		ts[i] = args[i].Type()
		if ts[i].Kind == types.Unknown {
			ts[i] = types.TextT
		}
	}
	return &ir.Call{Fn: ir.FnRow, Args: args, T: types.RecordOf(ts)}, nil
}

// castRow converts a row constructor to struct type t field by field, as
// PostgreSQL does (so ROW(1, '2')::struct<a int, b int> parses '2' as an
// integer).
func (b *binder) castRow(r *ir.Call, t types.T, loc int32, explicit bool) (ir.Expr, error) {
	if len(r.Args) != t.Fields.Len() {
		return nil, b.errAt(loc, sqlerr.New(sqlerr.CannotCoerce, "cannot cast type %s to %s", r.T, t).
			WithDetail(fmt.Sprintf("Input has %d columns, but the target type has %d.", len(r.Args), t.Fields.Len())))
	}
	args := make([]ir.Expr, len(r.Args))
	for i, a := range r.Args {
		ft := t.Fields.At(i).Type
		var err error
		if explicit {
			args[i], err = b.castTo(a, ft, loc, true)
		} else {
			from := a.Type()
			if from.Kind != types.Unknown && !isRowCall(a) && !ir.AssignmentCastAllowed(from, ft) {
				return nil, b.errAt(loc, sqlerr.New(sqlerr.CannotCoerce, "cannot cast type %s to %s", r.T, t).
					WithDetail(fmt.Sprintf("Cannot cast type %s to %s in column %d.", from, ft, i+1)))
			}
			args[i], err = b.castTo(a, ft, loc, false)
		}
		if err != nil {
			return nil, err
		}
	}
	return &ir.Call{Fn: ir.FnRow, Args: args, T: t}, nil
}

// fieldAccess returns (e).name.
func (b *binder) fieldAccess(e ir.Expr, name string, loc int32) (ir.Expr, error) {
	t := e.Type()
	if t.Kind != types.Struct {
		return nil, b.errAt(loc, sqlerr.New(sqlerr.WrongObjectType,
			"column notation .%s applied to type %s, which is not a composite type", name, t))
	}
	i := t.Fields.Index(name)
	if i < 0 {
		return nil, b.errAt(loc, sqlerr.New(sqlerr.UndefinedColumn, "column \"%s\" not found in data type %s", name, t))
	}
	if r, ok := e.(*ir.Call); ok && r.Fn == ir.FnRow {
		// (ROW(a, b)).f2 is b.
		a := r.Args[i]
		if a.Type().Kind == types.Unknown {
			a = b.defaultType(a)
		}
		return a, nil
	}
	return &ir.Call{Fn: ir.FnStructField, Args: []ir.Expr{e, &ir.Const{Value: types.DInt(int64(i)), T: types.Int32T}}, T: t.Fields.At(i).Type}, nil
}

// bindIndirectionStep binds one step of an indirection chain that is not
// an array subscript: a field selection .f, or a map subscript m[k].
func (b *binder) bindIndirectionStep(ctx *exprCtx, e ir.Expr, n *pg_query.Node, loc int32) (ir.Expr, error) {
	switch x := n.Node.(type) {
	case *pg_query.Node_String_:
		return b.fieldAccess(e, x.String_.Sval, loc)
	case *pg_query.Node_AStar:
		return nil, b.errAt(loc, sqlerr.Unsupported("(composite).*"))
	case *pg_query.Node_AIndices:
		if e.Type().Kind == types.Map && !x.AIndices.IsSlice && x.AIndices.Uidx != nil {
			k, err := b.bindExpr(ctx, x.AIndices.Uidx)
			if err != nil {
				return nil, err
			}
			return b.bindMapCall("map_access", []ir.Expr{e, k}, loc)
		}
		return nil, b.errAt(loc, sqlerr.New(sqlerr.DatatypeMismatch,
			"cannot subscript type %s because it does not support subscripting", e.Type()))
	}
	return nil, b.errAt(loc, sqlerr.Unsupported("indirection %T", n.Node))
}

// structColumnRef resolves a.b (or t.a.b) where a is a struct column and b
// one of its fields, as RisingWave allows; ok is false when the name is
// not of that form.
func (b *binder) structColumnRef(ctx *exprCtx, parts []string, loc int32) (ir.Expr, bool, error) {
	if ctx.scope == nil || len(parts) < 2 || len(parts) > 3 {
		return nil, false, nil
	}
	table, col, fields := "", parts[0], parts[1:]
	i, _, amb := ctx.scope.lookup("", col)
	if i < 0 && len(parts) == 3 {
		table, col, fields = parts[0], parts[1], parts[2:]
		i, _, amb = ctx.scope.lookup(table, col)
	}
	if i < 0 || amb || ctx.scope.cols[i].t.Kind != types.Struct {
		return nil, false, nil
	}
	c := ctx.scope.cols[i]
	var e ir.Expr = &ir.InputRef{Index: i, T: c.t, Name: c.name}
	for _, f := range fields {
		var err error
		if e, err = b.fieldAccess(e, f, loc); err != nil {
			return nil, true, err
		}
	}
	return e, true, nil
}

// bindStructOperator binds a comparison with a struct or map operand, or
// returns nil if neither operand is one. rows says that both operands are
// written as row constructors, which compare pairwise; a cast row
// (CAST(ROW(1, NULL) AS STRUCT<...>)) is a struct value, compared as one.
func (b *binder) bindStructOperator(op string, l, r ir.Expr, rows bool, loc int32) (ir.Expr, error) {
	lt, rt := l.Type(), r.Type()
	if lt.Kind == types.Map || rt.Kind == types.Map {
		return nil, b.errAt(loc, sqlerr.New(sqlerr.UndefinedFunction, "operator does not exist: %s %s %s", lt, op, rt))
	}
	if lt.Kind != types.Struct && rt.Kind != types.Struct {
		return nil, nil
	}
	fn, ok := ir.StructCompareFns[binaryOps[op]]
	if !ok {
		return nil, b.errAt(loc, sqlerr.New(sqlerr.UndefinedFunction, "operator does not exist: %s %s %s", lt, op, rt))
	}
	lr, lRow := l.(*ir.Call)
	rr, rRow := r.(*ir.Call)
	if rows && lRow && rRow && lr.Fn == ir.FnRow && rr.Fn == ir.FnRow {
		return b.rowCompare(binaryOps[op], lr.Args, rr.Args, loc)
	}
	// A row constructor or an untyped literal takes the other side's type.
	if (lt.Kind != types.Struct && lt.Kind != types.Unknown) || (rt.Kind != types.Struct && rt.Kind != types.Unknown) {
		return nil, b.errAt(loc, sqlerr.New(sqlerr.UndefinedFunction, "operator does not exist: %s %s %s", lt, op, rt))
	}
	var err error
	switch {
	case rt.Kind != types.Struct || (rRow && rr.Fn == ir.FnRow):
		r, err = b.castTo(r, lt, loc, false)
	case lt.Kind != types.Struct || (lRow && lr.Fn == ir.FnRow):
		l, err = b.castTo(l, rt, loc, false)
	case !types.Identical(lt, rt):
		return nil, b.errAt(loc, sqlerr.New(sqlerr.UndefinedFunction, "operator does not exist: %s %s %s", lt, op, rt))
	}
	if err != nil {
		return nil, err
	}
	return &ir.Call{Fn: fn, Args: []ir.Expr{l, r}, T: types.BoolT}, nil
}

// rowCompare compares two row constructors as PostgreSQL does: pairwise,
// with SQL NULL semantics (ROW(1, NULL) = ROW(1, NULL) is NULL), the first
// unequal pair deciding an ordering.
func (b *binder) rowCompare(fn string, ls, rs []ir.Expr, loc int32) (ir.Expr, error) {
	if len(ls) != len(rs) {
		return nil, b.errAt(loc, sqlerr.New(sqlerr.SyntaxError, "unequal number of entries in row expressions"))
	}
	pair := func(fn string, i int) (ir.Expr, error) {
		return b.resolveCall(fn, []ir.Expr{ls[i], rs[i]}, loc)
	}
	and := func(a, c ir.Expr) ir.Expr { return &ir.Call{Fn: ir.FnAnd, Args: []ir.Expr{a, c}, T: types.BoolT} }
	or := func(a, c ir.Expr) ir.Expr { return &ir.Call{Fn: ir.FnOr, Args: []ir.Expr{a, c}, T: types.BoolT} }
	if len(ls) == 0 {
		return &ir.Const{Value: types.DBool(fn == ir.FnEq || fn == ir.FnLe || fn == ir.FnGe), T: types.BoolT}, nil
	}
	switch fn {
	case ir.FnEq, ir.FnNe:
		var out ir.Expr
		for i := range ls {
			c, err := pair(fn, i)
			if err != nil {
				return nil, err
			}
			switch {
			case out == nil:
				out = c
			case fn == ir.FnEq:
				out = and(out, c)
			default:
				out = or(out, c)
			}
		}
		return out, nil
	}
	// a < b: l1 < r1 OR (l1 = r1 AND (l2 < r2 OR ...)); the last pair
	// uses the operator itself (<= stays <=), the others its strict form.
	strict := map[string]string{ir.FnLt: ir.FnLt, ir.FnLe: ir.FnLt, ir.FnGt: ir.FnGt, ir.FnGe: ir.FnGt}[fn]
	out, err := pair(fn, len(ls)-1)
	if err != nil {
		return nil, err
	}
	for i := len(ls) - 2; i >= 0; i-- {
		lt, err := pair(strict, i)
		if err != nil {
			return nil, err
		}
		eq, err := pair(ir.FnEq, i)
		if err != nil {
			return nil, err
		}
		out = or(lt, and(eq, out))
	}
	return out, nil
}

// checkOrderable fails for a map, which has no equality or ordering (as in
// RisingWave), where a GROUP BY, DISTINCT, ORDER BY or key needs one.
func (b *binder) checkOrderable(e ir.Expr, loc int32) error {
	t := e.Type()
	if t.Kind == types.Map || (t.Kind == types.Array && t.Elem == types.Map) || hasMapField(t) {
		return b.errAt(loc, sqlerr.New(sqlerr.UndefinedFunction, "could not identify an equality operator for type %s", t))
	}
	return nil
}

func hasMapField(t types.T) bool {
	if t.Kind != types.Struct && !(t.Kind == types.Array && t.Elem == types.Struct) {
		return false
	}
	for i := range t.Fields.Len() {
		ft := t.Fields.At(i).Type
		if ft.Kind == types.Map || (ft.Kind == types.Array && ft.Elem == types.Map) || hasMapField(ft) {
			return true
		}
	}
	return false
}

// dialectType resolves a STRUCT<...> or MAP(...) type that the dialect cut
// out of the text under a placeholder name; ok is false for other names.
func (b *binder) dialectType(name string, loc int32) (types.T, bool, error) {
	if !strings.HasPrefix(name, typePlaceholder) {
		return types.T{}, false, nil
	}
	for _, c := range b.clauses {
		if c.kind == clauseType && c.column == name {
			c.used = true
			t, err := b.parseDialectType(c.expr)
			if err != nil {
				if se, ok := err.(*sqlerr.Error); ok && se.Position == 0 {
					err = se.At(charPosition(b.full, c.exprOff))
				}
			}
			return t, true, err
		}
	}
	return types.T{}, false, nil
}

// parseDialectType parses a type spelled as RisingWave spells it, with
// STRUCT<name type, ...> and MAP(K, V) at any depth and [] suffixes.
func (b *binder) parseDialectType(s string) (types.T, error) {
	s = strings.TrimSpace(s)
	base, arrays := s, false
	for strings.HasSuffix(base, "]") {
		i := strings.LastIndexByte(base, '[')
		if i < 0 {
			break
		}
		base, arrays = strings.TrimSpace(base[:i]), true
	}
	lower := strings.ToLower(base)
	var t types.T
	var err error
	switch {
	case strings.HasPrefix(lower, "struct") && strings.HasSuffix(base, ">") && strings.HasPrefix(strings.TrimSpace(base[6:]), "<"):
		body := strings.TrimSpace(base[6:])
		t, err = b.parseStructBody(body[1 : len(body)-1])
	case strings.HasPrefix(lower, "map") && strings.HasSuffix(base, ")") && strings.HasPrefix(strings.TrimSpace(base[3:]), "("):
		body := strings.TrimSpace(base[3:])
		parts := splitTopLevel(body[1 : len(body)-1])
		if len(parts) != 2 {
			return types.T{}, sqlerr.New(sqlerr.SyntaxError, "syntax error at or near \"%s\"", base)
		}
		var k, v types.T
		if k, err = b.parseDialectType(parts[0]); err != nil {
			return types.T{}, err
		}
		if v, err = b.parseDialectType(parts[1]); err != nil {
			return types.T{}, err
		}
		if !types.MapKeyAllowed(k) {
			return types.T{}, sqlerr.New(sqlerr.FeatureNotSupported, "invalid map key type: %s", k).
				WithHint("Only string and integral types are allowed as map keys.")
		}
		t = types.MapOf(k, v)
	default:
		return b.parseScalarType(s)
	}
	if err != nil {
		return types.T{}, err
	}
	if arrays {
		t = types.ArrayOf(t)
	}
	return t, nil
}

// parseStructBody parses the fields of STRUCT<...>.
func (b *binder) parseStructBody(body string) (types.T, error) {
	var fs []types.Field
	for _, part := range splitTopLevel(body) {
		part = strings.TrimSpace(part)
		var name, rest string
		if strings.HasPrefix(part, `"`) {
			end := strings.Index(part[1:], `"`)
			if end < 0 {
				return types.T{}, sqlerr.New(sqlerr.SyntaxError, "unterminated quoted identifier in %s", part)
			}
			name, rest = part[1:end+1], part[end+2:]
		} else {
			i := strings.IndexAny(part, " \t\n\r")
			if i < 0 {
				return types.T{}, sqlerr.New(sqlerr.SyntaxError, "syntax error at or near \"%s\"", part)
			}
			name, rest = strings.ToLower(part[:i]), part[i:]
		}
		ft, err := b.parseDialectType(rest)
		if err != nil {
			return types.T{}, err
		}
		for _, f := range fs {
			if f.Name == name {
				return types.T{}, sqlerr.New(sqlerr.DuplicateColumn, "column \"%s\" specified more than once", name)
			}
		}
		fs = append(fs, types.Field{Name: name, Type: ft})
	}
	if len(fs) == 0 {
		return types.T{}, sqlerr.New(sqlerr.SyntaxError, "a struct type needs at least one field")
	}
	return types.StructOf(fs), nil
}

// parseScalarType parses a PostgreSQL type name through PostgreSQL's own
// grammar.
func (b *binder) parseScalarType(s string) (types.T, error) {
	res, err := pg_query.Parse("SELECT NULL::" + s)
	if err != nil || len(res.Stmts) != 1 {
		return types.T{}, sqlerr.New(sqlerr.SyntaxError, "syntax error in type \"%s\"", strings.TrimSpace(s))
	}
	sel := res.Stmts[0].Stmt.GetSelectStmt()
	if sel == nil || len(sel.TargetList) != 1 {
		return types.T{}, sqlerr.New(sqlerr.SyntaxError, "syntax error in type \"%s\"", strings.TrimSpace(s))
	}
	tc := sel.TargetList[0].GetResTarget().GetVal().GetTypeCast()
	if tc == nil {
		return types.T{}, sqlerr.New(sqlerr.SyntaxError, "syntax error in type \"%s\"", strings.TrimSpace(s))
	}
	tn := tc.TypeName
	tn.Location = -1
	return b.bindTypeName(tn)
}

// splitTopLevel splits s at the commas outside parentheses, angle
// brackets and quotes.
func splitTopLevel(s string) []string {
	var parts []string
	depth, start := 0, 0
	inQuote := false
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == '"':
			inQuote = !inQuote
		case inQuote:
		case c == '(' || c == '<' || c == '[':
			depth++
		case c == ')' || c == '>' || c == ']':
			depth--
		case c == ',' && depth == 0:
			parts = append(parts, s[start:i])
			start = i + 1
		}
	}
	if strings.TrimSpace(s[start:]) != "" || len(parts) > 0 {
		parts = append(parts, s[start:])
	}
	return parts
}

// isRowExpr reports whether n is written as a row constructor.
func isRowExpr(n *pg_query.Node) bool {
	_, ok := n.GetNode().(*pg_query.Node_RowExpr)
	return ok
}

// isRowCall reports whether e is a row constructor.
func isRowCall(e ir.Expr) bool {
	r, ok := e.(*ir.Call)
	return ok && r.Fn == ir.FnRow
}

// checkTargetsOrderable fails for a map among the ORDER BY keys or, under
// DISTINCT, the select list.
func (b *binder) checkTargetsOrderable(targets []target, keys []ir.SortKey, distinct bool) error {
	for _, k := range keys {
		if k.Column < len(targets) {
			if err := b.checkOrderable(targets[k.Column].expr, targets[k.Column].loc); err != nil {
				return err
			}
		}
	}
	if distinct {
		for _, t := range targets {
			if err := b.checkOrderable(t.expr, t.loc); err != nil {
				return err
			}
		}
	}
	return nil
}

// expandFieldStar expands (s).* in a select list to one column per field
// of s, named after the field; ok is false for other targets.
func (b *binder) expandFieldStar(ctx *exprCtx, rt *pg_query.ResTarget) ([]target, bool, error) {
	ind := rt.Val.GetAIndirection()
	if ind == nil || len(ind.Indirection) == 0 || ind.Indirection[len(ind.Indirection)-1].GetAStar() == nil {
		return nil, false, nil
	}
	arg := ind.Arg
	if len(ind.Indirection) > 1 {
		arg = &pg_query.Node{Node: &pg_query.Node_AIndirection{AIndirection: &pg_query.A_Indirection{
			Arg: ind.Arg, Indirection: ind.Indirection[:len(ind.Indirection)-1]}}}
	}
	e, err := b.bindExpr(ctx, arg)
	if err != nil {
		return nil, true, err
	}
	loc := exprLocation(ind.Arg)
	t := e.Type()
	if t.Kind != types.Struct {
		return nil, true, b.errAt(loc, sqlerr.New(sqlerr.WrongObjectType, "type %s is not composite", t))
	}
	out := make([]target, t.Fields.Len())
	for i := range out {
		f := t.Fields.At(i)
		fe, err := b.fieldAccess(e, f.Name, loc)
		if err != nil {
			return nil, true, err
		}
		out[i] = target{expr: fe, name: f.Name, loc: rt.Location}
	}
	return out, true, nil
}

// structInList binds arg [NOT] IN (items) over structs as PostgreSQL
// defines IN: arg = item1 OR arg = item2 ..., with record equality.
func (b *binder) structInList(arg ir.Expr, items []ir.Expr, negate bool, loc int32) (ir.Expr, error) {
	eqs := make([]ir.Expr, len(items))
	for i, it := range items {
		eq, err := b.bindStructOperator("=", arg, it, false, loc)
		if err != nil {
			return nil, err
		}
		eqs[i] = eq
	}
	var e ir.Expr = eqs[0]
	if len(eqs) > 1 {
		e = &ir.Call{Fn: ir.FnOr, Args: eqs, T: types.BoolT}
	}
	if negate {
		e = &ir.Call{Fn: ir.FnNot, Args: []ir.Expr{e}, T: types.BoolT}
	}
	return e, nil
}
