package flightsrv

import (
	"context"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/flight"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/streamsql/streamsql/pgwire"
	"github.com/streamsql/streamsql/sqlerr"
	"github.com/streamsql/streamsql/types"
)

// resultSchema is the Arrow schema Flight clients get for cols.
func resultSchema(cols []pgwire.Column) *arrow.Schema {
	fs := make([]arrow.Field, len(cols))
	for i, c := range cols {
		fs[i] = arrow.Field{Name: c.Name, Type: types.PortableType(c.Type), Nullable: true}
	}
	return arrow.NewSchema(fs, nil)
}

// batchWriter is the pgwire.ResultWriter of a query streamed to a Flight
// client: each batch the query produced goes out as it is, but for the
// columns types.NeedsText names, sent as text.
type batchWriter struct {
	ctx    context.Context
	ch     chan<- flight.StreamChunk
	schema *arrow.Schema
	mem    memory.Allocator
	cols   []pgwire.Column
	rows   bool
}

func (w *batchWriter) BeginRows(cols []pgwire.Column) error {
	if w.rows {
		return sqlerr.New(sqlerr.FeatureNotSupported, "a Flight SQL query must be one statement returning rows")
	}
	w.rows, w.cols = true, cols
	return nil
}

func (w *batchWriter) WriteRows(rec arrow.RecordBatch) error {
	out := w.convert(rec)
	select {
	case w.ch <- flight.StreamChunk{Data: out}:
		return nil
	case <-w.ctx.Done():
		out.Release()
		return w.ctx.Err()
	}
}

// convert returns rec's columns under the schema clients were given, the
// columns types.NeedsText names rendered as text; the others are rec's own.
func (w *batchWriter) convert(rec arrow.RecordBatch) arrow.RecordBatch {
	arrs := make([]arrow.Array, rec.NumCols())
	converted := false
	for i := range arrs {
		arrs[i] = rec.Column(i)
		if types.NeedsText(w.cols[i].Type) {
			arrs[i] = types.TextColumn(w.mem, w.cols[i].Type, arrs[i])
			defer arrs[i].Release()
			converted = true
		}
	}
	if !converted {
		for _, a := range arrs {
			a.Retain()
			defer a.Release()
		}
	}
	// The columns under the schema the client was given (the query's own
	// batches may name their fields otherwise).
	return array.NewRecordBatch(w.schema, arrs, rec.NumRows())
}

func (w *batchWriter) Complete(string) error                { return nil }
func (w *batchWriter) EmptyQuery() error                    { return nil }
func (w *batchWriter) Notice(string, string, string) error  { return nil }
func (w *batchWriter) ParameterStatus(string, string) error { return nil }

// updateWriter is the pgwire.ResultWriter of DoPut statements: it counts
// the rows their command tags report and refuses rows.
type updateWriter struct{ rows int64 }

func (w *updateWriter) BeginRows([]pgwire.Column) error {
	return sqlerr.New(sqlerr.FeatureNotSupported, "the statement returns rows: run it as a query")
}
func (w *updateWriter) WriteRows(arrow.RecordBatch) error    { return nil }
func (w *updateWriter) Complete(tag string) error            { w.rows += rowsOfTag(tag); return nil }
func (w *updateWriter) EmptyQuery() error                    { return nil }
func (w *updateWriter) Notice(string, string, string) error  { return nil }
func (w *updateWriter) ParameterStatus(string, string) error { return nil }
