package state

import (
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/streamsql/streamsql/types"
)

// TestRowCodecRoundTrip encodes rows of every type, with NULLs, from Arrow
// columns and from datums, and decodes them into builders and datums. Values
// must come back bit for bit (floats included).
func TestRowCodecRoundTrip(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	r := newRand(t)
	// Every type, twice, so the NULL bitmap spans more than one byte.
	ts := append(append([]types.T{}, allTypes...), allTypes...)
	codec := NewRowCodec(ts)
	const n = 300
	rows := make([][]types.Datum, n)
	for i := range rows {
		rows[i] = make([]types.Datum, len(ts))
		for j, typ := range ts {
			rows[i][j] = randDatum(r, typ, true)
		}
	}
	cols := make([]arrow.Array, len(ts))
	for j, typ := range ts {
		ds := make([]types.Datum, n)
		for i := range ds {
			ds[i] = rows[i][j]
		}
		cols[j] = buildColumn(mem, typ, ds)
		defer cols[j].Release()
	}
	bs := make([]array.Builder, len(ts))
	for j, typ := range ts {
		bs[j] = array.NewBuilder(mem, typ.ArrowType())
		defer bs[j].Release()
	}
	var buf []byte
	out := make([]types.Datum, len(ts))
	for i := range rows {
		buf = codec.Append(buf[:0], cols, i)
		if want := codec.AppendDatums(nil, rows[i]); string(want) != string(buf) {
			t.Fatalf("row %d: Append %x != AppendDatums %x", i, buf, want)
		}
		if err := codec.Decode(buf, bs); err != nil {
			t.Fatalf("row %d: %v", i, err)
		}
		if err := codec.DecodeDatums(buf, out); err != nil {
			t.Fatalf("row %d: %v", i, err)
		}
		for j, typ := range ts {
			if !sameDatum(typ, out[j], rows[i][j]) {
				t.Fatalf("row %d col %d (%s): DecodeDatums %s, want %s",
					i, j, typ, out[j].Text(typ), rows[i][j].Text(typ))
			}
		}
	}
	for j, typ := range ts {
		arr := bs[j].NewArray()
		for i := range rows {
			if got := types.DatumAt(typ, arr, i); !sameDatum(typ, got, rows[i][j]) {
				t.Fatalf("row %d col %d (%s): Decode %s, want %s",
					i, j, typ, got.Text(typ), rows[i][j].Text(typ))
			}
		}
		arr.Release()
	}
}

// TestRowCodecCorrupt checks that truncated rows and rows with trailing bytes
// fail to decode instead of panicking.
func TestRowCodecCorrupt(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	r := newRand(t)
	codec := NewRowCodec(allTypes)
	bs := make([]array.Builder, len(allTypes))
	for j, typ := range allTypes {
		bs[j] = array.NewBuilder(mem, typ.ArrowType())
		defer bs[j].Release()
	}
	out := make([]types.Datum, len(allTypes))
	for range 50 {
		row := make([]types.Datum, len(allTypes))
		for j, typ := range allTypes {
			row[j] = randDatum(r, typ, false)
		}
		buf := codec.AppendDatums(nil, row)
		for n := 0; n < len(buf); n++ {
			if err := codec.DecodeDatums(buf[:n], out); err == nil {
				t.Fatalf("truncated row %x decoded", buf[:n])
			}
			if err := codec.Decode(buf[:n], bs); err == nil {
				t.Fatalf("truncated row %x decoded", buf[:n])
			}
		}
		if err := codec.DecodeDatums(append(buf, 0), out); err == nil {
			t.Fatalf("row with a trailing byte decoded")
		}
	}
}

// TestRowCodecCompact pins the sizes of a few rows.
func TestRowCodecCompact(t *testing.T) {
	codec := NewRowCodec([]types.T{types.Int64T, types.NumericT, types.TextT, types.BoolT})
	for _, c := range []struct {
		row  []types.Datum
		size int
	}{
		{[]types.Datum{types.DInt(1), types.DNumeric(types.DInt(0).Dec), types.DText("ab"), types.DBool(true)}, 1 + 1 + 2 + 3 + 1},
		{[]types.Datum{types.Null, types.Null, types.Null, types.Null}, 1},
	} {
		if got := len(codec.AppendDatums(nil, c.row)); got != c.size {
			t.Errorf("row %v: %d bytes, want %d", c.row, got, c.size)
		}
	}
}

func TestRowCodecAllocs(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	r := newRand(t)
	codec := NewRowCodec(allTypes)
	cols := make([]arrow.Array, len(allTypes))
	for j, typ := range allTypes {
		ds := make([]types.Datum, 32)
		for i := range ds {
			ds[i] = randDatum(r, typ, true)
		}
		cols[j] = buildColumn(mem, typ, ds)
		defer cols[j].Release()
	}
	buf := make([]byte, 0, 1<<16)
	allocs := testing.AllocsPerRun(10, func() {
		buf = buf[:0]
		for i := 0; i < 32; i++ {
			buf = codec.Append(buf, cols, i)
		}
	})
	if allocs != 0 {
		t.Errorf("RowCodec.Append allocates %v per run", allocs)
	}
}
