package eval

import (
	"encoding/binary"
	"math/bits"
	"unsafe"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/bitutil"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/streamsql/streamsql/types"
)

// This file holds the typed views of Arrow buffers that the kernels loop over.
// Bitmaps built here always start at bit 0 and have their padding bits
// cleared.

// fixedVals returns the values of a fixed-width column as []T, with the
// array's offset applied. T must have the column's element layout (int16,
// arrow.Date32, decimal128.Num, arrow.MonthDayNanoInterval, ...).
func fixedVals[T any](arr arrow.Array) []T {
	d := arr.Data()
	buf := d.Buffers()[1]
	if buf == nil || d.Len() == 0 {
		return nil
	}
	b := buf.Bytes()
	var z T
	all := unsafe.Slice((*T)(unsafe.Pointer(unsafe.SliceData(b))), len(b)/int(unsafe.Sizeof(z)))
	return all[d.Offset() : d.Offset()+d.Len()]
}

// bytesAs reinterprets b as a []T of n elements.
func bytesAs[T any](b []byte, n int) []T {
	if n == 0 {
		return nil
	}
	return unsafe.Slice((*T)(unsafe.Pointer(unsafe.SliceData(b))), n)
}

// allocFixed allocates an uninitialised values buffer of n elements of T.
func allocFixed[T any](mem memory.Allocator, n int) (*memory.Buffer, []T) {
	var z T
	buf := memory.NewResizableBuffer(mem)
	buf.Resize(n * int(unsafe.Sizeof(z)))
	return buf, bytesAs[T](buf.Bytes(), n)
}

// allocBits allocates a bitmap of n bits, all set or all clear.
func allocBits(mem memory.Allocator, n int, set bool) *memory.Buffer {
	buf := memory.NewResizableBuffer(mem)
	nb := int(bitutil.BytesForBits(int64(n)))
	buf.Resize(nb)
	b := buf.Bytes()
	fill := byte(0)
	if set {
		fill = 0xff
	}
	for i := range b {
		b[i] = fill
	}
	clearPadding(b, n)
	return buf
}

// clearPadding clears the bits at and after n in the last byte of b.
func clearPadding(b []byte, n int) {
	if r := n & 7; r != 0 && len(b) > 0 {
		b[len(b)-1] &= byte(1)<<r - 1
	}
}

// loadByte returns the 8 bits of bm starting at bit off (bits past the end of
// bm read as zero).
func loadByte(bm []byte, off int) byte {
	j, s := off>>3, uint(off&7)
	if s == 0 {
		return bm[j]
	}
	b := bm[j] >> s
	if j+1 < len(bm) {
		b |= bm[j+1] << (8 - s)
	}
	return b
}

// andBitsInto ands n bits of src starting at bit srcOff into dst (offset 0),
// a 64-bit word at a time when src is byte-aligned.
func andBitsInto(dst, src []byte, srcOff, n int) {
	nb := (n + 7) >> 3
	if srcOff&7 == 0 {
		s := src[srcOff>>3:]
		i := 0
		for ; i+8 <= nb; i += 8 {
			binary.LittleEndian.PutUint64(dst[i:], binary.LittleEndian.Uint64(dst[i:])&binary.LittleEndian.Uint64(s[i:]))
		}
		for ; i < nb; i++ {
			dst[i] &= s[i]
		}
	} else {
		for i := 0; i < nb; i++ {
			dst[i] &= loadByte(src, srcOff+i*8)
		}
	}
	clearPadding(dst[:nb], n)
}

// copyBitsInto copies n bits of src starting at srcOff into dst (offset 0).
func copyBitsInto(dst, src []byte, srcOff, n int) {
	nb := (n + 7) >> 3
	if srcOff&7 == 0 {
		copy(dst[:nb], src[srcOff>>3:])
	} else {
		for i := 0; i < nb; i++ {
			dst[i] = loadByte(src, srcOff+i*8)
		}
	}
	clearPadding(dst[:nb], n)
}

// hasNulls reports whether arr has any NULL.
func hasNulls(arr arrow.Array) bool { return arr != nil && arr.NullN() > 0 }

// validityInto ands arr's validity into dst (n bits at offset 0).
func validityInto(dst []byte, arr arrow.Array, n int) {
	if arr.DataType().ID() == arrow.NULL {
		for i := range dst[:(n+7)>>3] {
			dst[i] = 0
		}
		return
	}
	andBitsInto(dst, arr.NullBitmapBytes(), arr.Data().Offset(), n)
}

// andValidity returns a new validity bitmap that is the AND of the validity
// of arrs (nil entries are ignored), or nil when none of them has a NULL.
func andValidity(mem memory.Allocator, n int, arrs ...arrow.Array) *memory.Buffer {
	var out *memory.Buffer
	for _, a := range arrs {
		if !hasNulls(a) {
			continue
		}
		if out == nil {
			out = allocBits(mem, n, true)
		}
		validityInto(out.Bytes(), a, n)
	}
	return out
}

// validAt reports whether row i of arr is valid (arr may be nil: valid).
func validAt(arr arrow.Array, i int) bool { return arr == nil || arr.IsValid(i) }

// boolBits returns the values bitmap of a boolean column and its bit offset.
func boolBits(arr arrow.Array) ([]byte, int) {
	d := arr.Data()
	return d.Buffers()[1].Bytes(), d.Offset()
}

// boolBitsCopy returns the values bitmap of a boolean column as a new
// offset-0 Go slice.
func boolBitsCopy(arr arrow.Array, n int) []byte {
	out := make([]byte, (n+7)>>3)
	b, off := boolBits(arr)
	copyBitsInto(out, b, off, n)
	return out
}

// validBitsCopy returns the validity of arr as a new offset-0 Go slice (all
// set when arr has no NULL).
func validBitsCopy(arr arrow.Array, n int) []byte {
	out := make([]byte, (n+7)>>3)
	for i := range out {
		out[i] = 0xff
	}
	clearPadding(out, n)
	if hasNulls(arr) {
		validityInto(out, arr, n)
	}
	return out
}

// countBits counts the set bits among the first n bits of b (offset 0).
func countBits(b []byte, n int) int {
	c := 0
	full := n >> 3
	for _, x := range b[:full] {
		c += bits.OnesCount8(x)
	}
	if r := n & 7; r != 0 {
		c += bits.OnesCount8(b[full] & (byte(1)<<r - 1))
	}
	return c
}

// makeArray wraps buffers (validity first, may be nil) into an array of type
// dt and n rows. It takes over the caller's references to the buffers.
func makeArray(dt arrow.DataType, n int, bufs ...*memory.Buffer) arrow.Array {
	nulls := 0
	if v := bufs[0]; v != nil {
		nulls = n - countBits(v.Bytes(), n)
		if nulls == 0 {
			v.Release()
			bufs[0] = nil
		}
	}
	data := array.NewData(dt, n, bufs, nil, nulls, 0)
	arr := array.MakeFromData(data)
	data.Release()
	for _, b := range bufs {
		if b != nil {
			b.Release()
		}
	}
	return arr
}

// strOut builds a string column row by row into offsets and data buffers it
// owns.
type strOut struct {
	dt      arrow.DataType // String, or Binary for bytea and uuid
	n       int
	i       int
	valid   *memory.Buffer
	offBuf  *memory.Buffer
	offs    []int32
	dataBuf *memory.Buffer
	data    []byte // dataBuf's full capacity
	used    int
}

func newStrOut(mem memory.Allocator, n, dataHint int) *strOut {
	o := &strOut{dt: arrow.BinaryTypes.String, n: n}
	o.offBuf, o.offs = allocFixed[int32](mem, n+1)
	o.offs[0] = 0
	o.dataBuf = memory.NewResizableBuffer(mem)
	if dataHint < 64 {
		dataHint = 64
	}
	o.dataBuf.Reserve(dataHint)
	o.data = o.dataBuf.Buf()
	return o
}

func (o *strOut) grow(extra int) {
	need := o.used + extra
	if need <= len(o.data) {
		return
	}
	c := 2 * len(o.data)
	if c < need {
		c = need
	}
	o.dataBuf.Reserve(c)
	o.data = o.dataBuf.Buf()
}

// appendString appends a value.
func (o *strOut) appendString(s string) {
	o.grow(len(s))
	o.used += copy(o.data[o.used:], s)
	o.i++
	o.offs[o.i] = int32(o.used)
}

// appendBytes appends a value.
func (o *strOut) appendBytes(b []byte) {
	o.grow(len(b))
	o.used += copy(o.data[o.used:], b)
	o.i++
	o.offs[o.i] = int32(o.used)
}

// appendNull appends a NULL.
func (o *strOut) appendNull(mem memory.Allocator) {
	if o.valid == nil {
		o.valid = allocBits(mem, o.n, true)
	}
	bitutil.ClearBit(o.valid.Bytes(), o.i)
	o.i++
	o.offs[o.i] = int32(o.used)
}

func (o *strOut) finish() arrow.Array {
	o.dataBuf.ResizeNoShrink(o.used)
	return makeArray(o.dt, o.n, o.valid, o.offBuf, o.dataBuf)
}

// release frees the buffers of an unfinished strOut.
func (o *strOut) release() {
	for _, b := range []*memory.Buffer{o.valid, o.offBuf, o.dataBuf} {
		if b != nil {
			b.Release()
		}
	}
}

// strView gives allocation-free access to the values of a string column.
type strView struct {
	offs []int32
	data []byte
}

func viewOf(arr arrow.Array) strView {
	s := arr.(varBytes)
	offs := s.ValueOffsets()
	var data []byte
	if b := s.Data().Buffers()[2]; b != nil {
		data = b.Bytes()
	}
	return strView{offs: offs, data: data}
}

func (v strView) at(i int) string {
	a, b := v.offs[i], v.offs[i+1]
	if a == b {
		return ""
	}
	return unsafe.String(&v.data[a], int(b-a))
}

// colBuilder builds a column of any SQL type from Datums, row by row. It is
// used off the hot paths (row-at-a-time kernels, constants).
type colBuilder struct {
	t     types.T
	mem   memory.Allocator
	n, i  int
	valid *memory.Buffer
	vals  *memory.Buffer
	raw   []byte
	str   *strOut
	list  array.Builder // arrays
}

func newColBuilder(mem memory.Allocator, t types.T, n int) *colBuilder {
	b := &colBuilder{t: t, mem: mem, n: n}
	switch t.Kind {
	case types.Text, types.JSONB:
		b.str = newStrOut(mem, n, n*8)
	case types.Bytea, types.UUID:
		b.str = newBinOut(mem, n, n*16)
	case types.Array, types.Struct, types.Map:
		b.list = array.NewBuilder(mem, t.ArrowType())
		b.list.Reserve(n)
	case types.Bool:
		b.vals = allocBits(mem, n, false)
		b.raw = b.vals.Bytes()
	case types.Unknown:
	default:
		b.vals = memory.NewResizableBuffer(mem)
		b.vals.Resize(n * fixedWidth(t))
		b.raw = b.vals.Bytes()
	}
	return b
}

// fixedWidth is the byte width of a fixed-width type's values.
func fixedWidth(t types.T) int {
	switch t.Kind {
	case types.Int16:
		return 2
	case types.Int32, types.Float32, types.Date:
		return 4
	case types.Int64, types.Float64, types.Timestamp, types.TimestampTZ:
		return 8
	case types.Numeric, types.Interval:
		return 16
	}
	return 0
}

func (b *colBuilder) appendNull() {
	switch {
	case b.str != nil:
		b.str.appendNull(b.mem)
	case b.list != nil:
		b.list.AppendNull()
	default:
		if b.valid == nil {
			b.valid = allocBits(b.mem, b.n, true)
		}
		bitutil.ClearBit(b.valid.Bytes(), b.i)
		if b.raw != nil && b.t.Kind != types.Bool {
			w := fixedWidth(b.t)
			clear(b.raw[b.i*w : (b.i+1)*w])
		}
	}
	b.i++
}

func (b *colBuilder) append(d types.Datum) {
	if d.Null {
		b.appendNull()
		return
	}
	i := b.i
	switch b.t.Kind {
	case types.Bool:
		if d.I != 0 {
			bitutil.SetBit(b.raw, i)
		}
	case types.Int16:
		*(*int16)(unsafe.Pointer(&b.raw[i*2])) = int16(d.I)
	case types.Int32, types.Date:
		*(*int32)(unsafe.Pointer(&b.raw[i*4])) = int32(d.I)
	case types.Int64, types.Timestamp, types.TimestampTZ:
		*(*int64)(unsafe.Pointer(&b.raw[i*8])) = d.I
	case types.Float32:
		*(*float32)(unsafe.Pointer(&b.raw[i*4])) = float32(d.F)
	case types.Float64:
		*(*float64)(unsafe.Pointer(&b.raw[i*8])) = d.F
	case types.Numeric:
		*(*decimal128.Num)(unsafe.Pointer(&b.raw[i*16])) = d.Dec
	case types.Interval:
		*(*arrow.MonthDayNanoInterval)(unsafe.Pointer(&b.raw[i*16])) = d.Ivl.ToArrow()
	case types.Text, types.Bytea, types.UUID, types.JSONB:
		b.str.appendString(d.S)
	case types.Array, types.Struct, types.Map:
		types.AppendDatum(b.list, b.t, d)
	}
	b.i++
}

func (b *colBuilder) finish() arrow.Array {
	switch {
	case b.t.Kind == types.Unknown:
		return array.NewNull(b.n)
	case b.str != nil:
		return b.str.finish()
	case b.list != nil:
		return b.list.NewArray()
	}
	return makeArray(b.t.ArrowType(), b.n, b.valid, b.vals)
}

func (b *colBuilder) release() {
	if b.str != nil {
		b.str.release()
	}
	if b.list != nil {
		b.list.Release()
	}
	for _, x := range []*memory.Buffer{b.valid, b.vals} {
		if x != nil {
			x.Release()
		}
	}
}

// reader returns a function reading row i of arr (a column of type t) as a
// Datum. Off the hot paths only.
func reader(t types.T, arr arrow.Array) func(i int) types.Datum {
	if arr.DataType().ID() == arrow.NULL {
		return func(int) types.Datum { return types.Null }
	}
	valid := func(i int) bool { return true }
	if hasNulls(arr) {
		valid = arr.IsValid
	}
	switch t.Kind {
	case types.Bool:
		bm, off := boolBits(arr)
		return func(i int) types.Datum {
			if !valid(i) {
				return types.Null
			}
			return types.DBool(bitutil.BitIsSet(bm, off+i))
		}
	case types.Int16:
		v := fixedVals[int16](arr)
		return func(i int) types.Datum {
			if !valid(i) {
				return types.Null
			}
			return types.DInt(int64(v[i]))
		}
	case types.Int32, types.Date:
		v := fixedVals[int32](arr)
		return func(i int) types.Datum {
			if !valid(i) {
				return types.Null
			}
			return types.DInt(int64(v[i]))
		}
	case types.Int64, types.Timestamp, types.TimestampTZ:
		v := fixedVals[int64](arr)
		return func(i int) types.Datum {
			if !valid(i) {
				return types.Null
			}
			return types.DInt(v[i])
		}
	case types.Float32:
		v := fixedVals[float32](arr)
		return func(i int) types.Datum {
			if !valid(i) {
				return types.Null
			}
			return types.DFloat(float64(v[i]))
		}
	case types.Float64:
		v := fixedVals[float64](arr)
		return func(i int) types.Datum {
			if !valid(i) {
				return types.Null
			}
			return types.DFloat(v[i])
		}
	case types.Numeric:
		v := fixedVals[decimal128.Num](arr)
		return func(i int) types.Datum {
			if !valid(i) {
				return types.Null
			}
			return types.DNumeric(v[i])
		}
	case types.Interval:
		v := fixedVals[arrow.MonthDayNanoInterval](arr)
		return func(i int) types.Datum {
			if !valid(i) {
				return types.Null
			}
			return types.DInterval(types.IntervalFromArrow(v[i]))
		}
	case types.Text, types.Bytea, types.UUID, types.JSONB:
		v := viewOf(arr)
		return func(i int) types.Datum {
			if !valid(i) {
				return types.Null
			}
			return types.DText(v.at(i))
		}
	case types.Array, types.Struct, types.Map:
		return func(i int) types.Datum { return types.DatumAt(t, arr, i) }
	}
	return func(int) types.Datum { return types.Null }
}
