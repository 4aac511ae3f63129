package state

import (
	"bytes"
	"testing"

	"github.com/streamsql/streamsql/types"
)

// TestKeyDynNumeric checks that unconstrained numeric keys order by value,
// equal values of different display scales share a key, and keys decode to
// the value without trailing zeros.
func TestKeyDynNumeric(t *testing.T) {
	parse := func(s string) types.Datum {
		d, err := types.ParseText(types.NumericT, s)
		if err != nil {
			t.Fatal(err)
		}
		return d
	}
	// Ascending; each group of equal values is one line.
	groups := [][]string{
		{"-123456789012345678901234567890123456"},
		{"-1e20", "-100000000000000000000.000"},
		{"-1.5", "-1.50", "-1.500000"},
		{"-1"},
		{"-0.000000000000000000000000000000000000000000000000000000000000001"},
		{"0", "0.00", "-0.0"},
		{"0.000000000000000000000000000000000000000000000000000000000000001"},
		{"0.1", "0.10"},
		{"0.11"},
		{"1", "1.0"},
		{"1.00000000000000000000000000000000001"},
		{"1.5", "1.50"},
		{"9.99"},
		{"10", "10.000"},
		{"123456789012345678901234567890123456"},
	}
	var prev []byte
	for gi, g := range groups {
		var first []byte
		for _, s := range g {
			d := parse(s)
			k := AppendKeyDatum(nil, types.NumericT, d)
			if first == nil {
				first = k
				if gi > 0 && bytes.Compare(prev, k) >= 0 {
					t.Errorf("key(%s) %x not above the previous value's %x", s, k, prev)
				}
			} else if !bytes.Equal(first, k) {
				t.Errorf("key(%s) %x != key(%s) %x", s, k, g[0], first)
			}
			got, rest, err := DecodeKeyDatum(k, types.NumericT)
			if err != nil || len(rest) != 0 {
				t.Fatalf("decode %x: %v", k, err)
			}
			if want := types.NormalizeNumeric(d.Dec); got.Dec != want {
				t.Errorf("decode(key(%s)) = %s, want %s", s, got.Text(types.NumericT), types.DNumeric(want).Text(types.NumericT))
			}
		}
		prev = first
	}
}
