package postgres

import (
	"github.com/apache/arrow-go/v18/arrow"
	"github.com/streamsql/streamsql/exec"
	"github.com/streamsql/streamsql/types"
)

// Ops of an upsert sink's lines.
const (
	opUpsert = 'I'
	opDelete = 'D'
)

// encoder turns batches of changes into lines of COPY's text format, the
// unit the outbox stores and delivery sends: an upsert sink's lines are
// "op\tcol\tcol...\n" with op opUpsert or opDelete (the whole row, of
// which delivery uses the key); an append-only sink's are "col\tcol...\n",
// inserts only. NULL is \N. It works on whole columns: each batch binds one
// PostgreSQL text formatter per column, and rows are appended into reused
// buffers.
type encoder struct {
	cols   []Column
	upsert bool
	fmts   []types.ColumnFormatter
	arrs   []arrow.Array
	val    []byte
}

// encodeBatch appends b's changes to buf as lines and returns it and the
// number of lines appended.
func (e *encoder) encodeBatch(buf []byte, b *exec.Batch) ([]byte, int) {
	e.fmts, e.arrs = e.fmts[:0], e.arrs[:0]
	for _, c := range e.cols {
		arr := b.Rec.Column(c.Index)
		e.fmts = append(e.fmts, types.NewColumnFormatter(c.Type, arr))
		e.arrs = append(e.arrs, arr)
	}
	n := 0
	for i, op := range b.Ops {
		switch {
		case e.upsert && op.IsInsert():
			buf = append(buf, opUpsert, '\t')
		case e.upsert:
			buf = append(buf, opDelete, '\t')
		case !op.IsInsert():
			continue // force_append_only: deletes are dropped
		}
		for j, arr := range e.arrs {
			if j > 0 {
				buf = append(buf, '\t')
			}
			if arr.IsNull(i) {
				buf = append(buf, '\\', 'N')
				continue
			}
			e.val = e.fmts[j](e.val[:0], i)
			buf = appendCopyEscaped(buf, e.val)
		}
		buf = append(buf, '\n')
		n++
	}
	clear(e.fmts) // keep no column alive
	clear(e.arrs)
	return buf, n
}

// appendCopyEscaped appends v escaped for COPY's text format: backslash,
// newline, carriage return and tab are backslash sequences.
func appendCopyEscaped(buf, v []byte) []byte {
	for _, c := range v {
		switch c {
		case '\\':
			buf = append(buf, '\\', '\\')
		case '\n':
			buf = append(buf, '\\', 'n')
		case '\r':
			buf = append(buf, '\\', 'r')
		case '\t':
			buf = append(buf, '\\', 't')
		default:
			buf = append(buf, c)
		}
	}
	return buf
}
