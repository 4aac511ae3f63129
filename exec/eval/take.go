package eval

import (
	"fmt"
	"math/bits"
	"slices"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/bitutil"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/streamsql/streamsql/types"
)

// SelectTrue appends to sel[:0] the indices of the rows where pred is true
// (NULL and false drop) and returns it. Reusing sel between calls avoids
// allocation.
func SelectTrue(pred *array.Boolean, sel []int32) []int32 {
	n := pred.Len()
	vals, off := boolBits(pred)
	var valid []byte
	if pred.NullN() > 0 {
		valid = pred.NullBitmapBytes()
	}
	word := func(i int) byte {
		b := loadByte(vals, off+i)
		if valid != nil {
			b &= loadByte(valid, off+i)
		}
		if r := n - i; r < 8 {
			b &= byte(1)<<r - 1
		}
		return b
	}
	count := 0
	for i := 0; i < n; i += 8 {
		count += bits.OnesCount8(word(i))
	}
	sel = slices.Grow(sel[:0], count)
	for i := 0; i < n; i += 8 {
		b := word(i)
		for b != 0 {
			sel = append(sel, int32(i+bits.TrailingZeros8(b)))
			b &= b - 1
		}
	}
	return sel
}

// TakeRecord returns a new record with the rows of rec at the indices rows,
// in that order (the caller releases it). Indices must be in range.
func TakeRecord(mem memory.Allocator, rec arrow.RecordBatch, rows []int32) (arrow.RecordBatch, error) {
	cols := make([]arrow.Array, rec.NumCols())
	for i := range cols {
		c, err := TakeArray(mem, rec.Column(i), rows)
		if err != nil {
			releaseAll(cols)
			return nil, err
		}
		cols[i] = c
	}
	out := array.NewRecordBatch(rec.Schema(), cols, int64(len(rows)))
	releaseAll(cols)
	return out, nil
}

// TakeArray returns a new column with the values of arr at the indices rows
// (the caller releases it). Indices must be in range. Every Arrow type a SQL
// type maps to is taken with a typed loop (plus the other fixed-width
// integer types); other types are an error.
func TakeArray(mem memory.Allocator, arr arrow.Array, rows []int32) (arrow.Array, error) {
	n := len(rows)
	switch arr.DataType().ID() {
	case arrow.NULL:
		return array.NewNull(n), nil
	case arrow.BOOL:
		vals := allocBits(mem, n, false)
		out := vals.Bytes()
		bm, off := boolBits(arr)
		for i, r := range rows {
			j := off + int(r)
			out[i>>3] |= (bm[j>>3] >> (j & 7) & 1) << (i & 7)
		}
		return makeArray(arr.DataType(), n, takeValidity(mem, arr, rows), vals), nil
	case arrow.INT16:
		return takeFixed[int16](mem, arr, rows), nil
	case arrow.INT32, arrow.DATE32, arrow.FLOAT32, arrow.UINT32:
		return takeFixed[int32](mem, arr, rows), nil
	case arrow.INT64, arrow.FLOAT64, arrow.TIMESTAMP, arrow.UINT64, arrow.DATE64:
		return takeFixed[int64](mem, arr, rows), nil
	case arrow.INT8, arrow.UINT8:
		return takeFixed[int8](mem, arr, rows), nil
	case arrow.DECIMAL128, arrow.INTERVAL_MONTH_DAY_NANO:
		return takeFixed[decimal128.Num](mem, arr, rows), nil
	case arrow.STRING, arrow.BINARY:
		return takeStrings(mem, arr, rows), nil
	case arrow.LIST:
		return takeLists(mem, arr.(*array.List), rows), nil
	case arrow.STRUCT:
		return takeStructs(mem, arr.(*array.Struct), rows)
	}
	return nil, fmt.Errorf("eval: take: unsupported Arrow type %s", arr.DataType())
}

// takeLists gathers the lists of arr at rows, element by element.
func takeLists(mem memory.Allocator, arr *array.List, rows []int32) arrow.Array {
	b := array.NewListBuilder(mem, arr.DataType().(*arrow.ListType).Elem())
	defer b.Release()
	vb, vals := b.ValueBuilder(), arr.ListValues()
	for _, r := range rows {
		if arr.IsNull(int(r)) {
			b.AppendNull()
			continue
		}
		b.Append(true)
		start, end := arr.ValueOffsets(int(r))
		for j := start; j < end; j++ {
			appendValueAt(vb, vals, int(j))
		}
	}
	return b.NewArray()
}

// appendValueAt appends element j of vals (a list's values) to b.
func appendValueAt(b array.Builder, vals arrow.Array, j int) {
	if vals.IsNull(j) {
		b.AppendNull()
		return
	}
	switch v := vals.(type) {
	case *array.Boolean:
		b.(*array.BooleanBuilder).Append(v.Value(j))
	case *array.Int16:
		b.(*array.Int16Builder).Append(v.Value(j))
	case *array.Int32:
		b.(*array.Int32Builder).Append(v.Value(j))
	case *array.Int64:
		b.(*array.Int64Builder).Append(v.Value(j))
	case *array.Float32:
		b.(*array.Float32Builder).Append(v.Value(j))
	case *array.Float64:
		b.(*array.Float64Builder).Append(v.Value(j))
	case *array.Decimal128:
		b.(*array.Decimal128Builder).Append(v.Value(j))
	case *array.String:
		b.(*array.StringBuilder).Append(v.Value(j))
	case *array.Binary:
		b.(*array.BinaryBuilder).Append(v.Value(j))
	case *array.Date32:
		b.(*array.Date32Builder).Append(v.Value(j))
	case *array.Timestamp:
		b.(*array.TimestampBuilder).Append(v.Value(j))
	case *array.MonthDayNanoInterval:
		b.(*array.MonthDayNanoIntervalBuilder).Append(v.Value(j))
	case *array.Struct:
		sb := b.(*array.StructBuilder)
		sb.Append(true)
		for k := range v.NumField() {
			appendValueAt(sb.FieldBuilder(k), v.Field(k), j)
		}
	case *array.List:
		lb := b.(*array.ListBuilder)
		lb.Append(true)
		start, end := v.ValueOffsets(j)
		for k := start; k < end; k++ {
			appendValueAt(lb.ValueBuilder(), v.ListValues(), int(k))
		}
	default:
		panic(fmt.Sprintf("eval: take: list of %s", vals.DataType()))
	}
}

// takeValidity gathers arr's validity at rows, or returns nil if arr has no
// NULL.
func takeValidity(mem memory.Allocator, arr arrow.Array, rows []int32) *memory.Buffer {
	if !hasNulls(arr) {
		return nil
	}
	n := len(rows)
	valid := allocBits(mem, n, false)
	out := valid.Bytes()
	vb := arr.NullBitmapBytes()
	off := arr.Data().Offset()
	for i, r := range rows {
		j := off + int(r)
		out[i>>3] |= (vb[j>>3] >> (j & 7) & 1) << (i & 7)
	}
	return valid
}

func takeFixed[T any](mem memory.Allocator, arr arrow.Array, rows []int32) arrow.Array {
	in := fixedVals[T](arr)
	buf, out := allocFixed[T](mem, len(rows))
	out = out[:len(rows)]
	for i, r := range rows {
		out[i] = in[r]
	}
	return makeArray(arr.DataType(), len(rows), takeValidity(mem, arr, rows), buf)
}

func takeStrings(mem memory.Allocator, arr arrow.Array, rows []int32) arrow.Array {
	v := viewOf(arr)
	size := 0
	for _, r := range rows {
		size += int(v.offs[r+1] - v.offs[r])
	}
	n := len(rows)
	offBuf, offs := allocFixed[int32](mem, n+1)
	dataBuf := memory.NewResizableBuffer(mem)
	dataBuf.Resize(size)
	data := dataBuf.Bytes()
	pos := int32(0)
	offs[0] = 0
	for i, r := range rows {
		a, b := v.offs[r], v.offs[r+1]
		pos += int32(copy(data[pos:], v.data[a:b]))
		offs[i+1] = pos
	}
	return makeArray(arr.DataType(), n, takeValidity(mem, arr, rows), offBuf, dataBuf)
}

// ConstArray builds a column of n copies of d (type t).
func ConstArray(mem memory.Allocator, t types.T, d types.Datum, n int) arrow.Array {
	switch t.Kind {
	case types.Unknown:
		return array.NewNull(n)
	case types.Bool:
		if d.Null {
			return makeArray(arrow.FixedWidthTypes.Boolean, n, allocBits(mem, n, false), allocBits(mem, n, false))
		}
		return makeArray(arrow.FixedWidthTypes.Boolean, n, nil, allocBits(mem, n, d.Bool()))
	case types.Text, types.Bytea, types.UUID, types.JSONB:
		if d.Null {
			o := newVarOut(mem, t, n, 0)
			for i := 0; i < n; i++ {
				o.appendNull(mem)
			}
			return o.finish()
		}
		o := newVarOut(mem, t, n, n*len(d.S))
		for i := 0; i < n; i++ {
			o.appendString(d.S)
		}
		return o.finish()
	case types.Array, types.Struct, types.Map:
		b := array.NewBuilder(mem, t.ArrowType())
		defer b.Release()
		for i := 0; i < n; i++ {
			types.AppendDatum(b, t, d)
		}
		return b.NewArray()
	case types.Int16:
		return fillFixed[int16](mem, t, d, n)
	case types.Int32, types.Date, types.Float32:
		return fillFixed[int32](mem, t, d, n)
	case types.Int64, types.Timestamp, types.TimestampTZ, types.Float64:
		return fillFixed[int64](mem, t, d, n)
	}
	return fillFixed[decimal128.Num](mem, t, d, n)
}

func fillFixed[T any](mem memory.Allocator, t types.T, d types.Datum, n int) arrow.Array {
	buf, out := allocFixed[T](mem, n)
	var v T
	var valid *memory.Buffer
	if d.Null {
		valid = allocBits(mem, n, false)
	} else {
		v = fixedConst[T](t, d)
	}
	for i := range out {
		out[i] = v
	}
	return makeArray(t.ArrowType(), n, valid, buf)
}

// TakeArrayOrNull is TakeArray where an index of -1 gives a NULL: it takes
// index 0 in its place and clears the row's validity bit. arr may be empty
// when every index is -1.
func TakeArrayOrNull(mem memory.Allocator, arr arrow.Array, rows []int32) (arrow.Array, error) {
	if !slices.Contains(rows, -1) {
		return TakeArray(mem, arr, rows)
	}
	n := len(rows)
	if arr.Len() == 0 {
		return array.MakeArrayOfNull(mem, arr.DataType(), n), nil
	}
	fixed := make([]int32, n)
	for i, r := range rows {
		fixed[i] = max(r, 0)
	}
	taken, err := TakeArray(mem, arr, fixed)
	if err != nil {
		return nil, err
	}
	defer taken.Release()
	valid := allocBits(mem, n, false)
	defer valid.Release()
	vb := valid.Bytes()
	for i, r := range rows {
		if r >= 0 && taken.IsValid(i) {
			bitutil.SetBit(vb, i)
		}
	}
	d := taken.Data()
	bufs := append([]*memory.Buffer{valid}, d.Buffers()[1:]...)
	data := array.NewData(d.DataType(), n, bufs, d.Children(), array.UnknownNullCount, 0)
	defer data.Release()
	return array.MakeFromData(data), nil
}
