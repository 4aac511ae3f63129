package postgres

import (
	"testing"

	"github.com/streamsql/streamsql/types"
)

func TestFits(t *testing.T) {
	varchar := func(n int32) types.T { return types.T{Kind: types.Text, Varchar: true, Width: n} }
	for _, c := range []struct {
		from, to types.T
		want     bool
	}{
		{types.Int32T, types.Int32T, true},
		{types.Int32T, types.Int64T, true},
		{types.Int64T, types.Int32T, false},
		{types.Int32T, types.NumericT, true},
		{types.Int32T, types.NumericOf(12, 2), true},
		{types.Int32T, types.NumericOf(9, 2), false},
		{types.Int64T, types.Float64T, false},
		{types.Float32T, types.Float64T, true},
		{types.Float64T, types.Float32T, false},
		{types.NumericT, types.NumericOf(10, 2), false},
		{types.NumericOf(10, 2), types.NumericOf(12, 3), true},
		{types.NumericOf(10, 2), types.NumericOf(10, 3), false},
		{types.TextT, varchar(0), true},
		{types.TextT, varchar(3), false},
		{varchar(3), varchar(5), true},
		{types.ArrayOf(types.Int16T), types.ArrayOf(types.Int64T), true},
		{types.ArrayOf(types.Int64T), types.Int64T, false},
		{types.TimestampT, types.TimestampTZT, false},
		{types.JSONBT, types.JSONBT, true},
	} {
		if got := Fits(c.from, c.to); got != c.want {
			t.Errorf("Fits(%v, %v) = %v, want %v", c.from, c.to, got, c.want)
		}
	}
}

func TestTypeOf(t *testing.T) {
	for _, c := range []struct {
		oid    uint32
		typmod int32
		elem   uint32
		want   string
		ok     bool
	}{
		{types.OIDInt4, -1, 0, "integer", true},
		{types.OIDVarchar, 14, 0, "character varying(10)", true},
		{types.OIDNumeric, (12<<16 | 3) + 4, 0, "numeric(12,3)", true},
		{1007, -1, types.OIDInt4, "integer[]", true},
		{869, -1, 0, "", false},    // inet
		{19, -1, 18, "", false},    // name, described with an element
		{1014, 9, 1042, "", false}, // character(5)[]
	} {
		got, ok := TypeOf(c.oid, c.typmod, c.elem)
		if ok != c.ok || (ok && got.String() != c.want) {
			t.Errorf("TypeOf(%d, %d, %d) = %v, %v; want %s, %v", c.oid, c.typmod, c.elem, got, ok, c.want, c.ok)
		}
	}
}

func TestAppendCopyEscaped(t *testing.T) {
	if got := string(appendCopyEscaped(nil, []byte("a\tb\\c\nd\re"))); got != `a\tb\\c\nd\re` {
		t.Errorf("got %q", got)
	}
}
