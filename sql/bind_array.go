package sql

import (
	"strings"

	pg_query "github.com/pganalyze/pg_query_go/v6"
	"github.com/streamsql/streamsql/ir"
	"github.com/streamsql/streamsql/sqlerr"
	"github.com/streamsql/streamsql/types"
)

// Arrays in expressions: ARRAY[...], subscripts and slices, the array
// operators, ANY/ALL (array) and the polymorphic array functions.
//
// The polymorphic functions are not in the overload table: their argument
// patterns (arraySig) name an array argument, an element argument of its
// element type, or a fixed type, and the binder derives the element type
// from the arguments (their common type, as PostgreSQL's anycompatible
// does). The calls they produce are Calls of the names below, typed; the
// evaluator has a kernel for each name (IsArrayFunction).

// bindArrayCall types a call of a polymorphic array function.
func (b *binder) bindArrayCall(fn string, args []ir.Expr, loc int32) (ir.Expr, error) {
	for _, s := range ir.ArrayFuncs[fn] {
		if s.Fits(len(args)) {
			return b.bindArraySig(fn, s, args, loc)
		}
	}
	return nil, b.errAt(loc, noSuchFunction(fn, args))
}

func (b *binder) bindArraySig(fn string, s ir.ArraySig, args []ir.Expr, loc int32) (ir.Expr, error) {
	letter := func(i int) byte {
		if strings.HasSuffix(s.Args, "*") {
			return s.Args[0]
		}
		return s.Args[i]
	}
	// The element type: the common type of the arrays' elements and the
	// element arguments.
	var cands []ir.Expr
	for i, a := range args {
		switch t := a.Type(); letter(i) {
		case 'a':
			if t.Kind == types.Array {
				cands = append(cands, &ir.Const{Value: types.Null, T: t.ElemT()})
			} else if t.Kind != types.Unknown {
				return nil, b.errAt(loc, noSuchFunction(fn, args))
			}
		case 'e':
			if t.Kind == types.Array {
				return nil, b.errAt(loc, sqlerr.Unsupported("arrays of arrays"))
			}
			cands = append(cands, a)
		}
	}
	known := false
	for _, c := range cands {
		known = known || c.Type().Kind != types.Unknown
	}
	if !known && fn != ir.FnArray {
		return nil, b.errAt(loc, sqlerr.New(sqlerr.DatatypeMismatch,
			"could not determine polymorphic type because input has type unknown"))
	}
	elem, err := b.commonType(cands, strings.ToUpper(fn), loc)
	if err != nil {
		return nil, err
	}
	conv := make([]ir.Expr, len(args))
	for i, a := range args {
		want := elem
		switch letter(i) {
		case 'a':
			want = types.ArrayOf(elem)
		case 'i':
			want = types.Int32T
		case 't':
			want = types.TextT
		}
		if a.Type().Kind == types.Array && want.Kind == types.Array && types.Identical(a.Type(), want) {
			conv[i] = a
			continue
		}
		if conv[i], err = b.coerce(a, want, loc); err != nil {
			return nil, err
		}
	}
	return &ir.Call{Fn: fn, Args: conv, T: s.Result(elem)}, nil
}

// bindArrayExpr binds ARRAY[e, ...].
func (b *binder) bindArrayExpr(ctx *exprCtx, a *pg_query.A_ArrayExpr) (ir.Expr, error) {
	if len(a.Elements) == 0 {
		return nil, b.errAt(a.Location, sqlerr.New(sqlerr.IndeterminateDatatype, "cannot determine type of empty array").
			WithHint("Explicitly cast to the desired type, for example ARRAY[]::integer[]."))
	}
	for _, e := range a.Elements {
		if e.GetAArrayExpr() != nil {
			return nil, b.errAt(a.Location, sqlerr.Unsupported("multidimensional arrays"))
		}
	}
	elems, err := b.bindExprs(ctx, a.Elements)
	if err != nil {
		return nil, err
	}
	return b.bindArrayCall(ir.FnArray, elems, a.Location)
}

// bindIndirection binds subscripts and slices: a[i], a[i:j], a[:j], a[i:].
func (b *binder) bindIndirection(ctx *exprCtx, ind *pg_query.A_Indirection) (ir.Expr, error) {
	e, err := b.bindExpr(ctx, ind.Arg)
	if err != nil {
		return nil, err
	}
	loc := exprLocation(ind.Arg)
	for _, n := range ind.Indirection {
		idx := n.GetAIndices()
		if idx == nil || e.Type().Kind == types.Map {
			if e, err = b.bindIndirectionStep(ctx, e, n, loc); err != nil {
				return nil, err
			}
			continue
		}
		if e.Type().Kind == types.JSONB && !idx.IsSlice {
			if e, err = b.bindJSONBSubscript(ctx, e, idx.Uidx, loc); err != nil {
				return nil, err
			}
			continue
		}
		if e.Type().IsVector() && !idx.IsSlice {
			if e, err = b.bindVectorSubscript(ctx, e, idx.Uidx, loc); err != nil {
				return nil, err
			}
			continue
		}
		if s, ok, err := b.bindNameSubscript(ctx, e, idx, loc); ok {
			if err != nil {
				return nil, err
			}
			e = s
			continue
		}
		if e.Type().Kind != types.Array {
			return nil, b.errAt(loc, sqlerr.New(sqlerr.DatatypeMismatch,
				"cannot subscript type %s because it does not support subscripting", e.Type()))
		}
		bound := func(n *pg_query.Node, dflt int64) (ir.Expr, error) {
			if n == nil {
				return &ir.Const{Value: types.DInt(dflt), T: types.Int32T}, nil
			}
			return b.bindExpr(ctx, n)
		}
		hi, err := bound(idx.Uidx, 1<<31-1)
		if err != nil {
			return nil, err
		}
		if !idx.IsSlice {
			if e, err = b.bindArrayCall(ir.FnArraySubscript, []ir.Expr{e, hi}, loc); err != nil {
				return nil, err
			}
			continue
		}
		lo, err := bound(idx.Lidx, 1)
		if err != nil {
			return nil, err
		}
		if e, err = b.bindArrayCall(ir.FnArraySlice, []ir.Expr{e, lo, hi}, loc); err != nil {
			return nil, err
		}
	}
	return e, nil
}

// bindComparison binds comparison fn (FnEq, FnLt, ...) of l and r, through
// the array comparisons when an operand is an array and the record
// comparisons when one is a struct.
func (b *binder) bindComparison(fn string, l, r ir.Expr, loc int32) (ir.Expr, error) {
	if l.Type().Kind == types.Array || r.Type().Kind == types.Array {
		if afn, ok := ir.ArrayCompareFns[fn]; ok {
			return b.bindArrayCall(afn, []ir.Expr{l, r}, loc)
		}
	}
	if isStructOrMap(l.Type()) || isStructOrMap(r.Type()) {
		for op, opFn := range comparisonOps {
			if opFn == fn {
				return b.bindStructOperator(op, l, r, false, loc)
			}
		}
	}
	return b.resolveCall(fn, []ir.Expr{l, r}, loc)
}

func isStructOrMap(t types.T) bool { return t.Kind == types.Struct || t.Kind == types.Map }

// bindArrayOperator binds a binary operator with an array operand, or
// returns nil if neither operand is an array.
func (b *binder) bindArrayOperator(op string, l, r ir.Expr, loc int32) (ir.Expr, error) {
	lt, rt := l.Type(), r.Type()
	if lt.Kind != types.Array && rt.Kind != types.Array {
		return nil, nil
	}
	switch op {
	case "||":
		switch {
		case lt.Kind == types.Array && rt.Kind == types.Array:
			return b.bindArrayCall("array_cat", []ir.Expr{l, r}, loc)
		case lt.Kind == types.Array:
			if rt.Kind == types.Unknown {
				return b.bindArrayCall("array_cat", []ir.Expr{l, r}, loc)
			}
			return b.bindArrayCall("array_append", []ir.Expr{l, r}, loc)
		case lt.Kind == types.Unknown:
			return b.bindArrayCall("array_cat", []ir.Expr{l, r}, loc)
		default:
			return b.bindArrayCall("array_prepend", []ir.Expr{l, r}, loc)
		}
	case "@>":
		return b.bindArrayCall(ir.FnArrayContains, []ir.Expr{l, r}, loc)
	case "<@":
		return b.bindArrayCall(ir.FnArrayContained, []ir.Expr{l, r}, loc)
	case "&&":
		return b.bindArrayCall(ir.FnArrayOverlap, []ir.Expr{l, r}, loc)
	}
	if fn, ok := ir.ArrayCompareFns[binaryOps[op]]; ok {
		return b.bindArrayCall(fn, []ir.Expr{l, r}, loc)
	}
	return nil, b.errAt(loc, sqlerr.New(sqlerr.UndefinedFunction, "operator does not exist: %s %s %s", lt, op, rt))
}

// bindAnyAll binds x op ANY (array) and x op ALL (array).
func (b *binder) bindAnyAll(ctx *exprCtx, a *pg_query.A_Expr, op string) (ir.Expr, error) {
	fns := ir.AnyFns
	if a.Kind == pg_query.A_Expr_Kind_AEXPR_OP_ALL {
		fns = ir.AllFns
	}
	fn, ok := fns[binaryOps[op]]
	if !ok {
		return nil, b.errAt(a.Location, sqlerr.Unsupported("%s ANY/ALL (array)", op))
	}
	l, err := b.bindExpr(ctx, a.Lexpr)
	if err != nil {
		return nil, err
	}
	r, err := b.bindExpr(ctx, a.Rexpr)
	if err != nil {
		return nil, err
	}
	if rt := r.Type(); rt.Kind != types.Array && rt.Kind != types.Unknown {
		return nil, b.errAt(a.Location, sqlerr.New(sqlerr.WrongObjectType, "op ANY/ALL (array) requires array on right side"))
	}
	return b.bindArrayCall(fn, []ir.Expr{l, r}, a.Location)
}
