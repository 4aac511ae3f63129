package state

import (
	"bytes"
	"math/rand/v2"
	"strconv"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/streamsql/streamsql/types"
)

// randJSONB returns random canonical jsonb text from a small domain, so that
// equal values are common, with nesting, and escapes in strings.
func randJSONB(r *rand.Rand, depth int) string {
	return types.JSONText(randJSONValue(r, depth))
}

func randJSONValue(r *rand.Rand, depth int) types.JSON {
	n := 7
	if depth <= 0 {
		n = 4
	}
	switch r.IntN(n) {
	case 0:
		return types.JSONNullValue()
	case 1:
		strs := []string{"", "a", "ab", "b", "a\n", "\"", "é"}
		return types.JSONStr(strs[r.IntN(len(strs))])
	case 2:
		nums := []string{"0", "0.0", "1", "1.0", "-1", "-0.5", "10", "0.001", "-123.456", "1000000000000000000000"}
		return types.JSONNum(nums[r.IntN(len(nums))])
	case 3:
		return types.JSONBoolValue(r.IntN(2) == 0)
	case 4, 5:
		elems := make([]types.JSON, r.IntN(3))
		for i := range elems {
			elems[i] = randJSONValue(r, depth-1)
		}
		return types.JSONArrayOf(elems)
	}
	var b types.JSONObjectBuilder
	for i := r.IntN(3); i > 0; i-- {
		b.Add(strconv.Itoa(r.IntN(3))+string("ab"[r.IntN(2)]), randJSONValue(r, depth-1))
	}
	return b.Finish()
}

func TestJSONBKeyAndRowCodec(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	r := newRand(t)
	typ := types.JSONBT
	ds := make([]types.Datum, 2000)
	for i := range ds {
		ds[i] = types.DText(randJSONB(r, 3))
		if i%9 == 0 {
			ds[i] = types.Null
		}
	}
	col := buildColumn(mem, types.TextT, ds)
	defer col.Release()
	b := array.NewBuilder(mem, typ.ArrowType())
	defer b.Release()
	codec := NewRowCodec([]types.T{typ, types.Int32T})
	out := make([]types.Datum, 2)
	for i := range ds {
		k := append(AppendKey(nil, typ, col, i), 0xAB)
		if want := AppendKeyDatum(nil, typ, ds[i]); !bytes.Equal(k[:len(k)-1], want) {
			t.Fatalf("row %d: AppendKey %x != AppendKeyDatum %x", i, k, want)
		}
		rest, err := DecodeKey(k, typ, b)
		if err != nil || !bytes.Equal(rest, []byte{0xAB}) {
			t.Fatalf("row %d: DecodeKey %v rest %x", i, err, rest)
		}
		d, _, err := DecodeKeyDatum(k, typ)
		if err != nil || d.Null != ds[i].Null || d.S != ds[i].S {
			t.Fatalf("row %d: DecodeKeyDatum %q, want %q (%v)", i, d.S, ds[i].S, err)
		}
		row := codec.AppendDatums(nil, []types.Datum{ds[i], types.DInt(int64(i))})
		if err := codec.DecodeDatums(row, out); err != nil || out[0].Null != ds[i].Null || out[0].S != ds[i].S {
			t.Fatalf("row %d: row codec %q, want %q (%v)", i, out[0].S, ds[i].S, err)
		}
		j := r.IntN(len(ds))
		kj := AppendKeyDatum(nil, typ, ds[j])
		want := compareNullsFirst(typ, ds[i], ds[j])
		got := bytes.Compare(k[:len(k)-1], kj)
		if want == 0 && !ds[i].Null && ds[i].S != ds[j].S {
			// Numbers of equal value and different scale: distinct keys.
			if got == 0 {
				t.Fatalf("%s and %s have the same key", ds[i].S, ds[j].S)
			}
			continue
		}
		if got != want {
			t.Fatalf("compare(%s, %s) = %d, keys compare %d", ds[i].S, ds[j].S, want, got)
		}
	}
	arr := b.NewArray()
	defer arr.Release()
	for i := range ds {
		if got := types.DatumAt(typ, arr, i); got.Null != ds[i].Null || got.S != ds[i].S {
			t.Fatalf("row %d: decoded %q, want %q", i, got.S, ds[i].S)
		}
	}
}
