package kafka

import (
	"bytes"
	"fmt"

	"github.com/streamsql/streamsql/types"
)

// csvDecoder decodes ENCODE CSV messages: each message is one record whose
// fields are the columns in order (without_header = 'true', the default),
// or a header line naming the columns and then the record. Fields may be
// double-quoted ("" is a quote inside one); an empty unquoted field is
// NULL, as in COPY ... CSV.
type csvDecoder struct {
	cols      []Column
	delim     byte
	header    bool
	byName    map[string]int
	fields    [][]byte
	quoted    []bool
	headerCol []int
	buf       []byte
}

func newCSVDecoder(cols []Column, delim byte, header bool) *csvDecoder {
	d := &csvDecoder{cols: cols, delim: delim, header: header, byName: map[string]int{}}
	for i, c := range cols {
		d.byName[c.Name] = i
	}
	return d
}

func (d *csvDecoder) decode(value []byte, row []types.Datum) error {
	value = bytes.TrimRight(value, "\r\n")
	order := d.headerCol[:0]
	if d.header {
		line, rest, ok := bytes.Cut(value, []byte{'\n'})
		if !ok {
			return fmt.Errorf("the message has a header line but no record")
		}
		if err := d.split(bytes.TrimRight(line, "\r")); err != nil {
			return err
		}
		for _, f := range d.fields {
			i, ok := d.byName[string(f)]
			if !ok {
				i = -1
			}
			order = append(order, i)
		}
		d.headerCol = order
		value = rest
	}
	if err := d.split(value); err != nil {
		return err
	}
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
func (d *csvDecoder) split(line []byte) error {
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
