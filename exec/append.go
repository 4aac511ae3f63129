package exec

import (
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/streamsql/streamsql/types"
)

// appendFunc appends row i of a column to a builder of the same type.
type appendFunc func(b array.Builder, col arrow.Array, i int)

// appenderFor returns the appendFunc for columns of type t, dispatching on
// the type once so that per-row appends have no type switch.
func appenderFor(t types.T) appendFunc {
	switch t.Kind {
	case types.Bool:
		return func(b array.Builder, col arrow.Array, i int) {
			if col.IsNull(i) {
				b.AppendNull()
				return
			}
			b.(*array.BooleanBuilder).Append(col.(*array.Boolean).Value(i))
		}
	case types.Int16:
		return appendPrimitive[int16, *array.Int16Builder, *array.Int16]()
	case types.Int32:
		return appendPrimitive[int32, *array.Int32Builder, *array.Int32]()
	case types.Int64:
		return appendPrimitive[int64, *array.Int64Builder, *array.Int64]()
	case types.Float32:
		return appendPrimitive[float32, *array.Float32Builder, *array.Float32]()
	case types.Float64:
		return appendPrimitive[float64, *array.Float64Builder, *array.Float64]()
	case types.Date:
		return appendPrimitive[arrow.Date32, *array.Date32Builder, *array.Date32]()
	case types.Timestamp, types.TimestampTZ:
		return appendPrimitive[arrow.Timestamp, *array.TimestampBuilder, *array.Timestamp]()
	case types.Interval:
		return appendPrimitive[arrow.MonthDayNanoInterval, *array.MonthDayNanoIntervalBuilder, *array.MonthDayNanoInterval]()
	case types.Numeric:
		return func(b array.Builder, col arrow.Array, i int) {
			if col.IsNull(i) {
				b.AppendNull()
				return
			}
			b.(*array.Decimal128Builder).Append(col.(*array.Decimal128).Value(i))
		}
	case types.Text, types.JSONB:
		return func(b array.Builder, col arrow.Array, i int) {
			if col.IsNull(i) {
				b.AppendNull()
				return
			}
			b.(*array.StringBuilder).Append(col.(*array.String).Value(i))
		}
	case types.Array, types.Struct, types.Map:
		return func(b array.Builder, col arrow.Array, i int) {
			types.AppendDatum(b, t, types.DatumAt(t, col, i))
		}
	case types.Bytea, types.UUID:
		return appendPrimitive[[]byte, *array.BinaryBuilder, *array.Binary]()
	}
	panic(fmt.Sprintf("exec: no appender for %s", t))
}

func appendPrimitive[V any, B interface {
	array.Builder
	Append(V)
}, A interface {
	arrow.Array
	Value(int) V
}]() appendFunc {
	return func(b array.Builder, col arrow.Array, i int) {
		if col.IsNull(i) {
			b.AppendNull()
			return
		}
		b.(B).Append(col.(A).Value(i))
	}
}
