package types

import (
	"testing"

	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

func TestArrayText(t *testing.T) {
	intArr, textArr := ArrayOf(Int32T), ArrayOf(TextT)
	for _, c := range []struct {
		t       T
		in, out string
	}{
		{intArr, "{1,2,3}", "{1,2,3}"},
		{intArr, " { 1 , NULL ,3 } ", "{1,NULL,3}"},
		{intArr, "{}", "{}"},
		{textArr, `{a,"b c","",NULL,"NULL","x\"y",z\,w}`, `{a,"b c","",NULL,"NULL","x\"y","z,w"}`},
		{ArrayOf(NumericOf(5, 2)), "{1.5,2}", "{1.50,2.00}"},
	} {
		d, err := ParseText(c.t, c.in)
		if err != nil {
			t.Fatalf("%s: %v", c.in, err)
		}
		if got := d.Text(c.t); got != c.out {
			t.Errorf("%s: got %s, want %s", c.in, got, c.out)
		}
		if c.t.String() == "" {
			t.Fatal("no name")
		}
	}
	for _, bad := range []string{"1,2", "{1,2", "{1,,2}", "{1}x", "{a}", "{{1}}"} {
		if _, err := ParseText(intArr, bad); err == nil {
			t.Errorf("%q parsed", bad)
		}
	}
	if s := intArr.String(); s != "integer[]" {
		t.Errorf("name %s", s)
	}
	// text[] is text[] (1009), character varying[] and varchar(n)[] are
	// character varying[] (1015), as in PostgreSQL.
	if o := textArr.OID(); o != 1009 {
		t.Errorf("oid %d", o)
	}
	for _, vt := range []T{{Kind: Text, Varchar: true}, {Kind: Text, Width: 5}} {
		if o := ArrayOf(vt).OID(); o != 1015 {
			t.Errorf("%s: oid %d", ArrayOf(vt), o)
		}
	}
}

func TestArrayArrowAndBinary(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
	defer mem.AssertSize(t, 0)
	at := ArrayOf(Int64T)
	b := array.NewBuilder(mem, at.ArrowType())
	defer b.Release()
	vals := []Datum{DArray([]Datum{DInt(1), Null, DInt(-3)}), Null, DArray(nil)}
	for _, d := range vals {
		AppendDatum(b, at, d)
	}
	arr := b.NewArray()
	defer arr.Release()
	f, bf := NewColumnFormatter(at, arr), NewColumnBinaryFormatter(at, arr)
	for i, want := range []string{"{1,NULL,-3}", "NULL", "{}"} {
		d := DatumAt(at, arr, i)
		if got := d.Text(at); got != want {
			t.Errorf("row %d: %s, want %s", i, got, want)
		}
		if d.Null {
			continue
		}
		if got := string(f(nil, i)); got != want {
			t.Errorf("row %d formatter: %s", i, got)
		}
		back, err := DecodeBinary(at, bf(nil, i))
		if err != nil || back.Text(at) != want {
			t.Errorf("row %d binary: %v %v", i, back.Text(at), err)
		}
	}
	if CompareArrays(Int64T, vals[0].Arr, []Datum{DInt(1), DInt(5)}) <= 0 {
		t.Error("a NULL element sorts after values")
	}
	if CompareArrays(Int64T, []Datum{DInt(1)}, []Datum{DInt(1), DInt(0)}) >= 0 {
		t.Error("a prefix sorts first")
	}
}
