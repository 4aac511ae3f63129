package types

import (
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
)

// AppendDatum appends d to a builder of t's Arrow type (NULL aware).
func AppendDatum(b array.Builder, t T, d Datum) {
	if d.Null {
		b.AppendNull()
		return
	}
	switch b := b.(type) {
	case *array.BooleanBuilder:
		b.Append(d.Bool())
	case *array.Int16Builder:
		b.Append(int16(d.I))
	case *array.Int32Builder:
		b.Append(int32(d.I))
	case *array.Int64Builder:
		b.Append(d.I)
	case *array.Float32Builder:
		b.Append(float32(d.F))
	case *array.Float64Builder:
		b.Append(d.F)
	case *array.Decimal128Builder:
		b.Append(d.Dec)
	case *array.StringBuilder:
		b.Append(d.S)
	case *array.Date32Builder:
		b.Append(arrow.Date32(d.I))
	case *array.TimestampBuilder:
		b.Append(arrow.Timestamp(d.I))
	case *array.MonthDayNanoIntervalBuilder:
		b.Append(d.Ivl.ToArrow())
	case *array.ListBuilder:
		if t.Kind == Map {
			t = MapEntriesT(t)
		}
		appendListDatum(b, t, d)
	case *array.BinaryBuilder:
		b.AppendString(d.S)
	case *array.StructBuilder:
		appendStructDatum(b, t, d)
	case *array.NullBuilder:
		b.AppendNull()
	default:
		panic(fmt.Sprintf("types: AppendDatum: builder %T for type %s", b, t))
	}
}
