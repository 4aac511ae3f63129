package ir

import (
	"strings"

	"github.com/streamsql/streamsql/types"
)

// Names of the array expressions.
const (
	FnArray          = "array"           // ARRAY[e, ...]
	FnArraySubscript = "array_subscript" // a[i]
	FnArraySlice     = "array_slice"     // a[i:j]
	FnArrayContains  = "array_contains"  // a @> b
	FnArrayContained = "array_contained" // a <@ b
	FnArrayOverlap   = "array_overlap"   // a && b
)

// ArraySig is one signature of a polymorphic array function: args has a
// letter per argument ('a' the array, 'e' an element, 'i' integer, 't'
// text) and result derives the result type from the element type.
type ArraySig struct {
	Args   string
	Result func(elem types.T) types.T
	// strict: NULL arguments give NULL without calling the kernel.
	strict bool
}

func int4Result(types.T) types.T { return types.Int32T }

func textResult(types.T) types.T { return types.TextT }

func boolResult(types.T) types.T { return types.BoolT }

func arrayResult(e types.T) types.T { return types.ArrayOf(e) }

func elemResult(e types.T) types.T { return e }

var ArrayFuncs = map[string][]ArraySig{
	FnArray:           {{Args: "e*", Result: arrayResult}},
	FnArraySubscript:  {{Args: "ai", Result: elemResult, strict: true}},
	FnArraySlice:      {{Args: "aii", Result: arrayResult, strict: true}},
	"array_length":    {{Args: "ai", Result: int4Result, strict: true}},
	"array_lower":     {{Args: "ai", Result: int4Result, strict: true}},
	"array_upper":     {{Args: "ai", Result: int4Result, strict: true}},
	"array_ndims":     {{Args: "a", Result: int4Result, strict: true}},
	"array_dims":      {{Args: "a", Result: textResult, strict: true}},
	"cardinality":     {{Args: "a", Result: int4Result, strict: true}},
	"array_position":  {{Args: "ae", Result: int4Result}, {Args: "aei", Result: int4Result}},
	"array_positions": {{Args: "ae", Result: func(types.T) types.T { return types.ArrayOf(types.Int32T) }}},
	"array_append":    {{Args: "ae", Result: arrayResult}},
	"array_prepend":   {{Args: "ea", Result: arrayResult}},
	"array_cat":       {{Args: "aa", Result: arrayResult}},
	"array_remove":    {{Args: "ae", Result: arrayResult}},
	"array_replace":   {{Args: "aee", Result: arrayResult}},
	"array_to_string": {{Args: "at", Result: textResult, strict: true}, {Args: "att", Result: textResult}},
	FnArrayContains:   {{Args: "aa", Result: boolResult, strict: true}},
	FnArrayContained:  {{Args: "aa", Result: boolResult, strict: true}},
	FnArrayOverlap:    {{Args: "aa", Result: boolResult, strict: true}},
}

// arrayOps are the comparison operators over arrays and the ANY/ALL forms
// of every comparison, by operator.
var (
	ArrayCompareFns = map[string]string{
		FnEq: "array_eq", FnNe: "array_ne", FnLt: "array_lt", FnLe: "array_le", FnGt: "array_gt", FnGe: "array_ge",
	}
	AnyFns = map[string]string{
		FnEq: "any_eq", FnNe: "any_ne", FnLt: "any_lt", FnLe: "any_le", FnGt: "any_gt", FnGe: "any_ge",
	}
	AllFns = map[string]string{
		FnEq: "all_eq", FnNe: "all_ne", FnLt: "all_lt", FnLe: "all_le", FnGt: "all_gt", FnGe: "all_ge",
	}
)

func init() {
	for _, fn := range ArrayCompareFns {
		ArrayFuncs[fn] = []ArraySig{{Args: "aa", Result: boolResult, strict: true}}
	}
	for _, m := range []map[string]string{AnyFns, AllFns} {
		for _, fn := range m {
			ArrayFuncs[fn] = []ArraySig{{Args: "ea", Result: boolResult}}
		}
	}
}

// IsArrayFunction reports whether fn is a polymorphic array function,
// typed by the binder (bindArrayCall) rather than by the overload table.
func IsArrayFunction(fn string) bool { _, ok := ArrayFuncs[fn]; return ok }

// ArrayFunctionNames returns the names of the polymorphic array functions.
func ArrayFunctionNames() []string {
	var names []string
	for n := range ArrayFuncs {
		names = append(names, n)
	}
	return names
}

// ArrayFunctionStrict reports whether array function fn returns NULL for
// any NULL argument without calling its kernel.
func ArrayFunctionStrict(fn string, nargs int) bool {
	for _, s := range ArrayFuncs[fn] {
		if s.Fits(nargs) {
			return s.strict
		}
	}
	return false
}

func (s ArraySig) Fits(n int) bool {
	if strings.HasSuffix(s.Args, "*") {
		return n >= 0
	}
	return len(s.Args) == n
}
