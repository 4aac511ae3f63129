package posixfs

import (
	"context"
	"fmt"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/compute"
	computeexec "github.com/apache/arrow-go/v18/arrow/compute/exec"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
	"github.com/streamsql/streamsql/connector/textdec"
	"github.com/streamsql/streamsql/exec"
)

// parquetReader reads a Parquet file a batch of rows at a time (the record
// reader reads one row group's pages at a time), matching the file's
// top-level columns to the source's by name (exactly, else ignoring case);
// a source column the file lacks is NULL.
type parquetReader struct {
	mem    memory.Allocator
	ctx    context.Context
	pf     *file.Reader
	rr     pqarrow.RecordReader
	schema *arrow.Schema
	conv   []converter
	seq    int64
	pos    Pos
	total  int64
	fail   bool
	// stopped: Next stopped at a bad row (error.policy = 'fail').
	stopped bool
	// cur is the record reader's batch under way, read up to curOff.
	cur    arrow.RecordBatch
	curOff int64
}

func openParquet(mem memory.Allocator, o *Options, cols []textdec.Column, path string, seq int64, pos Pos) (*parquetReader, error) {
	pf, err := file.OpenParquetFile(path, false)
	if err != nil {
		if strings.Contains(err.Error(), "parquet") {
			return nil, &BadFileError{fmt.Errorf("not a Parquet file: %v", err)}
		}
		return nil, err
	}
	p := &parquetReader{mem: mem, ctx: computeexec.WithAllocator(context.Background(), mem), pf: pf,
		schema: Schema(cols), seq: seq, pos: pos, total: pf.NumRows(), fail: o.FailOnError}
	if err := p.open(cols); err != nil {
		pf.Close()
		return nil, err
	}
	return p, nil
}

// open makes the record reader at p.pos and the columns' converters.
func (p *parquetReader) open(cols []textdec.Column) error {
	fr, err := pqarrow.NewFileReader(p.pf, pqarrow.ArrowReadProperties{BatchSize: exec.BatchSize}, p.mem)
	if err != nil {
		return &BadFileError{err}
	}
	fileSchema, err := fr.Schema()
	if err != nil {
		return &BadFileError{err}
	}
	if p.conv, err = converters(fileSchema, cols); err != nil {
		return &BadFileError{err}
	}
	if p.pos.Row >= p.total {
		return nil
	}
	if p.rr, err = fr.GetRecordReader(p.ctx, nil, nil); err != nil {
		return &BadFileError{err}
	}
	if p.pos.Row > 0 {
		if err := p.rr.SeekToRow(p.pos.Row); err != nil {
			p.rr.Release()
			p.rr = nil
			return err
		}
	}
	return nil
}

func (p *parquetReader) Next(n int) (arrow.RecordBatch, []Bad, error) {
	if p.Done() || p.stopped {
		return nil, nil, nil
	}
	if p.cur == nil || p.curOff == p.cur.NumRows() {
		p.releaseCur()
		if !p.rr.Next() {
			if err := p.rr.Err(); err != nil {
				return nil, nil, err
			}
			p.pos.Row = p.total // the metadata counted rows the reader did not find
			return nil, nil, nil
		}
		p.cur, p.curOff = p.rr.RecordBatch(), 0
		p.cur.Retain()
	}
	take := min(int64(n), p.cur.NumRows()-p.curOff)
	in := p.cur.NewSlice(p.curOff, p.curOff+take)
	defer in.Release()
	p.curOff += take
	rec, bad, err := p.convert(in)
	if err != nil {
		return nil, nil, err
	}
	if p.fail && len(bad) > 0 {
		first := bad[0].Line - 1 - p.pos.Row
		p.pos.Row += first
		p.stopped = true
		out := rec.NewSlice(0, first)
		rec.Release()
		if first == 0 {
			out.Release()
			out = nil
		}
		return out, bad[:1], nil
	}
	p.pos.Row += in.NumRows()
	if rec.NumRows() == 0 {
		rec.Release()
		rec = nil
	}
	return rec, bad, nil
}

// convert converts a batch of the file into one of the source's columns:
// each column as its converter says, then the row ids; rows with a value
// that does not convert are left out and returned as bad.
func (p *parquetReader) convert(in arrow.RecordBatch) (arrow.RecordBatch, []Bad, error) {
	rows := in.NumRows()
	arrs := make([]arrow.Array, 0, len(p.conv)+1)
	defer func() {
		for _, a := range arrs {
			a.Release()
		}
	}()
	badRows := map[int64]error{}
	for _, c := range p.conv {
		a, err := c.convert(p.ctx, p.mem, in, badRows)
		if err != nil {
			return nil, nil, err
		}
		arrs = append(arrs, a)
	}
	ids := array.NewInt64Builder(p.mem)
	for i := int64(0); i < rows; i++ {
		ids.Append(RowID(p.seq, p.pos.Row+i))
	}
	arrs = append(arrs, ids.NewArray())
	ids.Release()
	rec := array.NewRecordBatch(p.schema, arrs, rows)
	if len(badRows) == 0 {
		return rec, nil, nil
	}
	defer rec.Release()
	keep := array.NewBooleanBuilder(p.mem)
	defer keep.Release()
	var bad []Bad
	for i := int64(0); i < rows; i++ {
		err, isBad := badRows[i]
		keep.Append(!isBad)
		if isBad {
			bad = append(bad, Bad{Line: p.pos.Row + i + 1, Err: err})
		}
	}
	mask := keep.NewArray()
	defer mask.Release()
	out, err := compute.FilterRecordBatch(p.ctx, rec, mask, compute.DefaultFilterOptions())
	if err != nil {
		return nil, nil, err
	}
	return out, bad, nil
}

func (p *parquetReader) Pos() Pos { return p.pos }

func (p *parquetReader) Done() bool { return p.pos.Row >= p.total }

// releaseCur releases the batch under way.
func (p *parquetReader) releaseCur() {
	if p.cur != nil {
		p.cur.Release()
		p.cur = nil
	}
}

func (p *parquetReader) Close() error {
	p.releaseCur()
	if p.rr != nil {
		p.rr.Release()
	}
	return p.pf.Close()
}
