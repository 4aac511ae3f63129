package exec

import (
	"context"
	"fmt"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/streamsql/streamsql/barrier"
	"github.com/streamsql/streamsql/exec/eval"
	"github.com/streamsql/streamsql/ir"
	"github.com/streamsql/streamsql/state"
	"github.com/streamsql/streamsql/types"
)

const benchRows = 4096

// benchRecord returns a record (a bigint, b bigint, s text) with a cycling
// through mod distinct values.
func benchRecord(mem memory.Allocator, mod int64) arrow.RecordBatch {
	ab := array.NewInt64Builder(mem)
	bb := array.NewInt64Builder(mem)
	sb := array.NewStringBuilder(mem)
	defer ab.Release()
	defer bb.Release()
	defer sb.Release()
	for i := int64(0); i < benchRows; i++ {
		ab.Append(i * 7919 % mod)
		bb.Append(i)
		sb.Append(fmt.Sprintf("s%d", i%100))
	}
	cols := []arrow.Array{ab.NewArray(), bb.NewArray(), sb.NewArray()}
	rec := array.NewRecordBatch(SchemaOf([]types.T{types.Int64T, types.Int64T, types.TextT}), cols, benchRows)
	for _, c := range cols {
		c.Release()
	}
	return rec
}

var discard = OutputFunc(func(_ context.Context, m Message) error {
	m.Release()
	return nil
})

func col(i int, t types.T) *ir.InputRef { return &ir.InputRef{Index: i, T: t} }

func call(fn string, t types.T, args ...ir.Expr) *ir.Call {
	return &ir.Call{Fn: fn, Args: args, T: t}
}

func int64Const(v int64) *ir.Const { return &ir.Const{Value: types.DInt(v), T: types.Int64T} }

// BenchmarkFilterProject measures the stateless path: WHERE a % 3 <> 0
// followed by SELECT a * 2 + b, s, on one core.
func BenchmarkFilterProject(b *testing.B) {
	mem := memory.DefaultAllocator
	ectx := &eval.Context{Mem: mem, Strict: true}
	pred, err := eval.Compile(call(ir.FnNe, types.BoolT, call(ir.FnMod, types.Int64T, col(0, types.Int64T), int64Const(3)), int64Const(0)))
	if err != nil {
		b.Fatal(err)
	}
	sum, err := eval.Compile(call(ir.FnAdd, types.Int64T, call(ir.FnMul, types.Int64T, col(0, types.Int64T), int64Const(2)), col(1, types.Int64T)))
	if err != nil {
		b.Fatal(err)
	}
	s, err := eval.Compile(col(2, types.TextT))
	if err != nil {
		b.Fatal(err)
	}
	head := Chain([]Operator{NewFilter(mem, ectx, pred), NewProject(mem, ectx, []eval.Evaluator{sum, s})}, discard)
	rec := benchRecord(mem, 1_000_000)
	defer rec.Release()
	ctx := context.Background()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		rec.Retain()
		if err := head.Emit(ctx, Message{Batch: NewBatch(rec, nil)}); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N)*benchRows/b.Elapsed().Seconds(), "rows/s")
}

// BenchmarkHashAgg measures the grouped aggregation (GROUP BY a with
// count(*), sum(b)) with a checkpoint every 64 batches, state in an
// in-memory store, on one core.
func BenchmarkHashAgg(b *testing.B) {
	for _, groups := range []int64{1_000, 100_000} {
		for _, withMin := range []bool{false, true} {
			name := fmt.Sprintf("groups=%d", groups)
			if withMin {
				name += "/with-min"
			}
			b.Run(name, func(b *testing.B) { benchHashAgg(b, groups, withMin, 0) })
		}
	}
	// The same with a group cache a tenth of the groups: most changes
	// reload their group from the state store.
	b.Run("groups=100000/cache=10000", func(b *testing.B) { benchHashAgg(b, 100_000, false, 10_000) })
}

func benchHashAgg(b *testing.B, groups int64, withMin bool, cache int) {
	mem := memory.DefaultAllocator
	store, err := state.Open(":memory:", state.Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer store.Close()
	spec := HashAggSpec{
		GroupCols:  []int{0},
		GroupTypes: []types.T{types.Int64T},
		Calls: []ir.AggCall{
			{Func: ir.AggCountStar, T: types.Int64T},
			{Func: ir.AggSum, T: types.NumericT},
		},
		ArgCols:     []int{-1, 1},
		ArgTypes:    []types.T{{}, types.Int64T},
		FilterCols:  []int{-1, -1},
		Result:      store.Table(1),
		ValueSets:   []*state.Table{nil, nil},
		CacheGroups: cache,
	}
	if withMin {
		spec.Calls = append(spec.Calls, ir.AggCall{Func: ir.AggMin, T: types.Int64T})
		spec.ArgCols = append(spec.ArgCols, 1)
		spec.ArgTypes = append(spec.ArgTypes, types.Int64T)
		spec.FilterCols = append(spec.FilterCols, -1)
		spec.ValueSets = append(spec.ValueSets, store.Table(2))
	}
	agg, err := NewHashAgg(mem, &eval.Context{Mem: mem}, spec)
	if err != nil {
		b.Fatal(err)
	}
	head := Chain([]Operator{agg}, discard)
	rec := benchRecord(mem, groups)
	defer rec.Release()
	ctx := context.Background()
	epoch := uint64(0)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		rec.Retain()
		if err := head.Emit(ctx, Message{Batch: NewBatch(rec, nil)}); err != nil {
			b.Fatal(err)
		}
		if i%64 == 63 {
			epoch++
			if err := head.Emit(ctx, Message{Barrier: &barrier.Barrier{Epoch: epoch}}); err != nil {
				b.Fatal(err)
			}
			if _, err := store.Commit(epoch); err != nil {
				b.Fatal(err)
			}
		}
	}
	b.ReportMetric(float64(b.N)*benchRows/b.Elapsed().Seconds(), "rows/s")
}

// BenchmarkUnnest measures unnest of an int[] column of ten elements per
// row, the other column copied beside each element, on one core; rows/s
// counts output rows.
func BenchmarkUnnest(b *testing.B) {
	mem := memory.DefaultAllocator
	arrT := types.ArrayOf(types.Int64T)
	lb := array.NewListBuilder(mem, arrow.PrimitiveTypes.Int64)
	defer lb.Release()
	vb := lb.ValueBuilder().(*array.Int64Builder)
	ib := array.NewInt64Builder(mem)
	defer ib.Release()
	const elems = 10
	for i := int64(0); i < benchRows; i++ {
		ib.Append(i)
		lb.Append(true)
		for k := int64(0); k < elems; k++ {
			vb.Append(i*elems + k)
		}
	}
	cols := []arrow.Array{ib.NewArray(), lb.NewArray()}
	rec := array.NewRecordBatch(SchemaOf([]types.T{types.Int64T, arrT}), cols, benchRows)
	for _, c := range cols {
		c.Release()
	}
	defer rec.Release()
	head := Chain([]Operator{NewUnnest(mem, []types.T{types.Int64T, arrT}, []int{0}, []int{1}, nil, false)}, discard)
	ctx := context.Background()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		rec.Retain()
		if err := head.Emit(ctx, Message{Batch: NewBatch(rec, nil)}); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N)*benchRows*elems/b.Elapsed().Seconds(), "rows/s")
}
