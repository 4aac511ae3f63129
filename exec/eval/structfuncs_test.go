package eval

import (
	"testing"

	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/streamsql/streamsql/ir"
	"github.com/streamsql/streamsql/types"
)

// TestStructColumnKernels checks field access (masked by the struct's
// validity, at an offset), take and the NULL test of a struct column
// against the datum semantics, with no Arrow memory left behind.
func TestStructColumnKernels(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	st := types.StructOf([]types.Field{{Name: "a", Type: types.Int32T}, {Name: "b", Type: types.TextT}})
	s := func(a, b types.Datum) types.Datum { return types.DStruct([]types.Datum{a, b}) }
	vals := []types.Datum{
		s(types.DInt(1), types.DText("x")), types.Null, s(types.Null, types.DText("y")),
		s(types.DInt(4), types.Null), types.Null, s(types.DInt(6), types.DText("z")), s(types.Null, types.Null),
	}
	b := array.NewBuilder(mem, st.ArrowType())
	for _, d := range vals {
		types.AppendDatum(b, st, d)
	}
	full := b.NewArray()
	b.Release()
	defer full.Release()
	for _, off := range []int{0, 1, 3} {
		col := array.NewSlice(full, int64(off), int64(len(vals))).(*array.Struct)
		for j := range 2 {
			ft := st.Fields.At(j).Type
			f := structField(mem, col, j)
			for i := range col.Len() {
				want := types.Null
				if d := vals[off+i]; !d.Null {
					want = d.Arr[j]
				}
				got := types.DatumAt(ft, f, i)
				if got.Null != want.Null || (!got.Null && types.Compare(ft, got, want) != 0) {
					t.Errorf("off %d field %d row %d: got %v want %v", off, j, i, got, want)
				}
			}
			f.Release()
		}
		rows := []int32{int32(col.Len() - 1), 0, 1}
		taken, err := TakeArray(mem, col, rows)
		if err != nil {
			t.Fatal(err)
		}
		for i, r := range rows {
			got, want := types.DatumAt(st, taken, i), vals[off+int(r)]
			if got.Null != want.Null || (!got.Null && types.Compare(st, got, want) != 0) {
				t.Errorf("off %d take row %d: got %v want %v", off, i, got, want)
			}
		}
		taken.Release()
		col.Release()
	}
	isNull := structNullTest(true)
	for i, d := range vals {
		got, _ := isNull(nil, []types.Datum{d})
		want := d.Null || (d.Arr[0].Null && d.Arr[1].Null)
		if got.Bool() != want {
			t.Errorf("row %d: IS NULL %v", i, got.Bool())
		}
	}
}

// TestEveryStructFunctionHasAKernel checks that the evaluator implements
// every struct and map call the binder produces.
func TestEveryStructFunctionHasAKernel(t *testing.T) {
	for _, fn := range []string{ir.FnRow, ir.FnStructField, "struct_eq", "struct_lt", "map_access", "map_keys",
		"map_values", "map_entries", "map_length", "map_contains", "map_cat", "map_insert", "map_delete",
		ir.FnMapLiteral, "map_from_key_values", "map_from_entries"} {
		if !ir.IsStructFunction(fn) {
			t.Errorf("%s is not a struct function", fn)
		}
		if structKernels[fn] == nil && mapKernels[fn] == nil {
			t.Errorf("%s has no kernel", fn)
		}
	}
}
