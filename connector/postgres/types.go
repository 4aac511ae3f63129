package postgres

import "github.com/streamsql/streamsql/types"

// TypeOf returns the streamsql type of a PostgreSQL column of type oid
// with modifier typmod (pg_attribute.atttypmod); elem is the element type
// of an array type (pg_type.typelem), else 0. ok is false for types
// streamsql does not have.
func TypeOf(oid uint32, typmod int32, elem uint32) (t types.T, ok bool) {
	if elem != 0 {
		// An array, or a fixed-length type PostgreSQL describes with an
		// element (name, point), which streamsql does not have.
		if et, ok := TypeOf(elem, typmod, 0); ok && types.ArrayOf(et).OID() == oid {
			return types.ArrayOf(et), true
		}
		return types.T{}, false
	}
	t, ok = types.FromOID(oid)
	if !ok {
		return t, false
	}
	switch {
	case t.Kind == types.Text && oid == types.OIDVarchar:
		t.Varchar = true
		if typmod >= 4 {
			t.Width = typmod - 4
		}
	case t.Kind == types.Text && oid == types.OIDBpchar && typmod >= 4:
		t.Width = typmod - 4
	case t.Kind == types.Numeric && typmod >= 4:
		t = types.NumericOf((typmod-4)>>16&0xffff, (typmod-4)&0xffff)
	}
	return t, true
}

// Fits reports whether every value of type from can be stored as a value
// of type to without loss or a range error: the same type, or a wider one
// (a longer varchar, a numeric with room for the digits, a wider integer,
// an integer into numeric, real into double precision). Structs and maps
// fit nothing.
func Fits(from, to types.T) bool {
	if from.Kind == types.Unknown {
		return to.Kind != types.Struct && to.Kind != types.Map
	}
	switch from.Kind {
	case types.Struct, types.Map:
		return false
	case types.Text:
		return to.Kind == types.Text && (to.Width == 0 || (from.Width > 0 && from.Width <= to.Width))
	case types.Numeric:
		return to.Kind == types.Numeric && numericFits(from, to)
	case types.Array:
		return to.Kind == types.Array && Fits(from.ElemT(), to.ElemT())
	case types.Int16, types.Int32, types.Int64:
		return intFits(from, to)
	case types.Float32:
		return to.Kind == types.Float32 || to.Kind == types.Float64
	}
	return from.Kind == to.Kind
}

// intFits reports whether integers of type from fit type to.
func intFits(from, to types.T) bool {
	digits := map[types.Kind]int32{types.Int16: 5, types.Int32: 10, types.Int64: 19}
	switch to.Kind {
	case types.Int16, types.Int32, types.Int64:
		return to.Kind >= from.Kind
	case types.Numeric:
		return !to.HasTypmod || to.Precision-to.Scale >= digits[from.Kind]
	case types.Float64:
		return from.Kind != types.Int64 // 53 bits of mantissa
	case types.Float32:
		return from.Kind == types.Int16
	}
	return false
}

// numericFits reports whether numerics of type from fit numeric type to:
// to is unconstrained, or from has no more integer digits and no more
// fraction digits than to.
func numericFits(from, to types.T) bool {
	if !to.HasTypmod {
		return true
	}
	return from.HasTypmod && from.Scale <= to.Scale && from.Precision-from.Scale <= to.Precision-to.Scale
}
