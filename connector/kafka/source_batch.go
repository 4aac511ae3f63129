package kafka

import (
	"fmt"
	"strconv"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/streamsql/streamsql/connector/textdec"
	"github.com/streamsql/streamsql/types"
	"github.com/twmb/franz-go/pkg/kgo"
)

// Column is a column of a Kafka source, in the relation's order.
type Column = textdec.Column

// RowID is the row id of the message at (partition, offset): unique and
// the same on every read of the message.
func RowID(partition int32, offset int64) int64 { return int64(partition)<<40 | offset }

// decoder decodes a message's value into the payload columns' datums. On
// error the row is left in any state.
type decoder interface {
	decode(value []byte, row []types.Datum) error
}

// jsonDecoder decodes ENCODE JSON messages, one object each.
type jsonDecoder struct{ *textdec.JSON }

func (d jsonDecoder) decode(value []byte, row []types.Datum) error { return d.Decode(value, row) }

// csvDecoder decodes ENCODE CSV messages: one record each, after a header
// line naming the columns unless without_header = 'true'.
type csvDecoder struct {
	*textdec.CSV
	header bool
}

func (d csvDecoder) decode(value []byte, row []types.Datum) error {
	return d.DecodeMessage(value, d.header, row)
}

// BatchBuilder decodes messages into Arrow record batches with the
// source's columns and its row id last. A message that does not decode
// adds nothing. It is not safe for concurrent use.
type BatchBuilder struct {
	schema   *arrow.Schema
	cols     []Column
	b        *array.RecordBuilder
	dec      decoder
	payload  []int     // payload column i is relation column payload[i]
	includes []Include // per relation column; Kind 0 for payload columns
	row      []types.Datum
	rows     int
	scratch  []byte
}

// NewBatchBuilder returns a builder of o's messages into batches of cols.
// It fails if a column type cannot be decoded in o's encoding.
func NewBatchBuilder(mem memory.Allocator, o *SourceOptions, cols []Column) (*BatchBuilder, error) {
	fields := make([]arrow.Field, 0, len(cols)+1)
	for _, c := range cols {
		fields = append(fields, arrow.Field{Name: c.Name, Type: c.Type.ArrowType(), Nullable: true})
	}
	fields = append(fields, arrow.Field{Name: "_row_id", Type: arrow.PrimitiveTypes.Int64})
	bb := &BatchBuilder{schema: arrow.NewSchema(fields, nil), cols: cols, includes: make([]Include, len(cols))}
	var payload []Column
	for i, c := range cols {
		if inc, ok := o.Includes[c.Name]; ok {
			if err := checkIncludeType(c, inc); err != nil {
				return nil, err
			}
			bb.includes[i] = inc
			continue
		}
		bb.payload = append(bb.payload, i)
		payload = append(payload, c)
	}
	bb.row = make([]types.Datum, len(payload))
	switch o.Encode {
	case "json":
		bb.dec = jsonDecoder{textdec.NewJSON(payload)}
	case "csv":
		bb.dec = csvDecoder{textdec.NewCSV(payload, o.Delimiter), !o.WithoutHeader}
	case "avro":
		bb.dec = newAvroDecoder(payload, newRegistry(o.SchemaRegistry))
	default:
		return nil, fmt.Errorf("kafka: no decoder for ENCODE %s", o.Encode)
	}
	bb.b = array.NewRecordBuilder(mem, bb.schema)
	return bb, nil
}

// includeTypes are the types of INCLUDE columns (RisingWave's).
var includeTypes = map[IncludeKind]types.T{
	IncludeKey: types.ByteaT, IncludePartition: types.TextT, IncludeOffset: types.TextT,
	IncludeTimestamp: types.TimestampTZT, IncludeHeader: types.ByteaT,
}

// IncludeType returns the type of an INCLUDE column of kind k.
func IncludeType(k IncludeKind) types.T { return includeTypes[k] }

func checkIncludeType(c Column, inc Include) error {
	if t := includeTypes[inc.Kind]; c.Type.Kind != t.Kind {
		return fmt.Errorf("kafka: INCLUDE column %s is %s, not %s", c.Name, c.Type, t)
	}
	return nil
}

// Add decodes r into the batch under way; on error nothing is added.
func (bb *BatchBuilder) Add(r *kgo.Record) error {
	if err := bb.dec.decode(r.Value, bb.row); err != nil {
		return err
	}
	for i, col := range bb.payload {
		types.AppendDatum(bb.b.Field(col), bb.cols[col].Type, bb.row[i])
	}
	for i, inc := range bb.includes {
		if inc.Kind != 0 {
			bb.appendInclude(bb.b.Field(i), inc, r)
		}
	}
	bb.b.Field(len(bb.cols)).(*array.Int64Builder).Append(RowID(r.Partition, r.Offset))
	bb.rows++
	return nil
}

func (bb *BatchBuilder) appendInclude(b array.Builder, inc Include, r *kgo.Record) {
	switch inc.Kind {
	case IncludeKey:
		if r.Key == nil {
			b.AppendNull()
			return
		}
		b.(*array.BinaryBuilder).Append(r.Key)
	case IncludePartition:
		bb.scratch = strconv.AppendInt(bb.scratch[:0], int64(r.Partition), 10)
		b.(*array.StringBuilder).BinaryBuilder.Append(bb.scratch)
	case IncludeOffset:
		bb.scratch = strconv.AppendInt(bb.scratch[:0], r.Offset, 10)
		b.(*array.StringBuilder).BinaryBuilder.Append(bb.scratch)
	case IncludeTimestamp:
		b.(*array.TimestampBuilder).Append(arrow.Timestamp(r.Timestamp.UnixMicro()))
	case IncludeHeader:
		for _, h := range r.Headers {
			if h.Key == inc.Header {
				b.(*array.BinaryBuilder).Append(h.Value)
				return
			}
		}
		b.AppendNull()
	}
}

// Rows is the number of rows of the batch under way.
func (bb *BatchBuilder) Rows() int { return bb.rows }

// Finish returns the batch under way (the caller releases it) and starts
// the next.
func (bb *BatchBuilder) Finish() arrow.RecordBatch {
	bb.rows = 0
	return bb.b.NewRecordBatch()
}

// Release releases the builder.
func (bb *BatchBuilder) Release() { bb.b.Release() }
