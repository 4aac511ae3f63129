package eval

import (
	"fmt"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/streamsql/streamsql/ir"
	"github.com/streamsql/streamsql/types"
)

// jsonbDocs are the rows of the extraction tests: objects with escaped
// keys and values, nested containers, arrays, scalars and NULL.
var jsonbDocs = []string{
	`{"a": 1, "b": "x", "c": {"d": [1, 2]}}`,
	`{"a": "q\"uo\\te", "a\"b": true, "bb": null}`,
	`[10, "s", {"a": 1}, [2], null]`,
	`"scalar"`, `42`, `null`, `{}`, `[]`,
	`{"b": [{"a": 2}], "aa": {"a": 3}, "a": "\u00e9\n"}`,
}

func jsonbColumn(mem memory.Allocator, docs []string) arrow.RecordBatch {
	b := array.NewStringBuilder(mem)
	defer b.Release()
	for i, d := range docs {
		if i%4 == 3 {
			b.AppendNull()
		}
		s, err := types.ParseJSONB(d)
		if err != nil {
			panic(err)
		}
		b.Append(s)
	}
	arr := b.NewArray()
	defer arr.Release()
	schema := arrow.NewSchema([]arrow.Field{{Name: "doc", Type: arrow.BinaryTypes.String, Nullable: true}}, nil)
	return array.NewRecordBatch(schema, []arrow.Array{arr}, int64(arr.Len()))
}

// TestJSONBFieldNode checks the text-scanning -> and ->> against the
// kernels that parse the value.
func TestJSONBFieldNode(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	rec := jsonbColumn(mem, jsonbDocs)
	defer rec.Release()
	doc := col(0, types.JSONBT)
	var exprs []ir.Expr
	for _, k := range []string{"a", "b", "bb", "aa", "a\"b", "c", "zz", ""} {
		exprs = append(exprs, call(ir.FnJSONBField, doc, txt(k)), call(ir.FnJSONBFieldText, doc, txt(k)))
	}
	for _, i := range []int64{0, 1, 2, 4, 5, -1, -2, -5, -6} {
		exprs = append(exprs, call(ir.FnJSONBElem, doc, i4(i)), call(ir.FnJSONBElemText, doc, i4(i)))
	}
	for _, e := range exprs {
		ev, err := Compile(e)
		if err != nil {
			t.Fatal(err)
		}
		ctx := &Context{Mem: mem, Strict: true}
		got, err := ev.Eval(ctx, rec)
		if err != nil {
			t.Fatal(err)
		}
		for i := 0; i < int(rec.NumRows()); i++ {
			in := types.DatumAt(types.JSONBT, rec.Column(0), i)
			want := types.Null
			if !in.Null {
				c := e.(*ir.Call)
				fn, _, _ := kernelFor(c.Fn, []types.T{types.JSONBT, c.Args[1].Type()}, c.T)
				var k kctx
				want, _ = fn(&k, []types.Datum{in, c.Args[1].(*ir.Const).Value})
			}
			g := types.DatumAt(e.Type(), got, i)
			if g.Null != want.Null || g.S != want.S {
				t.Errorf("%s on %s: got %s, want %s", e, in.S, fmtDatum(g), fmtDatum(want))
			}
		}
		got.Release()
	}
}

func fmtDatum(d types.Datum) string {
	if d.Null {
		return "NULL"
	}
	return fmt.Sprintf("%q", d.S)
}

// BenchmarkJSONBExtract measures doc ->> 'user' on objects of 8 fields.
func BenchmarkJSONBExtract(b *testing.B) {
	mem := memory.NewGoAllocator()
	docs := make([]string, benchRows)
	for i := range docs {
		docs[i] = fmt.Sprintf(`{"id": %d, "ts": 1700000000, "kind": "click", "user": "u%d", "page": "/p/%d", "ref": null, "tags": ["a", "b"], "geo": {"c": "NO", "lat": 59.9}}`, i, i%100, i%7)
	}
	rec := jsonbColumn(mem, docs)
	defer rec.Release()
	benchEvalRec(b, rec, call(ir.FnJSONBFieldText, col(0, types.JSONBT), txt("user")))
}

// BenchmarkJSONBExtractParsed is the same extraction by parsing each value
// (the path of #>> and of a non-constant key), for comparison.
func BenchmarkJSONBExtractParsed(b *testing.B) {
	mem := memory.NewGoAllocator()
	docs := make([]string, benchRows)
	for i := range docs {
		docs[i] = fmt.Sprintf(`{"id": %d, "ts": 1700000000, "kind": "click", "user": "u%d", "page": "/p/%d", "ref": null, "tags": ["a", "b"], "geo": {"c": "NO", "lat": 59.9}}`, i, i%100, i%7)
	}
	rec := jsonbColumn(mem, docs)
	defer rec.Release()
	path := lit(types.ArrayOf(types.TextT), "{user}")
	benchEvalRec(b, rec, call(ir.FnJSONBPathText, col(0, types.JSONBT), path))
}

func benchEvalRec(b *testing.B, rec arrow.RecordBatch, e ir.Expr) {
	ev, err := Compile(e)
	if err != nil {
		b.Fatal(err)
	}
	ctx := &Context{Mem: memory.NewGoAllocator(), Strict: true}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		out, err := ev.Eval(ctx, rec)
		if err != nil {
			b.Fatal(err)
		}
		out.Release()
	}
	b.ReportMetric(float64(b.N)*float64(rec.NumRows())/b.Elapsed().Seconds(), "rows/s")
}
