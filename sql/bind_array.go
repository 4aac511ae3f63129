package sql

import (
	"strings"

	pg_query "github.com/pganalyze/pg_query_go/v6"
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

// Names of the array expressions.
const (
	FnArray          = "array"           // ARRAY[e, ...]
	FnArraySubscript = "array_subscript" // a[i]
	FnArraySlice     = "array_slice"     // a[i:j]
	FnArrayContains  = "array_contains"  // a @> b
	FnArrayContained = "array_contained" // a <@ b
	FnArrayOverlap   = "array_overlap"   // a && b
)

// arraySig is one signature of a polymorphic array function: args has a
// letter per argument ('a' the array, 'e' an element, 'i' integer, 't'
// text) and result derives the result type from the element type.
type arraySig struct {
	args   string
	result func(elem types.T) types.T
	// strict: NULL arguments give NULL without calling the kernel.
	strict bool
}

func int4Result(types.T) types.T    { return types.Int32T }
func textResult(types.T) types.T    { return types.TextT }
func boolResult(types.T) types.T    { return types.BoolT }
func arrayResult(e types.T) types.T { return types.ArrayOf(e) }
func elemResult(e types.T) types.T  { return e }

var arrayFuncs = map[string][]arraySig{
	FnArray:           {{args: "e*", result: arrayResult}},
	FnArraySubscript:  {{args: "ai", result: elemResult, strict: true}},
	FnArraySlice:      {{args: "aii", result: arrayResult, strict: true}},
	"array_length":    {{args: "ai", result: int4Result, strict: true}},
	"array_lower":     {{args: "ai", result: int4Result, strict: true}},
	"array_upper":     {{args: "ai", result: int4Result, strict: true}},
	"array_ndims":     {{args: "a", result: int4Result, strict: true}},
	"array_dims":      {{args: "a", result: textResult, strict: true}},
	"cardinality":     {{args: "a", result: int4Result, strict: true}},
	"array_position":  {{args: "ae", result: int4Result}, {args: "aei", result: int4Result}},
	"array_positions": {{args: "ae", result: func(types.T) types.T { return types.ArrayOf(types.Int32T) }}},
	"array_append":    {{args: "ae", result: arrayResult}},
	"array_prepend":   {{args: "ea", result: arrayResult}},
	"array_cat":       {{args: "aa", result: arrayResult}},
	"array_remove":    {{args: "ae", result: arrayResult}},
	"array_replace":   {{args: "aee", result: arrayResult}},
	"array_to_string": {{args: "at", result: textResult, strict: true}, {args: "att", result: textResult}},
	FnArrayContains:   {{args: "aa", result: boolResult, strict: true}},
	FnArrayContained:  {{args: "aa", result: boolResult, strict: true}},
	FnArrayOverlap:    {{args: "aa", result: boolResult, strict: true}},
}

// arrayOps are the comparison operators over arrays and the ANY/ALL forms
// of every comparison, by operator.
var (
	arrayCompareFns = map[string]string{
		FnEq: "array_eq", FnNe: "array_ne", FnLt: "array_lt", FnLe: "array_le", FnGt: "array_gt", FnGe: "array_ge",
	}
	anyFns = map[string]string{
		FnEq: "any_eq", FnNe: "any_ne", FnLt: "any_lt", FnLe: "any_le", FnGt: "any_gt", FnGe: "any_ge",
	}
	allFns = map[string]string{
		FnEq: "all_eq", FnNe: "all_ne", FnLt: "all_lt", FnLe: "all_le", FnGt: "all_gt", FnGe: "all_ge",
	}
)

func init() {
	for _, fn := range arrayCompareFns {
		arrayFuncs[fn] = []arraySig{{args: "aa", result: boolResult, strict: true}}
	}
	for _, m := range []map[string]string{anyFns, allFns} {
		for _, fn := range m {
			arrayFuncs[fn] = []arraySig{{args: "ea", result: boolResult}}
		}
	}
}

// IsArrayFunction reports whether fn is a polymorphic array function,
// typed by the binder (bindArrayCall) rather than by the overload table.
func IsArrayFunction(fn string) bool { _, ok := arrayFuncs[fn]; return ok }

// ArrayFunctionNames returns the names of the polymorphic array functions.
func ArrayFunctionNames() []string {
	var names []string
	for n := range arrayFuncs {
		names = append(names, n)
	}
	return names
}

// ArrayFunctionStrict reports whether array function fn returns NULL for
// any NULL argument without calling its kernel.
func ArrayFunctionStrict(fn string, nargs int) bool {
	for _, s := range arrayFuncs[fn] {
		if s.fits(nargs) {
			return s.strict
		}
	}
	return false
}

func (s arraySig) fits(n int) bool {
	if strings.HasSuffix(s.args, "*") {
		return n >= 0
	}
	return len(s.args) == n
}

// bindArrayCall types a call of a polymorphic array function.
func (b *binder) bindArrayCall(fn string, args []Expr, loc int32) (Expr, error) {
	for _, s := range arrayFuncs[fn] {
		if s.fits(len(args)) {
			return b.bindArraySig(fn, s, args, loc)
		}
	}
	return nil, b.errAt(loc, noSuchFunction(fn, args))
}

func (b *binder) bindArraySig(fn string, s arraySig, args []Expr, loc int32) (Expr, error) {
	letter := func(i int) byte {
		if strings.HasSuffix(s.args, "*") {
			return s.args[0]
		}
		return s.args[i]
	}
	// The element type: the common type of the arrays' elements and the
	// element arguments.
	var cands []Expr
	for i, a := range args {
		switch t := a.Type(); letter(i) {
		case 'a':
			if t.Kind == types.Array {
				cands = append(cands, &Const{Value: types.Null, T: t.ElemT()})
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
	if !known && fn != FnArray {
		return nil, b.errAt(loc, sqlerr.New(sqlerr.DatatypeMismatch,
			"could not determine polymorphic type because input has type unknown"))
	}
	elem, err := b.commonType(cands, strings.ToUpper(fn), loc)
	if err != nil {
		return nil, err
	}
	conv := make([]Expr, len(args))
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
	return &Call{Fn: fn, Args: conv, T: s.result(elem)}, nil
}

// bindArrayExpr binds ARRAY[e, ...].
func (b *binder) bindArrayExpr(ctx *exprCtx, a *pg_query.A_ArrayExpr) (Expr, error) {
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
	return b.bindArrayCall(FnArray, elems, a.Location)
}

// bindIndirection binds subscripts and slices: a[i], a[i:j], a[:j], a[i:].
func (b *binder) bindIndirection(ctx *exprCtx, ind *pg_query.A_Indirection) (Expr, error) {
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
		bound := func(n *pg_query.Node, dflt int64) (Expr, error) {
			if n == nil {
				return &Const{Value: types.DInt(dflt), T: types.Int32T}, nil
			}
			return b.bindExpr(ctx, n)
		}
		hi, err := bound(idx.Uidx, 1<<31-1)
		if err != nil {
			return nil, err
		}
		if !idx.IsSlice {
			if e, err = b.bindArrayCall(FnArraySubscript, []Expr{e, hi}, loc); err != nil {
				return nil, err
			}
			continue
		}
		lo, err := bound(idx.Lidx, 1)
		if err != nil {
			return nil, err
		}
		if e, err = b.bindArrayCall(FnArraySlice, []Expr{e, lo, hi}, loc); err != nil {
			return nil, err
		}
	}
	return e, nil
}

// bindComparison binds comparison fn (FnEq, FnLt, ...) of l and r, through
// the array comparisons when an operand is an array and the record
// comparisons when one is a struct.
func (b *binder) bindComparison(fn string, l, r Expr, loc int32) (Expr, error) {
	if l.Type().Kind == types.Array || r.Type().Kind == types.Array {
		if afn, ok := arrayCompareFns[fn]; ok {
			return b.bindArrayCall(afn, []Expr{l, r}, loc)
		}
	}
	if isStructOrMap(l.Type()) || isStructOrMap(r.Type()) {
		for op, opFn := range comparisonOps {
			if opFn == fn {
				return b.bindStructOperator(op, l, r, false, loc)
			}
		}
	}
	return b.resolveCall(fn, []Expr{l, r}, loc)
}

func isStructOrMap(t types.T) bool { return t.Kind == types.Struct || t.Kind == types.Map }

// bindArrayOperator binds a binary operator with an array operand, or
// returns nil if neither operand is an array.
func (b *binder) bindArrayOperator(op string, l, r Expr, loc int32) (Expr, error) {
	lt, rt := l.Type(), r.Type()
	if lt.Kind != types.Array && rt.Kind != types.Array {
		return nil, nil
	}
	switch op {
	case "||":
		switch {
		case lt.Kind == types.Array && rt.Kind == types.Array:
			return b.bindArrayCall("array_cat", []Expr{l, r}, loc)
		case lt.Kind == types.Array:
			if rt.Kind == types.Unknown {
				return b.bindArrayCall("array_cat", []Expr{l, r}, loc)
			}
			return b.bindArrayCall("array_append", []Expr{l, r}, loc)
		case lt.Kind == types.Unknown:
			return b.bindArrayCall("array_cat", []Expr{l, r}, loc)
		default:
			return b.bindArrayCall("array_prepend", []Expr{l, r}, loc)
		}
	case "@>":
		return b.bindArrayCall(FnArrayContains, []Expr{l, r}, loc)
	case "<@":
		return b.bindArrayCall(FnArrayContained, []Expr{l, r}, loc)
	case "&&":
		return b.bindArrayCall(FnArrayOverlap, []Expr{l, r}, loc)
	}
	if fn, ok := arrayCompareFns[binaryOps[op]]; ok {
		return b.bindArrayCall(fn, []Expr{l, r}, loc)
	}
	return nil, b.errAt(loc, sqlerr.New(sqlerr.UndefinedFunction, "operator does not exist: %s %s %s", lt, op, rt))
}

// bindAnyAll binds x op ANY (array) and x op ALL (array).
func (b *binder) bindAnyAll(ctx *exprCtx, a *pg_query.A_Expr, op string) (Expr, error) {
	fns := anyFns
	if a.Kind == pg_query.A_Expr_Kind_AEXPR_OP_ALL {
		fns = allFns
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
	return b.bindArrayCall(fn, []Expr{l, r}, a.Location)
}
