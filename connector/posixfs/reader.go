package posixfs

import (
	"errors"
	"fmt"
	"path/filepath"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/streamsql/streamsql/connector/textdec"
)

// Pos is how far a file has been read: Row records (lines of a text file,
// its header and blank lines included; rows of a Parquet file) and, in a
// text file, Byte bytes. The position of a file not read yet is the zero
// Pos.
type Pos struct {
	Byte, Row int64
}

// Bad is a record that did not decode: its line of a text file, or its row
// of a Parquet file, numbered from 1.
type Bad struct {
	Line int64
	Err  error
}

// BadFileError is returned by Open and Reader.Next for a file that cannot
// be read at all (not Parquet, a header that does not parse, a column whose
// type does not convert): unlike an I/O error, reading it again does not
// help.
type BadFileError struct{ Err error }

func (e *BadFileError) Error() string { return e.Err.Error() }

func (e *BadFileError) Unwrap() error { return e.Err }

// IsBadFile reports whether err is a BadFileError.
func IsBadFile(err error) bool {
	var b *BadFileError
	return errors.As(err, &b)
}

// Reader reads one file's records into Arrow batches of the source's
// columns and its row id last, from a position. It is not safe for
// concurrent use.
type Reader interface {
	// Next returns the next batch of at most n records, or nil if none is
	// left, and the records it skipped as bad. With Options.FailOnError it
	// stops at the first bad record instead, which it returns with the
	// position (Pos) at that record; the reader is then not to be used
	// again. The caller releases the batch.
	Next(n int) (arrow.RecordBatch, []Bad, error)
	// Pos is the position after the records returned.
	Pos() Pos
	// Done reports whether the file has been read to its end.
	Done() bool
	Close() error
}

// RowID is the row id of record row of the file numbered seq (in the order
// the reader found the files): unique and the same on every read.
func RowID(seq, row int64) int64 { return seq<<40 | row }

// MaxRows is the most records a file can have, MaxFiles the most files a
// source can read (RowID keeps 40 bits of the row, 23 of the file).
const (
	MaxRows  = 1 << 40
	MaxFiles = 1 << 23
)

// Schema is the schema of the batches of cols: the columns, then the row
// id.
func Schema(cols []textdec.Column) *arrow.Schema {
	fields := make([]arrow.Field, 0, len(cols)+1)
	for _, c := range cols {
		fields = append(fields, arrow.Field{Name: c.Name, Type: c.Type.ArrowType(), Nullable: true})
	}
	fields = append(fields, arrow.Field{Name: "_row_id", Type: arrow.PrimitiveTypes.Int64})
	return arrow.NewSchema(fields, nil)
}

// Open opens file name of o.Root at pos, the file numbered seq, to read
// batches of cols.
func Open(mem memory.Allocator, o *Options, cols []textdec.Column, name string, seq int64, pos Pos) (Reader, error) {
	p := filepath.Join(o.Root, name)
	switch o.Encode {
	case "csv", "json":
		return openText(mem, o, cols, p, seq, pos)
	case "parquet":
		return openParquet(mem, o, cols, p, seq, pos)
	}
	return nil, fmt.Errorf("posixfs: no reader for ENCODE %s", o.Encode)
}
