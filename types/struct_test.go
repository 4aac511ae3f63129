package types

import (
	"encoding/json"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

func testStructT() T {
	inner := StructOf([]Field{{Name: "x", Type: Int32T}, {Name: "tags", Type: ArrayOf(TextT)}})
	return StructOf([]Field{{Name: "a", Type: Int32T}, {Name: "b", Type: T{Kind: Text, Varchar: true}}, {Name: "c", Type: inner}})
}

func TestStructInternAndJSON(t *testing.T) {
	a, b := testStructT(), testStructT()
	if a != b {
		t.Fatal("the same struct type interned twice differs")
	}
	if a == StructOf([]Field{{Name: "a", Type: Int32T}}) {
		t.Fatal("different struct types are equal")
	}
	for _, typ := range []T{a, ArrayOf(a), MapOf(TextT, a), NumericOf(10, 2), ArrayOf(Int32T)} {
		j, err := json.Marshal(typ)
		if err != nil {
			t.Fatal(err)
		}
		var back T
		if err := json.Unmarshal(j, &back); err != nil {
			t.Fatal(err)
		}
		if back != typ {
			t.Fatalf("%s: JSON round trip gives %s (%s)", typ, back, j)
		}
	}
	if got := a.String(); got != "struct<a integer, b character varying, c struct<x integer, tags text[]>>" {
		t.Fatalf("String: %s", got)
	}
	if got := MapOf(TextT, Int32T).String(); got != "map(text,integer)" {
		t.Fatalf("String: %s", got)
	}
}

func TestStructText(t *testing.T) {
	typ := testStructT()
	for _, c := range []struct {
		d    Datum
		want string
	}{
		{DStruct([]Datum{DInt(1), DText("abc"), Null}), `(1,abc,)`},
		{DStruct([]Datum{Null, DText(""), DStruct([]Datum{DInt(2), DArray([]Datum{DText("p q"), Null})})}), `(,"","(2,""{""""p q"""",NULL}"")")`},
		{DStruct([]Datum{DInt(-1), DText(`a,b"c\d(e)`), DStruct([]Datum{Null, Null})}), `(-1,"a,b""c\\d(e)","(,)")`},
	} {
		got := string(AppendText(nil, typ, c.d))
		if got != c.want {
			t.Fatalf("text: got %s want %s", got, c.want)
		}
		back, err := ParseText(typ, got)
		if err != nil {
			t.Fatalf("parse %s: %v", got, err)
		}
		if Compare(typ, back, c.d) != 0 || string(AppendText(nil, typ, back)) != got {
			t.Fatalf("parse %s: got %s", got, AppendText(nil, typ, back))
		}
		bin := AppendBinary(nil, typ, c.d)
		d2, err := DecodeBinary(typ, bin)
		if err != nil || Compare(typ, d2, c.d) != 0 {
			t.Fatalf("binary round trip of %s: %v", got, err)
		}
	}
	for _, bad := range []string{`1,2`, `(1`, `(1,a)`, `(1,a,,)`, `(1,a,) x`, `(x,a,)`} {
		if _, err := ParseText(typ, bad); err == nil {
			t.Fatalf("parse %q: no error", bad)
		}
	}
}

func TestStructCompare(t *testing.T) {
	typ := RecordOf([]T{Int32T, TextT})
	s := func(a, b Datum) Datum { return DStruct([]Datum{a, b}) }
	ordered := []Datum{s(DInt(1), DText("a")), s(DInt(1), DText("b")), s(DInt(1), Null), s(DInt(2), DText("a")), s(Null, DText("a"))}
	for i := range ordered {
		for j := range ordered {
			want := cmpOrdered(int64(i), int64(j))
			if got := Compare(typ, ordered[i], ordered[j]); got != want {
				t.Fatalf("compare %d %d: got %d", i, j, got)
			}
		}
	}
}

func TestStructArrow(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	typ := testStructT()
	m := MapOf(TextT, Int32T)
	ds := []Datum{
		DStruct([]Datum{DInt(1), DText("abc"), DStruct([]Datum{DInt(3), DArray(nil)})}),
		Null,
		DStruct([]Datum{Null, Null, Null}),
	}
	maps := []Datum{DArray([]Datum{DStruct([]Datum{DText("a"), DInt(1)}), DStruct([]Datum{DText("b c"), Null})}), Null, DArray(nil)}
	for _, c := range []struct {
		t  T
		ds []Datum
	}{{typ, ds}, {ArrayOf(typ), []Datum{DArray(ds), Null}}, {m, maps}} {
		b := array.NewBuilder(mem, c.t.ArrowType())
		for _, d := range c.ds {
			AppendDatum(b, c.t, d)
		}
		arr := b.NewArray()
		b.Release()
		f := NewColumnFormatter(c.t, arr)
		for i, d := range c.ds {
			got := DatumAt(c.t, arr, i)
			if got.Null != d.Null || (!d.Null && Compare(c.t, got, d) != 0) {
				t.Fatalf("%s row %d: got %s", c.t, i, AppendText(nil, c.t, got))
			}
			if !d.Null && string(f(nil, i)) != string(AppendText(nil, c.t, d)) {
				t.Fatalf("%s row %d: column text %s", c.t, i, f(nil, i))
			}
		}
		arr.Release()
	}
	if got := string(AppendText(nil, m, maps[0])); got != `{a:1,"b c":NULL}` {
		t.Fatalf("map text: %s", got)
	}
}
