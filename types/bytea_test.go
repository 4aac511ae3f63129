package types

import (
	"testing"

	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/streamsql/streamsql/sqlerr"
)

func TestByteaText(t *testing.T) {
	for _, c := range []struct{ in, hex, esc string }{
		{`\xdeadBEEF`, `\xdeadbeef`, `\336\255\276\357`},
		{`\x de ad`, `\xdead`, `\336\255`},
		{`\x`, `\x`, ``},
		{``, `\x`, ``},
		{`abc\000`, `\x61626300`, `abc\000`},
		{`a\\b\101`, `\x615c6241`, `a\\bA`},
		{"\x01~\x7f", `\x017e7f`, `\001~\177`},
	} {
		d, err := ParseText(ByteaT, c.in)
		if err != nil {
			t.Fatalf("%q: %v", c.in, err)
		}
		if got := string(AppendText(nil, ByteaT, d)); got != c.hex {
			t.Errorf("%q: hex %q, want %q", c.in, got, c.hex)
		}
		if got := string(AppendByteaEscape(nil, d.S)); got != c.esc {
			t.Errorf("%q: escape %q, want %q", c.in, got, c.esc)
		}
		back, err := ParseText(ByteaT, c.hex)
		if err != nil || back.S != d.S {
			t.Errorf("%q: hex output does not read back: %q %v", c.in, back.S, err)
		}
	}
	for _, c := range []struct{ in, code, msg string }{
		{`\xabc`, sqlerr.InvalidParameterValue, "invalid hexadecimal data: odd number of digits"},
		{`\xzz`, sqlerr.InvalidParameterValue, `invalid hexadecimal digit: "z"`},
		{`\xa z`, sqlerr.InvalidParameterValue, `invalid hexadecimal digit: " "`},
		{`a\b`, sqlerr.InvalidTextRepresentation, "invalid input syntax for type bytea"},
		{`\400`, sqlerr.InvalidTextRepresentation, "invalid input syntax for type bytea"},
		{`\00`, sqlerr.InvalidTextRepresentation, "invalid input syntax for type bytea"},
	} {
		_, err := ParseText(ByteaT, c.in)
		e, ok := err.(*sqlerr.Error)
		if !ok || e.Code != c.code || e.Message != c.msg {
			t.Errorf("%q: got %v, want %s %s", c.in, err, c.code, c.msg)
		}
	}
}

func TestUUIDText(t *testing.T) {
	const canon = "a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11"
	for _, in := range []string{
		"A0EEBC99-9C0B-4EF8-BB6D-6BB9BD380A11",
		"{a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11}",
		"a0eebc999c0b4ef8bb6d6bb9bd380a11",
		"a0ee-bc99-9c0b-4ef8-bb6d-6bb9-bd38-0a11",
		"{a0eebc99-9c0b4ef8-bb6d6bb9-bd380a11}",
	} {
		d, err := ParseText(UUIDT, in)
		if err != nil {
			t.Fatalf("%q: %v", in, err)
		}
		if len(d.S) != UUIDLen {
			t.Fatalf("%q: %d bytes", in, len(d.S))
		}
		if got := string(AppendText(nil, UUIDT, d)); got != canon {
			t.Errorf("%q: %q", in, got)
		}
	}
	for _, in := range []string{
		"", "a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a1", "a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a111",
		"{a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11", "a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11}",
		"a0eebc9-99c0b-4ef8-bb6d-6bb9bd380a11", "a0eebc99--9c0b-4ef8-bb6d-6bb9bd380a11",
		"-a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11", "a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11-",
		"g0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11",
	} {
		_, err := ParseText(UUIDT, in)
		e, ok := err.(*sqlerr.Error)
		if !ok || e.Code != sqlerr.InvalidTextRepresentation || e.Message != `invalid input syntax for type uuid: "`+in+`"` {
			t.Errorf("%q: got %v", in, err)
		}
	}
	r := AppendRandomUUID(nil)
	if len(r) != UUIDLen || r[6]>>4 != 4 || r[8]>>6 != 2 {
		t.Errorf("random uuid %x is not version 4", r)
	}
}

func TestByteaUUIDColumns(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	u, _ := ParseUUID("a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11")
	for _, c := range []struct {
		t    T
		v    string
		text string
	}{{ByteaT, "\x00\xff", `\x00ff`}, {UUIDT, u, "a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11"}} {
		b := array.NewBuilder(mem, c.t.ArrowType())
		AppendDatum(b, c.t, DBytes(c.v))
		AppendDatum(b, c.t, Null)
		arr := b.NewArray()
		b.Release()
		if d := DatumAt(c.t, arr, 0); d.S != c.v {
			t.Errorf("%s: DatumAt %q", c.t, d.S)
		}
		if !DatumAt(c.t, arr, 1).Null {
			t.Errorf("%s: NULL lost", c.t)
		}
		if got := string(NewColumnFormatter(c.t, arr)(nil, 0)); got != c.text {
			t.Errorf("%s: text %q", c.t, got)
		}
		bin := NewColumnBinaryFormatter(c.t, arr)(nil, 0)
		if string(bin) != c.v {
			t.Errorf("%s: binary %x", c.t, bin)
		}
		d, err := DecodeBinary(c.t, bin)
		if err != nil || d.S != c.v {
			t.Errorf("%s: binary round trip %q %v", c.t, d.S, err)
		}
		arr.Release()
		if got, ok := FromOID(c.t.OID()); !ok || got != c.t {
			t.Errorf("%s: FromOID(%d) = %v", c.t, c.t.OID(), got)
		}
		if got, ok := FromName(c.t.String(), nil); !ok || got != c.t {
			t.Errorf("%s: FromName", c.t)
		}
	}
	if _, err := DecodeBinary(UUIDT, []byte{1, 2}); err == nil {
		t.Error("a 2-byte binary uuid was accepted")
	}
	if Compare(ByteaT, DBytes("ab"), DBytes("abc")) >= 0 || Compare(ByteaT, DBytes("\xff"), DBytes("a")) <= 0 {
		t.Error("bytea does not order bytewise")
	}
	if ArrayOf(ByteaT).OID() != OIDByteaArray || ArrayOf(UUIDT).OID() != OIDUUIDArray {
		t.Error("array OIDs")
	}
}
