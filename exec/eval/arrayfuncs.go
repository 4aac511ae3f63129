package eval

import (
	"strconv"
	"strings"

	"github.com/streamsql/streamsql/ir"
	"github.com/streamsql/streamsql/sqlerr"
	"github.com/streamsql/streamsql/types"
)

// Kernels of the polymorphic array functions (ir.IsArrayFunction), by
// name: the binder has typed their calls, so a maker gets the argument
// types (the element type is that of the array argument) and needs no
// overload. They work on datums, row by row; array values are built and
// read element by element.
var arrayKernels = map[string]kernelMaker{
	ir.FnArray: func([]types.T, types.T) scalarFn {
		return func(_ *kctx, a []types.Datum) (types.Datum, *sqlerr.Error) {
			return types.DArray(append([]types.Datum(nil), a...)), nil
		}
	},
	ir.FnArraySubscript: func([]types.T, types.T) scalarFn {
		return func(_ *kctx, a []types.Datum) (types.Datum, *sqlerr.Error) {
			arr, i := a[0].Arr, a[1].I
			if i < 1 || i > int64(len(arr)) {
				return types.Null, nil
			}
			return arr[i-1], nil
		}
	},
	ir.FnArraySlice: func([]types.T, types.T) scalarFn {
		return func(_ *kctx, a []types.Datum) (types.Datum, *sqlerr.Error) {
			arr := a[0].Arr
			lo, hi := max(a[1].I, 1), min(a[2].I, int64(len(arr)))
			if lo > hi {
				return types.DArray(nil), nil
			}
			return types.DArray(append([]types.Datum(nil), arr[lo-1:hi]...)), nil
		}
	},
	"array_length": dimFn(func(arr []types.Datum) types.Datum { return types.DInt(int64(len(arr))) }),
	"array_lower":  dimFn(func([]types.Datum) types.Datum { return types.DInt(1) }),
	"array_upper":  dimFn(func(arr []types.Datum) types.Datum { return types.DInt(int64(len(arr))) }),
	"array_ndims": func([]types.T, types.T) scalarFn {
		return func(_ *kctx, a []types.Datum) (types.Datum, *sqlerr.Error) {
			if len(a[0].Arr) == 0 {
				return types.Null, nil
			}
			return types.DInt(1), nil
		}
	},
	"array_dims": func([]types.T, types.T) scalarFn {
		return func(_ *kctx, a []types.Datum) (types.Datum, *sqlerr.Error) {
			if len(a[0].Arr) == 0 {
				return types.Null, nil
			}
			return types.DText("[1:" + strconv.Itoa(len(a[0].Arr)) + "]"), nil
		}
	},
	"cardinality": func([]types.T, types.T) scalarFn {
		return func(_ *kctx, a []types.Datum) (types.Datum, *sqlerr.Error) {
			return types.DInt(int64(len(a[0].Arr))), nil
		}
	},
	"array_position":  arrayPosition,
	"array_positions": arrayPositions,
	"array_append": func([]types.T, types.T) scalarFn {
		return func(_ *kctx, a []types.Datum) (types.Datum, *sqlerr.Error) {
			return types.DArray(append(append([]types.Datum(nil), a[0].Arr...), a[1])), nil
		}
	},
	"array_prepend": func([]types.T, types.T) scalarFn {
		return func(_ *kctx, a []types.Datum) (types.Datum, *sqlerr.Error) {
			return types.DArray(append([]types.Datum{a[0]}, a[1].Arr...)), nil
		}
	},
	"array_cat": func([]types.T, types.T) scalarFn {
		return func(_ *kctx, a []types.Datum) (types.Datum, *sqlerr.Error) {
			if a[0].Null && a[1].Null {
				return types.Null, nil
			}
			return types.DArray(append(append([]types.Datum(nil), a[0].Arr...), a[1].Arr...)), nil
		}
	},
	"array_remove": func(args []types.T, _ types.T) scalarFn {
		et := args[0].ElemT()
		return func(_ *kctx, a []types.Datum) (types.Datum, *sqlerr.Error) {
			if a[0].Null {
				return types.Null, nil
			}
			out := []types.Datum{}
			for _, e := range a[0].Arr {
				if !notDistinct(et, e, a[1]) {
					out = append(out, e)
				}
			}
			return types.DArray(out), nil
		}
	},
	"array_replace": func(args []types.T, _ types.T) scalarFn {
		et := args[0].ElemT()
		return func(_ *kctx, a []types.Datum) (types.Datum, *sqlerr.Error) {
			if a[0].Null {
				return types.Null, nil
			}
			out := make([]types.Datum, len(a[0].Arr))
			for i, e := range a[0].Arr {
				out[i] = e
				if notDistinct(et, e, a[1]) {
					out[i] = a[2]
				}
			}
			return types.DArray(out), nil
		}
	},
	"array_to_string": arrayToString,
	ir.FnExpandArrayRows: func([]types.T, types.T) scalarFn {
		return func(_ *kctx, a []types.Datum) (types.Datum, *sqlerr.Error) {
			out := make([]types.Datum, len(a[0].Arr))
			for i, e := range a[0].Arr {
				out[i] = types.DStruct([]types.Datum{e, types.DInt(int64(i + 1))})
			}
			return types.DArray(out), nil
		}
	},
	ir.FnArrayContains:  containsFn(func(a, b []types.Datum, et types.T) bool { return containsAll(a, b, et) }),
	ir.FnArrayContained: containsFn(func(a, b []types.Datum, et types.T) bool { return containsAll(b, a, et) }),
	ir.FnArrayOverlap:   containsFn(overlaps),
	"array_eq":          compareFn(func(c int) bool { return c == 0 }),
	"array_ne":          compareFn(func(c int) bool { return c != 0 }),
	"array_lt":          compareFn(func(c int) bool { return c < 0 }),
	"array_le":          compareFn(func(c int) bool { return c <= 0 }),
	"array_gt":          compareFn(func(c int) bool { return c > 0 }),
	"array_ge":          compareFn(func(c int) bool { return c >= 0 }),
	"any_eq":            quantified(true, func(c int) bool { return c == 0 }),
	"any_ne":            quantified(true, func(c int) bool { return c != 0 }),
	"any_lt":            quantified(true, func(c int) bool { return c < 0 }),
	"any_le":            quantified(true, func(c int) bool { return c <= 0 }),
	"any_gt":            quantified(true, func(c int) bool { return c > 0 }),
	"any_ge":            quantified(true, func(c int) bool { return c >= 0 }),
	"all_eq":            quantified(false, func(c int) bool { return c == 0 }),
	"all_ne":            quantified(false, func(c int) bool { return c != 0 }),
	"all_lt":            quantified(false, func(c int) bool { return c < 0 }),
	"all_le":            quantified(false, func(c int) bool { return c <= 0 }),
	"all_gt":            quantified(false, func(c int) bool { return c > 0 }),
	"all_ge":            quantified(false, func(c int) bool { return c >= 0 }),
}

// nullSafeArrayKernel returns the kernel of the type-generic functions
// (IS [NOT] NULL, IS [NOT] DISTINCT FROM, coalesce, nullif) over arrays, or
// nil if fn is not one or its arguments are not arrays. They are not strict.
func nullSafeArrayKernel(fn string, args []types.T) scalarFn {
	if len(args) == 0 || !types.IsNested(args[0]) {
		return nil
	}
	at := args[0]
	same := func(x, y types.Datum) bool {
		return x.Null == y.Null && (x.Null || types.Compare(at, x, y) == 0)
	}
	switch fn {
	case ir.FnIsNull, ir.FnIsNotNull:
		null := fn == ir.FnIsNull
		if at.Kind == types.Struct {
			return structNullTest(null)
		}
		return func(_ *kctx, a []types.Datum) (types.Datum, *sqlerr.Error) {
			return types.DBool(a[0].Null == null), nil
		}
	case ir.FnIsDistinct, ir.FnIsNotDistinct:
		distinct := fn == ir.FnIsDistinct
		return func(_ *kctx, a []types.Datum) (types.Datum, *sqlerr.Error) {
			return types.DBool(same(a[0], a[1]) != distinct), nil
		}
	case ir.FnCoalesce:
		return func(_ *kctx, a []types.Datum) (types.Datum, *sqlerr.Error) {
			for _, d := range a {
				if !d.Null {
					return d, nil
				}
			}
			return types.Null, nil
		}
	case ir.FnNullIf:
		return func(_ *kctx, a []types.Datum) (types.Datum, *sqlerr.Error) {
			if !a[0].Null && !a[1].Null && same(a[0], a[1]) {
				return types.Null, nil
			}
			return a[0], nil
		}
	}
	return nil
}

// dimFn is a function of an array and a dimension, NULL for a dimension
// the array does not have.
func dimFn(f func(arr []types.Datum) types.Datum) kernelMaker {
	return func([]types.T, types.T) scalarFn {
		return func(_ *kctx, a []types.Datum) (types.Datum, *sqlerr.Error) {
			if a[1].I != 1 || len(a[0].Arr) == 0 {
				return types.Null, nil
			}
			return f(a[0].Arr), nil
		}
	}
}

// notDistinct is IS NOT DISTINCT FROM on elements of type et.
func notDistinct(et types.T, x, y types.Datum) bool {
	if x.Null || y.Null {
		return x.Null && y.Null
	}
	return types.Compare(et, x, y) == 0
}

var errNullPosition = sqlerr.New(sqlerr.NullValueNotAllowed, "initial position must not be null")

func arrayPosition(args []types.T, _ types.T) scalarFn {
	et := args[0].ElemT()
	return func(_ *kctx, a []types.Datum) (types.Datum, *sqlerr.Error) {
		if a[0].Null {
			return types.Null, nil
		}
		start := int64(1)
		if len(a) == 3 {
			if a[2].Null {
				return types.Null, errNullPosition
			}
			start = max(a[2].I, 1)
		}
		for i := start; i <= int64(len(a[0].Arr)); i++ {
			if notDistinct(et, a[0].Arr[i-1], a[1]) {
				return types.DInt(i), nil
			}
		}
		return types.Null, nil
	}
}

func arrayPositions(args []types.T, _ types.T) scalarFn {
	et := args[0].ElemT()
	return func(_ *kctx, a []types.Datum) (types.Datum, *sqlerr.Error) {
		if a[0].Null {
			return types.Null, nil
		}
		out := []types.Datum{}
		for i, e := range a[0].Arr {
			if notDistinct(et, e, a[1]) {
				out = append(out, types.DInt(int64(i+1)))
			}
		}
		return types.DArray(out), nil
	}
}

// arrayToString joins the elements' text with a separator; NULL elements
// are left out, or written as the third argument when it is not NULL.
func arrayToString(args []types.T, _ types.T) scalarFn {
	et := args[0].ElemT()
	return func(k *kctx, a []types.Datum) (types.Datum, *sqlerr.Error) {
		if a[0].Null || a[1].Null {
			return types.Null, nil
		}
		nullStr, withNulls := "", len(a) == 3 && !a[2].Null
		if withNulls {
			nullStr = a[2].S
		}
		buf := k.buf[:0]
		first := true
		for _, e := range a[0].Arr {
			if e.Null && !withNulls {
				continue
			}
			if !first {
				buf = append(buf, a[1].S...)
			}
			first = false
			if e.Null {
				buf = append(buf, nullStr...)
			} else {
				buf = types.AppendText(buf, et, e)
			}
		}
		return k.textResult(buf), nil
	}
}

func containsFn(f func(a, b []types.Datum, et types.T) bool) kernelMaker {
	return func(args []types.T, _ types.T) scalarFn {
		et := args[0].ElemT()
		return func(_ *kctx, a []types.Datum) (types.Datum, *sqlerr.Error) {
			return types.DBool(f(a[0].Arr, a[1].Arr, et)), nil
		}
	}
}

// containsAll reports whether every element of b equals one of a (NULL
// elements equal nothing), as @> does.
func containsAll(a, b []types.Datum, et types.T) bool {
	for _, y := range b {
		if !containsElem(a, y, et) {
			return false
		}
	}
	return true
}

func overlaps(a, b []types.Datum, et types.T) bool {
	for _, y := range b {
		if containsElem(a, y, et) {
			return true
		}
	}
	return false
}

func containsElem(a []types.Datum, y types.Datum, et types.T) bool {
	if y.Null {
		return false
	}
	for _, x := range a {
		if !x.Null && types.Compare(et, x, y) == 0 {
			return true
		}
	}
	return false
}

func compareFn(ok func(int) bool) kernelMaker {
	return func(args []types.T, _ types.T) scalarFn {
		et := args[0].ElemT()
		return func(_ *kctx, a []types.Datum) (types.Datum, *sqlerr.Error) {
			return types.DBool(ok(types.CompareArrays(et, a[0].Arr, a[1].Arr))), nil
		}
	}
}

// quantified is x op ANY (array) (any) or x op ALL (array), in SQL's
// three-valued logic: a NULL x or element makes the comparison unknown.
func quantified(any bool, ok func(int) bool) kernelMaker {
	return func(args []types.T, _ types.T) scalarFn {
		et := args[0]
		return func(_ *kctx, a []types.Datum) (types.Datum, *sqlerr.Error) {
			x, arr := a[0], a[1]
			if arr.Null {
				return types.Null, nil
			}
			unknown := false
			for _, e := range arr.Arr {
				if x.Null || e.Null {
					unknown = true
					continue
				}
				if ok(types.Compare(et, x, e)) == any {
					return types.DBool(any), nil
				}
			}
			if unknown {
				return types.Null, nil
			}
			return types.DBool(!any), nil
		}
	}
}

// regexpMatch is regexp_match(s, pattern [, flags]): the first match's
// capture groups (or the whole match when the pattern has none), NULL for
// no match. Patterns and flags are read as regexp_replace reads them (see
// regexfuncs.go).
func regexpMatch(args []types.T, _ types.T) scalarFn {
	return func(k *kctx, a []types.Datum) (types.Datum, *sqlerr.Error) {
		flags := ""
		if len(a) == 3 {
			flags = a[2].S
		}
		f, err := parseReFlags(flags, "regexp_match", false)
		if err != nil {
			return types.Null, err
		}
		re, err := k.regexFor(a[1].S, f)
		if err != nil {
			return types.Null, err
		}
		m := re.FindStringSubmatchIndex(a[0].S)
		if m == nil {
			return types.Null, nil
		}
		if len(m) == 2 {
			return types.DArray([]types.Datum{types.DText(strings.Clone(a[0].S[m[0]:m[1]]))}), nil
		}
		out := make([]types.Datum, 0, len(m)/2-1)
		for g := 2; g < len(m); g += 2 {
			if m[g] < 0 {
				out = append(out, types.Null)
				continue
			}
			out = append(out, types.DText(strings.Clone(a[0].S[m[g]:m[g+1]])))
		}
		return types.DArray(out), nil
	}
}

// stringToArray is string_to_array(s, sep [, null_string]): s split at
// every sep (into characters for a NULL sep, not at all for an empty one).
func stringToArray(args []types.T, _ types.T) scalarFn {
	return func(_ *kctx, a []types.Datum) (types.Datum, *sqlerr.Error) {
		if a[0].Null {
			return types.Null, nil
		}
		s := a[0].S
		var parts []string
		switch {
		case s == "":
			return types.DArray(nil), nil
		case a[1].Null:
			for _, r := range s {
				parts = append(parts, string(r))
			}
		case a[1].S == "":
			parts = []string{s}
		default:
			parts = strings.Split(s, a[1].S)
		}
		out := make([]types.Datum, len(parts))
		for i, p := range parts {
			out[i] = types.DText(strings.Clone(p))
			if len(a) == 3 && !a[2].Null && p == a[2].S {
				out[i] = types.Null
			}
		}
		return types.DArray(out), nil
	}
}

func init() {
	tt := []types.T{types.TextT, types.TextT}
	reg("regexp_match", tt, regexpMatch)
	reg("regexp_match", append(tt, types.TextT), regexpMatch)
	reg("string_to_array", tt, stringToArray)
	reg("string_to_array", append(tt, types.TextT), stringToArray)
}
