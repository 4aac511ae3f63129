package engine

import (
	"bufio"
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"slices"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/streamsql/streamsql/exec"
	"github.com/streamsql/streamsql/sql"
	"github.com/streamsql/streamsql/sqlerr"
	"github.com/streamsql/streamsql/types"
)

// COPY's data formats, as PostgreSQL defines them: text (one line per row,
// fields split by the delimiter, backslash escapes, \N for NULL), csv
// (RFC 4180 quoting with the quote and escape characters, an unquoted null
// string for NULL) and binary (the PGCOPY header, then per row a field
// count and length-prefixed values in each type's binary format, then -1).

// binaryCopySignature starts the header of COPY's binary format.
var binaryCopySignature = []byte("PGCOPY\n\xff\r\n\x00")

// copyDecoder decodes COPY FROM data into batches of the copied columns.
type copyDecoder struct {
	r    *bufio.Reader
	f    sql.CopyFormat
	ts   []types.T
	zone *types.Zone
	line int // the line (text, csv) or row (binary) being decoded, from 1

	fields [][]byte // the current row's fields; nil entries are NULL
	quoted []bool   // csv: whether each field was quoted
	buf    []byte   // the current line, de-escaped field by field
}

func newCopyDecoder(r *bufio.Reader, f sql.CopyFormat, ts []types.T, zone *types.Zone) *copyDecoder {
	return &copyDecoder{r: r, f: f, ts: ts, zone: zone}
}

// run decodes the whole input and emits it in batches of copyBatchRows.
func (d *copyDecoder) run(ctx context.Context, mem memory.Allocator, out exec.Output) error {
	bs := make([]array.Builder, len(d.ts))
	for i, t := range d.ts {
		bs[i] = array.NewBuilder(mem, t.ArrowType())
	}
	defer func() {
		for _, b := range bs {
			b.Release()
		}
	}()
	next := d.nextText
	switch d.f.Kind {
	case sql.CopyCSV:
		next = d.nextCSV
	case sql.CopyBinary:
		next = d.nextBinary
		if err := d.binaryHeader(); err != nil {
			return err
		}
	}
	if d.f.Header && d.f.Kind != sql.CopyBinary {
		if _, err := next(); err != nil && !errors.Is(err, io.EOF) {
			return err
		}
	}
	rows := 0
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		ok, err := next()
		if err != nil {
			return err
		}
		if !ok {
			break
		}
		if err := d.appendRow(bs); err != nil {
			return err
		}
		if rows++; rows == copyBatchRows {
			if err := emitCopyBatch(ctx, bs, d.ts, rows, out); err != nil {
				return err
			}
			rows = 0
		}
	}
	if rows > 0 {
		return emitCopyBatch(ctx, bs, d.ts, rows, out)
	}
	return nil
}

// errorf is a 22P04 error naming the line being decoded.
func (d *copyDecoder) errorf(format string, args ...any) error {
	return sqlerr.New(sqlerr.BadCopyFileFormat, format, args...).WithDetail(fmt.Sprintf("COPY line %d", d.line))
}

// appendRow parses the current row's fields into bs.
func (d *copyDecoder) appendRow(bs []array.Builder) error {
	if len(d.fields) > len(d.ts) {
		return d.errorf("extra data after last expected column")
	}
	if len(d.fields) < len(d.ts) {
		return d.errorf("missing data for column %d", len(d.fields)+1)
	}
	for i, f := range d.fields {
		if f == nil {
			bs[i].AppendNull()
			continue
		}
		var v types.Datum
		var err error
		if d.f.Kind == sql.CopyBinary {
			v, err = types.DecodeBinary(d.ts[i], f)
		} else {
			v, err = types.ParseTextIn(d.ts[i], string(f), d.zone)
		}
		if err != nil {
			var se *sqlerr.Error
			if errors.As(err, &se) {
				c := *se
				return c.WithDetail(fmt.Sprintf("COPY line %d, column %d", d.line, i+1))
			}
			return err
		}
		types.AppendDatum(bs[i], d.ts[i], v)
	}
	return nil
}

// readLine reads the next line without its line ending; ok is false at the
// end of the input.
func (d *copyDecoder) readLine() (line []byte, ok bool, err error) {
	line, err = d.r.ReadSlice('\n')
	if errors.Is(err, bufio.ErrBufferFull) {
		long := append([]byte(nil), line...)
		for errors.Is(err, bufio.ErrBufferFull) {
			line, err = d.r.ReadSlice('\n')
			long = append(long, line...)
		}
		line = long
	}
	if err != nil && !errors.Is(err, io.EOF) {
		return nil, false, err
	}
	if len(line) == 0 && err != nil {
		return nil, false, nil
	}
	d.line++
	line = bytes.TrimSuffix(line, []byte{'\n'})
	line = bytes.TrimSuffix(line, []byte{'\r'})
	return line, true, nil
}

// nextText reads one row of the text format into d.fields.
func (d *copyDecoder) nextText() (bool, error) {
	line, ok, err := d.readLine()
	if err != nil || !ok {
		return false, err
	}
	if string(line) == `\.` {
		return false, nil // the end-of-data marker
	}
	d.fields, d.buf = d.fields[:0], d.buf[:0]
	for {
		i := textFieldEnd(line, d.f.Delimiter)
		raw := line[:i]
		if string(raw) == d.f.Null {
			d.fields = append(d.fields, nil)
		} else {
			start := len(d.buf)
			d.buf = unescapeCopyText(d.buf, raw)
			d.fields = append(d.fields, d.buf[start:len(d.buf):len(d.buf)])
		}
		if i == len(line) {
			return true, nil
		}
		line = line[i+1:]
	}
}

// textFieldEnd is the index of the delimiter that ends the text field at
// the start of line (a backslash escapes it), or len(line).
func textFieldEnd(line []byte, delim byte) int {
	for i := 0; i < len(line); i++ {
		switch line[i] {
		case '\\':
			i++
		case delim:
			return i
		}
	}
	return len(line)
}

// copyTextEscapes maps the bytes the text format writes as a backslash and
// a letter to that letter; copyTextUnescapes is its inverse.
var copyTextEscapes, copyTextUnescapes [256]byte

func init() {
	for _, p := range [...][2]byte{{'\b', 'b'}, {'\f', 'f'}, {'\n', 'n'}, {'\r', 'r'}, {'\t', 't'}, {'\v', 'v'}} {
		copyTextEscapes[p[0]], copyTextUnescapes[p[1]] = p[1], p[0]
	}
}

// unescapeCopyText appends raw with the text format's backslash escapes
// decoded.
func unescapeCopyText(dst, raw []byte) []byte {
	for i := 0; i < len(raw); i++ {
		c := raw[i]
		if c != '\\' || i+1 == len(raw) {
			dst = append(dst, c)
			continue
		}
		i++
		c = raw[i]
		if b := copyTextUnescapes[c]; b != 0 {
			dst = append(dst, b)
			continue
		}
		switch c {
		case 'x':
			v, n := 0, 0
			for n < 2 && i+1 < len(raw) && isHex(raw[i+1]) {
				i++
				v = v*16 + hexVal(raw[i])
				n++
			}
			if n == 0 {
				dst = append(dst, 'x')
			} else {
				dst = append(dst, byte(v))
			}
		case '0', '1', '2', '3', '4', '5', '6', '7':
			v := int(c - '0')
			for n := 1; n < 3 && i+1 < len(raw) && raw[i+1] >= '0' && raw[i+1] <= '7'; n++ {
				i++
				v = v*8 + int(raw[i]-'0')
			}
			dst = append(dst, byte(v))
		default:
			dst = append(dst, c)
		}
	}
	return dst
}

func isHex(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F'
}

func hexVal(c byte) int {
	switch {
	case c <= '9':
		return int(c - '0')
	case c >= 'a':
		return int(c-'a') + 10
	}
	return int(c-'A') + 10
}

// nextCSV reads one row of the csv format into d.fields; a quoted field may
// span lines.
func (d *copyDecoder) nextCSV() (bool, error) {
	line, ok, err := d.readLine()
	if err != nil || !ok {
		return false, err
	}
	if string(line) == `\.` {
		return false, nil
	}
	d.fields, d.quoted, d.buf = d.fields[:0], d.quoted[:0], d.buf[:0]
	q, esc, delim := d.f.Quote, d.f.Escape, d.f.Delimiter
	for {
		start, quoted, i := len(d.buf), false, 0
		for i < len(line) && line[i] != delim {
			if line[i] != q {
				d.buf = append(d.buf, line[i])
				i++
				continue
			}
			quoted = true
			i++
			for {
				if i == len(line) {
					// The quoted value goes on on the next line.
					next, ok, err := d.readLine()
					if err != nil {
						return false, err
					}
					if !ok {
						return false, d.errorf("unterminated CSV quoted field")
					}
					d.buf = append(d.buf, '\n')
					line, i = next, 0
					continue
				}
				c := line[i]
				if c == esc && i+1 < len(line) && (line[i+1] == q || line[i+1] == esc) && (esc != q || line[i+1] == q) {
					d.buf = append(d.buf, line[i+1])
					i += 2
					continue
				}
				if c == q {
					i++
					break
				}
				d.buf = append(d.buf, c)
				i++
			}
		}
		val := d.buf[start:len(d.buf):len(d.buf)]
		k := len(d.fields)
		isNull := !quoted && string(val) == d.f.Null
		if k < len(d.f.ForceNotNull) && d.f.ForceNotNull[k] {
			isNull = false
		}
		if k < len(d.f.ForceNull) && d.f.ForceNull[k] && string(val) == d.f.Null {
			isNull = true
		}
		if isNull {
			val = nil
		} else if val == nil {
			val = []byte{}
		}
		d.fields, d.quoted = append(d.fields, val), append(d.quoted, quoted)
		if i >= len(line) {
			return true, nil
		}
		line = line[i+1:]
	}
}

// binaryHeader reads the binary format's header.
func (d *copyDecoder) binaryHeader() error {
	hdr := make([]byte, len(binaryCopySignature)+8)
	if _, err := io.ReadFull(d.r, hdr); err != nil {
		return sqlerr.New(sqlerr.BadCopyFileFormat, "COPY file signature not recognized")
	}
	if !bytes.Equal(hdr[:len(binaryCopySignature)], binaryCopySignature) {
		return sqlerr.New(sqlerr.BadCopyFileFormat, "COPY file signature not recognized")
	}
	flags := binary.BigEndian.Uint32(hdr[len(binaryCopySignature):])
	if flags&(1<<16) != 0 {
		return sqlerr.New(sqlerr.BadCopyFileFormat, "COPY with OIDs is not supported")
	}
	ext := binary.BigEndian.Uint32(hdr[len(binaryCopySignature)+4:])
	if _, err := d.r.Discard(int(ext)); err != nil {
		return sqlerr.New(sqlerr.BadCopyFileFormat, "invalid COPY file header (wrong length)")
	}
	return nil
}

// nextBinary reads one row of the binary format into d.fields.
func (d *copyDecoder) nextBinary() (bool, error) {
	var n [4]byte
	if _, err := io.ReadFull(d.r, n[:2]); err != nil {
		if errors.Is(err, io.EOF) {
			return false, nil // PostgreSQL also takes the data without a trailer
		}
		return false, err
	}
	count := int16(binary.BigEndian.Uint16(n[:2]))
	if count == -1 {
		return false, nil
	}
	d.line++
	if int(count) != len(d.ts) {
		return false, d.errorf("row field count is %d, expected %d", count, len(d.ts))
	}
	d.fields, d.buf = d.fields[:0], d.buf[:0]
	var lens [64]int32
	ls := lens[:0]
	for range int(count) {
		if _, err := io.ReadFull(d.r, n[:]); err != nil {
			return false, d.errorf("unexpected EOF in COPY data")
		}
		l := int32(binary.BigEndian.Uint32(n[:]))
		ls = append(ls, l)
		if l < 0 {
			continue
		}
		start := len(d.buf)
		d.buf = slices.Grow(d.buf, int(l))[:start+int(l)]
		if _, err := io.ReadFull(d.r, d.buf[start:]); err != nil {
			return false, d.errorf("unexpected EOF in COPY data")
		}
	}
	off := 0
	for _, l := range ls {
		if l < 0 {
			d.fields = append(d.fields, nil)
			continue
		}
		d.fields = append(d.fields, d.buf[off:off+int(l):off+int(l)])
		off += int(l)
	}
	return true, nil
}

// copyEncoder encodes rows for COPY TO.
type copyEncoder struct {
	f     sql.CopyFormat
	zone  *types.Zone
	names []string
	types []types.T
	buf   []byte
	val   []byte
}

// header is what precedes the rows: the binary signature, or the csv (or
// text) header line.
func (c *copyEncoder) header() []byte {
	c.buf = c.buf[:0]
	switch {
	case c.f.Kind == sql.CopyBinary:
		c.buf = append(c.buf, binaryCopySignature...)
		c.buf = binary.BigEndian.AppendUint32(c.buf, 0)
		c.buf = binary.BigEndian.AppendUint32(c.buf, 0)
	case c.f.Header:
		for i, name := range c.names {
			if i > 0 {
				c.buf = append(c.buf, c.f.Delimiter)
			}
			c.buf = c.appendValue(c.buf, []byte(name), false)
		}
		c.buf = append(c.buf, '\n')
	}
	return c.buf
}

// trailer is what follows the rows: the binary format's -1.
func (c *copyEncoder) trailer() []byte {
	if c.f.Kind != sql.CopyBinary {
		return nil
	}
	return []byte{0xff, 0xff}
}

// rows encodes n rows of the columns arrs.
func (c *copyEncoder) rows(arrs []arrow.Array, n int) []byte {
	fmts := make([]types.ColumnFormatter, len(arrs))
	for i, a := range arrs {
		if c.f.Kind == sql.CopyBinary {
			fmts[i] = types.NewColumnBinaryFormatter(c.types[i], a)
		} else {
			fmts[i] = types.NewColumnFormatterIn(c.types[i], a, c.zone)
		}
	}
	c.buf = c.buf[:0]
	for r := range n {
		if c.f.Kind == sql.CopyBinary {
			c.buf = binary.BigEndian.AppendUint16(c.buf, uint16(len(arrs)))
		}
		for i, a := range arrs {
			null := c.types[i].Kind == types.Unknown || a.IsNull(r)
			if c.f.Kind == sql.CopyBinary {
				c.buf = c.binaryField(c.buf, fmts[i], r, null)
				continue
			}
			if i > 0 {
				c.buf = append(c.buf, c.f.Delimiter)
			}
			if null {
				c.buf = append(c.buf, c.f.Null...)
				continue
			}
			c.val = fmts[i](c.val[:0], r)
			c.buf = c.appendValue(c.buf, c.val, i < len(c.f.ForceQuote) && c.f.ForceQuote[i])
		}
		if c.f.Kind != sql.CopyBinary {
			c.buf = append(c.buf, '\n')
		}
	}
	return c.buf
}

func (c *copyEncoder) binaryField(buf []byte, f types.ColumnFormatter, r int, null bool) []byte {
	if null {
		return append(buf, 0xff, 0xff, 0xff, 0xff)
	}
	lp := len(buf)
	buf = append(buf, 0, 0, 0, 0)
	buf = f(buf, r)
	binary.BigEndian.PutUint32(buf[lp:], uint32(len(buf)-lp-4))
	return buf
}

// appendValue appends a non-NULL value's text, escaped (text) or quoted
// where needed (csv).
func (c *copyEncoder) appendValue(buf, v []byte, forceQuote bool) []byte {
	if c.f.Kind == sql.CopyText {
		return escapeCopyText(buf, v, c.f.Delimiter)
	}
	q, esc := c.f.Quote, c.f.Escape
	if !forceQuote && string(v) != c.f.Null && !bytes.ContainsAny(v, string([]byte{c.f.Delimiter, q, '\n', '\r'})) &&
		!(len(v) > 0 && string(v) == `\.`) {
		return append(buf, v...)
	}
	buf = append(buf, q)
	for _, b := range v {
		if b == q || b == esc {
			buf = append(buf, esc)
		}
		buf = append(buf, b)
	}
	return append(buf, q)
}

// escapeCopyText appends v with the text format's escapes.
func escapeCopyText(buf, v []byte, delim byte) []byte {
	for _, b := range v {
		switch e := copyTextEscapes[b]; {
		case e != 0:
			buf = append(buf, '\\', e)
		case b == '\\' || b == delim:
			buf = append(buf, '\\', b)
		default:
			buf = append(buf, b)
		}
	}
	return buf
}
