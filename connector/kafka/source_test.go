package kafka

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/hamba/avro/v2"
	"github.com/streamsql/streamsql/sqlerr"
	"github.com/streamsql/streamsql/types"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
)

// cluster starts an in-process broker with topic t of the given partitions.
func cluster(t *testing.T, partitions int32) []string {
	t.Helper()
	c, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(partitions, "t"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	return c.ListenAddrs()
}

func produce(t *testing.T, addrs []string, recs ...*kgo.Record) {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(addrs...), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	for _, r := range recs {
		r.Topic = "t"
	}
	if err := cl.ProduceSync(context.Background(), recs...).FirstErr(); err != nil {
		t.Fatal(err)
	}
}

func options(t *testing.T, addrs []string, extra map[string]string) *SourceOptions {
	t.Helper()
	opts := map[string]string{"connector": "kafka", "topic": "t", "properties.bootstrap.server": strings.Join(addrs, ","),
		"format": "plain", "encode": "json"}
	for k, v := range extra {
		opts[k] = v
	}
	o, err := ParseSourceOptions(opts)
	if err != nil {
		t.Fatal(err)
	}
	return o
}

// readAll consumes the topic from the startup offsets until n records have
// come, and decodes them; it returns the rows as text and the number that
// failed to decode.
func readAll(t *testing.T, o *SourceOptions, cols []Column, n int) ([]string, int) {
	t.Helper()
	mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
	defer mem.AssertSize(t, 0)
	bb, err := NewBatchBuilder(mem, o, cols)
	if err != nil {
		t.Fatal(err)
	}
	defer bb.Release()
	r, err := NewReader(o)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	from, err := r.Discover(ctx, nil, true)
	if err != nil {
		t.Fatal(err)
	}
	r.Consume(from)
	bad, seen := 0, 0
	for seen < n {
		f := r.Poll(ctx, 100)
		if ctx.Err() != nil {
			t.Fatalf("read %d of %d records", seen, n)
		}
		for _, rec := range f.Records {
			seen++
			if err := bb.Add(rec); err != nil {
				bad++
			}
		}
	}
	rec := bb.Finish()
	defer rec.Release()
	return rowsText(rec, cols), bad
}

func rowsText(rec arrow.RecordBatch, cols []Column) []string {
	var rows []string
	for i := 0; i < int(rec.NumRows()); i++ {
		var fields []string
		for c, col := range cols {
			d := types.DatumAt(col.Type, rec.Column(c), i)
			if d.Null {
				fields = append(fields, "NULL")
			} else {
				fields = append(fields, string(types.AppendText(nil, col.Type, d)))
			}
		}
		rows = append(rows, strings.Join(fields, "|"))
	}
	return rows
}

func TestPlainJSON(t *testing.T) {
	addrs := cluster(t, 1)
	produce(t, addrs,
		&kgo.Record{Value: []byte(`{"id": 1, "name": "a\"b", "price": 2.5, "ok": true, "extra": {"x": [1, 2]}}`), Key: []byte("k1"),
			Headers: []kgo.RecordHeader{{Key: "h", Value: []byte("hv")}}},
		&kgo.Record{Value: []byte(`{"ID": "2", "name": null, "doc": {"a": [1, "}"]}}`)},
		&kgo.Record{Value: []byte(`not json`)},
		&kgo.Record{Value: []byte(`{"id": "x"}`)},
		&kgo.Record{Value: []byte(`{"id": 3, "name": "c"} trailing`)},
	)
	o := options(t, addrs, map[string]string{"include.k": "key", "include.p": "partition", "include.o": "offset", "include.h": "header:h"})
	cols := []Column{{Name: "id", Type: types.Int64T}, {Name: "name", Type: types.TextT}, {Name: "price", Type: types.Float64T}, {Name: "ok", Type: types.BoolT},
		{Name: "doc", Type: types.JSONBT}, {Name: "k", Type: types.ByteaT}, {Name: "p", Type: types.TextT}, {Name: "o", Type: types.TextT}, {Name: "h", Type: types.ByteaT}}
	rows, bad := readAll(t, o, cols, 5)
	want := []string{
		`1|a"b|2.5|t|NULL|\x6b31|0|0|\x6876`,
		`2|NULL|NULL|NULL|{"a": [1, "}"]}|NULL|0|1|NULL`,
	}
	if fmt.Sprint(rows) != fmt.Sprint(want) || bad != 3 {
		t.Fatalf("got %q, %d bad; want %q, 3 bad", rows, bad, want)
	}
}

func TestPlainCSV(t *testing.T) {
	addrs := cluster(t, 1)
	produce(t, addrs,
		&kgo.Record{Value: []byte(`1;"x;""y""";`)},
		&kgo.Record{Value: []byte(`2;;3.5`)},
		&kgo.Record{Value: []byte(`3;z`)},
	)
	o := options(t, addrs, map[string]string{"encode": "csv", "encode.delimiter": ";", "encode.without_header": "true"})
	cols := []Column{{Name: "id", Type: types.Int32T}, {Name: "s", Type: types.TextT}, {Name: "f", Type: types.Float64T}}
	rows, bad := readAll(t, o, cols, 3)
	want := []string{`1|x;"y"|NULL`, `2|NULL|3.5`}
	if fmt.Sprint(rows) != fmt.Sprint(want) || bad != 1 {
		t.Fatalf("got %q, %d bad; want %q, 1 bad", rows, bad, want)
	}

	// With a header line the fields are matched by name.
	addrs = cluster(t, 1)
	produce(t, addrs, &kgo.Record{Value: []byte("f,id,other\n1.5,7,q")})
	o = options(t, addrs, map[string]string{"encode": "csv", "encode.without_header": "false"})
	rows, bad = readAll(t, o, cols, 1)
	if fmt.Sprint(rows) != "[7|NULL|1.5]" || bad != 0 {
		t.Fatalf("with header: got %q, %d bad", rows, bad)
	}
}

func TestAvroSchemaRegistry(t *testing.T) {
	const schemaText = `{"type": "record", "name": "r", "fields": [
		{"name": "id", "type": "long"}, {"name": "name", "type": ["null", "string"]},
		{"name": "ts", "type": {"type": "long", "logicalType": "timestamp-micros"}}]}`
	schema := avro.MustParse(schemaText)
	reg := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/schemas/ids/7" {
			http.NotFound(w, r)
			return
		}
		json.NewEncoder(w).Encode(map[string]string{"schema": schemaText})
	}))
	defer reg.Close()
	wire := func(id uint32, v any) []byte {
		b, err := avro.Marshal(schema, v)
		if err != nil {
			t.Fatal(err)
		}
		return append(binary.BigEndian.AppendUint32([]byte{0}, id), b...)
	}
	name := "n"
	ts := time.Date(2024, 1, 2, 3, 4, 5, 0, time.UTC)
	addrs := cluster(t, 1)
	produce(t, addrs,
		&kgo.Record{Value: wire(7, map[string]any{"id": int64(1), "name": &name, "ts": ts})},
		&kgo.Record{Value: wire(7, map[string]any{"id": int64(2), "name": nil, "ts": ts})},
		&kgo.Record{Value: wire(8, map[string]any{"id": int64(3), "name": nil, "ts": ts})},
		&kgo.Record{Value: []byte("plain")},
	)
	o := options(t, addrs, map[string]string{"encode": "avro", "encode.schema.registry": reg.URL})
	cols := []Column{{Name: "id", Type: types.Int64T}, {Name: "name", Type: types.TextT}, {Name: "ts", Type: types.TimestampT}, {Name: "missing", Type: types.Int32T}}
	rows, bad := readAll(t, o, cols, 4)
	want := []string{`1|n|2024-01-02 03:04:05|NULL`, `2|NULL|2024-01-02 03:04:05|NULL`}
	if fmt.Sprint(rows) != fmt.Sprint(want) || bad != 2 {
		t.Fatalf("got %q, %d bad; want %q, 2 bad", rows, bad, want)
	}
}

func TestStartupModes(t *testing.T) {
	addrs := cluster(t, 2)
	produce(t, addrs, &kgo.Record{Partition: 0, Value: []byte(`{"id": 1}`)}, &kgo.Record{Partition: 1, Value: []byte(`{"id": 2}`)},
		&kgo.Record{Partition: 1, Value: []byte(`{"id": 3}`)})
	ctx := context.Background()
	for mode, want := range map[string]map[int32]int64{"earliest": {0: 0, 1: 0}, "latest": {0: 1, 1: 2}} {
		r, err := NewReader(options(t, addrs, map[string]string{"scan.startup.mode": mode}))
		if err != nil {
			t.Fatal(err)
		}
		got, err := r.Discover(ctx, nil, true)
		r.Close()
		if err != nil || fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("%s: got %v, %v; want %v", mode, got, err, want)
		}
	}
	// Known partitions are not listed again; new ones start at their beginning.
	r, err := NewReader(options(t, addrs, map[string]string{"scan.startup.mode": "latest"}))
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	got, err := r.Discover(ctx, map[int32]int64{0: 1}, false)
	if err != nil || fmt.Sprint(got) != "map[1:0]" {
		t.Errorf("later discovery: got %v, %v", got, err)
	}
}

func TestOptionErrors(t *testing.T) {
	base := map[string]string{"connector": "kafka", "topic": "t", "properties.bootstrap.server": "h:1", "format": "plain", "encode": "json"}
	for _, c := range []struct {
		set  map[string]string
		code string
		msg  string
	}{
		{map[string]string{"topik": "x"}, sqlerr.InvalidParameterValue, `unknown Kafka source option "topik"`},
		{map[string]string{"topic": ""}, sqlerr.InvalidParameterValue, "needs the option topic"},
		{map[string]string{"properties.bootstrap.server": ""}, sqlerr.InvalidParameterValue, "properties.bootstrap.server"},
		{map[string]string{"scan.startup.mode": "middle"}, sqlerr.InvalidParameterValue, "scan.startup.mode"},
		{map[string]string{"scan.startup.timestamp.millis": "soon"}, sqlerr.InvalidParameterValue, "scan.startup.timestamp.millis"},
		{map[string]string{"error.policy": "ignore"}, sqlerr.InvalidParameterValue, "error.policy"},
		{map[string]string{"format": ""}, sqlerr.InvalidParameterValue, "needs FORMAT"},
		{map[string]string{"encode": "protobuf"}, sqlerr.FeatureNotSupported, "ENCODE PROTOBUF"},
		{map[string]string{"format": "upsert"}, sqlerr.FeatureNotSupported, "FORMAT UPSERT"},
		{map[string]string{"encode.delimiter": ";"}, sqlerr.InvalidParameterValue, "delimiter is an option of ENCODE CSV"},
		{map[string]string{"encode": "avro"}, sqlerr.InvalidParameterValue, "schema.registry"},
		{map[string]string{"include.x": "body"}, sqlerr.InvalidParameterValue, "INCLUDE body"},
	} {
		opts := map[string]string{}
		for k, v := range base {
			opts[k] = v
		}
		for k, v := range c.set {
			opts[k] = v
		}
		_, err := ParseSourceOptions(opts)
		se, ok := err.(*sqlerr.Error)
		if !ok || se.Code != c.code || !strings.Contains(se.Message, c.msg) {
			t.Errorf("%v: got %v, want %s %q", c.set, err, c.code, c.msg)
		}
	}
}

func TestCheckSource(t *testing.T) {
	addrs := cluster(t, 1)
	ctx := context.Background()
	if err := CheckSource(ctx, options(t, addrs, nil)); err != nil {
		t.Fatal(err)
	}
	o := options(t, addrs, nil)
	o.Topic = "nope"
	if err := CheckSource(ctx, o); err == nil || !strings.Contains(err.Error(), `topic "nope" does not exist`) {
		t.Errorf("missing topic: %v", err)
	}
	o = options(t, []string{"127.0.0.1:1"}, nil)
	start := time.Now()
	err := CheckSource(ctx, o)
	se, ok := err.(*sqlerr.Error)
	if !ok || se.Code != "08001" || !strings.Contains(se.Message, "127.0.0.1:1") || time.Since(start) > 2*CheckTimeout {
		t.Errorf("unreachable broker: %v after %v", err, time.Since(start))
	}
}
