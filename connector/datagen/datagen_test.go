package datagen

import (
	"fmt"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/streamsql/streamsql/sqlerr"
	"github.com/streamsql/streamsql/types"
)

var testCols = []Column{
	{Name: "id", Type: types.Int64T},
	{Name: "v", Type: types.Int32T},
	{Name: "s", Type: types.TextT},
	{Name: "ts", Type: types.TimestampT},
	{Name: "d", Type: types.NumericOf(10, 2)},
	{Name: "f", Type: types.Float64T},
	{Name: "b", Type: types.BoolT},
	{Name: "dt", Type: types.DateT},
}

func rowsText(rec arrow.RecordBatch) []string {
	var out []string
	for i := 0; i < int(rec.NumRows()); i++ {
		var parts []string
		for c := 0; c < int(rec.NumCols()); c++ {
			t, _ := types.FromArrow(rec.Column(c).DataType())
			parts = append(parts, types.DatumAt(t, rec.Column(c), i).Text(t))
		}
		out = append(out, strings.Join(parts, " "))
	}
	return out
}

// TestDeterministic checks that a row's values depend only on its number:
// generating rows in different chunks gives the same rows.
func TestDeterministic(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
	defer mem.AssertSize(t, 0)
	g, err := New(testCols, map[string]string{"connector": "datagen", "datagen.seed": "7", "fields.id.kind": "sequence", "fields.v.min": "-5", "fields.v.max": "5"})
	if err != nil {
		t.Fatal(err)
	}
	whole := g.Batch(mem, 0, 100)
	defer whole.Release()
	var pieces []string
	for first := int64(0); first < 100; first += 37 {
		b := g.Batch(mem, first, min(37, 100-first))
		pieces = append(pieces, rowsText(b)...)
		b.Release()
	}
	if got, want := strings.Join(pieces, "\n"), strings.Join(rowsText(whole), "\n"); got != want {
		t.Fatalf("chunked generation differs:\n%s\nvs\n%s", got, want)
	}
	// A different seed gives different random values.
	g2, _ := New(testCols, map[string]string{"datagen.seed": "8", "fields.id.kind": "sequence"})
	other := g2.Batch(mem, 0, 100)
	defer other.Release()
	if strings.Join(rowsText(other), "\n") == strings.Join(rowsText(whole), "\n") {
		t.Fatal("seeds 7 and 8 generate the same rows")
	}
	// Random integers stay in [min, max] and reach both ends.
	seen := map[int32]bool{}
	vals := whole.Column(1).(interface{ Value(int) int32 })
	for i := 0; i < 100; i++ {
		v := vals.Value(i)
		if v < -5 || v > 5 {
			t.Fatalf("v = %d outside [-5, 5]", v)
		}
		seen[v] = true
	}
	if !seen[-5] || !seen[5] {
		t.Fatalf("the range ends are never generated: %v", seen)
	}
}

// TestSequenceBounds checks that a bounded sequence ends the source.
func TestSequenceBounds(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
	defer mem.AssertSize(t, 0)
	g, err := New([]Column{{Name: "id", Type: types.Int64T}, {Name: "ts", Type: types.TimestampT}},
		map[string]string{"fields.id.kind": "sequence", "fields.id.start": "10", "fields.id.end": "14",
			"fields.ts.kind": "sequence", "fields.ts.start": "2024-01-01 00:00:00", "fields.ts.step": "1 minute"})
	if err != nil {
		t.Fatal(err)
	}
	if g.Total != 5 {
		t.Fatalf("total %d, want 5", g.Total)
	}
	b := g.Batch(mem, 3, 10)
	defer b.Release()
	got := fmt.Sprint(rowsText(b))
	want := "[13 2024-01-01 00:03:00 3 14 2024-01-01 00:04:00 4]"
	if got != want {
		t.Fatalf("got %s, want %s", got, want)
	}
}

// TestOptionErrors checks that bad options are refused with 22023.
func TestOptionErrors(t *testing.T) {
	for _, opts := range []map[string]string{
		{"datagen.rows.per.second": "fast"},
		{"datagen.rows.per.second": "-1"},
		{"fields.id.kind": "zigzag"},
		{"fields.id.min": "9", "fields.id.max": "1"},
		{"fields.nope.kind": "random"},
		{"datagen.colour": "red"},
		{"fields.ts.start": "not a time", "fields.ts.kind": "sequence"},
	} {
		_, err := New([]Column{{Name: "id", Type: types.Int64T}, {Name: "ts", Type: types.TimestampT}}, opts)
		if sqlerr.Code(err) != sqlerr.InvalidParameterValue {
			t.Errorf("options %v: got %v, want 22023", opts, err)
		}
	}
}

func BenchmarkGenerate(b *testing.B) {
	g, err := New(testCols, map[string]string{"fields.id.kind": "sequence"})
	if err != nil {
		b.Fatal(err)
	}
	mem := memory.DefaultAllocator
	for i := 0; i < b.N; i++ {
		g.Batch(mem, int64(i)*1024, 1024).Release()
	}
	b.ReportMetric(float64(b.N)*1024/b.Elapsed().Seconds(), "rows/s")
}

// TestSplits checks that the splits of a source hold its rows, each once:
// row s+j*k is row j of split s, whatever the chunks read.
func TestSplits(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	opts := map[string]string{"datagen.total.rows": "103", "datagen.split.num": "4", "fields.id.kind": "sequence"}
	g, err := New(testCols, opts)
	if err != nil {
		t.Fatal(err)
	}
	all := g.Batch(mem, 0, 200)
	want := rowsText(all)
	all.Release()
	got := make([]string, len(want))
	var n int64
	for s := 0; s < g.Splits; s++ {
		rows := g.SplitRows(s)
		n += rows
		for first := int64(0); first < rows+5; first += 7 {
			rec := g.SplitBatch(mem, s, first, 7)
			for j, row := range rowsText(rec) {
				got[int64(s)+(first+int64(j))*4] = row
			}
			rec.Release()
		}
	}
	if n != 103 {
		t.Fatalf("splits hold %d rows, want 103", n)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("row %d: split gives %q, want %q", i, got[i], want[i])
		}
	}
	for _, bad := range []string{"0", "1.5", "x", "70000"} {
		if _, err := New(testCols, map[string]string{"datagen.split.num": bad}); err == nil {
			t.Errorf("datagen.split.num = %s accepted", bad)
		}
	}
}
