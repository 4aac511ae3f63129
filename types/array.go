package types

import (
	"encoding/binary"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/streamsql/streamsql/sqlerr"
)

// Arrays.
//
// An array type is T{Kind: Array, Elem: k} with the element's type modifiers
// (numeric precision and scale, varchar width) in the T's own fields, so
// that T stays a small comparable value: ElemT returns the element type.
// Elements are of any scalar kind; arrays are one-dimensional, with lower
// bound 1 (multi-dimensional input is refused with 0A000). An array column
// is an Arrow List of the element's Arrow type, elements nullable; an array
// Datum holds its elements in Arr.

// ArrayOf returns the type of arrays of elem.
func ArrayOf(elem T) T {
	t := elem
	t.Elem, t.Kind = elem.Kind, Array
	return t
}

// ElemT returns the element type of an array type.
func (t T) ElemT() T {
	e := t
	e.Kind, e.Elem = t.Elem, Unknown
	return e
}

// DArray returns an array datum of the given elements.
func DArray(elems []Datum) Datum {
	if elems == nil {
		elems = []Datum{}
	}
	return Datum{Arr: elems}
}

// arrayOIDs are the OIDs of the array types (pg_type.typarray), by
// element kind: text[] for text elements (character varying[] is
// oidVarcharArray, see arrayOID).
var arrayOIDs = map[Kind]uint32{
	Bool: 1000, Int16: 1005, Int32: 1007, Int64: 1016, Numeric: 1231,
	Float32: 1021, Float64: 1022, Text: 1009, Date: 1182,
	Timestamp: 1115, TimestampTZ: 1185, Interval: 1187, Unknown: 1009,
	JSONB:  3807,
	Struct: OIDRecordArray, Map: 1009,
}

// oidVarcharArray is character varying[], oidBpcharArray character[].
const (
	oidVarcharArray = 1015
	oidBpcharArray  = 1014
)

// arrayOID returns the OID of array type t: an array of text is text[],
// one of character varying (varchar, varchar(n)) character varying[], as
// its elements are described text or character varying.
func arrayOID(t T) uint32 {
	if t.Elem == Text && t.ElemT().OID() == OIDVarchar {
		return oidVarcharArray
	}
	if t.Elem == Text && t.Bpchar {
		return oidBpcharArray
	}
	return arrayOIDs[t.Elem]
}

// arrayString is the PostgreSQL spelling of an array type: integer[].
func (t T) arrayString() string { return t.ElemT().String() + "[]" }

// AppendArrayText appends PostgreSQL's text output of array d of type t:
// {1,2,NULL}, with elements quoted where they would not read back.
func AppendArrayText(buf []byte, t T, d Datum) []byte {
	et := t.ElemT()
	buf = append(buf, '{')
	var tmp []byte
	for i, e := range d.Arr {
		if i > 0 {
			buf = append(buf, ',')
		}
		if e.Null {
			buf = append(buf, "NULL"...)
			continue
		}
		tmp = AppendText(tmp[:0], et, e)
		buf = appendArrayElem(buf, tmp)
	}
	return append(buf, '}')
}

// appendArrayElem appends an element's text, quoted when empty, "NULL"
// (any case) or holding a character array syntax gives meaning to.
func appendArrayElem(buf, s []byte) []byte {
	quote := len(s) == 0 || strings.EqualFold(string(s), "NULL")
	for _, c := range s {
		switch c {
		case '{', '}', ',', '"', '\\', ' ', '\t', '\n', '\r', '\v', '\f':
			quote = true
		}
	}
	if !quote {
		return append(buf, s...)
	}
	buf = append(buf, '"')
	for _, c := range s {
		if c == '"' || c == '\\' {
			buf = append(buf, '\\')
		}
		buf = append(buf, c)
	}
	return append(buf, '"')
}

// parseArray parses PostgreSQL's array input '{1,2,NULL}' for type t.
func parseArray(t T, s string) (Datum, error) {
	bad := func(detail string) error {
		return sqlerr.New(sqlerr.InvalidTextRepresentation, "malformed array literal: %s", parseQuote(s)).WithDetail(detail)
	}
	p := strings.TrimSpace(s)
	if len(p) > 0 && p[0] == '[' {
		return Null, sqlerr.Unsupported("array literals with explicit bounds")
	}
	if len(p) < 2 || p[0] != '{' {
		return Null, bad(`Array value must start with "{" or dimension information.`)
	}
	et := t.ElemT()
	elems := []Datum{}
	i := 1
	skip := func() {
		for i < len(p) && parseIsSpace(p[i]) {
			i++
		}
	}
	skip()
	if i < len(p) && p[i] == '}' {
		if strings.TrimSpace(p[i+1:]) != "" {
			return Null, bad("Junk after closing right brace.")
		}
		return DArray(elems), nil
	}
	for {
		skip()
		if i >= len(p) {
			return Null, bad("Unexpected end of input.")
		}
		if p[i] == '{' {
			return Null, sqlerr.Unsupported("multidimensional arrays")
		}
		var sb strings.Builder
		quoted := false
		for i < len(p) {
			c := p[i]
			if c == '"' {
				quoted = true
				i++
				for i < len(p) && p[i] != '"' {
					if p[i] == '\\' && i+1 < len(p) {
						i++
					}
					sb.WriteByte(p[i])
					i++
				}
				if i >= len(p) {
					return Null, bad("Unexpected end of input.")
				}
				i++
				continue
			}
			if c == ',' || c == '}' {
				break
			}
			if c == '\\' && i+1 < len(p) {
				i++
				c = p[i]
			} else if c == '{' {
				return Null, bad(`Unexpected "{" character.`)
			}
			sb.WriteByte(c)
			i++
		}
		if i >= len(p) {
			return Null, bad("Unexpected end of input.")
		}
		raw := sb.String()
		if !quoted {
			raw = strings.TrimRight(raw, " \t\n\r\v\f")
			if raw == "" {
				return Null, bad("Unexpected \",\" character.")
			}
		}
		if !quoted && strings.EqualFold(raw, "NULL") {
			elems = append(elems, Null)
		} else {
			d, err := ParseText(et, raw)
			if err != nil {
				return Null, err
			}
			elems = append(elems, d)
		}
		if p[i] == '}' {
			if strings.TrimSpace(p[i+1:]) != "" {
				return Null, bad("Junk after closing right brace.")
			}
			return DArray(elems), nil
		}
		i++ // ','
	}
}

// CompareArrays orders two arrays of element type et as PostgreSQL does:
// element by element (a NULL element above every value), then the shorter
// first.
func CompareArrays(et T, a, b []Datum) int {
	for i := 0; i < len(a) && i < len(b); i++ {
		x, y := a[i], b[i]
		switch {
		case x.Null && y.Null:
			continue
		case x.Null:
			return 1
		case y.Null:
			return -1
		}
		if c := Compare(et, x, y); c != 0 {
			return c
		}
	}
	return cmpOrdered(int64(len(a)), int64(len(b)))
}

// listDatum reads row i of a List column of array type t.
func listDatum(t T, arr arrow.Array, i int) Datum {
	l := arr.(*array.List)
	start, end := l.ValueOffsets(i)
	vals := l.ListValues()
	et := t.ElemT()
	elems := make([]Datum, 0, end-start)
	for j := start; j < end; j++ {
		elems = append(elems, DatumAt(et, vals, int(j)))
	}
	return DArray(elems)
}

// appendListDatum appends array datum d to a List builder.
func appendListDatum(b *array.ListBuilder, t T, d Datum) {
	b.Append(true)
	vb, et := b.ValueBuilder(), t.ElemT()
	for _, e := range d.Arr {
		AppendDatum(vb, et, e)
	}
}

// appendArrayBinary appends PostgreSQL's binary array format: dimensions,
// a NULL flag, the element OID, then per dimension its length and lower
// bound, then each element as a length (-1 for NULL) and its binary form.
func appendArrayBinary(buf []byte, t T, d Datum) []byte {
	et := t.ElemT()
	dims, hasNull := uint32(1), uint32(0)
	if len(d.Arr) == 0 {
		dims = 0
	}
	for _, e := range d.Arr {
		if e.Null {
			hasNull = 1
		}
	}
	buf = binary.BigEndian.AppendUint32(buf, dims)
	buf = binary.BigEndian.AppendUint32(buf, hasNull)
	buf = binary.BigEndian.AppendUint32(buf, et.OID())
	if dims == 0 {
		return buf
	}
	buf = binary.BigEndian.AppendUint32(buf, uint32(len(d.Arr)))
	buf = binary.BigEndian.AppendUint32(buf, 1)
	for _, e := range d.Arr {
		buf = appendBinaryItem(buf, et, e)
	}
	return buf
}

// appendBinaryItem appends an element of an array or a field of a record
// in the binary format: its length (-1 for NULL), then its binary form.
func appendBinaryItem(buf []byte, t T, d Datum) []byte {
	if d.Null {
		return binary.BigEndian.AppendUint32(buf, 0xFFFFFFFF)
	}
	at := len(buf)
	buf = append(buf, 0, 0, 0, 0)
	buf = AppendBinary(buf, t, d)
	binary.BigEndian.PutUint32(buf[at:], uint32(len(buf)-at-4))
	return buf
}

// decodeArrayBinary reads PostgreSQL's binary array format.
func decodeArrayBinary(t T, b []byte) (Datum, error) {
	et := t.ElemT()
	if len(b) < 12 {
		return Null, binaryFormatError(t)
	}
	dims := binary.BigEndian.Uint32(b)
	b = b[12:]
	switch {
	case dims == 0:
		return DArray([]Datum{}), nil
	case dims > 1:
		return Null, sqlerr.Unsupported("multidimensional arrays")
	case len(b) < 8:
		return Null, binaryFormatError(t)
	}
	n := binary.BigEndian.Uint32(b)
	b = b[8:]
	elems := make([]Datum, 0, min(n, 1024))
	for ; n > 0; n-- {
		if len(b) < 4 {
			return Null, binaryFormatError(t)
		}
		l := int32(binary.BigEndian.Uint32(b))
		b = b[4:]
		if l < 0 {
			elems = append(elems, Null)
			continue
		}
		if int(l) > len(b) {
			return Null, binaryFormatError(t)
		}
		d, err := DecodeBinary(et, b[:l])
		if err != nil {
			return Null, err
		}
		elems = append(elems, d)
		b = b[l:]
	}
	return DArray(elems), nil
}
