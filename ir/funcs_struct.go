package ir

import (
	"github.com/streamsql/streamsql/types"
)

// Names of the struct expressions.
const (
	FnRow         = "row"          // ROW(a, b, ...): args are the fields
	FnStructField = "struct_field" // (s).f: args are s and the field's index (an integer constant)
)

// StructCompareFns are the comparisons of two structs of one type, by
// operator: PostgreSQL's record comparison (record_eq, record_lt, ...),
// where a NULL field equals a NULL field and sorts after every value.
var StructCompareFns = map[string]string{
	FnEq: "struct_eq", FnNe: "struct_ne", FnLt: "struct_lt", FnLe: "struct_le", FnGt: "struct_gt", FnGe: "struct_ge",
}

// IsStructFunction reports whether fn is a struct or map call, typed by
// the binder.
func IsStructFunction(fn string) bool {
	switch fn {
	case FnRow, FnStructField:
		return true
	}
	for _, f := range StructCompareFns {
		if f == fn {
			return true
		}
	}
	return MapFuncs[fn] != nil
}

// StructFunctionStrict reports whether struct or map call fn returns NULL
// for any NULL argument without calling its kernel.
func StructFunctionStrict(fn string) bool {
	if fn == FnRow {
		return false
	}
	if s := MapFuncs[fn]; s != nil {
		return s.strict
	}
	return true
}

// structCastAllowed reports whether a struct casts to another field by
// field (explicit selects explicit casts of the fields).
func structCastAllowed(from, to types.T, explicit bool) bool {
	if from.Fields.Len() != to.Fields.Len() {
		return false
	}
	for i := range from.Fields.Len() {
		f, t := from.Fields.At(i).Type, to.Fields.At(i).Type
		ok := AssignmentCastAllowed(f, t)
		if explicit {
			ok = CastAllowed(f, t)
		}
		if !ok {
			return false
		}
	}
	return true
}
