package eval

import (
	"encoding/base64"
	"math/rand/v2"
	"strings"
	"testing"
)

// TestBase64 checks encode/decode(..., 'base64') against the standard
// library: PostgreSQL's alphabet and padding, a newline after every 76
// characters, white space ignored on input.
func TestBase64(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for n := 0; n < 300; n++ {
		b := make([]byte, n)
		for i := range b {
			b[i] = byte(r.IntN(256))
		}
		std := base64.StdEncoding.EncodeToString(b)
		var want strings.Builder
		for i := 0; i < len(std); i += 76 {
			want.WriteString(std[i:min(i+76, len(std))])
			if i+76 < len(std) || (i+76 == len(std) && n%3 == 0) {
				// PostgreSQL ends a full last line with a newline only
				// when no padding follows it.
				want.WriteByte('\n')
			}
		}
		got := string(appendBase64(nil, string(b)))
		if got != want.String() {
			t.Fatalf("%d bytes: %q, want %q", n, got, want.String())
		}
		back, err := decodeBase64(nil, " "+got+"\t")
		if err != nil || string(back) != string(b) {
			t.Fatalf("%d bytes: decode %x %v", n, back, err)
		}
	}
	for _, bad := range []string{"a", "ab", "abc", "a=bc", "ab!c"} {
		if _, err := decodeBase64(nil, bad); err == nil {
			t.Errorf("%q decoded", bad)
		}
	}
}

func TestByteaSubstrOverlay(t *testing.T) {
	for _, c := range []struct {
		s            string
		start, count int64
		has          bool
		want         string
	}{
		{"abcd", 2, 2, true, "bc"}, {"abcd", 0, 2, true, "a"}, {"abcd", -5, 10, true, "abcd"},
		{"abcd", 3, 0, false, "cd"}, {"abcd", 9, 0, false, ""}, {"abcd", 4, 100, true, "d"},
		{"", 1, 1, true, ""},
	} {
		d, err := byteaSubstr(c.s, c.start, c.count, c.has)
		if err != nil || d.S != c.want {
			t.Errorf("substr(%q, %d, %d) = %q %v, want %q", c.s, c.start, c.count, d.S, err, c.want)
		}
	}
	if _, err := byteaSubstr("ab", 1, -1, true); err == nil {
		t.Error("negative length accepted")
	}
	var k kctx
	if d, _ := byteaOverlay(&k, "abcdef", "XY", 2, 3); d.S != "aXYef" {
		t.Errorf("overlay %q", d.S)
	}
}
