package kafka

import (
	"fmt"
	"github.com/streamsql/streamsql/connector/jsonenc"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/streamsql/streamsql/catalog"
	"github.com/streamsql/streamsql/exec"
	"github.com/streamsql/streamsql/types"
)

// testBatch builds a batch of rows (text values, "NULL" for NULL) of
// columns cols.
func testBatch(t *testing.T, mem memory.Allocator, cols []catalog.Column, ops []exec.Op, rows ...[]string) *exec.Batch {
	t.Helper()
	var fields []arrow.Field
	for _, c := range cols {
		fields = append(fields, arrow.Field{Name: c.Name, Type: c.Type.ArrowType(), Nullable: true})
	}
	b := array.NewRecordBuilder(mem, arrow.NewSchema(fields, nil))
	defer b.Release()
	for _, row := range rows {
		for i, s := range row {
			d := types.Datum{Null: true}
			if s != "NULL" {
				var err error
				if d, err = types.ParseText(cols[i].Type, s); err != nil {
					t.Fatal(err)
				}
			}
			types.AppendDatum(b.Field(i), cols[i].Type, d)
		}
	}
	return exec.NewBatch(b.NewRecordBatch(), ops)
}

func testEncoder(format Format, cols []catalog.Column, key ...string) *encoder {
	e := &encoder{format: format, nowMillis: func() int64 { return 1700000000000 }}
	var names []string
	var idx []int
	for i, c := range cols {
		e.types = append(e.types, c.Type)
		if !c.Hidden {
			names, idx = append(names, c.Name), append(idx, i)
		}
	}
	e.value = jsonenc.NewRow(names, idx)
	if len(key) > 0 {
		var kidx []int
		for _, k := range key {
			kidx = append(kidx, columnIndex(cols, k))
		}
		e.key = jsonenc.NewRow(key, kidx)
	}
	return e
}

// records formats a chunk's records as "key => value" lines.
func records(t *testing.T, chunk []byte) string {
	t.Helper()
	var sb strings.Builder
	r := chunkReader{rest: chunk}
	for {
		k, v, ok, err := r.next()
		if err != nil {
			t.Fatal(err)
		}
		if !ok {
			return sb.String()
		}
		show := func(b []byte) string {
			if b == nil {
				return "<nil>"
			}
			return string(b)
		}
		fmt.Fprintf(&sb, "%s => %s\n", show(k), show(v))
	}
}

func TestEncodeJSONTypes(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
	defer mem.AssertSize(t, 0)
	cols := []catalog.Column{
		{Name: "b", Type: types.BoolT}, {Name: "i", Type: types.Int32T}, {Name: "f", Type: types.Float64T},
		{Name: "n", Type: types.NumericT}, {Name: "s", Type: types.TextT}, {Name: "ts", Type: types.TimestampT},
		{Name: "tz", Type: types.TimestampTZT}, {Name: "d", Type: types.DateT}, {Name: "j", Type: types.JSONBT},
		{Name: "iv", Type: types.IntervalT}, {Name: "h", Type: types.Int64T, Hidden: true},
	}
	b := testBatch(t, mem, cols, nil,
		[]string{"t", "-7", "1.5", "12.250", `a "q" \ é`, "2024-01-02 03:04:05.5", "2024-01-02 03:04:05+00", "2024-01-02", `{"x": [1, null]}`, "1 day 02:00:00", "9"},
		[]string{"f", "NULL", "NaN", "-3", "tab\there", "2024-01-02 00:00:00", "NULL", "NULL", "null", "NULL", "9"},
		[]string{"NULL", "0", "-Infinity", "0", "", "NULL", "NULL", "NULL", "NULL", "NULL", "9"},
	)
	defer b.Release()
	chunk, n := testEncoder(Plain, cols).encodeBatch(nil, b)
	if n != 3 {
		t.Fatalf("%d records", n)
	}
	want := `<nil> => {"b":true,"i":-7,"f":1.5,"n":12.250,"s":"a \"q\" \\ é","ts":"2024-01-02T03:04:05.5","tz":"2024-01-02T03:04:05+00:00","d":"2024-01-02","j":{"x": [1, null]},"iv":"1 day 02:00:00"}
<nil> => {"b":false,"i":null,"f":"NaN","n":-3,"s":"tab\there","ts":"2024-01-02T00:00:00","tz":null,"d":null,"j":null,"iv":null}
<nil> => {"b":null,"i":0,"f":"-Infinity","n":0,"s":"","ts":null,"tz":null,"d":null,"j":null,"iv":null}
`
	if got := records(t, chunk); got != want {
		t.Errorf("got\n%swant\n%s", got, want)
	}
}

func TestEncodeFormats(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
	defer mem.AssertSize(t, 0)
	cols := []catalog.Column{{Name: "k", Type: types.Int32T}, {Name: "v", Type: types.TextT}}
	ops := []exec.Op{exec.Insert, exec.UpdateDelete, exec.UpdateInsert, exec.UpdateDelete, exec.UpdateInsert, exec.Delete, exec.UpdateDelete}
	b := testBatch(t, mem, cols, ops,
		[]string{"1", "a"},
		[]string{"1", "a"}, []string{"1", "b"}, // an update of v
		[]string{"1", "b"}, []string{"2", "b"}, // an update of the key
		[]string{"2", "b"},
		[]string{"3", "c"}, // an UpdateDelete whose UpdateInsert is in the next batch
	)
	defer b.Release()
	for _, c := range []struct {
		format Format
		key    []string
		want   string
	}{
		{Plain, nil, `<nil> => {"k":1,"v":"a"}
<nil> => {"k":1,"v":"b"}
<nil> => {"k":2,"v":"b"}
`},
		{Upsert, []string{"k"}, `{"k":1} => {"k":1,"v":"a"}
{"k":1} => {"k":1,"v":"b"}
{"k":1} => <nil>
{"k":2} => {"k":2,"v":"b"}
{"k":2} => <nil>
{"k":3} => <nil>
`},
		{Debezium, []string{"k"}, `{"k":1} => {"before":null,"after":{"k":1,"v":"a"},"op":"c","ts_ms":1700000000000}
{"k":1} => {"before":{"k":1,"v":"a"},"after":{"k":1,"v":"b"},"op":"u","ts_ms":1700000000000}
{"k":1} => {"before":{"k":1,"v":"b"},"after":null,"op":"d","ts_ms":1700000000000}
{"k":2} => {"before":null,"after":{"k":2,"v":"b"},"op":"c","ts_ms":1700000000000}
{"k":2} => {"before":{"k":2,"v":"b"},"after":null,"op":"d","ts_ms":1700000000000}
{"k":3} => {"before":{"k":3,"v":"c"},"after":null,"op":"d","ts_ms":1700000000000}
`},
		{Debezium, nil, `<nil> => {"before":null,"after":{"k":1,"v":"a"},"op":"c","ts_ms":1700000000000}
<nil> => {"before":{"k":1,"v":"a"},"after":{"k":1,"v":"b"},"op":"u","ts_ms":1700000000000}
<nil> => {"before":{"k":1,"v":"b"},"after":{"k":2,"v":"b"},"op":"u","ts_ms":1700000000000}
<nil> => {"before":{"k":2,"v":"b"},"after":null,"op":"d","ts_ms":1700000000000}
<nil> => {"before":{"k":3,"v":"c"},"after":null,"op":"d","ts_ms":1700000000000}
`},
	} {
		chunk, _ := testEncoder(c.format, cols, c.key...).encodeBatch(nil, b)
		if got := records(t, chunk); got != c.want {
			t.Errorf("%v %v: got\n%swant\n%s", c.format, c.key, got, c.want)
		}
	}
}

func TestChunkReaderCorrupt(t *testing.T) {
	chunk := appendRecord(nil, []byte("k"), []byte("value"))
	r := chunkReader{rest: chunk[:len(chunk)-1]}
	if _, _, _, err := r.next(); err != errCorruptChunk {
		t.Fatalf("got %v", err)
	}
}

func BenchmarkEncodeUpsert(b *testing.B) {
	mem := memory.NewGoAllocator()
	cols := []catalog.Column{{Name: "k", Type: types.Int64T}, {Name: "name", Type: types.TextT}, {Name: "price", Type: types.NumericT}, {Name: "ts", Type: types.TimestampT}}
	rows := make([][]string, 1024)
	for i := range rows {
		rows[i] = []string{fmt.Sprint(i), fmt.Sprintf("item %d", i), "12.50", "2024-01-02 03:04:05"}
	}
	batch := testBatch(&testing.T{}, mem, cols, nil, rows...)
	defer batch.Release()
	e := testEncoder(Upsert, cols, "k")
	var chunk []byte
	b.ReportAllocs()
	b.SetBytes(int64(len(rows)))
	for b.Loop() {
		chunk, _ = e.encodeBatch(chunk[:0], batch)
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(rows)), "ns/row")
}
