package state

import (
	"encoding/binary"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/streamsql/streamsql/types"
)

// Arrays in rows and keys.
//
// In a row an array is its element count (uvarint), a bitmap of its NULL
// elements, then each non-NULL element encoded as a column of the element
// type. In a key (see keycodec.go) each element is 0x02 and its value
// encoding, or 0x03 if NULL, and 0x01 ends the array.

const (
	keyArrayEnd  byte = 0x01
	keyArrayElem byte = 0x02
	keyArrayNull byte = 0x03
)

// arrayRowFuncs returns the row encoder and decoder of array type t.
func arrayRowFuncs(t types.T) (colEncoder, colDecoder) {
	enc, dec := rowFuncs(t.ElemT())
	encode := func(buf []byte, col arrow.Array, i int) []byte {
		l := col.(*array.List)
		start, end := l.ValueOffsets(i)
		vals := l.ListValues()
		n := int(end - start)
		buf = binary.AppendUvarint(buf, uint64(n))
		at := len(buf)
		buf = append(buf, make([]byte, (n+7)/8)...)
		for j := 0; j < n; j++ {
			if vals.IsNull(int(start) + j) {
				buf[at+j>>3] |= 1 << (j & 7)
			}
		}
		for j := int(start); j < int(end); j++ {
			if !vals.IsNull(j) {
				buf = enc(buf, vals, j)
			}
		}
		return buf
	}
	decode := func(buf []byte, b array.Builder) ([]byte, error) {
		n, nulls, rest, err := readArrayHeader(buf)
		if err != nil {
			return nil, err
		}
		lb := b.(*array.ListBuilder)
		lb.Append(true)
		vb := lb.ValueBuilder()
		for j := 0; j < n; j++ {
			if nulls[j>>3]&(1<<(j&7)) != 0 {
				vb.AppendNull()
				continue
			}
			if rest, err = dec(rest, vb); err != nil {
				return nil, err
			}
		}
		return rest, nil
	}
	return encode, decode
}

// readArrayHeader reads an array's element count and NULL bitmap.
func readArrayHeader(buf []byte) (n int, nulls, rest []byte, err error) {
	c, k := binary.Uvarint(buf)
	if k <= 0 || c > uint64(len(buf))*8 {
		return 0, nil, nil, errCorruptRow
	}
	n, buf = int(c), buf[k:]
	if len(buf) < (n+7)/8 {
		return 0, nil, nil, errCorruptRow
	}
	return n, buf[:(n+7)/8], buf[(n+7)/8:], nil
}

func appendArrayDatumValue(buf []byte, t types.T, d types.Datum) []byte {
	et := t.ElemT()
	n := len(d.Arr)
	buf = binary.AppendUvarint(buf, uint64(n))
	at := len(buf)
	buf = append(buf, make([]byte, (n+7)/8)...)
	for j, e := range d.Arr {
		if e.Null {
			buf[at+j>>3] |= 1 << (j & 7)
		}
	}
	for _, e := range d.Arr {
		if !e.Null {
			buf = appendDatumValue(buf, et, e)
		}
	}
	return buf
}

func decodeArrayDatumValue(buf []byte, t types.T) (types.Datum, []byte, error) {
	n, nulls, rest, err := readArrayHeader(buf)
	if err != nil {
		return types.Datum{}, nil, err
	}
	et := t.ElemT()
	elems := make([]types.Datum, n)
	for j := range elems {
		if nulls[j>>3]&(1<<(j&7)) != 0 {
			elems[j] = types.Null
			continue
		}
		if elems[j], rest, err = decodeDatumValue(rest, et); err != nil {
			return types.Datum{}, nil, err
		}
	}
	return types.DArray(elems), rest, nil
}

// appendKeyArray appends the key encoding of array row i of col (after
// its marker).
func appendKeyArray(buf []byte, t types.T, col *array.List, i int) []byte {
	start, end := col.ValueOffsets(i)
	vals, et := col.ListValues(), t.ElemT()
	for j := int(start); j < int(end); j++ {
		at := len(buf)
		buf = AppendKey(buf, et, vals, j)
		buf[at] = arrayElemMarker(buf[at])
	}
	return append(buf, keyArrayEnd)
}

func appendKeyArrayDatum(buf []byte, t types.T, d types.Datum) []byte {
	et := t.ElemT()
	for _, e := range d.Arr {
		at := len(buf)
		buf = AppendKeyDatum(buf, et, e)
		buf[at] = arrayElemMarker(buf[at])
	}
	return append(buf, keyArrayEnd)
}

// arrayElemMarker maps a column marker to an array element's.
func arrayElemMarker(m byte) byte {
	if m == keyNull {
		return keyArrayNull
	}
	return keyArrayElem
}

func decodeKeyArray(buf []byte, t types.T, b *array.ListBuilder) ([]byte, error) {
	et := t.ElemT()
	b.Append(true)
	vb := b.ValueBuilder()
	for {
		if len(buf) == 0 {
			return nil, errCorruptKey
		}
		var err error
		switch buf[0] {
		case keyArrayEnd:
			return buf[1:], nil
		case keyArrayNull:
			vb.AppendNull()
			buf = buf[1:]
		case keyArrayElem:
			if buf, err = decodeKeyValue(buf[1:], et, vb); err != nil {
				return nil, err
			}
		default:
			return nil, errCorruptKey
		}
	}
}

func decodeKeyArrayDatum(buf []byte, t types.T) (types.Datum, []byte, error) {
	et := t.ElemT()
	elems := []types.Datum{}
	for {
		if len(buf) == 0 {
			return types.Datum{}, nil, errCorruptKey
		}
		switch buf[0] {
		case keyArrayEnd:
			return types.DArray(elems), buf[1:], nil
		case keyArrayNull:
			elems = append(elems, types.Null)
			buf = buf[1:]
		case keyArrayElem:
			d, rest, err := decodeKeyValueDatum(buf[1:], et)
			if err != nil {
				return types.Datum{}, nil, err
			}
			elems, buf = append(elems, d), rest
		default:
			return types.Datum{}, nil, errCorruptKey
		}
	}
}
