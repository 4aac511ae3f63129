package state

import (
	"bytes"
	"fmt"
	"math"
	"slices"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/streamsql/streamsql/types"
)

// TestKeyRoundTrip encodes random values and NULLs of every type with
// AppendKey and decodes them with DecodeKey and DecodeKeyDatum.
func TestKeyRoundTrip(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	r := newRand(t)
	for _, typ := range allTypes {
		t.Run(typ.String(), func(t *testing.T) {
			ds := make([]types.Datum, 500)
			for i := range ds {
				ds[i] = randDatum(r, typ, true)
			}
			col := buildColumn(mem, typ, ds)
			defer col.Release()
			b := array.NewBuilder(mem, typ.ArrowType())
			defer b.Release()
			var buf []byte
			for i := range ds {
				buf = AppendKey(buf[:0], typ, col, i)
				if want := AppendKeyDatum(nil, typ, ds[i]); !bytes.Equal(buf, want) {
					t.Fatalf("row %d (%s): AppendKey %x != AppendKeyDatum %x", i, ds[i].Text(typ), buf, want)
				}
				// A trailing byte must come back as the rest.
				buf = append(buf, 0xAB)
				rest, err := DecodeKey(buf, typ, b)
				if err != nil {
					t.Fatalf("row %d: %v", i, err)
				}
				if !bytes.Equal(rest, []byte{0xAB}) {
					t.Fatalf("row %d: rest %x", i, rest)
				}
				d, rest, err := DecodeKeyDatum(buf, typ)
				if err != nil || !bytes.Equal(rest, []byte{0xAB}) {
					t.Fatalf("row %d: DecodeKeyDatum: %v rest %x", i, err, rest)
				}
				if want := keyCanonical(typ, ds[i]); !sameDatum(typ, d, want) {
					t.Fatalf("row %d: DecodeKeyDatum %s, want %s", i, d.Text(typ), want.Text(typ))
				}
			}
			out := b.NewArray()
			defer out.Release()
			for i := range ds {
				got := types.DatumAt(typ, out, i)
				if want := keyCanonical(typ, ds[i]); !sameDatum(typ, got, want) {
					t.Fatalf("row %d: decoded %s, want %s", i, got.Text(typ), want.Text(typ))
				}
			}
		})
	}
}

// TestKeyOrder checks that the byte order of keys is the SQL order of the
// values with NULL first, and that equal values have equal keys (except
// intervals, whose fields are kept apart).
func TestKeyOrder(t *testing.T) {
	r := newRand(t)
	for _, typ := range allTypes {
		t.Run(typ.String(), func(t *testing.T) {
			for range 5000 {
				a, b := randDatum(r, typ, true), randDatum(r, typ, true)
				ka, kb := AppendKeyDatum(nil, typ, a), AppendKeyDatum(nil, typ, b)
				want := compareNullsFirst(typ, a, b)
				got := bytes.Compare(ka, kb)
				if want == 0 && typ.Kind == types.Interval && !a.Null && a.Ivl != b.Ivl {
					// Equal in PostgreSQL's order, different fields: distinct
					// keys, in either order.
					if got == 0 {
						t.Fatalf("%s and %s have the same key", a.Text(typ), b.Text(typ))
					}
					continue
				}
				if got != want {
					t.Fatalf("compare(%s, %s) = %d, keys %x %x compare %d",
						a.Text(typ), b.Text(typ), want, ka, kb, got)
				}
			}
		})
	}
}

func TestKeyFloatEdgeCases(t *testing.T) {
	key := func(f float64) []byte { return AppendKeyDatum(nil, types.Float64T, types.DFloat(f)) }
	ordered := []float64{math.Inf(-1), -math.MaxFloat64, -1, -math.SmallestNonzeroFloat64, 0,
		math.SmallestNonzeroFloat64, 1, math.MaxFloat64, math.Inf(1), math.NaN()}
	for i := 1; i < len(ordered); i++ {
		if bytes.Compare(key(ordered[i-1]), key(ordered[i])) >= 0 {
			t.Errorf("key(%v) >= key(%v)", ordered[i-1], ordered[i])
		}
	}
	if !bytes.Equal(key(math.Copysign(0, -1)), key(0)) {
		t.Error("-0 and 0 have different keys")
	}
	if !bytes.Equal(key(math.NaN()), key(-math.NaN())) {
		t.Error("NaNs have different keys")
	}
}

// TestKeyMultiColumn checks order and the prefix property on keys of several
// columns.
func TestKeyMultiColumn(t *testing.T) {
	r := newRand(t)
	ts := []types.T{types.Int32T, types.TextT, types.Float64T, types.NumericT}
	type row struct {
		ds  []types.Datum
		key []byte
	}
	rows := make([]row, 2000)
	for i := range rows {
		ds := make([]types.Datum, len(ts))
		var key []byte
		for j, typ := range ts {
			ds[j] = randDatum(r, typ, true)
			key = AppendKeyDatum(key, typ, ds[j])
		}
		rows[i] = row{ds, key}
	}
	cmpRows := func(a, b row) int {
		for j, typ := range ts {
			if c := compareNullsFirst(typ, a.ds[j], b.ds[j]); c != 0 {
				return c
			}
		}
		return 0
	}
	for i := 1; i < len(rows); i++ {
		a, b := rows[i-1], rows[i]
		if got, want := bytes.Compare(a.key, b.key), cmpRows(a, b); got != want {
			t.Fatalf("rows %d, %d: key order %d, value order %d", i-1, i, got, want)
		}
	}
	// Sorting by key sorts by value.
	slices.SortFunc(rows, func(a, b row) int { return bytes.Compare(a.key, b.key) })
	for i := 1; i < len(rows); i++ {
		if cmpRows(rows[i-1], rows[i]) > 0 {
			t.Fatalf("sorted keys out of value order at %d", i)
		}
	}
	// Prefix property: the key of the first k columns is a byte prefix of the
	// key, and every key with that prefix sorts below PrefixEnd(prefix) while
	// every row greater in the first k columns sorts at or above it.
	for _, a := range rows[:200] {
		for k := 1; k <= len(ts); k++ {
			var prefix []byte
			for j := 0; j < k; j++ {
				prefix = AppendKeyDatum(prefix, ts[j], a.ds[j])
			}
			if !bytes.HasPrefix(a.key, prefix) {
				t.Fatalf("key %x lacks prefix %x", a.key, prefix)
			}
			end := PrefixEnd(prefix)
			for _, b := range rows {
				cmpPrefix := 0
				for j := 0; j < k && cmpPrefix == 0; j++ {
					cmpPrefix = compareNullsFirst(ts[j], b.ds[j], a.ds[j])
				}
				below := end == nil || bytes.Compare(b.key, end) < 0
				switch {
				case cmpPrefix == 0 && (!bytes.HasPrefix(b.key, prefix) || !below):
					t.Fatalf("key %x with equal prefix not in [%x, %x)", b.key, prefix, end)
				case cmpPrefix > 0 && below:
					t.Fatalf("greater key %x below PrefixEnd %x", b.key, end)
				}
			}
		}
	}
}

func TestPrefixEnd(t *testing.T) {
	for _, c := range []struct{ in, want []byte }{
		{nil, nil},
		{[]byte{0xFF, 0xFF}, nil},
		{[]byte{1, 2}, []byte{1, 3}},
		{[]byte{1, 0xFF}, []byte{2}},
		{[]byte{0}, []byte{1}},
	} {
		in := append([]byte(nil), c.in...)
		if got := PrefixEnd(in); !bytes.Equal(got, c.want) {
			t.Errorf("PrefixEnd(%x) = %x, want %x", c.in, got, c.want)
		}
		if !bytes.Equal(in, c.in) {
			t.Errorf("PrefixEnd modified its input")
		}
	}
}

// TestKeyEncoder checks that KeyEncoder produces AppendKey's keys, also on
// sliced columns with NULLs.
func TestKeyEncoder(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	r := newRand(t)
	for round := range 20 {
		ncols := 1 + r.IntN(4)
		ts := make([]types.T, ncols)
		for j := range ts {
			ts[j] = allTypes[r.IntN(len(allTypes))]
		}
		n := r.IntN(300)
		cols := make([]arrow.Array, ncols)
		for j, typ := range ts {
			ds := make([]types.Datum, n+10)
			for i := range ds {
				ds[i] = randDatum(r, typ, round%2 == 0)
			}
			full := buildColumn(mem, typ, ds)
			cols[j] = array.NewSlice(full, 5, int64(n+5))
			full.Release()
		}
		enc := NewKeyEncoder(ts)
		for range 2 { // the second Encode reuses memory
			enc.Encode(cols)
			if enc.Len() != n {
				t.Fatalf("Len %d, want %d", enc.Len(), n)
			}
			for i := 0; i < n; i++ {
				var want []byte
				for j, typ := range ts {
					want = AppendKey(want, typ, cols[j], i)
				}
				if got := enc.Key(i); !bytes.Equal(got, want) {
					t.Fatalf("types %v row %d: %x, want %x", ts, i, got, want)
				}
			}
		}
		for _, c := range cols {
			c.Release()
		}
	}
}

// TestDecodeKeyCorrupt feeds truncated and invalid keys to DecodeKey: errors,
// never panics, and nothing appended.
func TestDecodeKeyCorrupt(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	r := newRand(t)
	for _, typ := range allTypes {
		b := array.NewBuilder(mem, typ.ArrowType())
		for range 50 {
			d := randDatum(r, typ, false)
			key := AppendKeyDatum(nil, typ, d)
			for n := 0; n < len(key); n++ {
				if _, err := DecodeKey(key[:n], typ, b); err == nil {
					t.Errorf("%s: truncated key %x decoded", typ, key[:n])
				}
				if _, _, err := DecodeKeyDatum(key[:n], typ); err == nil {
					t.Errorf("%s: truncated key %x decoded as datum", typ, key[:n])
				}
			}
		}
		if _, err := DecodeKey([]byte{7}, typ, b); err == nil {
			t.Errorf("%s: bad marker decoded", typ)
		}
		if b.Len() != 0 {
			t.Errorf("%s: failed decodes appended %d values", typ, b.Len())
		}
		b.Release()
	}
}

func TestKeyEncodingAllocs(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	r := newRand(t)
	for _, typ := range allTypes {
		ds := make([]types.Datum, 64)
		for i := range ds {
			ds[i] = randDatum(r, typ, true)
		}
		col := buildColumn(mem, typ, ds)
		buf := make([]byte, 0, 1024)
		allocs := testing.AllocsPerRun(10, func() {
			buf = buf[:0]
			for i := range ds {
				buf = AppendKey(buf, typ, col, i)
			}
		})
		if allocs != 0 {
			t.Errorf("%s: AppendKey allocates %v per run", typ, allocs)
		}
		enc := NewKeyEncoder([]types.T{typ})
		cols := []arrow.Array{col}
		enc.Encode(cols)
		allocs = testing.AllocsPerRun(10, func() { enc.Encode(cols) })
		if allocs != 0 {
			t.Errorf("%s: KeyEncoder.Encode allocates %v per run", typ, allocs)
		}
		col.Release()
	}
}

func ExampleAppendKey() {
	mem := memory.NewGoAllocator()
	b := array.NewInt64Builder(mem)
	b.AppendValues([]int64{-1, 2}, nil)
	b.AppendNull()
	col := b.NewArray()
	defer col.Release()
	for i := 0; i < col.Len(); i++ {
		fmt.Printf("%x\n", AppendKey(nil, types.Int64T, col, i))
	}
	// Output:
	// 017fffffffffffffff
	// 018000000000000002
	// 00
}
