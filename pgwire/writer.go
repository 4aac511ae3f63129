package pgwire

import (
	"context"
	"encoding/binary"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/bitutil"
	"github.com/jackc/pgx/v5/pgproto3"

	"github.com/streamsql/streamsql/sqlerr"
	"github.com/streamsql/streamsql/types"
)

// resultWriter is the ResultWriter a connection hands to Session.Query and
// Portal.Run. One lives in each conn and is reused for every query.
type resultWriter struct {
	c   *conn
	ctx context.Context // the running query's; nil between queries
	// portal is the portal being run (extended protocol); nil for a simple
	// query.
	portal *portal

	cols []Column // of the result being written; valid while inRows
	// formats holds the format of each column (text or binary) of a
	// portal's result; nil for a simple query, whose results are text.
	formats []int16
	fields  []pgproto3.FieldDescription
	inRows  bool
	// copyOut is set between CopyOut and the statement's Complete.
	copyOut bool
	// reported is set once anything answered a statement (a CommandComplete,
	// an EmptyQueryResponse or a row description).
	reported bool

	colState []columnState // per column, during writeRows
	row      []byte        // the DataRow being built
}

// columnState is what WriteRows needs of one column of the batch it writes.
type columnState struct {
	format types.ColumnFormatter
	// validity is the column's validity bitmap starting at bit offset, or nil
	// when the column has no NULLs.
	validity []byte
	offset   int
	// allNull is set for Unknown columns (Arrow's Null type has no bitmap).
	allNull bool
}

var _ ResultWriter = (*resultWriter)(nil)

// start prepares w for a simple query.
func (w *resultWriter) start(ctx context.Context) {
	w.ctx = ctx
	w.portal = nil
	w.formats = nil
	w.inRows = false
	w.copyOut = false
	w.reported = false
}

// startPortal prepares w for running p.
func (w *resultWriter) startPortal(ctx context.Context, p *portal) {
	w.start(ctx)
	w.portal = p
	w.formats = p.formats
}

// finish ends the query's use of w and reports whether anything was reported.
func (w *resultWriter) finish() (reported bool) {
	w.ctx = nil
	w.portal = nil
	w.formats = nil
	w.inRows = false
	clear(w.cols)
	w.cols = w.cols[:0]
	if cap(w.row) > retainedBufferSize {
		w.row = nil
	}
	return w.reported
}

// live returns an error if w is used outside Session.Query, where writing would
// corrupt the message stream.
func (w *resultWriter) live() error {
	if w.ctx == nil {
		return sqlerr.New(sqlerr.InternalError, "pgwire: ResultWriter used outside Session.Query")
	}
	return nil
}

// check returns the error that stops a statement before it writes rows: a
// broken connection, a cancelled query or a writer used outside Query.
func (w *resultWriter) check() error {
	if err := w.live(); err != nil {
		return err
	}
	if w.c.wErr != nil {
		return w.c.wErr
	}
	if w.ctx.Err() == nil {
		return nil
	}
	switch context.Cause(w.ctx) {
	case errQueryCanceled:
		return errCanceled
	case errShutdown:
		return sqlerr.New(sqlerr.AdminShutdown, "terminating connection due to administrator command")
	}
	return context.Cause(w.ctx)
}

// BeginRows implements ResultWriter.
func (w *resultWriter) BeginRows(cols []Column) error {
	if err := w.check(); err != nil {
		return err
	}
	if w.inRows {
		return sqlerr.New(sqlerr.InternalError, "pgwire: BeginRows before the previous result was completed")
	}
	if p := w.portal; p != nil {
		// Describe has sent the row description.
		if w.reported {
			return sqlerr.New(sqlerr.InternalError, "pgwire: a portal's statement reported two results")
		}
		if !sameColumns(cols, p.cols) {
			return sqlerr.New(sqlerr.InternalError, "pgwire: BeginRows(%s) differs from the statement's description (%s)",
				describeColumns(cols), describeColumns(p.cols))
		}
		w.cols = append(w.cols[:0], cols...)
		w.inRows, w.reported = true, true
		return nil
	}
	fields, err := appendFields(w.fields[:0], cols, nil)
	if err != nil {
		return err
	}
	w.fields = fields
	w.cols = append(w.cols[:0], cols...)
	w.inRows, w.reported = true, true
	return w.c.send(&pgproto3.RowDescription{Fields: w.fields})
}

// appendFields appends the row description of cols in formats (nil: all
// text) to fields.
func appendFields(fields []pgproto3.FieldDescription, cols []Column, formats []int16) ([]pgproto3.FieldDescription, error) {
	if len(cols) > math.MaxInt16 {
		return fields, sqlerr.New(sqlerr.InternalError, "pgwire: %d result columns is too many", len(cols))
	}
	for i, col := range cols {
		f := pgproto3.FieldDescription{
			Name:         []byte(noNUL(col.Name)),
			DataTypeOID:  col.Type.OID(),
			DataTypeSize: col.Type.Size(),
			TypeModifier: col.Type.Typmod(),
			Format:       pgproto3.TextFormat,
		}
		if formats != nil {
			f.Format = formats[i]
		}
		fields = append(fields, f)
	}
	return fields, nil
}

// sameColumns reports whether a and b have the same names and types.
func sameColumns(a, b []Column) bool {
	return slices.Equal(a, b)
}

func describeColumns(cols []Column) string {
	var b strings.Builder
	for i, c := range cols {
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "%s %s", c.Name, c.Type)
	}
	return b.String()
}

// Flusher is a ResultWriter that can send what it has buffered at once: a
// statement that streams rows without end (SUBSCRIBE) flushes after each
// batch. Flush returns an error as WriteRows does.
type Flusher interface {
	Flush() error
}

// Flush implements Flusher.
func (w *resultWriter) Flush() error {
	if err := w.check(); err != nil {
		return err
	}
	return w.c.flush()
}

// WriteRows implements ResultWriter.
func (w *resultWriter) WriteRows(rec arrow.RecordBatch) error {
	if err := w.check(); err != nil {
		return err
	}
	if !w.inRows {
		return sqlerr.New(sqlerr.InternalError, "pgwire: WriteRows without BeginRows")
	}
	if int(rec.NumCols()) != len(w.cols) {
		return sqlerr.New(sqlerr.InternalError, "pgwire: batch has %d columns, the result %d",
			rec.NumCols(), len(w.cols))
	}
	for j, col := range w.cols {
		arr := rec.Column(j)
		if want := col.Type.ArrowType(); !arrow.TypeEqual(arr.DataType(), want) {
			return sqlerr.New(sqlerr.InternalError, "pgwire: column %q of type %v holds Arrow %v, not %v",
				col.Name, col.Type, arr.DataType(), want)
		}
	}
	if p := w.portal; p != nil && p.buffering {
		// The client fetches the rows with a row limit: keep them.
		if rec.NumRows() > 0 {
			rec.Retain()
			p.rows = append(p.rows, rec)
		}
		return nil
	}
	return w.writeRows(w.cols, w.formats, rec, 0, int(rec.NumRows()))
}

// writeRows sends rows [lo, hi) of rec, whose columns have been checked to
// hold cols, as DataRows in formats (nil: all text).
func (w *resultWriter) writeRows(cols []Column, formats []int16, rec arrow.RecordBatch, lo, hi int) error {
	w.colState = w.colState[:0]
	defer func() { clear(w.colState) }() // drop the references to rec's columns
	zone := sessionZone(w.c.session)
	for j, col := range cols {
		arr := rec.Column(j)
		cs := columnState{allNull: col.Type.Kind == types.Unknown}
		if formats != nil && formats[j] == pgproto3.BinaryFormat {
			cs.format = types.NewColumnBinaryFormatter(col.Type, arr)
		} else {
			cs.format = types.NewColumnFormatterIn(col.Type, arr, zone)
		}
		if arr.NullN() > 0 {
			cs.validity, cs.offset = arr.NullBitmapBytes(), arr.Data().Offset()
		}
		w.colState = append(w.colState, cs)
	}

	ncols := len(w.colState)
	for i := lo; i < hi; i++ {
		b := append(w.row[:0], 'D', 0, 0, 0, 0, byte(ncols>>8), byte(ncols))
		for j := range w.colState {
			cs := &w.colState[j]
			if cs.allNull || cs.validity != nil && bitutil.BitIsNotSet(cs.validity, cs.offset+i) {
				b = append(b, 0xff, 0xff, 0xff, 0xff) // length -1: NULL
				continue
			}
			lp := len(b)
			b = append(b, 0, 0, 0, 0)
			b = cs.format(b, i)
			binary.BigEndian.PutUint32(b[lp:], uint32(len(b)-lp-4))
		}
		binary.BigEndian.PutUint32(b[1:], uint32(len(b)-1))
		w.row = b
		if err := w.c.write(b); err != nil {
			return err
		}
	}
	return nil
}

// Complete implements ResultWriter.
func (w *resultWriter) Complete(tag string) error {
	if err := w.live(); err != nil {
		return err
	}
	w.inRows, w.reported = false, true
	if err := w.endCopyOut(); err != nil {
		return err
	}
	if p := w.portal; p != nil {
		p.tag = tag
		if p.buffering {
			// Sent with the last rows.
			return nil
		}
	}
	return w.c.send(&pgproto3.CommandComplete{CommandTag: []byte(noNUL(tag))})
}

// EmptyQuery implements ResultWriter.
func (w *resultWriter) EmptyQuery() error {
	if err := w.live(); err != nil {
		return err
	}
	if w.inRows {
		return sqlerr.New(sqlerr.InternalError, "pgwire: EmptyQuery inside a row result")
	}
	w.reported = true
	return w.c.send(&pgproto3.EmptyQueryResponse{})
}

// Notice implements ResultWriter. The notice is flushed to the client at once,
// as PostgreSQL does, so that a long statement can report progress.
func (w *resultWriter) Notice(severity, code, message string) error {
	if err := w.live(); err != nil {
		return err
	}
	if code == "" {
		code = sqlerr.SuccessfulCompletion
	}
	if err := w.c.send(&pgproto3.NoticeResponse{
		Severity:            noNUL(severity),
		SeverityUnlocalized: noNUL(severity),
		Code:                noNUL(code),
		Message:             noNUL(message),
	}); err != nil {
		return err
	}
	return w.c.flush()
}

// ParameterStatus implements ResultWriter.
func (w *resultWriter) ParameterStatus(name, value string) error {
	if err := w.live(); err != nil {
		return err
	}
	return w.c.send(&pgproto3.ParameterStatus{Name: noNUL(name), Value: noNUL(value)})
}
