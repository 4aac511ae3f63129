package eval

import (
	"strings"

	"github.com/streamsql/streamsql/ir"
	"github.com/streamsql/streamsql/sqlerr"
	"github.com/streamsql/streamsql/types"
)

// numericScaled lists the functions whose numeric arguments are computed as
// unconstrained numerics (their numeric result is types.NumericT).
var numericScaled = map[string]bool{
	ir.FnAdd: true, ir.FnSub: true, ir.FnMul: true, ir.FnDiv: true, ir.FnMod: true,
	ir.FnNeg: true, ir.FnAbs: true, ir.FnRound: true, ir.FnTrunc: true, ir.FnFloor: true,
	ir.FnCeil: true, ir.FnSign: true,
}

// computesNumeric reports whether fn builds new numeric values at its
// overload's result scale (rather than passing arguments through), so that a
// call typed with another scale needs a conversion of the result.
func computesNumeric(fn string) bool { return numericScaled[fn] || fn == ir.FnExtract }

// normalize inserts the numeric rescaling casts that kernels rely on:
// arguments of arithmetic are brought to unconstrained numeric (each value
// keeping its scale), and the values merged
// by COALESCE, GREATEST, LEAST and CASE to the scale of the result type.
func normalize(e ir.Expr) ir.Expr {
	to := func(x ir.Expr, t types.T) ir.Expr {
		if x.Type().Kind == types.Numeric && t.Kind == types.Numeric && !types.Identical(x.Type(), t) {
			return &ir.Cast{Arg: x, T: t}
		}
		return x
	}
	return ir.Rewrite(e, func(x ir.Expr) ir.Expr {
		switch n := x.(type) {
		case *ir.Call:
			switch {
			case numericScaled[n.Fn]:
				for i, a := range n.Args {
					n.Args[i] = to(a, types.NumericT)
				}
			case n.Fn == ir.FnCoalesce || n.Fn == ir.FnGreatest || n.Fn == ir.FnLeast:
				for i, a := range n.Args {
					n.Args[i] = to(a, n.T)
				}
			}
		case *ir.Case:
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
func foldExpr(e ir.Expr) ir.Expr {
	var k kctx
	isConst := func(x ir.Expr) (*ir.Const, bool) {
		c, ok := x.(*ir.Const)
		return c, ok
	}
	return ir.Rewrite(e, func(x ir.Expr) ir.Expr {
		switch n := x.(type) {
		case *ir.Cast:
			if c, ok := isConst(n.Arg); ok && ir.CastAllowed(n.Arg.Type(), n.T) {
				if d, err := castDatumMode(&k, n.Arg.Type(), n.T, c.Value, n.Assignment); err == nil {
					return &ir.Const{T: n.T, Value: ownText(d, n.T)}
				}
			}
		case *ir.Call:
			all := n.Fn != ir.FnNow && !ir.Volatile(n.Fn)
			for _, a := range n.Args {
				_, ok := isConst(a)
				all = all && ok
			}
			if all {
				if d, err := evalCall(&k, n); err == nil {
					return &ir.Const{T: n.T, Value: d}
				}
			}
			argTypes := make([]types.T, len(n.Args))
			for i, a := range n.Args {
				argTypes[i] = a.Type()
			}
			if o := resolve(n.Fn, argTypes); o != nil && o.Strict {
				for _, a := range n.Args {
					if c, ok := isConst(a); ok && c.Value.Null {
						return &ir.Const{T: n.T, Value: types.Null}
					}
				}
			}
		case *ir.InList:
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
					return &ir.Const{T: types.BoolT, Value: d}
				}
			}
		case *ir.Case:
			var whens []ir.When
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
			return &ir.Case{Whens: whens, Else: els, T: n.T}
		}
		return x
	})
}

func compile(e ir.Expr) (node, error) {
	switch e := e.(type) {
	case *ir.InputRef:
		n := &inputNode{idx: e.Index, t: e.T}
		if e.T.Kind != types.Unknown {
			n.dt = e.T.ArrowType()
		}
		return n, nil
	case *ir.Const:
		return &constNode{t: e.T, d: e.Value}, nil
	case *ir.Cast:
		arg, err := compile(e.Arg)
		if err != nil {
			return nil, err
		}
		return compileCastMode(arg, e.T, e.Assignment)
	case *ir.Case:
		return compileCase(e)
	case *ir.InList:
		return compileIn(e)
	case *ir.Call:
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
func kernelFor(fn string, args []types.T, result types.T) (scalarFn, *ir.Overload, error) {
	if k := nullSafeArrayKernel(fn, args); k != nil {
		return k, &ir.Overload{Fn: fn, Args: args, Result: result}, nil
	}
	if ir.IsJSONBPolyFunction(fn) {
		return jsonbPolyKernel(fn, args), &ir.Overload{Fn: fn, Args: args, Result: result, Strict: fn == ir.FnToJSONB}, nil
	}
	if k, o := structKernel(fn, args, result); k != nil {
		return k, o, nil
	}
	if ir.IsArrayFunction(fn) {
		// Typed by the binder: the call's types are the overload.
		mk := arrayKernels[fn]
		if mk == nil {
			return nil, nil, sqlerr.New(sqlerr.UndefinedFunction, "function %s has no evaluator", fn)
		}
		o := &ir.Overload{Fn: fn, Args: args, Result: result, Strict: ir.ArrayFunctionStrict(fn, len(args))}
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
	return sqlerr.New(sqlerr.UndefinedFunction, "function %s does not exist", ir.OverloadKey(fn, args))
}

func compileCall(e *ir.Call) (node, error) {
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

func compileCallNode(fnName string, o *ir.Overload, fn scalarFn, args []node, argTypes []types.T, rt types.T) (node, error) {
	if fnName != ir.FnNow && !ir.Volatile(fnName) && foldable(args) {
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
	case ir.FnAdd, ir.FnSub, ir.FnMul, ir.FnDiv, ir.FnMod, ir.FnBitAnd, ir.FnBitOr, ir.FnBitXor:
		if argTypes[0].IsNumeric() && argTypes[0].Kind == argTypes[1].Kind {
			return newArithNode(fnName, rt, args[0], args[1], ref)
		}
		if n := compileTimeArith(fnName, rt, args, argTypes, ref); n != nil {
			return n
		}
	case ir.FnNeg:
		if argTypes[0].IsNumeric() {
			return &negNode{t: rt, arg: args[0], ref: ref}
		}
	case ir.FnEq, ir.FnNe, ir.FnLt, ir.FnLe, ir.FnGt, ir.FnGe:
		return newCmpNode(fnName, argTypes[0], argTypes[1], args[0], args[1], ref)
	case ir.FnIsDistinct, ir.FnIsNotDistinct:
		if types.IsNested(argTypes[0]) {
			return nil // the datum kernel compares arrays and structs
		}
		if eq := newCmpNode(ir.FnEq, argTypes[0], argTypes[1], args[0], args[1], nil); eq != nil {
			return &distinctNode{eq: eq.(*cmpNode), distinct: fnName == ir.FnIsDistinct}
		}
	case ir.FnAnd, ir.FnOr:
		return &andOrNode{args: args, isOr: fnName == ir.FnOr}
	case ir.FnNot, ir.FnIsNull, ir.FnIsNotNull, ir.FnIsTrue, ir.FnIsFalse:
		if argTypes[0].Kind == types.Struct {
			return nil // a struct of NULLs IS NULL too
		}
		return &unaryBoolNode{fn: fnName, arg: args[0]}
	case ir.FnCoalesce:
		if types.IsNested(rt) {
			return nil // the datum kernel builds lists and structs
		}
		return &coalesceNode{t: rt, args: args}
	case ir.FnLike, ir.FnILike:
		if k, ok := asConst(args[1]); ok && !k.d.Null {
			m, err := compileLike(k.d.S, fnName == ir.FnILike)
			if err == nil {
				return &likeNode{arg: args[0], m: m}
			}
		}
	}
	return nil
}
