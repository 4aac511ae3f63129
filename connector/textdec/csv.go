package textdec

import (
	"bytes"
	"fmt"

	"github.com/streamsql/streamsql/types"
)

// CSV decodes ENCODE CSV records. A record's fields are the columns in
// order, or, once SetHeader has read a header line, the columns the header
// names (fields of other names are ignored, columns not named are NULL).
// Fields may be double-quoted ("" is a quote inside one); an empty unquoted
// field is NULL, as in COPY ... CSV. A record is one line: a quoted field
// cannot hold a line break.
type CSV struct {
	cols      []Column
	delim     byte
	header    bool
	byName    map[string]int
	fields    [][]byte
	quoted    []bool
	headerCol []int
	buf       []byte
}

// NewCSV returns a decoder of records of cols whose fields are separated by
// delim.
func NewCSV(cols []Column, delim byte) *CSV {
	d := &CSV{cols: cols, delim: delim, byName: map[string]int{}}
	for i, c := range cols {
		d.byName[c.Name] = i
	}
	return d
}

// DecodeMessage decodes a Kafka message of one record: with header, a
// header line and then the record; else the record alone.
func (d *CSV) DecodeMessage(value []byte, header bool, row []types.Datum) error {
	value = bytes.TrimRight(value, "\r\n")
	if header {
		line, rest, ok := bytes.Cut(value, []byte{'\n'})
		if !ok {
			return fmt.Errorf("the message has a header line but no record")
		}
		if err := d.SetHeader(line); err != nil {
			return err
		}
		value = rest
	}
	return d.Decode(value, row)
}

// SetHeader reads a header line: the records decoded next have its fields,
// matched to the columns by name.
func (d *CSV) SetHeader(line []byte) error {
	if err := d.split(bytes.TrimRight(line, "\r\n")); err != nil {
		return err
	}
	order := d.headerCol[:0]
	for _, f := range d.fields {
		i, ok := d.byName[string(f)]
		if !ok {
			i = -1
		}
		order = append(order, i)
	}
	d.headerCol, d.header = order, true
	return nil
}

// Decode decodes one record (a trailing line break is ignored) into row,
// one datum per column. On error the row is left in any state.
func (d *CSV) Decode(value []byte, row []types.Datum) error {
	if err := d.split(bytes.TrimRight(value, "\r\n")); err != nil {
		return err
	}
	order := d.headerCol
	if !d.header && len(d.fields) != len(d.cols) {
		return fmt.Errorf("the record has %d fields, the source %d columns", len(d.fields), len(d.cols))
	}
	if d.header {
		if len(d.fields) != len(order) {
			return fmt.Errorf("the record has %d fields, its header %d", len(d.fields), len(order))
		}
		for i := range row {
			row[i] = types.Null
		}
	}
	for f, field := range d.fields {
		i := f
		if d.header {
			if i = order[f]; i < 0 {
				continue
			}
		}
		if len(field) == 0 && !d.quoted[f] {
			row[i] = types.Null
			continue
		}
		v, err := types.ParseText(d.cols[i].Type, string(field))
		if err != nil {
			return fmt.Errorf("column %s: %v", d.cols[i].Name, err)
		}
		row[i] = v
	}
	return nil
}

// split splits a record into d.fields (slices of line or of d.buf).
func (d *CSV) split(line []byte) error {
	d.fields, d.quoted, d.buf = d.fields[:0], d.quoted[:0], d.buf[:0]
	for i := 0; ; {
		if i < len(line) && line[i] == '"' {
			start := len(d.buf)
			for i++; ; i++ {
				if i >= len(line) {
					return fmt.Errorf("unterminated quoted CSV field")
				}
				if line[i] == '"' {
					if i+1 < len(line) && line[i+1] == '"' {
						d.buf = append(d.buf, '"')
						i++
						continue
					}
					i++
					break
				}
				d.buf = append(d.buf, line[i])
			}
			d.fields = append(d.fields, d.buf[start:len(d.buf):len(d.buf)])
			d.quoted = append(d.quoted, true)
			if i < len(line) && line[i] != d.delim {
				return fmt.Errorf("unexpected character after a quoted CSV field")
			}
		} else {
			end := bytes.IndexByte(line[i:], d.delim)
			if end < 0 {
				end = len(line) - i
			}
			d.fields = append(d.fields, line[i:i+end])
			d.quoted = append(d.quoted, false)
			i += end
		}
		if i >= len(line) {
			return nil
		}
		i++ // the delimiter
	}
}
