package eval

import (
	"testing"

	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/streamsql/streamsql/ir"
	"github.com/streamsql/streamsql/types"
)

const benchRows = 4096

func benchEval(b *testing.B, e ir.Expr, filter bool) {
	mem := memory.NewGoAllocator()
	rec := hotBatch(mem, benchRows)
	defer rec.Release()
	ev, err := Compile(e)
	if err != nil {
		b.Fatal(err)
	}
	ctx := &Context{Mem: mem, Strict: true}
	var sel []int32
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		out, err := ev.Eval(ctx, rec)
		if err != nil {
			b.Fatal(err)
		}
		if filter {
			sel = SelectTrue(out.(*array.Boolean), sel)
			kept, err := TakeRecord(mem, rec, sel)
			if err != nil {
				b.Fatal(err)
			}
			kept.Release()
		}
		out.Release()
	}
	b.ReportMetric(float64(b.N)*benchRows/b.Elapsed().Seconds(), "rows/s")
}

func BenchmarkAddColumns(b *testing.B) {
	benchEval(b, call(ir.FnAdd, col(0, types.Int64T), col(1, types.Int64T)), false)
}

func BenchmarkMulGtFilter(b *testing.B) {
	a := col(0, types.Int64T)
	benchEval(b, call(ir.FnGt, call(ir.FnMul, a, i8(2)), i8(100)), true)
}

func BenchmarkCase(b *testing.B) {
	a := col(0, types.Int64T)
	e := &ir.Case{
		Whens: []ir.When{
			{Cond: call(ir.FnGt, a, i8(3000)), Then: call(ir.FnMul, a, i8(2))},
			{Cond: call(ir.FnGt, a, i8(1000)), Then: a},
		},
		Else: i8(0), T: types.Int64T,
	}
	benchEval(b, e, false)
}

func BenchmarkLikeContains(b *testing.B) {
	benchEval(b, call(ir.FnLike, col(3, types.TextT), txt("%foo%")), false)
}

func BenchmarkNumericMulAdd(b *testing.B) {
	n := col(4, types.NumericT)
	benchEval(b, call(ir.FnAdd, call(ir.FnMul, n, num("1.5")), n), false)
}

func BenchmarkInList(b *testing.B) {
	benchEval(b, inList(col(1, types.Int64T), false, i8(1), i8(5), i8(9)), false)
}

func BenchmarkTakeRecord(b *testing.B) {
	mem := memory.NewGoAllocator()
	rec := hotBatch(mem, benchRows)
	defer rec.Release()
	sel := make([]int32, 0, benchRows)
	for i := 0; i < benchRows; i += 2 {
		sel = append(sel, int32(i))
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		out, err := TakeRecord(mem, rec, sel)
		if err != nil {
			b.Fatal(err)
		}
		out.Release()
	}
	b.ReportMetric(float64(b.N)*benchRows/b.Elapsed().Seconds(), "rows/s")
}

func BenchmarkMulGt(b *testing.B) {
	a := col(0, types.Int64T)
	benchEval(b, call(ir.FnGt, call(ir.FnMul, a, i8(2)), i8(100)), false)
}
