package state

import (
	"encoding/binary"
	"math"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/streamsql/streamsql/sqlerr"
	"github.com/streamsql/streamsql/types"
)

// Row (value) encoding.
//
// A row of n columns is a NULL bitmap of ceil(n/8) bytes (bit j%8 of byte j/8
// set when column j is NULL) followed by the non-NULL columns in order:
//
//	boolean                  1 byte, 0 or 1
//	smallint/int/bigint/date zigzag varint
//	timestamp[tz]            8 bytes little-endian
//	real/double              IEEE bits, 4/8 bytes little-endian (exact: -0
//	                         and NaN payloads survive)
//	numeric                  0x00 + zigzag varint when the mantissa fits in an
//	                         int64, else 0x01 + 16 bytes (low, high) little-endian
//	text                     uvarint length + bytes
//	interval                 zigzag varints of months, days, microseconds
//
// The encoding carries no types: a row is decoded with the codec of the same
// column types it was encoded with.

// errCorruptRow is returned when a row does not decode.
var errCorruptRow = sqlerr.New(sqlerr.InternalError, "state: corrupt row encoding")

// RowCodec encodes and decodes rows of a fixed list of column types. The type
// dispatch happens once, in NewRowCodec; encoding a row allocates only to grow
// the caller's buffer. A RowCodec is immutable and safe for concurrent use.
type RowCodec struct {
	types     []types.T
	nullBytes int
	enc       []colEncoder
	dec       []colDecoder
}

// colEncoder appends the encoding of non-NULL row i of col.
type colEncoder func(buf []byte, col arrow.Array, i int) []byte

// colDecoder decodes one non-NULL value from the front of buf into b and
// returns the rest of buf.
type colDecoder func(buf []byte, b array.Builder) ([]byte, error)

// NewRowCodec returns the codec for rows of the given column types. It panics
// on a type without an Arrow representation (Unknown).
func NewRowCodec(ts []types.T) *RowCodec {
	c := &RowCodec{
		types:     append([]types.T(nil), ts...),
		nullBytes: (len(ts) + 7) / 8,
		enc:       make([]colEncoder, len(ts)),
		dec:       make([]colDecoder, len(ts)),
	}
	for j, t := range ts {
		c.enc[j], c.dec[j] = rowFuncs(t)
	}
	return c
}

// Types returns the column types of the codec; the caller must not modify them.
func (c *RowCodec) Types() []types.T { return c.types }

// Append appends the encoding of row i of cols (one column per codec type, in
// order) to buf and returns the extended buffer.
func (c *RowCodec) Append(buf []byte, cols []arrow.Array, i int) []byte {
	if len(cols) != len(c.enc) {
		panic("state: RowCodec.Append: wrong number of columns")
	}
	start := len(buf)
	for k := 0; k < c.nullBytes; k++ {
		buf = append(buf, 0)
	}
	for j, col := range cols {
		if col.IsNull(i) {
			buf[start+(j>>3)] |= 1 << (j & 7)
			continue
		}
		buf = c.enc[j](buf, col, i)
	}
	return buf
}

// AppendDatums appends the encoding of a row given as datums (one per codec
// type). It is for scalar use off the hot path (catalog rows, tests).
func (c *RowCodec) AppendDatums(buf []byte, row []types.Datum) []byte {
	if len(row) != len(c.types) {
		panic("state: RowCodec.AppendDatums: wrong number of values")
	}
	start := len(buf)
	for k := 0; k < c.nullBytes; k++ {
		buf = append(buf, 0)
	}
	for j, d := range row {
		if d.Null {
			buf[start+(j>>3)] |= 1 << (j & 7)
			continue
		}
		buf = appendDatumValue(buf, c.types[j], d)
	}
	return buf
}

// Decode decodes one row from buf, which must hold exactly one encoded row,
// and appends its values to bs (one builder per codec type, of the type's
// Arrow type). If Decode fails, some builders may have received a value and
// others not; the caller must discard them.
func (c *RowCodec) Decode(buf []byte, bs []array.Builder) error {
	if len(bs) != len(c.dec) {
		panic("state: RowCodec.Decode: wrong number of builders")
	}
	if len(buf) < c.nullBytes {
		return errCorruptRow
	}
	nulls := buf[:c.nullBytes]
	buf = buf[c.nullBytes:]
	var err error
	for j, b := range bs {
		if nulls[j>>3]&(1<<(j&7)) != 0 {
			b.AppendNull()
			continue
		}
		if buf, err = c.dec[j](buf, b); err != nil {
			return err
		}
	}
	if len(buf) != 0 {
		return errCorruptRow
	}
	return nil
}

// DecodeDatums decodes one row from buf into out (len(out) == number of codec
// types). It is for scalar use off the hot path; text values are copied.
func (c *RowCodec) DecodeDatums(buf []byte, out []types.Datum) error {
	if len(out) != len(c.types) {
		panic("state: RowCodec.DecodeDatums: wrong number of datums")
	}
	if len(buf) < c.nullBytes {
		return errCorruptRow
	}
	nulls := buf[:c.nullBytes]
	buf = buf[c.nullBytes:]
	var err error
	for j, t := range c.types {
		if nulls[j>>3]&(1<<(j&7)) != 0 {
			out[j] = types.Null
			continue
		}
		if out[j], buf, err = decodeDatumValue(buf, t); err != nil {
			return err
		}
	}
	if len(buf) != 0 {
		return errCorruptRow
	}
	return nil
}

func rowFuncs(t types.T) (colEncoder, colDecoder) {
	switch t.Kind {
	case types.Bool:
		return encBool, decBool
	case types.Int16:
		return encInt16, decInt16
	case types.Int32:
		return encInt32, decInt32
	case types.Int64:
		return encInt64, decInt64
	case types.Date:
		return encDate, decDate
	case types.Timestamp, types.TimestampTZ:
		return encTimestamp, decTimestamp
	case types.Float32:
		return encFloat32, decFloat32
	case types.Float64:
		return encFloat64, decFloat64
	case types.Numeric:
		return encDecimal, decDecimal
	case types.Text, types.JSONB:
		return encString, decString
	case types.Interval:
		return encInterval, decInterval
	case types.Array:
		return arrayRowFuncs(t)
	case types.Bytea, types.UUID:
		return byteaRowFuncs(t)
	case types.Struct:
		return structRowFuncs(t)
	case types.Map:
		return arrayRowFuncs(types.MapEntriesT(t))
	}
	panic("state: no row encoding for " + t.String())
}

func encBool(buf []byte, col arrow.Array, i int) []byte {
	if col.(*array.Boolean).Value(i) {
		return append(buf, 1)
	}
	return append(buf, 0)
}

func encInt16(buf []byte, col arrow.Array, i int) []byte {
	return binary.AppendVarint(buf, int64(col.(*array.Int16).Value(i)))
}

func encInt32(buf []byte, col arrow.Array, i int) []byte {
	return binary.AppendVarint(buf, int64(col.(*array.Int32).Value(i)))
}

func encInt64(buf []byte, col arrow.Array, i int) []byte {
	return binary.AppendVarint(buf, col.(*array.Int64).Value(i))
}

func encDate(buf []byte, col arrow.Array, i int) []byte {
	return binary.AppendVarint(buf, int64(col.(*array.Date32).Value(i)))
}

func encTimestamp(buf []byte, col arrow.Array, i int) []byte {
	return binary.LittleEndian.AppendUint64(buf, uint64(col.(*array.Timestamp).Value(i)))
}

func encFloat32(buf []byte, col arrow.Array, i int) []byte {
	return binary.LittleEndian.AppendUint32(buf, math.Float32bits(col.(*array.Float32).Value(i)))
}

func encFloat64(buf []byte, col arrow.Array, i int) []byte {
	return binary.LittleEndian.AppendUint64(buf, math.Float64bits(col.(*array.Float64).Value(i)))
}

func encDecimal(buf []byte, col arrow.Array, i int) []byte {
	return appendDecimalValue(buf, col.(*array.Decimal128).Value(i))
}

func encString(buf []byte, col arrow.Array, i int) []byte {
	s := col.(*array.String).Value(i)
	buf = binary.AppendUvarint(buf, uint64(len(s)))
	return append(buf, s...)
}

func encInterval(buf []byte, col arrow.Array, i int) []byte {
	v := col.(*array.MonthDayNanoInterval).Value(i)
	return appendIntervalValue(buf, v.Months, v.Days, v.Nanoseconds/1000)
}

func appendDecimalValue(buf []byte, n decimal128.Num) []byte {
	lo, hi := n.LowBits(), n.HighBits()
	if hi == int64(lo)>>63 {
		buf = append(buf, 0)
		return binary.AppendVarint(buf, int64(lo))
	}
	buf = append(buf, 1)
	buf = binary.LittleEndian.AppendUint64(buf, lo)
	return binary.LittleEndian.AppendUint64(buf, uint64(hi))
}

func appendIntervalValue(buf []byte, months, days int32, micros int64) []byte {
	buf = binary.AppendVarint(buf, int64(months))
	buf = binary.AppendVarint(buf, int64(days))
	return binary.AppendVarint(buf, micros)
}

func appendDatumValue(buf []byte, t types.T, d types.Datum) []byte {
	switch t.Kind {
	case types.Bool:
		if d.I != 0 {
			return append(buf, 1)
		}
		return append(buf, 0)
	case types.Int16:
		return binary.AppendVarint(buf, int64(int16(d.I)))
	case types.Int32, types.Date:
		return binary.AppendVarint(buf, int64(int32(d.I)))
	case types.Int64:
		return binary.AppendVarint(buf, d.I)
	case types.Timestamp, types.TimestampTZ:
		return binary.LittleEndian.AppendUint64(buf, uint64(d.I))
	case types.Float32:
		return binary.LittleEndian.AppendUint32(buf, math.Float32bits(float32(d.F)))
	case types.Float64:
		return binary.LittleEndian.AppendUint64(buf, math.Float64bits(d.F))
	case types.Numeric:
		return appendDecimalValue(buf, d.Dec)
	case types.Text, types.JSONB:
		buf = binary.AppendUvarint(buf, uint64(len(d.S)))
		return append(buf, d.S...)
	case types.Interval:
		return appendIntervalValue(buf, d.Ivl.Months, d.Ivl.Days, d.Ivl.Micros)
	case types.Array:
		return appendArrayDatumValue(buf, t, d)
	case types.Bytea, types.UUID:
		return appendByteaDatumValue(buf, t, d)
	case types.Struct:
		return appendStructDatumValue(buf, t, d)
	case types.Map:
		return appendArrayDatumValue(buf, types.MapEntriesT(t), d)
	}
	panic("state: no row encoding for " + t.String())
}

// readVarint decodes a zigzag varint that must fit in [min, max].
func readVarint(buf []byte, min, max int64) (int64, []byte, error) {
	v, n := binary.Varint(buf)
	if n <= 0 || v < min || v > max {
		return 0, nil, errCorruptRow
	}
	return v, buf[n:], nil
}

func decBool(buf []byte, b array.Builder) ([]byte, error) {
	if len(buf) < 1 || buf[0] > 1 {
		return nil, errCorruptRow
	}
	b.(*array.BooleanBuilder).Append(buf[0] == 1)
	return buf[1:], nil
}

func decInt16(buf []byte, b array.Builder) ([]byte, error) {
	v, rest, err := readVarint(buf, math.MinInt16, math.MaxInt16)
	if err != nil {
		return nil, err
	}
	b.(*array.Int16Builder).Append(int16(v))
	return rest, nil
}

func decInt32(buf []byte, b array.Builder) ([]byte, error) {
	v, rest, err := readVarint(buf, math.MinInt32, math.MaxInt32)
	if err != nil {
		return nil, err
	}
	b.(*array.Int32Builder).Append(int32(v))
	return rest, nil
}

func decInt64(buf []byte, b array.Builder) ([]byte, error) {
	v, rest, err := readVarint(buf, math.MinInt64, math.MaxInt64)
	if err != nil {
		return nil, err
	}
	b.(*array.Int64Builder).Append(v)
	return rest, nil
}

func decDate(buf []byte, b array.Builder) ([]byte, error) {
	v, rest, err := readVarint(buf, math.MinInt32, math.MaxInt32)
	if err != nil {
		return nil, err
	}
	b.(*array.Date32Builder).Append(arrow.Date32(v))
	return rest, nil
}

func decTimestamp(buf []byte, b array.Builder) ([]byte, error) {
	if len(buf) < 8 {
		return nil, errCorruptRow
	}
	b.(*array.TimestampBuilder).Append(arrow.Timestamp(binary.LittleEndian.Uint64(buf)))
	return buf[8:], nil
}

func decFloat32(buf []byte, b array.Builder) ([]byte, error) {
	if len(buf) < 4 {
		return nil, errCorruptRow
	}
	b.(*array.Float32Builder).Append(math.Float32frombits(binary.LittleEndian.Uint32(buf)))
	return buf[4:], nil
}

func decFloat64(buf []byte, b array.Builder) ([]byte, error) {
	if len(buf) < 8 {
		return nil, errCorruptRow
	}
	b.(*array.Float64Builder).Append(math.Float64frombits(binary.LittleEndian.Uint64(buf)))
	return buf[8:], nil
}

func readDecimal(buf []byte) (decimal128.Num, []byte, error) {
	if len(buf) < 1 {
		return decimal128.Num{}, nil, errCorruptRow
	}
	switch buf[0] {
	case 0:
		v, rest, err := readVarint(buf[1:], math.MinInt64, math.MaxInt64)
		if err != nil {
			return decimal128.Num{}, nil, err
		}
		return decimal128.FromI64(v), rest, nil
	case 1:
		if len(buf) < 17 {
			return decimal128.Num{}, nil, errCorruptRow
		}
		lo := binary.LittleEndian.Uint64(buf[1:])
		hi := int64(binary.LittleEndian.Uint64(buf[9:]))
		return decimal128.New(hi, lo), buf[17:], nil
	}
	return decimal128.Num{}, nil, errCorruptRow
}

func decDecimal(buf []byte, b array.Builder) ([]byte, error) {
	n, rest, err := readDecimal(buf)
	if err != nil {
		return nil, err
	}
	b.(*array.Decimal128Builder).Append(n)
	return rest, nil
}

func readString(buf []byte) ([]byte, []byte, error) {
	n, k := binary.Uvarint(buf)
	if k <= 0 || n > uint64(len(buf)-k) {
		return nil, nil, errCorruptRow
	}
	buf = buf[k:]
	return buf[:n], buf[n:], nil
}

func decString(buf []byte, b array.Builder) ([]byte, error) {
	s, rest, err := readString(buf)
	if err != nil {
		return nil, err
	}
	b.(*array.StringBuilder).BinaryBuilder.Append(s)
	return rest, nil
}

func readInterval(buf []byte) (types.IntervalValue, []byte, error) {
	months, buf, err := readVarint(buf, math.MinInt32, math.MaxInt32)
	if err != nil {
		return types.IntervalValue{}, nil, err
	}
	days, buf, err := readVarint(buf, math.MinInt32, math.MaxInt32)
	if err != nil {
		return types.IntervalValue{}, nil, err
	}
	micros, buf, err := readVarint(buf, math.MinInt64/1000, math.MaxInt64/1000)
	if err != nil {
		return types.IntervalValue{}, nil, err
	}
	return types.IntervalValue{Months: int32(months), Days: int32(days), Micros: micros}, buf, nil
}

func decInterval(buf []byte, b array.Builder) ([]byte, error) {
	iv, rest, err := readInterval(buf)
	if err != nil {
		return nil, err
	}
	b.(*array.MonthDayNanoIntervalBuilder).Append(iv.ToArrow())
	return rest, nil
}

func decodeDatumValue(buf []byte, t types.T) (types.Datum, []byte, error) {
	switch t.Kind {
	case types.Bool:
		if len(buf) < 1 || buf[0] > 1 {
			return types.Datum{}, nil, errCorruptRow
		}
		return types.DBool(buf[0] == 1), buf[1:], nil
	case types.Int16:
		v, rest, err := readVarint(buf, math.MinInt16, math.MaxInt16)
		return types.DInt(v), rest, err
	case types.Int32, types.Date:
		v, rest, err := readVarint(buf, math.MinInt32, math.MaxInt32)
		return types.DInt(v), rest, err
	case types.Int64:
		v, rest, err := readVarint(buf, math.MinInt64, math.MaxInt64)
		return types.DInt(v), rest, err
	case types.Timestamp, types.TimestampTZ:
		if len(buf) < 8 {
			return types.Datum{}, nil, errCorruptRow
		}
		return types.DInt(int64(binary.LittleEndian.Uint64(buf))), buf[8:], nil
	case types.Float32:
		if len(buf) < 4 {
			return types.Datum{}, nil, errCorruptRow
		}
		return types.DFloat(float64(math.Float32frombits(binary.LittleEndian.Uint32(buf)))), buf[4:], nil
	case types.Float64:
		if len(buf) < 8 {
			return types.Datum{}, nil, errCorruptRow
		}
		return types.DFloat(math.Float64frombits(binary.LittleEndian.Uint64(buf))), buf[8:], nil
	case types.Numeric:
		n, rest, err := readDecimal(buf)
		return types.DNumeric(n), rest, err
	case types.Text, types.JSONB:
		s, rest, err := readString(buf)
		return types.DText(string(s)), rest, err
	case types.Interval:
		iv, rest, err := readInterval(buf)
		return types.DInterval(iv), rest, err
	case types.Array:
		return decodeArrayDatumValue(buf, t)
	case types.Bytea, types.UUID:
		return decodeByteaDatumValue(buf, t)
	case types.Struct:
		return decodeStructDatumValue(buf, t)
	case types.Map:
		return decodeArrayDatumValue(buf, types.MapEntriesT(t))
	}
	panic("state: no row encoding for " + t.String())
}
