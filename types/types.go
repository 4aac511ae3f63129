// Package types defines streamsql's SQL types, their Arrow representation, their
// PostgreSQL wire identity (OIDs) and scalar values (Datum) with PostgreSQL text
// input and output.
//
// Every SQL type maps to exactly one Arrow type; operators never see any other
// Arrow type. The mapping is:
//
//	boolean           -> Boolean
//	smallint/int/bigint -> Int16/Int32/Int64
//	real/double       -> Float32/Float64
//	numeric(p,s)      -> Decimal128(38, s): mantissas at scale s
//	numeric           -> Decimal128(38, 12) holding packed mantissa and display
//	                     scale per value (numeric.go)
//	varchar/text      -> String
//	date              -> Date32 (days since 1970-01-01)
//	timestamp         -> Timestamp(us) without zone
//	timestamptz       -> Timestamp(us, "UTC")
//	interval          -> MonthDayNanoInterval (nanoseconds always a multiple of 1000)
//	jsonb, json       -> String (the canonical jsonb text, see jsonb.go)
//
// This package imports only the standard library and Arrow.
package types

import (
	"fmt"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
)

// Kind is the family of a SQL type.
type Kind uint8

// The kinds, in the order of PostgreSQL's numeric type promotion where it matters.
const (
	// Unknown is the type of an untyped NULL literal; it is coerced to whatever the
	// context needs and never reaches an operator.
	Unknown Kind = iota
	Bool
	Int16
	Int32
	Int64
	Numeric
	Float32
	Float64
	Text
	Date
	Timestamp
	TimestampTZ
	Interval
	// Array is a one-dimensional array of T.Elem (see array.go).
	Array
	// JSONB is jsonb (and json): canonical text in a String column (jsonb.go).
	JSONB Kind = 14
	// Bytea is a byte string (see bytea.go).
	Bytea Kind = 15
	// UUID is a 128-bit universally unique identifier (see uuid.go).
	UUID Kind = 16
	// Struct is a composite of T.Fields (see struct.go).
	Struct Kind = 17
	// Map is RisingWave's MAP(K, V), of the entries T.Fields (see map.go).
	Map Kind = 18
)

// numericArrowScale is the Arrow Decimal128 scale of unconstrained numeric
// columns, whose slots pack each value's own scale (see numeric.go); it
// only names the type.
const numericArrowScale = 12

// NumericPrecision is the total number of decimal digits a numeric holds.
const NumericPrecision = 38

// T is a SQL type. It is a small comparable value.
type T struct {
	Kind Kind
	// Scale and Precision are set for numeric types declared with a typmod
	// (numeric(p,s)); HasTypmod distinguishes numeric(p,0) from bare numeric.
	Precision int32
	Scale     int32
	HasTypmod bool
	// Width is the declared maximum length of varchar(n); 0 means unbounded.
	Width int32
	// Varchar marks a text type declared character varying (without a
	// length): it is named and described on the wire as such, where other
	// text is text. Values and operations are the same.
	Varchar bool
	// Bpchar marks character(n) (Width n) and bpchar (Width 0), PostgreSQL's
	// blank-padded char: values are stored without trailing spaces, which
	// are insignificant in comparisons, length() and casts to text, and
	// character(n) values are padded with spaces to n characters where
	// they are output (PadBpchar).
	Bpchar bool
	// Elem is the element kind of an array type; the modifiers above are
	// then the element's. On a text type it marks a catalog vector
	// (Int2VectorT, OIDVectorT): text of numbers separated by spaces, which
	// subscripts read from 0 as PostgreSQL's int2vector and oidvector.
	Elem Kind
	// Fields is the interned field list of a struct type, of a map type's
	// entries, or of an array's struct or map elements.
	Fields *Fields
}

// The types without modifiers.
var (
	UnknownT     = T{Kind: Unknown}
	BoolT        = T{Kind: Bool}
	Int16T       = T{Kind: Int16}
	Int32T       = T{Kind: Int32}
	Int64T       = T{Kind: Int64}
	NumericT     = T{Kind: Numeric, Precision: NumericPrecision}
	Float32T     = T{Kind: Float32}
	Float64T     = T{Kind: Float64}
	TextT        = T{Kind: Text}
	DateT        = T{Kind: Date}
	TimestampT   = T{Kind: Timestamp}
	TimestampTZT = T{Kind: TimestampTZ}
	IntervalT    = T{Kind: Interval}
	JSONBT       = T{Kind: JSONB}
	// Int2VectorT and OIDVectorT are the pg_catalog vector types, text
	// whose Elem is the kind of their numbers (see T.Elem).
	Int2VectorT = T{Kind: Text, Elem: Int16}
	OIDVectorT  = T{Kind: Text, Elem: Int64}
)

// IsVector reports whether t is Int2VectorT or OIDVectorT.
func (t T) IsVector() bool { return t.Kind == Text && t.Elem != Unknown }

// WithoutTypmod returns t without its modifiers: numeric(p,s) is numeric,
// varchar(n) character varying; an array's element loses its modifiers.
func WithoutTypmod(t T) T {
	switch t.Kind {
	case Numeric:
		return NumericT
	case Text:
		if t.Bpchar {
			return T{Kind: Text, Bpchar: true}
		}
		return T{Kind: Text, Varchar: t.Varchar || t.Width > 0}
	case Array:
		return ArrayOf(WithoutTypmod(t.ElemT()))
	case Struct, Map:
		return structWithoutTypmod(t)
	}
	return T{Kind: t.Kind}
}

// NumericOf returns numeric(p,s).
func NumericOf(p, s int32) T {
	return T{Kind: Numeric, Precision: p, Scale: s, HasTypmod: true}
}

// PostgreSQL type OIDs (pg_type.oid) for the wire protocol.
const (
	OIDBool        = 16
	OIDInt8        = 20
	OIDInt2        = 21
	OIDInt4        = 23
	OIDText        = 25
	OIDFloat4      = 700
	OIDFloat8      = 701
	OIDUnknown     = 705
	OIDVarchar     = 1043
	OIDDate        = 1082
	OIDTimestamp   = 1114
	OIDTimestampTZ = 1184
	OIDInterval    = 1186
	OIDNumeric     = 1700
	OIDJSON        = 114
	OIDJSONB       = 3802
)

// OID returns the PostgreSQL type OID that describes t on the wire.
func (t T) OID() uint32 {
	switch t.Kind {
	case Bool:
		return OIDBool
	case Int16:
		return OIDInt2
	case Int32:
		return OIDInt4
	case Int64:
		return OIDInt8
	case Numeric:
		return OIDNumeric
	case Float32:
		return OIDFloat4
	case Float64:
		return OIDFloat8
	case Text:
		if t.Bpchar {
			return OIDBpchar
		}
		if t.Width > 0 || t.Varchar {
			return OIDVarchar
		}
		return OIDText
	case Date:
		return OIDDate
	case Timestamp:
		return OIDTimestamp
	case TimestampTZ:
		return OIDTimestampTZ
	case Interval:
		return OIDInterval
	case Array:
		return arrayOID(t)
	case Bytea:
		return OIDBytea
	case UUID:
		return OIDUUID
	case JSONB:
		return OIDJSONB
	case Struct:
		return OIDRecord
	case Map:
		return OIDText // described as text, its binary form is its text
	}
	return OIDText
}

// Size returns the pg_type.typlen of t for RowDescription (-1 for varlena).
func (t T) Size() int16 {
	switch t.Kind {
	case Bool:
		return 1
	case Int16:
		return 2
	case Int32, Float32, Date:
		return 4
	case Int64, Float64, Timestamp, TimestampTZ:
		return 8
	case Interval, UUID:
		return 16
	}
	return -1
}

// Typmod returns the PostgreSQL type modifier for RowDescription (-1 if none).
func (t T) Typmod() int32 {
	switch {
	case t.Kind == Numeric && t.HasTypmod:
		return ((t.Precision << 16) | t.Scale) + 4
	case t.Kind == Text && t.Width > 0:
		return t.Width + 4
	}
	return -1
}

// EffectiveScale is the scale of the Decimal128 mantissas of numeric(p,s):
// s. Unconstrained numeric values carry their own scales (NumericParts), and
// other types have none: 0.
func (t T) EffectiveScale() int32 {
	if t.Kind != Numeric || !t.HasTypmod {
		return 0
	}
	return t.Scale
}

// ArrowType returns the Arrow type that holds values of t.
func (t T) ArrowType() arrow.DataType {
	switch t.Kind {
	case Bool:
		return arrow.FixedWidthTypes.Boolean
	case Int16:
		return arrow.PrimitiveTypes.Int16
	case Int32:
		return arrow.PrimitiveTypes.Int32
	case Int64:
		return arrow.PrimitiveTypes.Int64
	case Numeric:
		if !t.HasTypmod {
			return &arrow.Decimal128Type{Precision: NumericPrecision, Scale: numericArrowScale}
		}
		return &arrow.Decimal128Type{Precision: NumericPrecision, Scale: t.Scale}
	case Float32:
		return arrow.PrimitiveTypes.Float32
	case Float64:
		return arrow.PrimitiveTypes.Float64
	case Text, JSONB:
		return arrow.BinaryTypes.String
	case Date:
		return arrow.FixedWidthTypes.Date32
	case Timestamp:
		// Not arrow.FixedWidthTypes.Timestamp_us: that one has a UTC zone.
		return timestampType
	case TimestampTZ:
		return timestampTZType
	case Interval:
		return arrow.FixedWidthTypes.MonthDayNanoInterval
	case Array:
		return arrow.ListOf(t.ElemT().ArrowType())
	case Bytea, UUID:
		return arrow.BinaryTypes.Binary
	case Struct:
		return structArrowType(t.Fields)
	case Map:
		return MapEntriesT(t).ArrowType()
	case Unknown:
		return arrow.Null
	}
	panic(fmt.Sprintf("types: no arrow type for %v", t))
}

var (
	timestampType   = &arrow.TimestampType{Unit: arrow.Microsecond}
	timestampTZType = &arrow.TimestampType{Unit: arrow.Microsecond, TimeZone: "UTC"}
)

// IsNumeric reports whether t is one of the number types.
func (t T) IsNumeric() bool {
	switch t.Kind {
	case Int16, Int32, Int64, Numeric, Float32, Float64:
		return true
	}
	return false
}

// IsInteger reports whether t is smallint, int or bigint.
func (t T) IsInteger() bool {
	return t.Kind == Int16 || t.Kind == Int32 || t.Kind == Int64
}

// Identical reports whether values of a and b share a representation, so that a
// column of one can be used as a column of the other without a cast.
func Identical(a, b T) bool {
	if a.Kind != b.Kind {
		return false
	}
	switch a.Kind {
	case Numeric:
		return a.EffectiveScale() == b.EffectiveScale()
	case Array:
		return Identical(a.ElemT(), b.ElemT())
	case Struct, Map:
		return identicalFields(a.Fields, b.Fields)
	}
	return true
}

// String returns the PostgreSQL spelling of t, as format_type prints it.
func (t T) String() string {
	switch t.Kind {
	case Unknown:
		return "unknown"
	case Bool:
		return "boolean"
	case Int16:
		return "smallint"
	case Int32:
		return "integer"
	case Int64:
		return "bigint"
	case Numeric:
		if t.HasTypmod {
			return fmt.Sprintf("numeric(%d,%d)", t.Precision, t.Scale)
		}
		return "numeric"
	case Float32:
		return "real"
	case Float64:
		return "double precision"
	case Text:
		if t.Bpchar && t.Width > 0 {
			return fmt.Sprintf("character(%d)", t.Width)
		}
		if t.Bpchar {
			return "character" // as regtype spells bpchar
		}
		if t.Width > 0 {
			return fmt.Sprintf("character varying(%d)", t.Width)
		}
		if t.Varchar {
			return "character varying"
		}
		return "text"
	case Date:
		return "date"
	case Timestamp:
		return "timestamp without time zone"
	case TimestampTZ:
		return "timestamp with time zone"
	case Interval:
		return "interval"
	case Array:
		return t.arrayString()
	case Bytea:
		return "bytea"
	case UUID:
		return "uuid"
	case JSONB:
		return "jsonb"
	case Struct:
		return t.structString()
	case Map:
		return t.mapString()
	}
	return fmt.Sprintf("kind(%d)", t.Kind)
}

// FromName resolves a type name as pg_query spells it (the last element of a
// qualified name such as pg_catalog.int4, or a user spelling such as "integer")
// with its integer typmods. ok is false for names streamsql does not support.
func FromName(name string, mods []int32) (t T, ok bool) {
	switch strings.ToLower(name) {
	case "bool", "boolean":
		return BoolT, true
	case "int2", "smallint":
		return Int16T, true
	case "int4", "int", "integer":
		return Int32T, true
	case "int8", "bigint":
		return Int64T, true
	case "float4", "real":
		return Float32T, true
	case "float8", "double precision", "double", "float":
		return Float64T, true
	case "numeric", "decimal":
		switch len(mods) {
		case 0:
			return NumericT, true
		case 1:
			return NumericOf(mods[0], 0), mods[0] >= 1 && mods[0] <= NumericPrecision
		default:
			p, s := mods[0], mods[1]
			return NumericOf(p, s), p >= 1 && p <= NumericPrecision && s >= 0 && s <= p
		}
	case "text", "string":
		return TextT, true
	case "bpchar", "character":
		// pg_query names char(n) and character(n) bpchar; char and
		// character without a length are character(1).
		if len(mods) == 1 {
			return T{Kind: Text, Width: mods[0], Bpchar: true}, mods[0] >= 1
		}
		return T{Kind: Text, Bpchar: true}, true
	case "varchar", "character varying", "char":
		if len(mods) == 1 {
			return T{Kind: Text, Width: mods[0]}, true
		}
		return T{Kind: Text, Varchar: true}, true
	case "date":
		return DateT, true
	case "timestamp", "timestamp without time zone":
		return TimestampT, true
	case "timestamptz", "timestamp with time zone":
		return TimestampTZT, true
	case "interval":
		return IntervalT, true
	case "bytea":
		return ByteaT, true
	case "uuid":
		return UUIDT, true
	case "jsonb", "json":
		return JSONBT, true
	}
	return T{}, false
}

// FromArrow returns the SQL type whose Arrow representation is dt. Numeric
// columns come back without a typmod unless their scale differs from
// numericArrowScale.
func FromArrow(dt arrow.DataType) (T, bool) {
	switch dt.ID() {
	case arrow.BOOL:
		return BoolT, true
	case arrow.INT16:
		return Int16T, true
	case arrow.INT32:
		return Int32T, true
	case arrow.INT64:
		return Int64T, true
	case arrow.FLOAT32:
		return Float32T, true
	case arrow.FLOAT64:
		return Float64T, true
	case arrow.DECIMAL128:
		s := dt.(*arrow.Decimal128Type).Scale
		if s == numericArrowScale {
			return NumericT, true
		}
		return NumericOf(NumericPrecision, s), true
	case arrow.STRING:
		return TextT, true
	case arrow.DATE32:
		return DateT, true
	case arrow.TIMESTAMP:
		if dt.(*arrow.TimestampType).TimeZone != "" {
			return TimestampTZT, true
		}
		return TimestampT, true
	case arrow.INTERVAL_MONTH_DAY_NANO:
		return IntervalT, true
	case arrow.BINARY:
		return ByteaT, true
	case arrow.NULL:
		return UnknownT, true
	}
	return T{}, false
}
