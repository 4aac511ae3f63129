package state

import (
	"bytes"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/streamsql/streamsql/types"
)

func TestArrayCodecs(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
	defer mem.AssertSize(t, 0)
	at := types.ArrayOf(types.TextT)
	// In PostgreSQL's order: {} < {a} < {a,b} < {a,NULL} < {b}.
	vals := []types.Datum{
		types.DArray(nil),
		types.DArray([]types.Datum{types.DText("a")}),
		types.DArray([]types.Datum{types.DText("a"), types.DText("b")}),
		types.DArray([]types.Datum{types.DText("a"), types.Null}),
		types.DArray([]types.Datum{types.DText("b")}),
	}
	b := array.NewBuilder(mem, at.ArrowType())
	defer b.Release()
	for _, d := range vals {
		types.AppendDatum(b, at, d)
	}
	arr := b.NewArray()
	defer arr.Release()
	codec := NewRowCodec([]types.T{at})
	var prev []byte
	for i, d := range vals {
		key := AppendKey(nil, at, arr, i)
		if !bytes.Equal(key, AppendKeyDatum(nil, at, d)) {
			t.Fatalf("row %d: key and datum key differ", i)
		}
		if prev != nil && bytes.Compare(prev, key) >= 0 {
			t.Fatalf("row %d: key does not sort after the previous", i)
		}
		prev = key
		kd, rest, err := DecodeKeyDatum(key, at)
		if err != nil || len(rest) != 0 || kd.Text(at) != d.Text(at) {
			t.Fatalf("row %d: key decodes to %s (%v)", i, kd.Text(at), err)
		}
		row := codec.Append(nil, []arrow.Array{arr}, i)
		if !bytes.Equal(row, codec.AppendDatums(nil, []types.Datum{d})) {
			t.Fatalf("row %d: row and datum row differ", i)
		}
		out := []types.Datum{{}}
		if err := codec.DecodeDatums(row, out); err != nil || out[0].Text(at) != d.Text(at) {
			t.Fatalf("row %d: row decodes to %s (%v)", i, out[0].Text(at), err)
		}
		rb := array.NewBuilder(mem, at.ArrowType())
		kb := array.NewBuilder(mem, at.ArrowType())
		if err := codec.Decode(row, []array.Builder{rb}); err != nil {
			t.Fatal(err)
		}
		if _, err := DecodeKey(key, at, kb); err != nil {
			t.Fatal(err)
		}
		for _, bb := range []array.Builder{rb, kb} {
			a := bb.NewArray()
			if got := types.DatumAt(at, a, 0).Text(at); got != d.Text(at) {
				t.Errorf("row %d: decoded to %s", i, got)
			}
			a.Release()
			bb.Release()
		}
	}
}
