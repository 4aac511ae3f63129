package posixfs

import (
	"context"
	"fmt"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/compute"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/streamsql/streamsql/connector/textdec"
	"github.com/streamsql/streamsql/types"
)

// How a converter makes a source column of a Parquet column.
const (
	convNull  = iota // the file has no such column: NULL
	convSame         // the same Arrow type: as it is
	convParse        // a string column: each value as the column type's text input
	convCast         // another type: Arrow's safe cast (numbers widen, and so on)
)

// converter makes one source column of a file's batch.
type converter struct {
	col  textdec.Column
	src  int // the file's column
	kind int
}

// converters matches the source's columns to the file's top-level columns
// by name (exactly, else ignoring case). It fails for a column whose type
// does not convert.
func converters(file *arrow.Schema, cols []textdec.Column) ([]converter, error) {
	conv := make([]converter, len(cols))
	for i, c := range cols {
		conv[i] = converter{col: c, src: fieldIndex(file, c.Name)}
		if conv[i].src < 0 {
			continue
		}
		from, to := file.Field(conv[i].src).Type, c.Type.ArrowType()
		switch {
		case c.Type.Kind == types.JSONB || c.Type.Kind == types.UUID:
			if !isString(from) {
				return nil, incompatible(c, from)
			}
			conv[i].kind = convParse
		case arrow.TypeEqual(from, to):
			conv[i].kind = convSame
		case isString(from) && c.Type.Kind != types.Text:
			conv[i].kind = convParse
		case compute.CanCast(from, to):
			conv[i].kind = convCast
		default:
			return nil, incompatible(c, from)
		}
	}
	return conv, nil
}

func incompatible(c textdec.Column, from arrow.DataType) error {
	return fmt.Errorf("column %s (%s) cannot be read from the file's column of Parquet (Arrow) type %s", c.Name, c.Type, from)
}

func fieldIndex(s *arrow.Schema, name string) int {
	if idx := s.FieldIndices(name); len(idx) > 0 {
		return idx[0]
	}
	for i, f := range s.Fields() {
		if strings.EqualFold(f.Name, name) {
			return i
		}
	}
	return -1
}

func isString(t arrow.DataType) bool {
	return t.ID() == arrow.STRING || t.ID() == arrow.LARGE_STRING
}

// convert returns the source column of batch in, recording the rows whose
// value does not convert in bad (their value is NULL). The caller releases
// the column.
func (c converter) convert(ctx context.Context, mem memory.Allocator, in arrow.RecordBatch, bad map[int64]error) (arrow.Array, error) {
	rows := int(in.NumRows())
	switch c.kind {
	case convNull:
		return array.MakeArrayOfNull(mem, c.col.Type.ArrowType(), rows), nil
	case convSame:
		a := in.Column(c.src)
		a.Retain()
		return a, nil
	case convParse:
		return c.parse(mem, in.Column(c.src), bad), nil
	}
	out, err := compute.CastArray(ctx, in.Column(c.src), compute.SafeCastOptions(c.col.Type.ArrowType()))
	if err == nil {
		return out, nil
	}
	return c.castEach(ctx, mem, in.Column(c.src), bad)
}

// parse parses each string of a as the column type's text input.
func (c converter) parse(mem memory.Allocator, a arrow.Array, bad map[int64]error) arrow.Array {
	b := array.NewBuilder(mem, c.col.Type.ArrowType())
	defer b.Release()
	b.Reserve(a.Len())
	str, _ := a.(interface{ Value(int) string })
	for i := 0; i < a.Len(); i++ {
		if a.IsNull(i) {
			b.AppendNull()
			continue
		}
		d, err := types.ParseText(c.col.Type, str.Value(i))
		if err != nil {
			bad[int64(i)] = fmt.Errorf("column %s: %v", c.col.Name, err)
			b.AppendNull()
			continue
		}
		types.AppendDatum(b, c.col.Type, d)
	}
	return b.NewArray()
}

// castEach casts a one value at a time, to find the values that do not
// cast (after a cast of the whole column failed).
func (c converter) castEach(ctx context.Context, mem memory.Allocator, a arrow.Array, bad map[int64]error) (arrow.Array, error) {
	to := c.col.Type.ArrowType()
	parts := make([]arrow.Array, 0, a.Len())
	defer func() {
		for _, p := range parts {
			p.Release()
		}
	}()
	for i := 0; i < a.Len(); i++ {
		one := array.NewSlice(a, int64(i), int64(i+1))
		out, err := compute.CastArray(ctx, one, compute.SafeCastOptions(to))
		one.Release()
		if err != nil {
			bad[int64(i)] = fmt.Errorf("column %s: %v", c.col.Name, err)
			out = array.MakeArrayOfNull(mem, to, 1)
		}
		parts = append(parts, out)
	}
	if len(parts) == 0 {
		return array.MakeArrayOfNull(mem, to, 0), nil
	}
	return array.Concatenate(parts, mem)
}
