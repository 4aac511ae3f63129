package types

import (
	"bytes"
	"encoding/binary"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/decimal128"
)

// TestPackNumeric checks the packed layout round-trips mantissas of both
// signs at every scale, and that normalizing drops only trailing zeros.
func TestPackNumeric(t *testing.T) {
	limit := decimal128.GetScaleMultiplier(DynDigits).Sub(decimal128.FromI64(1))
	for _, m := range []decimal128.Num{{}, decimal128.FromI64(1), decimal128.FromI64(-1), decimal128.FromI64(-1500),
		limit, limit.Negate()} {
		for s := int32(0); s <= DynMaxScale; s++ {
			gm, gs := UnpackNumeric(PackNumeric(m, s))
			if gm != m || gs != s {
				t.Fatalf("Unpack(Pack(%v, %d)) = %v, %d", m.BigInt(), s, gm.BigInt(), gs)
			}
		}
	}
	for _, tc := range []struct{ in, want string }{
		{"1.500", "1.5"}, {"-1.500", "-1.5"}, {"100", "100"}, {"0.000", "0"}, {"10.010", "10.01"},
	} {
		d, err := ParseText(NumericT, tc.in)
		if err != nil {
			t.Fatal(err)
		}
		if got := DNumeric(NormalizeNumeric(d.Dec)).Text(NumericT); got != tc.want {
			t.Errorf("NormalizeNumeric(%s) = %s, want %s", tc.in, got, tc.want)
		}
	}
}

// TestNumericBinaryDscale checks that binary output sends each value's
// display scale in the header, as PostgreSQL's numeric_send does.
func TestNumericBinaryDscale(t *testing.T) {
	for _, tc := range []struct {
		in     string
		header [4]int16 // ndigits, weight, sign, dscale
		digits []int16
	}{
		{"1.50", [4]int16{2, 0, 0, 2}, []int16{1, 5000}},
		{"1.5", [4]int16{2, 0, 0, 1}, []int16{1, 5000}},
		{"0.00", [4]int16{0, 0, 0, 2}, nil},
		{"-12345.6000", [4]int16{3, 1, 0x4000, 4}, []int16{1, 2345, 6000}},
	} {
		d, err := ParseText(NumericT, tc.in)
		if err != nil {
			t.Fatal(err)
		}
		var want []byte
		for _, v := range tc.header {
			want = binary.BigEndian.AppendUint16(want, uint16(v))
		}
		for _, v := range tc.digits {
			want = binary.BigEndian.AppendUint16(want, uint16(v))
		}
		if got := AppendBinary(nil, NumericT, d); !bytes.Equal(got, want) {
			t.Errorf("AppendBinary(%s) = %x, want %x", tc.in, got, want)
		}
		back, err := DecodeBinary(NumericT, want)
		if err != nil || back.Dec != d.Dec {
			t.Errorf("DecodeBinary(%x) = %s, %v; want %s", want, back.Text(NumericT), err, tc.in)
		}
	}
}
