// Package jsonenc encodes rows of Arrow records as JSON objects, column by
// column, as the sinks write them (Kafka's JSON formats, the file sink's
// JSON lines).
package jsonenc

import (
	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/streamsql/streamsql/types"
)

// Column appends the JSON value of row i of one column (which must not
// be NULL at i) to buf.
type Column func(buf []byte, i int) []byte

// NewColumn returns the JSON appender of arr, a column of type t. Like
// types.NewColumnFormatter, which it builds on, it does the type dispatch
// once per column; per row it appends without allocating, except for
// arrays, structs and maps, which go through types.ToJSON.
//
// The values are to_jsonb's: booleans and numbers are JSON literals (NaN
// and infinities, which JSON has not, are strings), jsonb is embedded as
// is, timestamps are ISO 8601 strings ("2024-01-02T03:04:05", with
// "+00:00" for timestamptz), everything else is the PostgreSQL text output
// as a string.
func NewColumn(t types.T, arr arrow.Array) Column {
	text := types.NewColumnFormatter(t, arr)
	switch t.Kind {
	case types.Bool:
		a := arr.(*array.Boolean)
		return func(buf []byte, i int) []byte {
			if a.Value(i) {
				return append(buf, "true"...)
			}
			return append(buf, "false"...)
		}
	case types.Int16, types.Int32, types.Int64, types.Numeric, types.JSONB:
		return Column(text)
	case types.Float32, types.Float64:
		return func(buf []byte, i int) []byte {
			n := len(buf)
			buf = text(buf, i)
			if last := buf[len(buf)-1]; last == 'N' || last == 'y' { // NaN, [-]Infinity
				return quoteTail(buf, n)
			}
			return buf
		}
	case types.Timestamp, types.TimestampTZ:
		tz := t.Kind == types.TimestampTZ
		return func(buf []byte, i int) []byte {
			n := len(buf)
			buf = text(buf, i)
			if sp := indexByte(buf[n:], ' '); sp >= 0 {
				buf[n+sp] = 'T'
			}
			if tz && len(buf)-n > 3 && (buf[len(buf)-3] == '+' || buf[len(buf)-3] == '-') {
				buf = append(buf, ":00"...)
			}
			return quoteTail(buf, n)
		}
	case types.Array, types.Struct, types.Map:
		return func(buf []byte, i int) []byte {
			return types.AppendJSON(buf, types.ToJSON(t, types.DatumAt(t, arr, i)))
		}
	}
	return func(buf []byte, i int) []byte {
		n := len(buf)
		return quoteTail(text(buf, i), n)
	}
}

// quoteTail replaces buf[n:] by its JSON string literal.
func quoteTail(buf []byte, n int) []byte {
	if plainJSONString(buf[n:]) {
		buf = append(buf, 0, 0)
		copy(buf[n+1:], buf[n:len(buf)-2])
		buf[n], buf[len(buf)-1] = '"', '"'
		return buf
	}
	raw := string(buf[n:]) // rare: the text needs escapes
	return types.AppendJSONString(buf[:n], raw)
}

// plainJSONString reports whether s needs no escape in a JSON string.
func plainJSONString(s []byte) bool {
	for _, c := range s {
		if c < 0x20 || c == '"' || c == '\\' {
			return false
		}
	}
	return true
}

func indexByte(s []byte, c byte) int {
	for i, b := range s {
		if b == c {
			return i
		}
	}
	return -1
}

// Row encodes rows of a record as JSON objects of the chosen columns.
type Row struct {
	// names are the columns' keys, each already a JSON string literal
	// followed by a colon.
	names [][]byte
	cols  []int
	enc   []Column
	nulls []arrow.Array
}

// NewRow returns an encoder of the columns cols (indexes into the
// record) named names.
func NewRow(names []string, cols []int) *Row {
	r := &Row{cols: cols, enc: make([]Column, len(cols)), nulls: make([]arrow.Array, len(cols))}
	for _, n := range names {
		lit := types.AppendJSONString(nil, n)
		r.names = append(r.names, append(lit, ':'))
	}
	return r
}

// Reset binds the encoder to rec, whose columns have types ts.
func (r *Row) Reset(rec arrow.RecordBatch, ts []types.T) {
	for k, c := range r.cols {
		arr := rec.Column(c)
		r.enc[k] = NewColumn(ts[c], arr)
		r.nulls[k] = arr
	}
}

// AppendRow appends row i as a JSON object.
func (r *Row) AppendRow(buf []byte, i int) []byte {
	buf = append(buf, '{')
	for k := range r.cols {
		if k > 0 {
			buf = append(buf, ',')
		}
		buf = append(buf, r.names[k]...)
		if r.nulls[k].IsNull(i) {
			buf = append(buf, "null"...)
			continue
		}
		buf = r.enc[k](buf, i)
	}
	return append(buf, '}')
}

// Release drops the encoder's references to the record's columns.
func (r *Row) Release() {
	for k := range r.enc {
		r.enc[k], r.nulls[k] = nil, nil
	}
}
