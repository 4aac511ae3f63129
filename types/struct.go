package types

import (
	"encoding/binary"
	"encoding/json"
	"strconv"
	"strings"
	"sync"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/streamsql/streamsql/sqlerr"
)

// Structs (composite values).
//
// A struct type is T{Kind: Struct, Fields: f}, where f is an interned field
// list: InternFields returns the same pointer for the same names and types,
// so that T stays a small comparable value whose == is structural equality.
// An array of structs is T{Kind: Array, Elem: Struct, Fields: f}. A struct
// column is an Arrow Struct of its fields' Arrow types, every field
// nullable; a struct Datum holds its field values in Arr (never nil). A
// NULL struct and a struct of NULL fields are different values, as in
// PostgreSQL.
//
// Anonymous records (ROW(1, 'a')) are struct types whose fields are named
// f1, f2, ... as PostgreSQL names them.

// Field is one field of a struct type.
type Field struct {
	Name string `json:"name"`
	Type T      `json:"type"`
}

// Fields is an interned, immutable field list. Compare *Fields with ==.
type Fields struct {
	fs  []Field
	key string
}

// Len returns the number of fields.
func (f *Fields) Len() int {
	if f == nil {
		return 0
	}
	return len(f.fs)
}

// At returns field i.
func (f *Fields) At(i int) Field { return f.fs[i] }

// List returns a copy of the fields.
func (f *Fields) List() []Field { return append([]Field(nil), f.fs...) }

// Index returns the index of the field named name, or -1.
func (f *Fields) Index(name string) int {
	for i, x := range f.fs {
		if x.Name == name {
			return i
		}
	}
	return -1
}

var fieldRegistry struct {
	sync.Mutex
	m map[string]*Fields
}

// InternFields returns the canonical field list of fs. It is safe for
// concurrent use; interned lists live for the life of the process.
func InternFields(fs []Field) *Fields {
	var sb strings.Builder
	for _, f := range fs {
		sb.WriteString(strconv.Quote(f.Name))
		sb.WriteByte(' ')
		f.Type.canon(&sb)
		sb.WriteByte(';')
	}
	key := sb.String()
	fieldRegistry.Lock()
	defer fieldRegistry.Unlock()
	if p, ok := fieldRegistry.m[key]; ok {
		return p
	}
	if fieldRegistry.m == nil {
		fieldRegistry.m = map[string]*Fields{}
	}
	p := &Fields{fs: append([]Field(nil), fs...), key: key}
	fieldRegistry.m[key] = p
	return p
}

// canon writes a canonical spelling of t that tells apart every T.
func (t T) canon(sb *strings.Builder) {
	sb.WriteString(strconv.Itoa(int(t.Kind)))
	sb.WriteByte('/')
	sb.WriteString(strconv.Itoa(int(t.Elem)))
	sb.WriteByte('/')
	sb.WriteString(strconv.Itoa(int(t.Precision)) + "," + strconv.Itoa(int(t.Scale)) + "," +
		strconv.FormatBool(t.HasTypmod) + "," + strconv.Itoa(int(t.Width)) + "," + strconv.FormatBool(t.Varchar) + "," + strconv.FormatBool(t.Bpchar))
	if t.Fields != nil {
		sb.WriteString("{" + t.Fields.key + "}")
	}
}

// StructOf returns the struct type of the given fields.
func StructOf(fs []Field) T { return T{Kind: Struct, Fields: InternFields(fs)} }

// RecordOf returns the anonymous record type of the given field types, its
// fields named f1, f2, ...
func RecordOf(ts []T) T {
	fs := make([]Field, len(ts))
	for i, t := range ts {
		fs[i] = Field{Name: "f" + strconv.Itoa(i+1), Type: t}
	}
	return StructOf(fs)
}

// DStruct returns a struct datum of the given field values.
func DStruct(fields []Datum) Datum {
	if fields == nil {
		fields = []Datum{}
	}
	return Datum{Arr: fields}
}

// tJSON is T's JSON form: every field of T, with Fields as a list.
type tJSON struct {
	Kind      Kind
	Precision int32
	Scale     int32
	HasTypmod bool
	Width     int32
	Varchar   bool
	Bpchar    bool `json:",omitempty"`
	Elem      Kind
	Fields    []Field `json:",omitempty"`
}

// MarshalJSON writes t with its field list spelled out.
func (t T) MarshalJSON() ([]byte, error) {
	j := tJSON{Kind: t.Kind, Precision: t.Precision, Scale: t.Scale, HasTypmod: t.HasTypmod,
		Width: t.Width, Varchar: t.Varchar, Bpchar: t.Bpchar, Elem: t.Elem}
	if t.Fields != nil {
		j.Fields = t.Fields.fs
	}
	return json.Marshal(j)
}

// UnmarshalJSON reads t, interning its field list.
func (t *T) UnmarshalJSON(b []byte) error {
	var j tJSON
	if err := json.Unmarshal(b, &j); err != nil {
		return err
	}
	*t = T{Kind: j.Kind, Precision: j.Precision, Scale: j.Scale, HasTypmod: j.HasTypmod,
		Width: j.Width, Varchar: j.Varchar, Bpchar: j.Bpchar, Elem: j.Elem}
	if j.Fields != nil {
		t.Fields = InternFields(j.Fields)
	}
	return nil
}

// structArrowType is the Arrow Struct of fs.
func structArrowType(fs *Fields) arrow.DataType {
	afs := make([]arrow.Field, fs.Len())
	for i, f := range fs.fs {
		afs[i] = arrow.Field{Name: f.Name, Type: f.Type.ArrowType(), Nullable: true}
	}
	return arrow.StructOf(afs...)
}

// structString spells a struct type as RisingWave does:
// struct<a integer, b character varying>.
func (t T) structString() string {
	var sb strings.Builder
	sb.WriteString("struct<")
	for i, f := range t.Fields.fs {
		if i > 0 {
			sb.WriteString(", ")
		}
		sb.WriteString(f.Name + " " + f.Type.String())
	}
	sb.WriteByte('>')
	return sb.String()
}

// identicalFields reports whether two field lists share a representation.
func identicalFields(a, b *Fields) bool {
	if a == b {
		return true
	}
	if a.Len() != b.Len() {
		return false
	}
	for i := range a.fs {
		if a.fs[i].Name != b.fs[i].Name || !Identical(a.fs[i].Type, b.fs[i].Type) {
			return false
		}
	}
	return true
}

// structWithoutTypmod drops the modifiers of every field.
func structWithoutTypmod(t T) T {
	fs := t.Fields.List()
	for i := range fs {
		fs[i].Type = WithoutTypmod(fs[i].Type)
	}
	return T{Kind: t.Kind, Fields: InternFields(fs)}
}

// AppendStructText appends PostgreSQL's record output of d: (1,abc), a
// NULL field as nothing, fields quoted where they would not read back.
func AppendStructText(buf []byte, t T, d Datum) []byte {
	buf = append(buf, '(')
	var tmp []byte
	for i, f := range d.Arr {
		if i > 0 {
			buf = append(buf, ',')
		}
		if f.Null {
			continue
		}
		tmp = AppendText(tmp[:0], t.Fields.fs[i].Type, f)
		buf = appendRecordField(buf, tmp)
	}
	return append(buf, ')')
}

// appendRecordField appends a field's text as record_out does: quoted when
// empty or holding a quote, backslash, parenthesis, comma or white space,
// with quotes and backslashes doubled inside.
func appendRecordField(buf, s []byte) []byte {
	quote := len(s) == 0
	for _, c := range s {
		if c == '"' || c == '\\' || c == '(' || c == ')' || c == ',' || parseIsSpace(c) {
			quote = true
			break
		}
	}
	if !quote {
		return append(buf, s...)
	}
	buf = append(buf, '"')
	for _, c := range s {
		if c == '"' || c == '\\' {
			buf = append(buf, c)
		}
		buf = append(buf, c)
	}
	return append(buf, '"')
}

// parseStruct parses PostgreSQL's record input '(1,abc)' for type t.
func parseStruct(t T, s string) (Datum, error) {
	bad := func(detail string) error {
		return sqlerr.New(sqlerr.InvalidTextRepresentation, "malformed record literal: %s", parseQuote(s)).WithDetail(detail)
	}
	i := 0
	for i < len(s) && parseIsSpace(s[i]) {
		i++
	}
	if i >= len(s) || s[i] != '(' {
		return Null, bad("Missing left parenthesis.")
	}
	i++
	n := t.Fields.Len()
	fields := make([]Datum, 0, n)
	for k := 0; k < n; k++ {
		if k > 0 {
			if i >= len(s) || s[i] != ',' {
				return Null, bad("Too few columns.")
			}
			i++
		}
		if i < len(s) && (s[i] == ',' || s[i] == ')') {
			fields = append(fields, Null)
			continue
		}
		var sb strings.Builder
		inQuote := false
		for {
			if i >= len(s) {
				return Null, bad("Unexpected end of input.")
			}
			c := s[i]
			if !inQuote && (c == ',' || c == ')') {
				break
			}
			i++
			switch {
			case c == '\\':
				if i >= len(s) {
					return Null, bad("Unexpected end of input.")
				}
				sb.WriteByte(s[i])
				i++
			case c == '"' && inQuote && i < len(s) && s[i] == '"':
				sb.WriteByte('"')
				i++
			case c == '"':
				inQuote = !inQuote
			default:
				sb.WriteByte(c)
			}
		}
		d, err := ParseText(t.Fields.fs[k].Type, sb.String())
		if err != nil {
			return Null, err
		}
		fields = append(fields, d)
	}
	if i >= len(s) || s[i] != ')' {
		return Null, bad("Too many columns.")
	}
	if strings.TrimLeft(s[i+1:], " \t\n\r\v\f") != "" {
		return Null, bad("Junk after right parenthesis.")
	}
	return DStruct(fields), nil
}

// CompareStructs orders two struct values field by field as PostgreSQL
// orders composite values (record_cmp): a NULL field equals a NULL field
// and sorts above every value.
func CompareStructs(fs *Fields, a, b []Datum) int {
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
		if c := Compare(fs.fs[i].Type, x, y); c != 0 {
			return c
		}
	}
	return cmpOrdered(int64(len(a)), int64(len(b)))
}

// structDatum reads row i of a Struct column of type t.
func structDatum(t T, arr arrow.Array, i int) Datum {
	s := arr.(*array.Struct)
	fields := make([]Datum, t.Fields.Len())
	for j, f := range t.Fields.fs {
		fields[j] = DatumAt(f.Type, s.Field(j), i)
	}
	return DStruct(fields)
}

// appendStructDatum appends struct datum d to a Struct builder.
func appendStructDatum(b *array.StructBuilder, t T, d Datum) {
	b.Append(true)
	for j, f := range t.Fields.fs {
		AppendDatum(b.FieldBuilder(j), f.Type, d.Arr[j])
	}
}

// The OIDs of PostgreSQL's record and record[].
const (
	OIDRecord      = 2249
	OIDRecordArray = 2287
)

// appendStructBinary appends PostgreSQL's binary record format: the field
// count, then per field its type OID, its length (-1 for NULL) and its
// binary form.
func appendStructBinary(buf []byte, t T, d Datum) []byte {
	buf = binary.BigEndian.AppendUint32(buf, uint32(len(d.Arr)))
	for j, f := range d.Arr {
		ft := t.Fields.fs[j].Type
		buf = binary.BigEndian.AppendUint32(buf, ft.OID())
		buf = appendBinaryItem(buf, ft, f)
	}
	return buf
}

// decodeStructBinary reads PostgreSQL's binary record format.
func decodeStructBinary(t T, b []byte) (Datum, error) {
	if len(b) < 4 || int(binary.BigEndian.Uint32(b)) != t.Fields.Len() {
		return Null, binaryFormatError(t)
	}
	b = b[4:]
	fields := make([]Datum, t.Fields.Len())
	for j, f := range t.Fields.fs {
		if len(b) < 8 {
			return Null, binaryFormatError(t)
		}
		l := int32(binary.BigEndian.Uint32(b[4:]))
		b = b[8:]
		if l < 0 {
			fields[j] = Null
			continue
		}
		if int(l) > len(b) {
			return Null, binaryFormatError(t)
		}
		d, err := DecodeBinary(f.Type, b[:l])
		if err != nil {
			return Null, err
		}
		fields[j] = d
		b = b[l:]
	}
	if len(b) != 0 {
		return Null, binaryFormatError(t)
	}
	return DStruct(fields), nil
}

// IsNested reports whether t is an array, struct or map type, whose values
// are built and compared as datums off the vectorized paths.
func IsNested(t T) bool { return t.Kind == Array || t.Kind == Struct || t.Kind == Map }
