package state

import (
	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/streamsql/streamsql/types"
)

// Structs and maps in rows and keys.
//
// In a row a struct is a bitmap of its NULL fields, then each non-NULL
// field encoded as a column of its type. In a key each field is 0x02 and
// its value encoding, or 0x03 if NULL (so NULL fields sort after values,
// as PostgreSQL orders composite values); the field count is fixed by the
// type, so nothing ends the struct. A map is encoded as the array of its
// entries (types.MapEntriesT).

// structRowFuncs returns the row encoder and decoder of struct type t.
func structRowFuncs(t types.T) (colEncoder, colDecoder) {
	n := t.Fields.Len()
	encs, decs := make([]colEncoder, n), make([]colDecoder, n)
	for j := range n {
		encs[j], decs[j] = rowFuncs(t.Fields.At(j).Type)
	}
	encode := func(buf []byte, col arrow.Array, i int) []byte {
		s := col.(*array.Struct)
		at := len(buf)
		buf = append(buf, make([]byte, (n+7)/8)...)
		for j := range n {
			if s.Field(j).IsNull(i) {
				buf[at+j>>3] |= 1 << (j & 7)
			}
		}
		for j := range n {
			if f := s.Field(j); !f.IsNull(i) {
				buf = encs[j](buf, f, i)
			}
		}
		return buf
	}
	decode := func(buf []byte, b array.Builder) ([]byte, error) {
		if len(buf) < (n+7)/8 {
			return nil, errCorruptRow
		}
		nulls, rest := buf[:(n+7)/8], buf[(n+7)/8:]
		sb := b.(*array.StructBuilder)
		sb.Append(true)
		var err error
		for j := range n {
			fb := sb.FieldBuilder(j)
			if nulls[j>>3]&(1<<(j&7)) != 0 {
				fb.AppendNull()
				continue
			}
			if rest, err = decs[j](rest, fb); err != nil {
				return nil, err
			}
		}
		return rest, nil
	}
	return encode, decode
}

func appendStructDatumValue(buf []byte, t types.T, d types.Datum) []byte {
	n := len(d.Arr)
	at := len(buf)
	buf = append(buf, make([]byte, (n+7)/8)...)
	for j, f := range d.Arr {
		if f.Null {
			buf[at+j>>3] |= 1 << (j & 7)
		}
	}
	for j, f := range d.Arr {
		if !f.Null {
			buf = appendDatumValue(buf, t.Fields.At(j).Type, f)
		}
	}
	return buf
}

func decodeStructDatumValue(buf []byte, t types.T) (types.Datum, []byte, error) {
	n := t.Fields.Len()
	if len(buf) < (n+7)/8 {
		return types.Datum{}, nil, errCorruptRow
	}
	nulls, rest := buf[:(n+7)/8], buf[(n+7)/8:]
	fields := make([]types.Datum, n)
	var err error
	for j := range fields {
		if nulls[j>>3]&(1<<(j&7)) != 0 {
			fields[j] = types.Null
			continue
		}
		if fields[j], rest, err = decodeDatumValue(rest, t.Fields.At(j).Type); err != nil {
			return types.Datum{}, nil, err
		}
	}
	return types.DStruct(fields), rest, nil
}

// appendKeyStruct appends the key encoding of struct row i of col (after
// its marker).
func appendKeyStruct(buf []byte, t types.T, col *array.Struct, i int) []byte {
	for j := range t.Fields.Len() {
		at := len(buf)
		buf = AppendKey(buf, t.Fields.At(j).Type, col.Field(j), i)
		buf[at] = arrayElemMarker(buf[at])
	}
	return buf
}

func appendKeyStructDatum(buf []byte, t types.T, d types.Datum) []byte {
	for j, f := range d.Arr {
		at := len(buf)
		buf = AppendKeyDatum(buf, t.Fields.At(j).Type, f)
		buf[at] = arrayElemMarker(buf[at])
	}
	return buf
}

func decodeKeyStruct(buf []byte, t types.T, b *array.StructBuilder) ([]byte, error) {
	b.Append(true)
	for j := range t.Fields.Len() {
		if len(buf) == 0 {
			return nil, errCorruptKey
		}
		var err error
		switch buf[0] {
		case keyArrayNull:
			b.FieldBuilder(j).AppendNull()
			buf = buf[1:]
		case keyArrayElem:
			if buf, err = decodeKeyValue(buf[1:], t.Fields.At(j).Type, b.FieldBuilder(j)); err != nil {
				return nil, err
			}
		default:
			return nil, errCorruptKey
		}
	}
	return buf, nil
}

func decodeKeyStructDatum(buf []byte, t types.T) (types.Datum, []byte, error) {
	fields := make([]types.Datum, t.Fields.Len())
	for j := range fields {
		if len(buf) == 0 {
			return types.Datum{}, nil, errCorruptKey
		}
		switch buf[0] {
		case keyArrayNull:
			fields[j] = types.Null
			buf = buf[1:]
		case keyArrayElem:
			d, rest, err := decodeKeyValueDatum(buf[1:], t.Fields.At(j).Type)
			if err != nil {
				return types.Datum{}, nil, err
			}
			fields[j], buf = d, rest
		default:
			return types.Datum{}, nil, errCorruptKey
		}
	}
	return types.DStruct(fields), buf, nil
}
