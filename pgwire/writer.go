package pgwire

import (
	"context"
	"encoding/binary"
	"math"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/bitutil"
	"github.com/jackc/pgx/v5/pgproto3"

	"github.com/streamsql/streamsql/sqlerr"
	"github.com/streamsql/streamsql/types"
)

// resultWriter is the ResultWriter a connection hands to Session.Query. One
// lives in each conn and is reused for every query.
type resultWriter struct {
	c   *conn
	ctx context.Context // the running query's; nil between queries

	cols   []Column // of the result being written; valid while inRows
	fields []pgproto3.FieldDescription
	inRows bool
	// reported is set once anything answered a statement (a CommandComplete,
	// an EmptyQueryResponse or a row description).
	reported bool

	colState []columnState // per column, during WriteRows
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

func (w *resultWriter) start(ctx context.Context) {
	w.ctx = ctx
	w.inRows = false
	w.reported = false
}

// finish ends the query's use of w and reports whether anything was reported.
func (w *resultWriter) finish() (reported bool) {
	w.ctx = nil
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
	if len(cols) > math.MaxInt16 {
		return sqlerr.New(sqlerr.InternalError, "pgwire: %d result columns is too many", len(cols))
	}
	w.cols = append(w.cols[:0], cols...)
	w.fields = w.fields[:0]
	for _, col := range cols {
		w.fields = append(w.fields, pgproto3.FieldDescription{
			Name:         []byte(noNUL(col.Name)),
			DataTypeOID:  col.Type.OID(),
			DataTypeSize: col.Type.Size(),
			TypeModifier: col.Type.Typmod(),
			Format:       pgproto3.TextFormat,
		})
	}
	w.inRows, w.reported = true, true
	return w.c.send(&pgproto3.RowDescription{Fields: w.fields})
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
	w.colState = w.colState[:0]
	defer func() { clear(w.colState) }() // drop the references to rec's columns
	for j, col := range w.cols {
		arr := rec.Column(j)
		if want := col.Type.ArrowType(); !arrow.TypeEqual(arr.DataType(), want) {
			return sqlerr.New(sqlerr.InternalError, "pgwire: column %q of type %v holds Arrow %v, not %v",
				col.Name, col.Type, arr.DataType(), want)
		}
		cs := columnState{
			format:  types.NewColumnFormatter(col.Type, arr),
			allNull: col.Type.Kind == types.Unknown,
		}
		if arr.NullN() > 0 {
			cs.validity, cs.offset = arr.NullBitmapBytes(), arr.Data().Offset()
		}
		w.colState = append(w.colState, cs)
	}

	ncols := len(w.colState)
	rows := int(rec.NumRows())
	for i := 0; i < rows; i++ {
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
