package state

import (
	"encoding/binary"
	"math/bits"

	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/streamsql/streamsql/types"
)

// Keys of unconstrained numerics (types.PackNumeric slots, which carry their
// own display scale) are 16 bytes that order by value and ignore the display
// scale, so 1.5 and 1.50 are one key. For v != 0 with |v| = d·10^(E-36),
// where d has exactly 36 digits (no leading zero, trailing zeros padded), the
// 128-bit big-endian word is
//
//	0x80|(E+64) in the top byte, d in the low 120 bits     (v > 0)
//	the bitwise complement of the encoding of |v|          (v < 0)
//
// and zero is 0x80 followed by zeros. E (the number of integer digits, from
// -62 to 36) orders magnitudes first, d then orders equal E. Decoding gives
// the value without trailing fractional zeros: a key does not keep the
// display scale.

// putKeyDynNumeric writes the 16-byte key of slot p to dst.
func putKeyDynNumeric(dst []byte, p decimal128.Num) {
	m, s := types.UnpackNumeric(p)
	neg := m.Sign() < 0
	m = m.Abs()
	if m == (decimal128.Num{}) {
		dst[0] = 0x80
		clear(dst[1:16])
		return
	}
	nd := 1
	for nd < types.DynDigits && !m.Less(decimal128.GetScaleMultiplier(nd)) {
		nd++
	}
	d := m.Mul(decimal128.GetScaleMultiplier(types.DynDigits - nd))
	e := int32(nd) - s
	hi := uint64(0x80|(e+64))<<56 | uint64(d.HighBits())
	lo := d.LowBits()
	if neg {
		hi, lo = ^hi, ^lo
	}
	binary.BigEndian.PutUint64(dst, hi)
	binary.BigEndian.PutUint64(dst[8:], lo)
}

func appendKeyDynNumeric(buf []byte, p decimal128.Num) []byte {
	var k [16]byte
	putKeyDynNumeric(k[:], p)
	return append(buf, k[:]...)
}

// dynNumericFromKey decodes a key of putKeyDynNumeric into the slot of its
// value without trailing fractional zeros.
func dynNumericFromKey(buf []byte) decimal128.Num {
	hi, lo := binary.BigEndian.Uint64(buf), binary.BigEndian.Uint64(buf[8:])
	top := byte(hi >> 56)
	if top == 0x80 {
		return decimal128.Num{}
	}
	neg := top < 0x80
	if neg {
		hi, lo = ^hi, ^lo
		top = byte(hi >> 56)
	}
	e := int32(top&0x7f) - 64
	hi &= 1<<56 - 1
	// Strip the padding zeros: d = m·10^(36-nd).
	nd := int32(types.DynDigits)
	for nd > 1 {
		qh, r := bits.Div64(0, hi, 10)
		ql, r := bits.Div64(r, lo, 10)
		if r != 0 {
			break
		}
		hi, lo, nd = qh, ql, nd-1
	}
	m := decimal128.New(int64(hi), lo)
	s := nd - e
	if s < 0 {
		m = m.Mul(decimal128.GetScaleMultiplier(int(-s)))
		s = 0
	}
	if neg {
		m = m.Negate()
	}
	return types.PackNumeric(m, s)
}
