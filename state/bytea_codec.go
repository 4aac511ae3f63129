package state

import (
	"encoding/binary"
	"unsafe"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/streamsql/streamsql/types"
)

// Codecs of bytea and uuid, both Arrow Binary columns. In keys a bytea is
// encoded as text is (escaped, terminated) and a uuid as its 16 bytes; in rows
// a bytea is its length (uvarint) and bytes, a uuid its 16 bytes.

// varBytes is a column of variable-length values: *array.String or
// *array.Binary.
type varBytes interface {
	arrow.Array
	ValueOffsets() []int32
	ValueBytes() []byte
}

// binaryValue is row i of a Binary column, aliasing the column's data.
func binaryValue(col arrow.Array, i int) string {
	b := col.(*array.Binary).Value(i)
	return unsafe.String(unsafe.SliceData(b), len(b))
}

func byteaRowFuncs(t types.T) (colEncoder, colDecoder) {
	if t.Kind == types.UUID {
		return encUUID, decUUID
	}
	return encBytea, decBytea
}

func encBytea(buf []byte, col arrow.Array, i int) []byte {
	b := col.(*array.Binary).Value(i)
	buf = binary.AppendUvarint(buf, uint64(len(b)))
	return append(buf, b...)
}

func decBytea(buf []byte, b array.Builder) ([]byte, error) {
	s, rest, err := readString(buf)
	if err != nil {
		return nil, err
	}
	b.(*array.BinaryBuilder).Append(s)
	return rest, nil
}

func encUUID(buf []byte, col arrow.Array, i int) []byte {
	return append(buf, col.(*array.Binary).Value(i)...)
}

func decUUID(buf []byte, b array.Builder) ([]byte, error) {
	if len(buf) < types.UUIDLen {
		return nil, errCorruptRow
	}
	b.(*array.BinaryBuilder).Append(buf[:types.UUIDLen])
	return buf[types.UUIDLen:], nil
}

// appendByteaDatumValue is the row encoding of a non-NULL bytea or uuid datum.
func appendByteaDatumValue(buf []byte, t types.T, d types.Datum) []byte {
	if t.Kind == types.Bytea {
		buf = binary.AppendUvarint(buf, uint64(len(d.S)))
	}
	return append(buf, d.S...)
}

// decodeByteaDatumValue decodes a non-NULL bytea or uuid row value.
func decodeByteaDatumValue(buf []byte, t types.T) (types.Datum, []byte, error) {
	if t.Kind == types.Bytea {
		s, rest, err := readString(buf)
		return types.DBytes(string(s)), rest, err
	}
	if len(buf) < types.UUIDLen {
		return types.Datum{}, nil, errCorruptRow
	}
	return types.DBytes(string(buf[:types.UUIDLen])), buf[types.UUIDLen:], nil
}
