package types

import "testing"

// TestBpchar checks character(n): named and described as PostgreSQL's
// bpchar with its typmod, input without trailing blanks (22001 past n),
// output padded to n.
func TestBpchar(t *testing.T) {
	c3, ok := FromName("bpchar", []int32{3})
	if !ok || c3.OID() != OIDBpchar || c3.Typmod() != 7 || c3.String() != "character(3)" {
		t.Fatalf("char(3) = %+v (ok %v): OID %d typmod %d %q", c3, ok, c3.OID(), c3.Typmod(), c3.String())
	}
	if arr := ArrayOf(c3); arr.OID() != 1014 {
		t.Errorf("char(3)[] OID = %d, want 1014", arr.OID())
	}
	for _, c := range []struct{ in, stored, out string }{
		{"a", "a", "a  "}, {"ab  ", "ab", "ab "}, {"abc     ", "abc", "abc"}, {" a", " a", " a "}, {"é", "é", "é  "},
	} {
		d, err := ParseText(c3, c.in)
		if err != nil || d.S != c.stored {
			t.Errorf("ParseText(char(3), %q) = %q, %v; want %q", c.in, d.S, err, c.stored)
			continue
		}
		if got := string(AppendText(nil, c3, d)); got != c.out {
			t.Errorf("AppendText(char(3), %q) = %q, want %q", d.S, got, c.out)
		}
	}
	if _, err := ParseText(c3, "abcd"); err == nil || err.Error() != "value too long for type character(3)" {
		t.Errorf("ParseText(char(3), abcd): %v", err)
	}
	if got := string(AppendText(nil, WithoutTypmod(c3), DText("a"))); got != "a" {
		t.Errorf("bpchar output %q, want unpadded", got)
	}
}
