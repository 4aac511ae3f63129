package posixfs

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/streamsql/streamsql/connector/textdec"
	"github.com/streamsql/streamsql/types"
)

// textReader reads a file of CSV or JSON lines: one record per line (the
// last may lack its line break; blank lines are skipped), after a header
// line for CSV without without_header. It reads through a 64 KiB buffer, a
// batch at a time.
type textReader struct {
	f   *os.File
	br  *bufio.Reader
	dec interface {
		Decode([]byte, []types.Datum) error
	}
	cols []textdec.Column
	b    *array.RecordBuilder
	row  []types.Datum
	seq  int64
	pos  Pos
	done bool
	fail bool
	long []byte // a line longer than the buffer
}

func openText(mem memory.Allocator, o *Options, cols []textdec.Column, path string, seq int64, pos Pos) (*textReader, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	t := &textReader{f: f, cols: cols, row: make([]types.Datum, len(cols)), seq: seq, pos: pos, fail: o.FailOnError}
	t.br = bufio.NewReaderSize(f, 64<<10)
	if o.Encode == "json" {
		t.dec = textdec.NewJSON(cols)
	} else {
		csv := textdec.NewCSV(cols, o.Delimiter)
		t.dec = csv
		if !o.WithoutHeader {
			if err := t.readHeader(csv); err != nil {
				f.Close()
				return nil, err
			}
		}
	}
	if t.pos.Byte > 0 {
		if _, err := f.Seek(t.pos.Byte, io.SeekStart); err != nil {
			f.Close()
			return nil, err
		}
		t.br.Reset(f)
	}
	t.b = array.NewRecordBuilder(mem, Schema(cols))
	return t, nil
}

// readHeader reads the header line of a CSV file (and moves the position
// past it if the file is read from its start).
func (t *textReader) readHeader(csv *textdec.CSV) error {
	line, err := t.line()
	if err != nil && !errors.Is(err, io.EOF) {
		return err
	}
	if len(line) == 0 {
		if t.pos.Row == 0 {
			t.done = true // an empty file
		}
		return nil
	}
	if err := csv.SetHeader(line); err != nil {
		return &BadFileError{fmt.Errorf("the header line: %v", err)}
	}
	if t.pos.Row == 0 {
		t.pos = Pos{Byte: int64(len(line)), Row: 1}
	}
	return nil
}

// line reads the next line, its line break included; io.EOF with the last
// line if it has none.
func (t *textReader) line() ([]byte, error) {
	line, err := t.br.ReadSlice('\n')
	if !errors.Is(err, bufio.ErrBufferFull) {
		return line, err
	}
	t.long = append(t.long[:0], line...)
	for errors.Is(err, bufio.ErrBufferFull) {
		line, err = t.br.ReadSlice('\n')
		t.long = append(t.long, line...)
	}
	return t.long, err
}

func (t *textReader) Next(n int) (arrow.RecordBatch, []Bad, error) {
	var bad []Bad
	rows := 0
	for rows < n && !t.done {
		line, err := t.line()
		if err != nil && !errors.Is(err, io.EOF) {
			return t.finish(rows), bad, err
		}
		if errors.Is(err, io.EOF) {
			t.done = true
			if len(line) == 0 {
				break
			}
		}
		at := t.pos
		t.pos.Byte += int64(len(line))
		t.pos.Row++
		record := bytes.TrimRight(line, "\r\n")
		if len(bytes.TrimSpace(record)) == 0 {
			continue
		}
		if err := t.dec.Decode(record, t.row); err != nil {
			bad = append(bad, Bad{Line: at.Row + 1, Err: err})
			if t.fail {
				t.pos, t.done = at, false
				return t.finish(rows), bad, nil
			}
			continue
		}
		for i, c := range t.cols {
			types.AppendDatum(t.b.Field(i), c.Type, t.row[i])
		}
		t.b.Field(len(t.cols)).(*array.Int64Builder).Append(RowID(t.seq, at.Row))
		rows++
	}
	return t.finish(rows), bad, nil
}

// finish returns the batch under way, nil if it has no rows.
func (t *textReader) finish(rows int) arrow.RecordBatch {
	if rows == 0 {
		return nil
	}
	return t.b.NewRecordBatch()
}

func (t *textReader) Pos() Pos { return t.pos }

func (t *textReader) Done() bool { return t.done }

func (t *textReader) Close() error {
	t.b.Release()
	return t.f.Close()
}
