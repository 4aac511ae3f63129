package eval

import (
	"strings"

	"github.com/streamsql/streamsql/sql"
	"github.com/streamsql/streamsql/sqlerr"
	"github.com/streamsql/streamsql/types"
)

// numericScaled lists the functions whose numeric arguments are computed as
// unconstrained numerics (their numeric result is types.NumericT).
var numericScaled = map[string]bool{
	sql.FnAdd: true, sql.FnSub: true, sql.FnMul: true, sql.FnDiv: true, sql.FnMod: true,
	sql.FnNeg: true, sql.FnAbs: true, sql.FnRound: true, sql.FnTrunc: true, sql.FnFloor: true,
	sql.FnCeil: true, sql.FnSign: true,
}

// computesNumeric reports whether fn builds new numeric values at its
// overload's result scale (rather than passing arguments through), so that a
// call typed with another scale needs a conversion of the result.
func computesNumeric(fn string) bool { return numericScaled[fn] || fn == sql.FnExtract }

// normalize inserts the numeric rescaling casts that kernels rely on:
// arguments of arithmetic are brought to unconstrained numeric (each value
// keeping its scale), and the values merged
// by COALESCE, GREATEST, LEAST and CASE to the scale of the result type.
func normalize(e sql.Expr) sql.Expr {
	to := func(x sql.Expr, t types.T) sql.Expr {
		if x.Type().Kind == types.Numeric && t.Kind == types.Numeric && !types.Identical(x.Type(), t) {
			return &sql.Cast{Arg: x, T: t}
		}
		return x
	}
	return sql.Rewrite(e, func(x sql.Expr) sql.Expr {
		switch n := x.(type) {
		case *sql.Call:
			switch {
			case numericScaled[n.Fn]:
				for i, a := range n.Args {
					n.Args[i] = to(a, types.NumericT)
				}
			case n.Fn == sql.FnCoalesce || n.Fn == sql.FnGreatest || n.Fn == sql.FnLeast:
				for i, a := range n.Args {
					n.Args[i] = to(a, n.T)
				}
			}
		case *sql.Case:
			for i := range n.Whens {
				n.Whens[i].Then = to(n.Whens[i].Then, n.T)
			}
			n.Else = to(n.Else, n.T)
		}
		return x
	})
}

// foldExpr is PostgreSQL's plan-time constant folding: a subexpression of
// constants that evaluates without error becomes a constant (now() stays),
// a strict function with a NULL constant argument becomes NULL without its
// other arguments being evaluated, and CASE arms with constant conditions are
// resolved. Errors are left to evaluation time, row by row.
func foldExpr(e sql.Expr) sql.Expr {
	var k kctx
	isConst := func(x sql.Expr) (*sql.Const, bool) {
		c, ok := x.(*sql.Const)
		return c, ok
	}
	return sql.Rewrite(e, func(x sql.Expr) sql.Expr {
		switch n := x.(type) {
		case *sql.Cast:
			if c, ok := isConst(n.Arg); ok && sql.CastAllowed(n.Arg.Type(), n.T) {
				if d, err := castDatumMode(&k, n.Arg.Type(), n.T, c.Value, n.Assignment); err == nil {
					return &sql.Const{T: n.T, Value: ownText(d, n.T)}
				}
			}
		case *sql.Call:
			all := n.Fn != sql.FnNow && !sql.Volatile(n.Fn)
			for _, a := range n.Args {
				_, ok := isConst(a)
				all = all && ok
			}
			if all {
				if d, err := evalCall(&k, n); err == nil {
					return &sql.Const{T: n.T, Value: d}
				}
			}
			argTypes := make([]types.T, len(n.Args))
			for i, a := range n.Args {
				argTypes[i] = a.Type()
			}
			if o := resolve(n.Fn, argTypes); o != nil && o.Strict {
				for _, a := range n.Args {
					if c, ok := isConst(a); ok && c.Value.Null {
						return &sql.Const{T: n.T, Value: types.Null}
					}
				}
			}
		case *sql.InList:
			all := true
			if _, ok := isConst(n.Arg); !ok {
				all = false
			}
			for _, a := range n.List {
				_, ok := isConst(a)
				all = all && ok
			}
			if all {
				if d, err := evalInList(&k, n); err == nil {
					return &sql.Const{T: types.BoolT, Value: d}
				}
			}
		case *sql.Case:
			var whens []sql.When
			els := n.Else
			for _, w := range n.Whens {
				if c, ok := isConst(w.Cond); ok {
					if c.Value.Null || !c.Value.Bool() {
						continue // never taken
					}
					els = w.Then // always taken: the ELSE of the arms before
					break
				}
				whens = append(whens, w)
			}
			if len(whens) == 0 {
				return els
			}
			return &sql.Case{Whens: whens, Else: els, T: n.T}
		}
		return x
	})
}

func compile(e sql.Expr) (node, error) {
	switch e := e.(type) {
	case *sql.InputRef:
		n := &inputNode{idx: e.Index, t: e.T}
		if e.T.Kind != types.Unknown {
			n.dt = e.T.ArrowType()
		}
		return n, nil
	case *sql.Const:
		return &constNode{t: e.T, d: e.Value}, nil
	case *sql.Cast:
		arg, err := compile(e.Arg)
		if err != nil {
			return nil, err
		}
		return compileCastMode(arg, e.T, e.Assignment)
	case *sql.Case:
		return compileCase(e)
	case *sql.InList:
		return compileIn(e)
	case *sql.Call:
		return compileCall(e)
	}
	return nil, sqlerr.New(sqlerr.InternalError, "eval: unknown expression %T", e)
}

// foldable reports whether every node of args is a constant.
func foldable(args []node) bool {
	for _, a := range args {
		if _, ok := asConst(a); !ok {
			return false
		}
	}
	return true
}

// fold evaluates a kernel over constant arguments at compile time. ok is
// false when the kernel fails (the error is then left to evaluation time).
func fold(t types.T, fn scalarFn, strict bool, args []node) (node, bool) {
	ds := make([]types.Datum, len(args))
	for i, a := range args {
		k, _ := asConst(a)
		ds[i] = k.d
		if ds[i].Null && strict {
			return &constNode{t: t, d: types.Null}, true
		}
	}
	var k kctx
	d, err := fn(&k, ds)
	if err != nil {
		return nil, false
	}
	if !d.Null && (t.Kind == types.Text || t.Kind == types.Bytea || t.Kind == types.UUID || t.Kind == types.JSONB) {
		d.S = strings.Clone(d.S)
	}
	return &constNode{t: t, d: d}, true
}

// kernelFor returns the scalar kernel and overload of fn for argument types
// args.
func kernelFor(fn string, args []types.T, result types.T) (scalarFn, *sql.Overload, error) {
	if k := nullSafeArrayKernel(fn, args); k != nil {
		return k, &sql.Overload{Fn: fn, Args: args, Result: result}, nil
	}
	if sql.IsJSONBPolyFunction(fn) {
		return jsonbPolyKernel(fn, args), &sql.Overload{Fn: fn, Args: args, Result: result, Strict: fn == sql.FnToJSONB}, nil
	}
	if k, o := structKernel(fn, args, result); k != nil {
		return k, o, nil
	}
	if sql.IsArrayFunction(fn) {
		// Typed by the binder: the call's types are the overload.
		mk := arrayKernels[fn]
		if mk == nil {
			return nil, nil, sqlerr.New(sqlerr.UndefinedFunction, "function %s has no evaluator", fn)
		}
		o := &sql.Overload{Fn: fn, Args: args, Result: result, Strict: sql.ArrayFunctionStrict(fn, len(args))}
		return mk(args, result), o, nil
	}
	o := resolve(fn, args)
	if o == nil {
		return nil, nil, undefinedFunction(fn, args)
	}
	mk := kernels[o.Key()]
	if mk == nil {
		return nil, nil, sqlerr.New(sqlerr.UndefinedFunction, "function %s has no evaluator", o.Key())
	}
	return mk(args, result), o, nil
}

func undefinedFunction(fn string, args []types.T) error {
	return sqlerr.New(sqlerr.UndefinedFunction, "function %s does not exist", sql.OverloadKey(fn, args))
}

func compileCall(e *sql.Call) (node, error) {
	args := make([]node, len(e.Args))
	argTypes := make([]types.T, len(e.Args))
	for i, a := range e.Args {
		n, err := compile(a)
		if err != nil {
			return nil, err
		}
		args[i], argTypes[i] = n, a.Type()
	}
	fn, o, err := kernelFor(e.Fn, argTypes, e.T)
	if err != nil {
		return nil, err
	}
	// The column type of a call's result follows the overload; a binder that
	// asks for another representation gets a cast.
	rt := e.T
	if o.Result.Kind == types.Numeric && e.T.Kind == types.Numeric && !types.Identical(o.Result, e.T) &&
		computesNumeric(e.Fn) {
		rt = o.Result
	}
	n, err := compileCallNode(e.Fn, o, fn, args, argTypes, rt)
	if err != nil {
		return nil, err
	}
	if rt != e.T {
		return compileCast(n, e.T)
	}
	return n, nil
}

func compileCallNode(fnName string, o *sql.Overload, fn scalarFn, args []node, argTypes []types.T, rt types.T) (node, error) {
	if fnName != sql.FnNow && !sql.Volatile(fnName) && foldable(args) {
		if n, ok := fold(rt, fn, o.Strict, args); ok {
			return n, nil
		}
	}
	if o.Strict {
		// A strict function of a NULL constant is NULL.
		for _, a := range args {
			if k, ok := asConst(a); ok && k.d.Null {
				return &constNode{t: rt, d: types.Null}, nil
			}
		}
	}
	if n := compileStructNode(fnName, args, rt); n != nil {
		return n, nil
	}
	if n := compileFast(fnName, fn, args, argTypes, rt); n != nil {
		return n, nil
	}
	return &rowNode{t: rt, fn: fn, args: args, strict: o.Strict}, nil
}

// compileFast returns a vectorized node for the hot functions, or nil.
func compileFast(fnName string, ref scalarFn, args []node, argTypes []types.T, rt types.T) node {
	if n := compileMathFast(fnName, args, argTypes); n != nil {
		return n
	}
	if n := compileJSONBFast(fnName, ref, args, argTypes, rt); n != nil || (len(argTypes) > 0 && argTypes[0].Kind == types.JSONB) {
		return n // jsonb values compare by structure, not bytewise
	}
	switch fnName {
	case sql.FnAdd, sql.FnSub, sql.FnMul, sql.FnDiv, sql.FnMod, sql.FnBitAnd, sql.FnBitOr, sql.FnBitXor:
		if argTypes[0].IsNumeric() && argTypes[0].Kind == argTypes[1].Kind {
			return newArithNode(fnName, rt, args[0], args[1], ref)
		}
		if n := compileTimeArith(fnName, rt, args, argTypes, ref); n != nil {
			return n
		}
	case sql.FnNeg:
		if argTypes[0].IsNumeric() {
			return &negNode{t: rt, arg: args[0], ref: ref}
		}
	case sql.FnEq, sql.FnNe, sql.FnLt, sql.FnLe, sql.FnGt, sql.FnGe:
		return newCmpNode(fnName, argTypes[0], argTypes[1], args[0], args[1], ref)
	case sql.FnIsDistinct, sql.FnIsNotDistinct:
		if types.IsNested(argTypes[0]) {
			return nil // the datum kernel compares arrays and structs
		}
		if eq := newCmpNode(sql.FnEq, argTypes[0], argTypes[1], args[0], args[1], nil); eq != nil {
			return &distinctNode{eq: eq.(*cmpNode), distinct: fnName == sql.FnIsDistinct}
		}
	case sql.FnAnd, sql.FnOr:
		return &andOrNode{args: args, isOr: fnName == sql.FnOr}
	case sql.FnNot, sql.FnIsNull, sql.FnIsNotNull, sql.FnIsTrue, sql.FnIsFalse:
		if argTypes[0].Kind == types.Struct {
			return nil // a struct of NULLs IS NULL too
		}
		return &unaryBoolNode{fn: fnName, arg: args[0]}
	case sql.FnCoalesce:
		if types.IsNested(rt) {
			return nil // the datum kernel builds lists and structs
		}
		return &coalesceNode{t: rt, args: args}
	case sql.FnLike, sql.FnILike:
		if k, ok := asConst(args[1]); ok && !k.d.Null {
			m, err := compileLike(k.d.S, fnName == sql.FnILike)
			if err == nil {
				return &likeNode{arg: args[0], m: m}
			}
		}
	}
	return nil
}
