package posixfs

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
	"github.com/streamsql/streamsql/connector/textdec"
	"github.com/streamsql/streamsql/sqlerr"
	"github.com/streamsql/streamsql/types"
)

func options(t *testing.T, dir string, extra map[string]string) *Options {
	t.Helper()
	opts := map[string]string{"connector": "posix_fs", "posix_fs.root": dir, "format": "plain"}
	for k, v := range extra {
		opts[k] = v
	}
	o, err := ParseOptions(opts)
	if err != nil {
		t.Fatal(err)
	}
	return o
}

// readAll reads file name from pos to its end, n records per batch,
// reopening the file after every batch (as a restart does), and returns
// the rows as text, the bad records and the final position.
func readAll(t *testing.T, mem memory.Allocator, o *Options, cols []textdec.Column, name string, n int) ([]string, []Bad) {
	t.Helper()
	var rows []string
	var bad []Bad
	var pos Pos
	for {
		r, err := Open(mem, o, cols, name, 3, pos)
		if err != nil {
			t.Fatal(err)
		}
		rec, b, err := r.Next(n)
		if err != nil {
			t.Fatal(err)
		}
		bad = append(bad, b...)
		if rec != nil {
			rows = append(rows, recordText(rec)...)
			rec.Release()
		}
		pos = r.Pos()
		done := r.Done()
		r.Close()
		if done {
			return rows, bad
		}
	}
}

func recordText(rec arrow.RecordBatch) []string {
	var out []string
	for i := 0; i < int(rec.NumRows()); i++ {
		var fs []string
		for c := 0; c < int(rec.NumCols()); c++ {
			col := rec.Column(c)
			if col.IsNull(i) {
				fs = append(fs, "NULL")
				continue
			}
			fs = append(fs, col.ValueStr(i))
		}
		out = append(out, strings.Join(fs, " "))
	}
	return out
}

var testCols = []textdec.Column{{Name: "id", Type: types.Int64T}, {Name: "name", Type: types.TextT}}

// TestTextResume reads CSV and JSON files a few records at a time,
// reopening at the recorded position each time: every row comes once, with
// its line in its row id, and bad lines are reported with their line.
func TestTextResume(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
	defer mem.AssertSize(t, 0)
	dir := t.TempDir()
	files := map[string]string{
		"a.csv":  "name,id\r\nx,1\n\n\"y,z\",2\nbad,nope\nw,3", // no final line break
		"b.json": "{\"id\": 1, \"name\": \"x\"}\n{\"id\": 2}\nnot json\n\n{\"ID\": 3, \"Name\": \"w\", \"other\": [1]}\n",
	}
	for name, data := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want := map[string][]string{
		"a.csv":  {fmt.Sprint("1 x ", RowID(3, 1)), fmt.Sprint("2 y,z ", RowID(3, 3)), fmt.Sprint("3 w ", RowID(3, 5))},
		"b.json": {fmt.Sprint("1 x ", RowID(3, 0)), fmt.Sprint("2 NULL ", RowID(3, 1)), fmt.Sprint("3 w ", RowID(3, 4))},
	}
	wantBad := map[string]int64{"a.csv": 5, "b.json": 3}
	for name, enc := range map[string]string{"a.csv": "csv", "b.json": "json"} {
		for _, n := range []int{1, 2, 100} {
			rows, bad := readAll(t, mem, options(t, dir, map[string]string{"encode": enc}), testCols, name, n)
			if fmt.Sprint(rows) != fmt.Sprint(want[name]) {
				t.Errorf("%s by %d: %q, want %q", name, n, rows, want[name])
			}
			if len(bad) != 1 || bad[0].Line != wantBad[name] {
				t.Errorf("%s by %d: bad %v, want line %d", name, n, bad, wantBad[name])
			}
		}
	}
	// error.policy = 'fail' stops at the bad line, and stays there.
	o := options(t, dir, map[string]string{"encode": "csv", "error.policy": "fail"})
	r, err := Open(mem, o, testCols, "a.csv", 0, Pos{})
	if err != nil {
		t.Fatal(err)
	}
	rec, bad, err := r.Next(100)
	if err != nil || rec == nil || rec.NumRows() != 2 || len(bad) != 1 || bad[0].Line != 5 || r.Done() {
		t.Fatalf("fail policy: %v %v %v done %v", rec, bad, err, r.Done())
	}
	rec.Release()
	pos := r.Pos()
	r.Close()
	if r, err = Open(mem, o, testCols, "a.csv", 0, pos); err != nil {
		t.Fatal(err)
	}
	if rec, bad, err = r.Next(100); rec != nil || len(bad) != 1 || bad[0].Line != 5 || err != nil {
		t.Fatalf("fail policy after reopening: %v %v %v", rec, bad, err)
	}
	r.Close()
}

// writeParquet writes rec to dir/name with row groups of 7 rows.
func writeParquet(t *testing.T, dir, name string, rec arrow.RecordBatch) {
	t.Helper()
	f, err := os.Create(filepath.Join(dir, name))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	w, err := pqarrow.NewFileWriter(rec.Schema(), f, parquet.NewWriterProperties(parquet.WithMaxRowGroupLength(7)), pqarrow.DefaultWriterProps())
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Write(rec); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
}

// TestParquetResume reads a Parquet file of several row groups a few rows
// at a time from recorded positions, with columns matched by name and
// converted: int32 to bigint, strings to numeric, a missing column NULL.
// A value that does not convert is a bad row; a column of a type that does
// not convert makes the file bad.
func TestParquetResume(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
	defer mem.AssertSize(t, 0)
	dir := t.TempDir()
	schema := arrow.NewSchema([]arrow.Field{
		{Name: "ID", Type: arrow.PrimitiveTypes.Int32, Nullable: true},
		{Name: "price", Type: arrow.BinaryTypes.String, Nullable: true},
		{Name: "flag", Type: arrow.FixedWidthTypes.Boolean, Nullable: true},
	}, nil)
	b := array.NewRecordBuilder(memory.DefaultAllocator, schema)
	defer b.Release()
	var want []string
	for i := 0; i < 30; i++ {
		b.Field(0).(*array.Int32Builder).Append(int32(i))
		price := fmt.Sprintf("%d.5", i)
		if i == 11 {
			price = "eleven"
		}
		b.Field(1).(*array.StringBuilder).Append(price)
		b.Field(2).(*array.BooleanBuilder).Append(i%2 == 0)
		if i != 11 {
			want = append(want, fmt.Sprintf("%d %s NULL %d", i, price, RowID(3, int64(i))))
		}
	}
	rec := b.NewRecordBatch()
	defer rec.Release()
	writeParquet(t, dir, "p.parquet", rec)
	cols := []textdec.Column{{Name: "id", Type: types.Int64T}, {Name: "price", Type: types.NumericOf(10, 1)}, {Name: "missing", Type: types.DateT}}
	o := options(t, dir, map[string]string{"encode": "parquet"})
	for _, n := range []int{1, 4, 1000} {
		rows, bad := readAll(t, mem, o, cols, "p.parquet", n)
		if fmt.Sprint(rows) != fmt.Sprint(want) {
			t.Errorf("by %d: %q\nwant %q", n, rows, want)
		}
		if len(bad) != 1 || bad[0].Line != 12 {
			t.Errorf("by %d: bad %v, want row 12", n, bad)
		}
	}
	// error.policy = 'fail' stops at the bad row, which stays to be read.
	r, err := Open(mem, options(t, dir, map[string]string{"encode": "parquet", "error.policy": "fail"}), cols, "p.parquet", 3, Pos{Row: 8})
	if err != nil {
		t.Fatal(err)
	}
	rec, bad, err := r.Next(100)
	if err != nil || rec == nil || fmt.Sprint(recordText(rec)) != fmt.Sprint(want[8:11]) || len(bad) != 1 || bad[0].Line != 12 ||
		r.Done() || r.Pos().Row != 11 {
		t.Errorf("fail policy: %v %v %v done %v at %v", rec, bad, err, r.Done(), r.Pos())
	}
	if rec != nil {
		rec.Release()
	}
	r.Close()
	_, err = Open(mem, o, []textdec.Column{{Name: "flag", Type: types.DateT}}, "p.parquet", 0, Pos{})
	if !IsBadFile(err) || !strings.Contains(err.Error(), "column flag (date)") {
		t.Errorf("bool into date: %v", err)
	}
	if err := os.WriteFile(filepath.Join(dir, "x.parquet"), []byte("not parquet at all"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Open(mem, o, cols, "x.parquet", 0, Pos{}); !IsBadFile(err) {
		t.Errorf("not Parquet: %v", err)
	}
}

func TestListAndOptions(t *testing.T) {
	dir := t.TempDir()
	for _, name := range []string{"b.csv", "a.csv", ".a.csv.tmp", "c.json", "sub.csv/x.csv"} {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte("1\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	files, err := List(dir, "*.csv")
	if err != nil || fmt.Sprint(files) != "[{a.csv 2} {b.csv 2}]" {
		t.Errorf("List: %v %v", files, err)
	}
	base := map[string]string{"connector": "posix_fs", "posix_fs.root": dir, "format": "plain", "encode": "csv"}
	for _, c := range []struct {
		k, v, code string
	}{
		{"posix_fs.root", "", sqlerr.InvalidParameterValue},
		{"nope", "1", sqlerr.InvalidParameterValue},
		{"match_pattern", "[", sqlerr.InvalidParameterValue},
		{"refresh.interval.sec", "0", sqlerr.InvalidParameterValue},
		{"error.policy", "retry", sqlerr.InvalidParameterValue},
		{"encode", "avro", sqlerr.FeatureNotSupported},
		{"format", "upsert", sqlerr.FeatureNotSupported},
		{"encode.delimiter", "ab", sqlerr.InvalidParameterValue},
	} {
		opts := map[string]string{}
		for k, v := range base {
			opts[k] = v
		}
		opts[c.k] = c.v
		if _, err := ParseOptions(opts); sqlerr.Code(err) != c.code {
			t.Errorf("%s = '%s': %v, want %s", c.k, c.v, err, c.code)
		}
	}
	for root, code := range map[string]string{filepath.Join(dir, "none"): sqlerr.UndefinedFile, filepath.Join(dir, "a.csv"): sqlerr.InvalidParameterValue} {
		o := options(t, root, map[string]string{"encode": "csv"})
		if err := o.CheckRoot(); sqlerr.Code(err) != code {
			t.Errorf("root %s: %v, want %s", root, err, code)
		}
	}
}
