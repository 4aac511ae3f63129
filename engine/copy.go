package engine

import (
	"bufio"
	"context"
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/streamsql/streamsql/exec"
	"github.com/streamsql/streamsql/ir"
	"github.com/streamsql/streamsql/pgwire"
	"github.com/streamsql/streamsql/sql"
	"github.com/streamsql/streamsql/sqlerr"
	"github.com/streamsql/streamsql/types"
)

// copyBatchRows is the number of rows COPY FROM decodes into one batch.
const copyBatchRows = 4096

// copier is the COPY sub-protocol of w, or 0A000 if the connection has none.
func copier(w pgwire.ResultWriter) (pgwire.Copier, error) {
	c, ok := w.(pgwire.Copier)
	if !ok {
		return nil, sqlerr.Unsupported("COPY over this connection")
	}
	return c, nil
}

// copyFrom runs COPY table FROM STDIN: the client's data, decoded into
// batches of the copied columns, is inserted as INSERT ... SELECT inserts
// its rows (defaults, constraints, all or nothing).
func (e *Engine) copyFrom(ctx context.Context, st *sql.CopyFrom, q batchQuery, zone *types.Zone, w pgwire.ResultWriter) error {
	c, err := copier(w)
	if err != nil {
		return err
	}
	in, err := c.CopyIn(st.Format.Kind == sql.CopyBinary, len(st.Input.Cols))
	if err != nil {
		return err
	}
	ts := make([]types.T, len(st.Input.Cols))
	for i, col := range st.Input.Cols {
		ts[i] = col.Type
	}
	q.copyIn = func(ctx context.Context, out exec.Output) error {
		d := newCopyDecoder(bufio.NewReaderSize(in, 64<<10), st.Format, ts, zone)
		return d.run(ctx, e.mem, out)
	}
	n, err := e.insert(ctx, st.Insert, q)
	if err != nil {
		return err
	}
	return w.Complete(fmt.Sprintf("COPY %d", n))
}

// copyTo runs COPY ... TO STDOUT: the query's visible columns, encoded in
// the copy's format, one CopyData per batch.
func (e *Engine) copyTo(ctx context.Context, st *sql.CopyTo, q batchQuery, zone *types.Zone, w pgwire.ResultWriter) error {
	c, err := copier(w)
	if err != nil {
		return err
	}
	cols := st.Query.Columns()
	vis := ir.VisibleColumns(st.Query)
	enc := &copyEncoder{f: st.Format, zone: zone}
	for _, i := range vis {
		enc.names = append(enc.names, cols[i].Name)
		enc.types = append(enc.types, cols[i].Type)
	}
	if err := c.CopyOut(st.Format.Kind == sql.CopyBinary, len(vis)); err != nil {
		return err
	}
	if err := c.CopyData(enc.header()); err != nil {
		return err
	}
	var n int64
	err = e.runQuery(ctx, st.Query, q, exec.OutputFunc(func(_ context.Context, m exec.Message) error {
		if m.Batch == nil {
			return nil
		}
		defer m.Batch.Release()
		arrs := make([]arrow.Array, len(vis))
		for k, i := range vis {
			arrs[k] = m.Batch.Rec.Column(i)
		}
		n += m.Batch.Rec.NumRows()
		return c.CopyData(enc.rows(arrs, int(m.Batch.Rec.NumRows())))
	}))
	if err != nil {
		return err
	}
	if t := enc.trailer(); len(t) > 0 {
		if err := c.CopyData(t); err != nil {
			return err
		}
	}
	return w.Complete(fmt.Sprintf("COPY %d", n))
}

// emitCopyBatch sends the n rows built in bs as one insert batch.
func emitCopyBatch(ctx context.Context, bs []array.Builder, ts []types.T, n int, out exec.Output) error {
	arrs := make([]arrow.Array, len(bs))
	for i, b := range bs {
		arrs[i] = b.NewArray()
	}
	rec := array.NewRecordBatch(exec.SchemaOf(ts), arrs, int64(n))
	for _, a := range arrs {
		a.Release()
	}
	return out.Emit(ctx, exec.Message{Batch: exec.NewBatch(rec, nil)})
}
