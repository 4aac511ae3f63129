package fs

import (
	"bufio"
	"io"
	"os"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/compress"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"

	"github.com/streamsql/streamsql/catalog"
	"github.com/streamsql/streamsql/connector/jsonenc"
	"github.com/streamsql/streamsql/exec"
	"github.com/streamsql/streamsql/types"
)

// visible returns the visible columns of rel: their indexes, names and
// types.
func visible(rel *catalog.Relation) (cols []int, names []string, ts []types.T) {
	for i, c := range rel.Columns {
		ts = append(ts, c.Type)
		if !c.Hidden {
			cols, names = append(cols, i), append(names, c.Name)
		}
	}
	return cols, names, ts
}

// writerOnly hides a file's Close from the Parquet writer, which would
// close it before the sink syncs it.
type writerOnly struct{ w io.Writer }

func (w writerOnly) Write(p []byte) (int, error) { return w.w.Write(p) }

// parquetWriter writes the rows of a file as Parquet (snappy), the visible
// columns with their Arrow types (types.PortableType).
type parquetWriter struct {
	w      *pqarrow.FileWriter
	schema *arrow.Schema
	cols   []int
	ts     []types.T
	mem    memory.Allocator
}

func newParquetWriter(f *os.File, rel *catalog.Relation) (*parquetWriter, error) {
	cols, names, ts := visible(rel)
	fields := make([]arrow.Field, len(cols))
	for k, c := range cols {
		fields[k] = arrow.Field{Name: names[k], Type: types.PortableType(ts[c]), Nullable: true}
	}
	schema := arrow.NewSchema(fields, nil)
	props := parquet.NewWriterProperties(parquet.WithCompression(compress.Codecs.Snappy))
	w, err := pqarrow.NewFileWriter(schema, writerOnly{f}, props, pqarrow.DefaultWriterProps())
	if err != nil {
		return nil, err
	}
	return &parquetWriter{w: w, schema: schema, cols: cols, ts: ts, mem: memory.DefaultAllocator}, nil
}

func (p *parquetWriter) write(b *exec.Batch, from, to int) error {
	rec := b.Rec
	arrs := make([]arrow.Array, len(p.cols))
	for k, c := range p.cols {
		a := array.NewSlice(rec.Column(c), int64(from), int64(to))
		defer a.Release()
		if types.NeedsText(p.ts[c]) {
			a = types.TextColumn(p.mem, p.ts[c], a)
			defer a.Release()
		}
		arrs[k] = a
	}
	out := array.NewRecordBatch(p.schema, arrs, int64(to-from))
	defer out.Release()
	return p.w.WriteBuffered(out)
}

func (p *parquetWriter) close() error { return p.w.Close() }

// jsonWriter writes the rows of a file as JSON lines: one object per row,
// the visible columns by name, values as to_jsonb gives them.
type jsonWriter struct {
	bw  *bufio.Writer
	row *jsonenc.Row
	ts  []types.T
	buf []byte
}

func newJSONWriter(f *os.File, rel *catalog.Relation) *jsonWriter {
	cols, names, ts := visible(rel)
	return &jsonWriter{bw: bufio.NewWriterSize(f, 256<<10), row: jsonenc.NewRow(names, cols), ts: ts}
}

func (j *jsonWriter) write(b *exec.Batch, from, to int) error {
	j.row.Reset(b.Rec, j.ts)
	defer j.row.Release()
	for i := from; i < to; i++ {
		j.buf = append(j.row.AppendRow(j.buf[:0], i), '\n')
		if _, err := j.bw.Write(j.buf); err != nil {
			return err
		}
	}
	return nil
}

func (j *jsonWriter) close() error { return j.bw.Flush() }
