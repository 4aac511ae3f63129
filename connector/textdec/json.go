package textdec

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"unsafe"

	"github.com/streamsql/streamsql/types"
)

// JSON decodes ENCODE JSON records: one object per record whose
// members are matched to the columns by name (exactly, else ignoring case);
// members without a column are ignored and columns without a member are
// NULL. A member's value is read as the column type's text input (numbers,
// booleans and strings alike); an object or array is accepted by a jsonb
// column only. It scans the object without building a tree.
type JSON struct {
	cols   []Column
	byName map[string]int
	// seen marks the columns set by the message being decoded.
	seen []bool
	buf  []byte
}

// NewJSON returns a decoder of objects into cols.
func NewJSON(cols []Column) *JSON {
	d := &JSON{cols: cols, byName: map[string]int{}, seen: make([]bool, len(cols))}
	for i, c := range cols {
		d.byName[c.Name] = i
	}
	return d
}

var errNotObject = errors.New("the record is not a JSON object")

// Decode decodes one object (surrounding white space, a line break
// included, is ignored) into row, one datum per column. On error the row is
// left in any state.
func (d *JSON) Decode(value []byte, row []types.Datum) error {
	clear(d.seen)
	s := jsonScanner{b: value}
	if !s.consume('{') {
		return errNotObject
	}
	for first := true; ; first = false {
		if s.consume('}') {
			break
		}
		if !first && !s.consume(',') {
			return s.errorf("expected , or }")
		}
		key, err := s.str(&d.buf)
		if err != nil {
			return err
		}
		if !s.consume(':') {
			return s.errorf("expected :")
		}
		i, ok := d.column(key)
		start := s.skipSpace()
		if err := s.skipValue(); err != nil {
			return err
		}
		if ok {
			if err := d.set(row, i, value[start:s.i]); err != nil {
				return err
			}
		}
	}
	if s.skipSpace() != len(value) {
		return s.errorf("data after the object")
	}
	for i, set := range d.seen {
		if !set {
			row[i] = types.Null
		}
	}
	return nil
}

// column returns the column of a member name.
// DecodeScalar sets column i of row from raw, one JSON value of that column
// alone (a Kafka message key that is the key column's value rather than an
// object of the key columns).
func (d *JSON) DecodeScalar(raw []byte, i int, row []types.Datum) error {
	clear(d.seen)
	return d.set(row, i, raw)
}

func (d *JSON) column(key []byte) (int, bool) {
	if i, ok := d.byName[string(key)]; ok {
		return i, true
	}
	i, ok := d.byName[strings.ToLower(string(key))]
	return i, ok
}

// set parses raw, a JSON value, into column i.
func (d *JSON) set(row []types.Datum, i int, raw []byte) error {
	c := d.cols[i]
	d.seen[i] = true
	var text string
	switch {
	case raw[0] == 'n':
		row[i] = types.Null
		return nil
	case c.Type.Kind == types.JSONB:
		text = string(raw)
	}
	switch raw[0] {
	case '"':
		if c.Type.Kind == types.JSONB {
			break
		}
		s := jsonScanner{b: raw}
		v, err := s.str(&d.buf)
		if err != nil {
			return err
		}
		text = string(v)
	case '{', '[':
		if c.Type.Kind != types.JSONB {
			return fmt.Errorf("column %s (%s) cannot hold a JSON %s", c.Name, c.Type, map[byte]string{'{': "object", '[': "array"}[raw[0]])
		}
	default:
		if c.Type.Kind == types.Text {
			text = string(raw)
		} else if c.Type.Kind != types.JSONB {
			text = unsafe.String(unsafe.SliceData(raw), len(raw)) // numbers and booleans are parsed, not kept
		}
	}
	v, err := types.ParseText(c.Type, text)
	if err != nil {
		return fmt.Errorf("column %s: %v", c.Name, err)
	}
	row[i] = v
	return nil
}

// jsonScanner reads JSON text at b[i:].
type jsonScanner struct {
	b []byte
	i int
}

func (s *jsonScanner) errorf(format string, args ...any) error {
	return fmt.Errorf("bad JSON at byte %d: %s", s.i, fmt.Sprintf(format, args...))
}

// skipSpace skips white space and returns the position after it.
func (s *jsonScanner) skipSpace() int {
	for s.i < len(s.b) && (s.b[s.i] == ' ' || s.b[s.i] == '\t' || s.b[s.i] == '\n' || s.b[s.i] == '\r') {
		s.i++
	}
	return s.i
}

// consume skips white space and then c, if it is next.
func (s *jsonScanner) consume(c byte) bool {
	if s.skipSpace() < len(s.b) && s.b[s.i] == c {
		s.i++
		return true
	}
	return false
}

// str reads a string and returns its unescaped contents: a slice of the
// input if it has no escapes, else of *buf.
func (s *jsonScanner) str(buf *[]byte) ([]byte, error) {
	if s.skipSpace() >= len(s.b) || s.b[s.i] != '"' {
		return nil, s.errorf("expected a string")
	}
	start, escaped := s.i, false
	for s.i++; s.i < len(s.b); s.i++ {
		switch s.b[s.i] {
		case '\\':
			escaped = true
			s.i++
		case '"':
			s.i++
			if !escaped {
				return s.b[start+1 : s.i-1], nil
			}
			var v string
			if err := json.Unmarshal(s.b[start:s.i], &v); err != nil {
				return nil, s.errorf("%v", err)
			}
			*buf = append((*buf)[:0], v...)
			return *buf, nil
		}
	}
	return nil, s.errorf("unterminated string")
}

// skipValue skips one value, checking its syntax only as far as it needs
// to find the value's end (a value that becomes a column is parsed again).
func (s *jsonScanner) skipValue() error {
	if s.skipSpace() >= len(s.b) {
		return s.errorf("expected a value")
	}
	switch c := s.b[s.i]; {
	case c == '"':
		var scratch []byte
		_, err := s.str(&scratch)
		return err
	case c == '{' || c == '[':
		return s.skipNested()
	default:
		start := s.i
		for s.i < len(s.b) && !scalarEnd[s.b[s.i]] {
			s.i++
		}
		if !validScalar(s.b[start:s.i]) {
			return s.errorf("bad value %q", s.b[start:s.i])
		}
		return nil
	}
}

// skipNested skips an object or array.
func (s *jsonScanner) skipNested() error {
	depth := 0
	for ; s.i < len(s.b); s.i++ {
		switch s.b[s.i] {
		case '{', '[':
			depth++
		case '}', ']':
			if depth--; depth == 0 {
				s.i++
				return nil
			}
		case '"':
			var scratch []byte
			if _, err := s.str(&scratch); err != nil {
				return err
			}
			s.i--
		}
	}
	return s.errorf("unterminated object or array")
}

// scalarEnd marks the bytes that end a number, true, false or null.
var scalarEnd = [256]bool{',': true, '}': true, ']': true, ' ': true, '\t': true, '\n': true, '\r': true}

// validScalar reports whether v is a JSON number, true, false or null.
func validScalar(v []byte) bool {
	switch string(v) {
	case "true", "false", "null":
		return true
	case "":
		return false
	}
	for i, c := range v {
		if !(c >= '0' && c <= '9' || c == '-' && i == 0 || c == '.' || c == 'e' || c == 'E' || c == '+' || c == '-') {
			return false
		}
	}
	return true
}
