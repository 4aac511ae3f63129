package ir

import "github.com/streamsql/streamsql/types"

// CastAllowed reports whether an explicit CAST from one type to another
// exists. The evaluator implements every cast this allows.
//
// The casts are: between any two number types; boolean to and from integer;
// from anything to text and from text to anything; date to timestamp and
// timestamptz; timestamp and timestamptz to date and to each other; any type to
// itself (numeric to numeric rescales, text to varchar(n) truncates).
func CastAllowed(from, to types.T) bool {
	if from.Kind == types.Struct && to.Kind == types.Struct {
		return structCastAllowed(from, to, true)
	}
	if from.Kind == types.Map && to.Kind == types.Map {
		return CastAllowed(from.KeyT(), to.KeyT()) && CastAllowed(from.ValueT(), to.ValueT())
	}
	if from.Kind == types.Map || to.Kind == types.Map {
		return to.Kind == types.Text || from.Kind == types.Unknown
	}
	if from.Kind == types.Array && to.Kind == types.Array {
		return CastAllowed(from.ElemT(), to.ElemT())
	}
	if from.Kind == to.Kind || from.Kind == types.Unknown {
		return true
	}
	if from.Kind == types.Text || to.Kind == types.Text {
		return true
	}
	switch {
	case from.IsNumeric() && to.IsNumeric():
		return true
	case from.Kind == types.JSONB && (to.IsNumeric() || to.Kind == types.Bool):
		return true
	case from.Kind == types.Bool && to.Kind == types.Int32, from.Kind == types.Int32 && to.Kind == types.Bool:
		return true
	}
	switch from.Kind {
	case types.Date:
		return to.Kind == types.Timestamp || to.Kind == types.TimestampTZ
	case types.Timestamp:
		return to.Kind == types.Date || to.Kind == types.TimestampTZ
	case types.TimestampTZ:
		return to.Kind == types.Date || to.Kind == types.Timestamp
	}
	return false
}

// numberRank orders the number types along PostgreSQL's implicit cast chain
// smallint -> integer -> bigint -> numeric -> real -> double precision.
func numberRank(k types.Kind) int {
	switch k {
	case types.Int16:
		return 1
	case types.Int32:
		return 2
	case types.Int64:
		return 3
	case types.Numeric:
		return 4
	case types.Float32:
		return 5
	case types.Float64:
		return 6
	}
	return 0
}

// ImplicitCastCost reports whether a value of type from may be converted to to
// without an explicit cast (in function and operator arguments), and how far
// the conversion goes: 0 for the same type, larger for longer conversions.
func ImplicitCastCost(from, to types.T) (cost int, ok bool) {
	if types.IsNested(from) && from.Kind == to.Kind && from.Kind != types.Array {
		return 0, types.Identical(from, to)
	}
	if from.Kind == types.Array && to.Kind == types.Array {
		return ImplicitCastCost(from.ElemT(), to.ElemT())
	}
	if from.Kind == to.Kind {
		return 0, true
	}
	if from.Kind == types.Unknown {
		// An untyped literal or NULL takes any type; prefer text as PostgreSQL does.
		if to.Kind == types.Text {
			return 1, true
		}
		return 2, true
	}
	if rf, rt := numberRank(from.Kind), numberRank(to.Kind); rf > 0 && rt > 0 {
		if rt > rf {
			return rt - rf, true
		}
		return 0, false
	}
	switch {
	case from.Kind == types.Date && to.Kind == types.Timestamp:
		return 1, true
	case from.Kind == types.Date && to.Kind == types.TimestampTZ:
		return 2, true
	case from.Kind == types.Timestamp && to.Kind == types.TimestampTZ:
		return 1, true
	}
	return 0, false
}

// AssignmentCastAllowed reports whether a value of type from may be stored in a
// column of type to (INSERT and UPDATE): implicit casts plus narrowing between
// number types and any cast to or from text literals.
func AssignmentCastAllowed(from, to types.T) bool {
	if from.Kind == types.Struct && to.Kind == types.Struct {
		return structCastAllowed(from, to, false)
	}
	if from.Kind == types.Array && to.Kind == types.Array && to.Elem == types.Struct {
		return AssignmentCastAllowed(from.ElemT(), to.ElemT())
	}
	if from.Kind == types.Map && to.Kind == types.Map {
		return AssignmentCastAllowed(from.KeyT(), to.KeyT()) && AssignmentCastAllowed(from.ValueT(), to.ValueT())
	}
	if _, ok := ImplicitCastCost(from, to); ok {
		return true
	}
	if from.IsNumeric() && to.IsNumeric() {
		return true
	}
	if to.Kind == types.Text {
		return true
	}
	if from.Kind == types.Timestamp || from.Kind == types.TimestampTZ {
		return to.Kind == types.Date || to.Kind == types.Timestamp || to.Kind == types.TimestampTZ
	}
	return false
}
