package eval

import (
	"strings"

	"github.com/streamsql/streamsql/ir"
	"github.com/streamsql/streamsql/sqlerr"
	"github.com/streamsql/streamsql/types"
)

// EvalDatum evaluates an expression that has no InputRefs (constant folding,
// VALUES rows, SELECT without FROM, LIMIT expressions) to a scalar.
//
// It folds constants as Compile does (foldExpr), then interprets e with the
// same scalar kernels that the vectorized evaluation falls back to, in
// PostgreSQL's evaluation order: CASE, AND, OR and COALESCE evaluate their
// operands lazily, left to right; everything else eagerly.
// Row errors follow ctx.Strict like Eval: when lenient, the result is NULL
// and the error is counted and logged.
func EvalDatum(ctx *Context, e ir.Expr) (types.Datum, error) {
	k := &kctx{now: ctx.Now, rnd: ctx.Random}
	d, err := evalScalar(k, foldExpr(normalize(e)))
	if err != nil {
		if err.Code == sqlerr.InternalError || ctx.Strict {
			return types.Null, err
		}
		if ctx.Errors != nil {
			ctx.Errors.Add(1)
		}
		evalDatumLog.report(ctx, e.String(), err, 1)
		return types.Null, nil
	}
	return d, nil
}

// evalDatumLog rate-limits EvalDatum's log lines (it has no per-expression
// state to hang a limiter on).
var evalDatumLog logLimiter

func evalScalar(k *kctx, e ir.Expr) (types.Datum, *sqlerr.Error) {
	switch e := e.(type) {
	case *ir.Const:
		return e.Value, nil
	case *ir.InputRef:
		return types.Null, sqlerr.New(sqlerr.InternalError, "EvalDatum: expression refers to input column %s", e)
	case *ir.Cast:
		d, err := evalScalar(k, e.Arg)
		if err != nil {
			return d, err
		}
		if !ir.CastAllowed(e.Arg.Type(), e.T) {
			return types.Null, sqlerr.New(sqlerr.CannotCoerce, "cannot cast type %s to %s", e.Arg.Type(), e.T)
		}
		d, err = castDatumMode(k, e.Arg.Type(), e.T, d, e.Assignment)
		return ownText(d, e.T), err
	case *ir.Case:
		for _, w := range e.Whens {
			c, err := evalScalar(k, w.Cond)
			if err != nil {
				return c, err
			}
			if !c.Null && c.Bool() {
				return evalScalar(k, w.Then)
			}
		}
		return evalScalar(k, e.Else)
	case *ir.InList:
		return evalInList(k, e)
	case *ir.Call:
		return evalCall(k, e)
	}
	return types.Null, sqlerr.New(sqlerr.InternalError, "EvalDatum: unknown expression %T", e)
}

// ownText makes a text result independent of the kernel scratch buffer.
func ownText(d types.Datum, t types.T) types.Datum {
	if !d.Null && (t.Kind == types.Text || t.Kind == types.Bytea || t.Kind == types.UUID || t.Kind == types.JSONB) {
		d.S = strings.Clone(d.S)
	}
	return d
}

func evalInList(k *kctx, e *ir.InList) (types.Datum, *sqlerr.Error) {
	// Like PostgreSQL's x = ANY(ARRAY[...]), every element is evaluated
	// before any comparison.
	x, err := evalScalar(k, e.Arg)
	if err != nil {
		return types.Null, err
	}
	vals := make([]types.Datum, len(e.List))
	for i, el := range e.List {
		if vals[i], err = evalScalar(k, el); err != nil {
			return types.Null, err
		}
	}
	if x.Null {
		return types.Null, nil
	}
	sawNull := false
	for i, el := range e.List {
		v := vals[i]
		if v.Null {
			sawNull = true
			continue
		}
		if comparer(e.Arg.Type(), el.Type())(x, v) == 0 {
			return types.DBool(!e.Negate), nil
		}
	}
	if sawNull {
		return types.Null, nil
	}
	return types.DBool(e.Negate), nil
}

func evalCall(k *kctx, e *ir.Call) (types.Datum, *sqlerr.Error) {
	argTypes := make([]types.T, len(e.Args))
	for i, a := range e.Args {
		argTypes[i] = a.Type()
	}
	fn, o, cerr := kernelFor(e.Fn, argTypes, e.T)
	if cerr != nil {
		return types.Null, sqlerr.Wrap(cerr)
	}
	args := make([]types.Datum, len(e.Args))
	switch e.Fn {
	case ir.FnAnd, ir.FnOr:
		// Left to right, stopping at the deciding value.
		isOr := e.Fn == ir.FnOr
		sawNull := false
		for _, a := range e.Args {
			d, err := evalScalar(k, a)
			if err != nil {
				return d, err
			}
			if d.Null {
				sawNull = true
			} else if d.Bool() == isOr {
				return types.DBool(isOr), nil
			}
		}
		if sawNull {
			return types.Null, nil
		}
		return types.DBool(!isOr), nil
	case ir.FnCoalesce:
		for _, a := range e.Args {
			d, err := evalScalar(k, a)
			if err != nil || !d.Null {
				return d, err
			}
		}
		return types.Null, nil
	}
	for i, a := range e.Args {
		d, err := evalScalar(k, a)
		if err != nil {
			return d, err
		}
		args[i] = d
	}
	if o.Strict {
		for _, d := range args {
			if d.Null {
				return types.Null, nil
			}
		}
	}
	d, err := fn(k, args)
	if err != nil {
		return types.Null, err
	}
	// Kernels compute numeric results at the overload's scale; a call typed
	// otherwise converts, as Compile does.
	if o.Result.Kind == types.Numeric && e.T.Kind == types.Numeric && computesNumeric(e.Fn) &&
		!types.Identical(o.Result, e.T) {
		d, err = castDatum(k, o.Result, e.T, d)
	}
	return ownText(d, e.T), err
}
