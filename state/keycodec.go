package state

import (
	"bytes"
	"encoding/binary"
	"math"
	"math/bits"
	"strings"
	"unsafe"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/streamsql/streamsql/sqlerr"
	"github.com/streamsql/streamsql/types"
)

// Memcomparable key encoding.
//
// A key is the concatenation of its columns' encodings. Every column encoding
// is self-delimiting, so the encoding of a prefix of the key columns is a byte
// prefix of the key, and comparing two keys bytewise compares them column by
// column in SQL order. Each column starts with a marker byte:
//
//	0x00  NULL (nothing follows); NULL sorts before every value
//	0x01  a value follows, encoded by type:
//
//	boolean                 1 byte, 0 or 1
//	smallint/int/bigint     2/4/8 bytes big-endian with the sign bit flipped
//	date                    as int (days)
//	timestamp[tz]           as bigint (microseconds)
//	real/double             4/8 bytes: the IEEE bits with the sign bit flipped
//	                        for positive values and all bits flipped for
//	                        negative ones; -0 is encoded as +0 and every NaN as
//	                        all ones (after +Infinity), so -0 = 0 and NaN = NaN
//	numeric                 the 128-bit mantissa big-endian with the sign bit
//	                        flipped (all values of a column share a scale)
//	text                    the bytes with 0x00 escaped as 0x00 0xFF, then the
//	                        terminator 0x00 0x01
//	bytea                   as text
//	uuid                    its 16 bytes
//	array                   per element 0x02 and the element's value
//	                        encoding, or 0x03 for a NULL element; then 0x01
//	                        (so a prefix sorts first and NULL elements after
//	                        values, as PostgreSQL orders arrays)
//	jsonb                   types.AppendJSONBKey (jsonb's order)
//	interval                16 bytes: the span in microseconds as a signed
//	                        128-bit integer (sign bit flipped), where the span
//	                        is (months*30 + days) * 86400e6 + micros, which is
//	                        PostgreSQL's interval order; then months and days as
//	                        ints. Intervals PostgreSQL calls equal ('1 mon' and
//	                        '30 days') therefore order together but get distinct
//	                        keys, ordered by months then days. The micros are
//	                        recovered from the span on decoding.
//
// Key decoding reproduces the value exactly except that -0 decodes as 0 and
// every NaN as the canonical NaN.
const (
	keyNull    byte = 0x00
	keyNotNull byte = 0x01

	// keyEscape follows an escaped 0x00 byte inside text; keyTerm follows the
	// 0x00 that ends text.
	keyEscape byte = 0xFF
	keyTerm   byte = 0x01
)

const microsPerDay = 24 * 3600 * 1_000_000

// errCorruptKey is returned when a key does not decode.
var errCorruptKey = sqlerr.New(sqlerr.InternalError, "state: corrupt key encoding")

// AppendKey appends the memcomparable encoding of row i of col, a column of
// type t, to buf and returns the extended buffer. It allocates only to grow buf.
func AppendKey(buf []byte, t types.T, col arrow.Array, i int) []byte {
	if col.IsNull(i) {
		return append(buf, keyNull)
	}
	buf = append(buf, keyNotNull)
	switch t.Kind {
	case types.Bool:
		return appendKeyBool(buf, col.(*array.Boolean).Value(i))
	case types.Int16:
		return binary.BigEndian.AppendUint16(buf, uint16(col.(*array.Int16).Value(i))^(1<<15))
	case types.Int32:
		return binary.BigEndian.AppendUint32(buf, uint32(col.(*array.Int32).Value(i))^(1<<31))
	case types.Int64:
		return binary.BigEndian.AppendUint64(buf, uint64(col.(*array.Int64).Value(i))^(1<<63))
	case types.Date:
		return binary.BigEndian.AppendUint32(buf, uint32(col.(*array.Date32).Value(i))^(1<<31))
	case types.Timestamp, types.TimestampTZ:
		return binary.BigEndian.AppendUint64(buf, uint64(col.(*array.Timestamp).Value(i))^(1<<63))
	case types.Float32:
		return binary.BigEndian.AppendUint32(buf, float32Key(col.(*array.Float32).Value(i)))
	case types.Float64:
		return binary.BigEndian.AppendUint64(buf, float64Key(col.(*array.Float64).Value(i)))
	case types.Numeric:
		if t.DynamicNumeric() {
			return appendKeyDynNumeric(buf, col.(*array.Decimal128).Value(i))
		}
		return appendKeyDecimal(buf, col.(*array.Decimal128).Value(i))
	case types.Text:
		return appendKeyString(buf, col.(*array.String).Value(i))
	case types.Interval:
		v := col.(*array.MonthDayNanoInterval).Value(i)
		return appendKeyInterval(buf, v.Months, v.Days, v.Nanoseconds/1000)
	case types.Array:
		return appendKeyArray(buf, t, col.(*array.List), i)
	case types.Bytea:
		return appendKeyString(buf, binaryValue(col, i))
	case types.UUID:
		return append(buf, col.(*array.Binary).Value(i)...)
	case types.JSONB:
		return types.AppendJSONBKey(buf, col.(*array.String).Value(i))
	case types.Struct:
		return appendKeyStruct(buf, t, col.(*array.Struct), i)
	case types.Map:
		return appendKeyArray(buf, types.MapEntriesT(t), col.(*array.List), i)
	}
	panic("state: no key encoding for " + t.String())
}

// AppendKeyDatum appends the memcomparable encoding of d, a value of type t, to
// buf. It produces the same bytes as AppendKey for the same value, so it builds
// lookup keys and scan bounds.
func AppendKeyDatum(buf []byte, t types.T, d types.Datum) []byte {
	if d.Null {
		return append(buf, keyNull)
	}
	buf = append(buf, keyNotNull)
	switch t.Kind {
	case types.Bool:
		return appendKeyBool(buf, d.I != 0)
	case types.Int16:
		return binary.BigEndian.AppendUint16(buf, uint16(int16(d.I))^(1<<15))
	case types.Int32, types.Date:
		return binary.BigEndian.AppendUint32(buf, uint32(int32(d.I))^(1<<31))
	case types.Int64, types.Timestamp, types.TimestampTZ:
		return binary.BigEndian.AppendUint64(buf, uint64(d.I)^(1<<63))
	case types.Float32:
		return binary.BigEndian.AppendUint32(buf, float32Key(float32(d.F)))
	case types.Float64:
		return binary.BigEndian.AppendUint64(buf, float64Key(d.F))
	case types.Numeric:
		if t.DynamicNumeric() {
			return appendKeyDynNumeric(buf, d.Dec)
		}
		return appendKeyDecimal(buf, d.Dec)
	case types.Text:
		return appendKeyString(buf, d.S)
	case types.Interval:
		return appendKeyInterval(buf, d.Ivl.Months, d.Ivl.Days, d.Ivl.Micros)
	case types.Array:
		return appendKeyArrayDatum(buf, t, d)
	case types.Bytea:
		return appendKeyString(buf, d.S)
	case types.UUID:
		return append(buf, d.S...)
	case types.JSONB:
		return types.AppendJSONBKey(buf, d.S)
	case types.Struct:
		return appendKeyStructDatum(buf, t, d)
	case types.Map:
		return appendKeyArrayDatum(buf, types.MapEntriesT(t), d)
	}
	panic("state: no key encoding for " + t.String())
}

// DecodeKey decodes one key column of type t from the front of buf, appends
// it to b (a builder of t's Arrow type) and returns the rest of buf. On error
// nothing is appended.
func DecodeKey(buf []byte, t types.T, b array.Builder) ([]byte, error) {
	if len(buf) == 0 {
		return nil, errCorruptKey
	}
	switch buf[0] {
	case keyNull:
		b.AppendNull()
		return buf[1:], nil
	case keyNotNull:
	default:
		return nil, errCorruptKey
	}
	return decodeKeyValue(buf[1:], t, b)
}

// decodeKeyValue decodes a non-NULL key value of type t (after its marker).
func decodeKeyValue(buf []byte, t types.T, b array.Builder) ([]byte, error) {
	if t.Kind == types.Map {
		t = types.MapEntriesT(t)
	}
	if t.Kind == types.Array {
		return decodeKeyArray(buf, t, b.(*array.ListBuilder))
	}
	if t.Kind == types.JSONB {
		s, rest, err := types.DecodeJSONBKey(buf)
		if err != nil {
			return nil, errCorruptKey
		}
		b.(*array.StringBuilder).Append(s)
		return rest, nil
	}
	if t.Kind == types.Struct {
		return decodeKeyStruct(buf, t, b.(*array.StructBuilder))
	}
	need := keyWidth(t)
	if len(buf) < need {
		return nil, errCorruptKey
	}
	switch t.Kind {
	case types.Bool:
		if buf[0] > 1 {
			return nil, errCorruptKey
		}
		b.(*array.BooleanBuilder).Append(buf[0] == 1)
	case types.Int16:
		b.(*array.Int16Builder).Append(int16(binary.BigEndian.Uint16(buf) ^ (1 << 15)))
	case types.Int32:
		b.(*array.Int32Builder).Append(int32(binary.BigEndian.Uint32(buf) ^ (1 << 31)))
	case types.Int64:
		b.(*array.Int64Builder).Append(int64(binary.BigEndian.Uint64(buf) ^ (1 << 63)))
	case types.Date:
		b.(*array.Date32Builder).Append(arrow.Date32(int32(binary.BigEndian.Uint32(buf) ^ (1 << 31))))
	case types.Timestamp, types.TimestampTZ:
		b.(*array.TimestampBuilder).Append(arrow.Timestamp(int64(binary.BigEndian.Uint64(buf) ^ (1 << 63))))
	case types.Float32:
		b.(*array.Float32Builder).Append(float32FromKey(binary.BigEndian.Uint32(buf)))
	case types.Float64:
		b.(*array.Float64Builder).Append(float64FromKey(binary.BigEndian.Uint64(buf)))
	case types.Numeric:
		if t.DynamicNumeric() {
			b.(*array.Decimal128Builder).Append(dynNumericFromKey(buf))
			break
		}
		b.(*array.Decimal128Builder).Append(decimalFromKey(buf))
	case types.Interval:
		months, days, micros := intervalFromKey(buf)
		b.(*array.MonthDayNanoIntervalBuilder).Append(arrow.MonthDayNanoInterval{
			Months: months, Days: days, Nanoseconds: micros * 1000})
	case types.Text:
		s, rest, err := decodeKeyString(buf)
		if err != nil {
			return nil, err
		}
		b.(*array.StringBuilder).BinaryBuilder.Append(s)
		return rest, nil
	case types.Bytea:
		s, rest, err := decodeKeyString(buf)
		if err != nil {
			return nil, err
		}
		b.(*array.BinaryBuilder).Append(s)
		return rest, nil
	case types.UUID:
		b.(*array.BinaryBuilder).Append(buf[:need])
	default:
		panic("state: no key encoding for " + t.String())
	}
	return buf[need:], nil
}

// DecodeKeyDatum decodes one key column of type t from the front of buf into a
// datum and returns the rest of buf. It is for scalar use off the hot path.
func DecodeKeyDatum(buf []byte, t types.T) (types.Datum, []byte, error) {
	if len(buf) == 0 {
		return types.Datum{}, nil, errCorruptKey
	}
	switch buf[0] {
	case keyNull:
		return types.Null, buf[1:], nil
	case keyNotNull:
	default:
		return types.Datum{}, nil, errCorruptKey
	}
	return decodeKeyValueDatum(buf[1:], t)
}

// decodeKeyValueDatum is decodeKeyValue into a datum.
func decodeKeyValueDatum(buf []byte, t types.T) (types.Datum, []byte, error) {
	if t.Kind == types.Map {
		t = types.MapEntriesT(t)
	}
	if t.Kind == types.Array {
		return decodeKeyArrayDatum(buf, t)
	}
	if t.Kind == types.JSONB {
		s, rest, err := types.DecodeJSONBKey(buf)
		if err != nil {
			return types.Datum{}, nil, errCorruptKey
		}
		return types.DText(s), rest, nil
	}
	if t.Kind == types.Struct {
		return decodeKeyStructDatum(buf, t)
	}
	need := keyWidth(t)
	if len(buf) < need {
		return types.Datum{}, nil, errCorruptKey
	}
	var d types.Datum
	switch t.Kind {
	case types.Bool:
		if buf[0] > 1 {
			return types.Datum{}, nil, errCorruptKey
		}
		d = types.DBool(buf[0] == 1)
	case types.Int16:
		d = types.DInt(int64(int16(binary.BigEndian.Uint16(buf) ^ (1 << 15))))
	case types.Int32, types.Date:
		d = types.DInt(int64(int32(binary.BigEndian.Uint32(buf) ^ (1 << 31))))
	case types.Int64, types.Timestamp, types.TimestampTZ:
		d = types.DInt(int64(binary.BigEndian.Uint64(buf) ^ (1 << 63)))
	case types.Float32:
		d = types.DFloat(float64(float32FromKey(binary.BigEndian.Uint32(buf))))
	case types.Float64:
		d = types.DFloat(float64FromKey(binary.BigEndian.Uint64(buf)))
	case types.Numeric:
		if t.DynamicNumeric() {
			d = types.DNumeric(dynNumericFromKey(buf))
			break
		}
		d = types.DNumeric(decimalFromKey(buf))
	case types.Interval:
		months, days, micros := intervalFromKey(buf)
		d = types.DInterval(types.IntervalValue{Months: months, Days: days, Micros: micros})
	case types.Text:
		s, rest, err := decodeKeyString(buf)
		if err != nil {
			return types.Datum{}, nil, err
		}
		return types.DText(string(s)), rest, nil
	case types.Bytea:
		s, rest, err := decodeKeyString(buf)
		if err != nil {
			return types.Datum{}, nil, err
		}
		return types.DBytes(string(s)), rest, nil
	case types.UUID:
		d = types.DBytes(string(buf[:need]))
	default:
		panic("state: no key encoding for " + t.String())
	}
	return d, buf[need:], nil
}

// PrefixEnd returns the smallest key greater than every key that starts with
// prefix: the exclusive upper bound of a prefix scan. It returns nil (no upper
// bound) when prefix is empty or all 0xFF bytes. The result is a new slice.
func PrefixEnd(prefix []byte) []byte {
	return appendPrefixEnd(nil, prefix)
}

// appendPrefixEnd appends PrefixEnd(prefix) to dst; nothing if it is nil.
func appendPrefixEnd(dst, prefix []byte) []byte {
	for i := len(prefix) - 1; i >= 0; i-- {
		if prefix[i] != 0xFF {
			dst = append(dst, prefix[:i+1]...)
			dst[len(dst)-1]++
			return dst
		}
	}
	return dst
}

// AppendPrefixEnd appends PrefixEnd(prefix) to dst, for callers that reuse a
// buffer. Like PrefixEnd it returns nil (no upper bound) when every byte of
// prefix is 0xFF.
func AppendPrefixEnd(dst, prefix []byte) []byte {
	out := appendPrefixEnd(dst, prefix)
	if len(out) == len(dst) {
		return nil
	}
	return out
}

// keyWidth is the fixed width of a non-NULL key value of type t after the
// marker byte, or 0 for text.
func keyWidth(t types.T) int {
	switch t.Kind {
	case types.Bool:
		return 1
	case types.Int16:
		return 2
	case types.Int32, types.Date, types.Float32:
		return 4
	case types.Int64, types.Timestamp, types.TimestampTZ, types.Float64:
		return 8
	case types.Numeric:
		return 16
	case types.Interval:
		return 24
	case types.UUID:
		return types.UUIDLen
	}
	return 0
}

func appendKeyBool(buf []byte, v bool) []byte {
	if v {
		return append(buf, 1)
	}
	return append(buf, 0)
}

func float32Key(f float32) uint32 {
	if f != f {
		return math.MaxUint32
	}
	if f == 0 {
		f = 0 // -0 becomes +0
	}
	u := math.Float32bits(f)
	if u>>31 != 0 {
		return ^u
	}
	return u | 1<<31
}

// float32FromKey inverts float32Key; the all-ones NaN key decodes to a NaN.
func float32FromKey(u uint32) float32 {
	if u>>31 != 0 {
		return math.Float32frombits(u &^ (1 << 31))
	}
	return math.Float32frombits(^u)
}

func float64Key(f float64) uint64 {
	if f != f {
		return math.MaxUint64
	}
	if f == 0 {
		f = 0
	}
	u := math.Float64bits(f)
	if u>>63 != 0 {
		return ^u
	}
	return u | 1<<63
}

func float64FromKey(u uint64) float64 {
	if u>>63 != 0 {
		return math.Float64frombits(u &^ (1 << 63))
	}
	return math.Float64frombits(^u)
}

func appendKeyDecimal(buf []byte, n decimal128.Num) []byte {
	buf = binary.BigEndian.AppendUint64(buf, uint64(n.HighBits())^(1<<63))
	return binary.BigEndian.AppendUint64(buf, n.LowBits())
}

func decimalFromKey(buf []byte) decimal128.Num {
	hi := int64(binary.BigEndian.Uint64(buf) ^ (1 << 63))
	return decimal128.New(hi, binary.BigEndian.Uint64(buf[8:]))
}

func appendKeyString(buf []byte, s string) []byte {
	for {
		i := strings.IndexByte(s, 0)
		if i < 0 {
			buf = append(buf, s...)
			break
		}
		buf = append(buf, s[:i]...)
		buf = append(buf, 0x00, keyEscape)
		s = s[i+1:]
	}
	return append(buf, 0x00, keyTerm)
}

// decodeKeyString decodes an escaped text key from the front of buf. The
// returned bytes alias buf unless the text contains escaped zero bytes.
func decodeKeyString(buf []byte) (s, rest []byte, err error) {
	i := bytes.IndexByte(buf, 0)
	if i < 0 || i+1 >= len(buf) {
		return nil, nil, errCorruptKey
	}
	if buf[i+1] == keyTerm {
		return buf[:i], buf[i+2:], nil
	}
	// Slow path: the text contains zero bytes.
	var out []byte
	for {
		if i < 0 || i+1 >= len(buf) {
			return nil, nil, errCorruptKey
		}
		out = append(out, buf[:i]...)
		switch buf[i+1] {
		case keyTerm:
			return out, buf[i+2:], nil
		case keyEscape:
			out = append(out, 0)
			buf = buf[i+2:]
			i = bytes.IndexByte(buf, 0)
		default:
			return nil, nil, errCorruptKey
		}
	}
}

// intervalSpan returns (months*30 + days) * microsPerDay + micros as a signed
// 128-bit integer.
func intervalSpan(months, days int32, micros int64) (hi int64, lo uint64) {
	d := int64(months)*30 + int64(days)
	hi, lo = mul64(d, microsPerDay)
	var carry uint64
	lo, carry = bits.Add64(lo, uint64(micros), 0)
	hi += int64(carry)
	if micros < 0 {
		hi--
	}
	return hi, lo
}

// mul64 returns the exact signed 128-bit product a*b.
func mul64(a, b int64) (hi int64, lo uint64) {
	h, l := bits.Mul64(uint64(a), uint64(b))
	hi = int64(h)
	if a < 0 {
		hi -= b
	}
	if b < 0 {
		hi -= a
	}
	return hi, l
}

func appendKeyInterval(buf []byte, months, days int32, micros int64) []byte {
	hi, lo := intervalSpan(months, days, micros)
	buf = binary.BigEndian.AppendUint64(buf, uint64(hi)^(1<<63))
	buf = binary.BigEndian.AppendUint64(buf, lo)
	buf = binary.BigEndian.AppendUint32(buf, uint32(months)^(1<<31))
	return binary.BigEndian.AppendUint32(buf, uint32(days)^(1<<31))
}

func intervalFromKey(buf []byte) (months, days int32, micros int64) {
	lo := binary.BigEndian.Uint64(buf[8:])
	months = int32(binary.BigEndian.Uint32(buf[16:]) ^ (1 << 31))
	days = int32(binary.BigEndian.Uint32(buf[20:]) ^ (1 << 31))
	// micros = span - (months*30+days)*microsPerDay; the difference fits in 64
	// bits, so the low words suffice.
	_, dlo := mul64(int64(months)*30+int64(days), microsPerDay)
	return months, days, int64(lo - dlo)
}

// KeyEncoder encodes the multi-column keys of whole batches: one typed loop
// per column, the keys of all rows laid out in one buffer. It reuses its
// memory from batch to batch and is not safe for concurrent use. Its keys are
// byte-for-byte those of calling AppendKey for each key column of a row.
type KeyEncoder struct {
	types []types.T
	buf   []byte
	offs  []int // key i is buf[offs[i]:offs[i+1]]
	pos   []int // per-row write cursor
}

// NewKeyEncoder returns an encoder for keys made of columns of types ts.
func NewKeyEncoder(ts []types.T) *KeyEncoder {
	return &KeyEncoder{types: append([]types.T(nil), ts...)}
}

// Encode encodes the key of every row of cols (one column per type, all of
// the same length), replacing the keys of the previous call.
func (e *KeyEncoder) Encode(cols []arrow.Array) {
	if len(cols) != len(e.types) {
		panic("state: KeyEncoder.Encode: wrong number of columns")
	}
	n := 0
	if len(cols) > 0 {
		n = cols[0].Len()
	}
	e.pos = resizeInts(e.pos, n)
	e.offs = resizeInts(e.offs, n+1)
	size := e.pos // first used for the key sizes
	clear(size)
	for j, col := range cols {
		addKeySizes(size, e.types[j], col)
	}
	total := 0
	for i, sz := range size {
		e.offs[i] = total
		size[i] = total // now the write cursor
		total += sz
	}
	e.offs[n] = total
	if cap(e.buf) < total {
		e.buf = make([]byte, total)
	}
	e.buf = e.buf[:total]
	for j, col := range cols {
		e.encodeColumn(e.types[j], col)
	}
}

// Len returns the number of keys of the last Encode.
func (e *KeyEncoder) Len() int { return len(e.offs) - 1 }

// Key returns the key of row i. It is valid until the next Encode; the caller
// must not modify it.
func (e *KeyEncoder) Key(i int) []byte {
	return e.buf[e.offs[i]:e.offs[i+1]:e.offs[i+1]]
}

func resizeInts(s []int, n int) []int {
	if cap(s) < n {
		return make([]int, n)
	}
	return s[:n]
}

// addKeySizes adds the encoded size of each row of col to size.
func addKeySizes(size []int, t types.T, col arrow.Array) {
	hasNulls := col.NullN() > 0
	if t.Kind != types.Text && t.Kind != types.Bytea {
		w := 1 + keyWidth(t)
		for i := range size {
			if hasNulls && col.IsNull(i) {
				size[i]++
			} else {
				size[i] += w
			}
		}
		return
	}
	a := col.(varBytes)
	offs := a.ValueOffsets()
	data := a.ValueBytes()
	escapes := bytes.IndexByte(data, 0) >= 0
	base := int(offs[0])
	for i := range size {
		if hasNulls && a.IsNull(i) {
			size[i]++
			continue
		}
		v := data[int(offs[i])-base : int(offs[i+1])-base]
		size[i] += 1 + len(v) + 2
		if escapes {
			size[i] += bytes.Count(v, []byte{0})
		}
	}
}

// encodeColumn writes the encoding of col at each row's cursor and advances
// the cursors.
func (e *KeyEncoder) encodeColumn(t types.T, col arrow.Array) {
	switch t.Kind {
	case types.Bool:
		a := col.(*array.Boolean)
		e.putFixed(col, 1, func(dst []byte, i int) {
			dst[0] = 0
			if a.Value(i) {
				dst[0] = 1
			}
		})
	case types.Int16:
		vals := col.(*array.Int16).Int16Values()
		e.putFixed(col, 2, func(dst []byte, i int) {
			binary.BigEndian.PutUint16(dst, uint16(vals[i])^(1<<15))
		})
	case types.Int32:
		vals := col.(*array.Int32).Int32Values()
		e.putFixed(col, 4, func(dst []byte, i int) {
			binary.BigEndian.PutUint32(dst, uint32(vals[i])^(1<<31))
		})
	case types.Int64:
		vals := col.(*array.Int64).Int64Values()
		e.putFixed(col, 8, func(dst []byte, i int) {
			binary.BigEndian.PutUint64(dst, uint64(vals[i])^(1<<63))
		})
	case types.Date:
		vals := col.(*array.Date32).Date32Values()
		e.putFixed(col, 4, func(dst []byte, i int) {
			binary.BigEndian.PutUint32(dst, uint32(vals[i])^(1<<31))
		})
	case types.Timestamp, types.TimestampTZ:
		vals := col.(*array.Timestamp).TimestampValues()
		e.putFixed(col, 8, func(dst []byte, i int) {
			binary.BigEndian.PutUint64(dst, uint64(vals[i])^(1<<63))
		})
	case types.Float32:
		vals := col.(*array.Float32).Float32Values()
		e.putFixed(col, 4, func(dst []byte, i int) {
			binary.BigEndian.PutUint32(dst, float32Key(vals[i]))
		})
	case types.Float64:
		vals := col.(*array.Float64).Float64Values()
		e.putFixed(col, 8, func(dst []byte, i int) {
			binary.BigEndian.PutUint64(dst, float64Key(vals[i]))
		})
	case types.Numeric:
		vals := col.(*array.Decimal128).Values()
		if t.DynamicNumeric() {
			e.putFixed(col, 16, func(dst []byte, i int) { putKeyDynNumeric(dst, vals[i]) })
			break
		}
		e.putFixed(col, 16, func(dst []byte, i int) {
			binary.BigEndian.PutUint64(dst, uint64(vals[i].HighBits())^(1<<63))
			binary.BigEndian.PutUint64(dst[8:], vals[i].LowBits())
		})
	case types.Interval:
		vals := col.(*array.MonthDayNanoInterval).MonthDayNanoIntervalValues()
		e.putFixed(col, 24, func(dst []byte, i int) {
			v := vals[i]
			appendKeyInterval(dst[:0], v.Months, v.Days, v.Nanoseconds/1000)
		})
	case types.UUID:
		a := col.(*array.Binary)
		e.putFixed(col, types.UUIDLen, func(dst []byte, i int) { copy(dst, a.Value(i)) })
	case types.Text, types.Bytea:
		a := col.(varBytes)
		hasNulls := col.NullN() > 0
		offs := a.ValueOffsets()
		data := a.ValueBytes()
		base := int(offs[0])
		escapes := bytes.IndexByte(data, 0) >= 0
		for i, p := range e.pos {
			if hasNulls && a.IsNull(i) {
				e.buf[p] = keyNull
				e.pos[i] = p + 1
				continue
			}
			e.buf[p] = keyNotNull
			p++
			v := data[int(offs[i])-base : int(offs[i+1])-base]
			if escapes {
				// The buffer was sized exactly, so appending in place
				// never reallocates.
				p += len(appendKeyString(e.buf[p:p], unsafe.String(unsafe.SliceData(v), len(v))))
			} else {
				p += copy(e.buf[p:], v)
				e.buf[p], e.buf[p+1] = 0x00, keyTerm
				p += 2
			}
			e.pos[i] = p
		}
	default:
		panic("state: no key encoding for " + t.String())
	}
}

// putFixed writes a fixed-width column: the marker, then put's w bytes.
func (e *KeyEncoder) putFixed(col arrow.Array, w int, put func(dst []byte, i int)) {
	hasNulls := col.NullN() > 0
	for i, p := range e.pos {
		if hasNulls && col.IsNull(i) {
			e.buf[p] = keyNull
			e.pos[i] = p + 1
			continue
		}
		e.buf[p] = keyNotNull
		put(e.buf[p+1:p+1+w], i)
		e.pos[i] = p + 1 + w
	}
}
