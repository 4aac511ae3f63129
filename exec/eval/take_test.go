package eval

import (
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/streamsql/streamsql/types"
)

func TestSelectTrue(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	rng := rand.New(rand.NewPCG(7, 8))
	for _, n := range []int{0, 1, 7, 8, 9, 63, 64, 65, 200} {
		b := array.NewBooleanBuilder(mem)
		var vals []types.Datum
		for i := 0; i < n+13; i++ {
			switch rng.IntN(3) {
			case 0:
				b.AppendNull()
				vals = append(vals, types.Null)
			default:
				v := rng.IntN(2) == 0
				b.Append(v)
				vals = append(vals, types.DBool(v))
			}
		}
		full := b.NewBooleanArray()
		b.Release()
		for _, off := range []int{0, 3, 8, 13} {
			pred := array.NewSlice(full, int64(off), int64(off+n)).(*array.Boolean)
			var want []int32
			for i := 0; i < n; i++ {
				if d := vals[off+i]; !d.Null && d.Bool() {
					want = append(want, int32(i))
				}
			}
			sel := SelectTrue(pred, make([]int32, 5))
			if !slices.Equal(sel, want) && !(len(sel) == 0 && len(want) == 0) {
				t.Errorf("n=%d off=%d: got %v, want %v", n, off, sel, want)
			}
			pred.Release()
		}
		full.Release()
	}
}

func TestTakeRecordAllTypes(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	rng := rand.New(rand.NewPCG(9, 10))
	g := newExprGen(rng)
	colTypes := append(slices.Clone(genTypes), types.NumericOf(10, 2))
	const n = 70
	rows := make([][]types.Datum, n)
	for i := range rows {
		rows[i] = make([]types.Datum, len(colTypes))
		for j, c := range colTypes {
			rows[i][j] = g.randDatum(c)
		}
	}
	full := batch(mem, colTypes, rows, n)
	defer full.Release()
	for _, off := range []int{0, 5, 8} {
		rec := full.NewSlice(int64(off), n)
		idx := []int32{0, 3, 3, int32(n - off - 1), 1, 9, 2}
		out, err := TakeRecord(mem, rec, idx)
		if err != nil {
			t.Fatal(err)
		}
		if out.NumRows() != int64(len(idx)) || !out.Schema().Equal(rec.Schema()) {
			t.Fatalf("shape %d rows, schema %v", out.NumRows(), out.Schema())
		}
		for j, ct := range colTypes {
			if v, ok := out.Column(j).(interface{ ValidateFull() error }); ok {
				if err := v.ValidateFull(); err != nil {
					t.Fatalf("%s: %v", ct, err)
				}
			}
			for i, r := range idx {
				got := render(ct, types.DatumAt(ct, out.Column(j), i), nil)
				want := render(ct, rows[off+int(r)][j], nil)
				if got != want {
					t.Errorf("%s off %d row %d: got %s, want %s", ct, off, r, got, want)
				}
			}
		}
		out.Release()
		rec.Release()
	}
	// An empty selection.
	out, err := TakeRecord(mem, full, nil)
	if err != nil || out.NumRows() != 0 {
		t.Fatalf("empty take: %v %v", out, err)
	}
	out.Release()
}

func TestConstArrayAndAppendDatum(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	rng := rand.New(rand.NewPCG(11, 12))
	g := newExprGen(rng)
	for _, ct := range append(slices.Clone(genTypes), types.NumericOf(10, 2), types.UnknownT) {
		for k := 0; k < 5; k++ {
			d := types.Null
			if ct.Kind != types.Unknown {
				d = g.randDatum(ct)
			}
			arr := ConstArray(mem, ct, d, 11)
			if !arrow.TypeEqual(arr.DataType(), ct.ArrowType()) || arr.Len() != 11 {
				t.Fatalf("%s: %s len %d", ct, arr.DataType(), arr.Len())
			}
			b := array.NewBuilder(mem, ct.ArrowType())
			types.AppendDatum(b, ct, d)
			one := b.NewArray()
			b.Release()
			for i := 0; i < 11; i++ {
				if got, want := render(ct, types.DatumAt(ct, arr, i), nil), render(ct, d, nil); got != want {
					t.Fatalf("%s row %d: %s, want %s", ct, i, got, want)
				}
			}
			if got, want := render(ct, types.DatumAt(ct, one, 0), nil), render(ct, d, nil); got != want {
				t.Fatalf("AppendDatum %s: %s, want %s", ct, got, want)
			}
			arr.Release()
			one.Release()
		}
	}
}
