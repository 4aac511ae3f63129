package state

import (
	"bytes"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/streamsql/streamsql/types"
)

func TestStructCodecs(t *testing.T) {
	st := types.StructOf([]types.Field{
		{Name: "a", Type: types.Int32T},
		{Name: "b", Type: types.TextT},
		{Name: "c", Type: types.ArrayOf(types.Int64T)},
	})
	s := func(a, b, c types.Datum) types.Datum { return types.DStruct([]types.Datum{a, b, c}) }
	arr := func(ds ...types.Datum) types.Datum { return types.DArray(ds) }
	one, two := types.DInt(1), types.DInt(2)
	// In PostgreSQL's order: NULL fields after values.
	structs := []types.Datum{
		s(one, types.DText("a"), arr()),
		s(one, types.DText("a"), arr(one)),
		s(one, types.DText("b"), types.Null),
		s(one, types.Null, arr()),
		s(two, types.DText(""), arr(types.Null)),
		s(types.Null, types.Null, types.Null),
	}
	testCodec(t, st, structs, true)
	testCodec(t, types.ArrayOf(st), []types.Datum{arr(), arr(structs[0]), arr(structs[0], structs[1]), arr(structs[5])}, true)
	nested := types.StructOf([]types.Field{{Name: "s", Type: st}, {Name: "x", Type: types.BoolT}})
	testCodec(t, nested, []types.Datum{
		types.DStruct([]types.Datum{structs[0], types.DBool(true)}),
		types.DStruct([]types.Datum{structs[5], types.DBool(false)}),
		types.DStruct([]types.Datum{types.Null, types.DBool(false)}),
	}, true)
	m := types.MapOf(types.TextT, types.Int32T)
	entry := func(k string, v types.Datum) types.Datum { return types.DStruct([]types.Datum{types.DText(k), v}) }
	testCodec(t, m, []types.Datum{arr(), arr(entry("a", one), entry("b", types.Null))}, false)
}

// testCodec checks the row and key codecs of t over vals, and when ordered
// that the keys sort as vals do.
func testCodec(t *testing.T, typ types.T, vals []types.Datum, ordered bool) {
	t.Helper()
	mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
	defer mem.AssertSize(t, 0)
	b := array.NewBuilder(mem, typ.ArrowType())
	defer b.Release()
	for _, d := range vals {
		types.AppendDatum(b, typ, d)
	}
	col := b.NewArray()
	defer col.Release()
	codec := NewRowCodec([]types.T{typ})
	var prev []byte
	for i, d := range vals {
		want := d.Text(typ)
		key := AppendKey(nil, typ, col, i)
		if !bytes.Equal(key, AppendKeyDatum(nil, typ, d)) {
			t.Fatalf("%s row %d: key and datum key differ", typ, i)
		}
		if ordered && prev != nil && bytes.Compare(prev, key) >= 0 {
			t.Fatalf("%s row %d: key does not sort after the previous", typ, i)
		}
		prev = key
		kd, rest, err := DecodeKeyDatum(key, typ)
		if err != nil || len(rest) != 0 || kd.Text(typ) != want {
			t.Fatalf("%s row %d: key decodes to %s (%v)", typ, i, kd.Text(typ), err)
		}
		row := codec.Append(nil, []arrow.Array{col}, i)
		if !bytes.Equal(row, codec.AppendDatums(nil, []types.Datum{d})) {
			t.Fatalf("%s row %d: row and datum row differ", typ, i)
		}
		out := []types.Datum{{}}
		if err := codec.DecodeDatums(row, out); err != nil || out[0].Text(typ) != want {
			t.Fatalf("%s row %d: row decodes to %s (%v)", typ, i, out[0].Text(typ), err)
		}
		rb := array.NewBuilder(mem, typ.ArrowType())
		kb := array.NewBuilder(mem, typ.ArrowType())
		if err := codec.Decode(row, []array.Builder{rb}); err != nil {
			t.Fatal(err)
		}
		if _, err := DecodeKey(key, typ, kb); err != nil {
			t.Fatal(err)
		}
		for _, bb := range []array.Builder{rb, kb} {
			a := bb.NewArray()
			if got := types.DatumAt(typ, a, 0).Text(typ); got != want {
				t.Errorf("%s row %d: decoded to %s", typ, i, got)
			}
			a.Release()
			bb.Release()
		}
	}
}
