package exec

import (
	"encoding/binary"
	"math/big"
	"math/bits"
)

// wideInt is a signed 384-bit integer in two's complement, least significant
// limb first: the exact accumulator of sums and sums of squares of 128-bit
// values. A square is below 2^254 and a sum of fewer than 2^63 of them below
// 2^317, so neither sum can overflow. Adding costs a few instructions and
// allocates nothing.
type wideInt [6]uint64

// wideFrom128 sign-extends the 128-bit value hi:lo.
func wideFrom128(hi int64, lo uint64) wideInt {
	ext := uint64(hi >> 63)
	return wideInt{lo, uint64(hi), ext, ext, ext, ext}
}

func (w *wideInt) add(v *wideInt) {
	var c uint64
	for i := range w {
		w[i], c = bits.Add64(w[i], v[i], c)
	}
}

func (w *wideInt) sub(v *wideInt) {
	var b uint64
	for i := range w {
		w[i], b = bits.Sub64(w[i], v[i], b)
	}
}

// square128 returns (hi:lo)², a value of at most 254 bits.
func square128(hi int64, lo uint64) wideInt {
	ah, al := uint64(hi), lo
	if hi < 0 {
		// |x| in 128 bits: negate hi:lo.
		var b uint64
		al, b = bits.Sub64(0, lo, 0)
		ah, _ = bits.Sub64(0, uint64(hi), b)
	}
	var w wideInt
	w[1], w[0] = bits.Mul64(al, al)
	h, l := bits.Mul64(al, ah)
	cross := wideInt{0, l, h}
	w.add(&cross)
	w.add(&cross)
	h, l = bits.Mul64(ah, ah)
	top := wideInt{0, 0, l, h}
	w.add(&top)
	return w
}

// big returns w as a big.Int.
func (w *wideInt) big() *big.Int {
	v := *w
	neg := int64(v[5]) < 0
	if neg {
		var zero wideInt
		zero.sub(&v)
		v = zero
	}
	var b [48]byte
	for i := range v {
		binary.BigEndian.PutUint64(b[40-8*i:], v[i])
	}
	r := new(big.Int).SetBytes(b[:])
	if neg {
		r.Neg(r)
	}
	return r
}

// appendWide appends w in a compact form: the number of limbs kept (the
// ones above are the sign extension of the last kept one), then the kept
// limbs big-endian.
func appendWide(buf []byte, w *wideInt) []byte {
	k := len(w)
	for k > 1 {
		ext := uint64(int64(w[k-2]) >> 63)
		if w[k-1] != ext {
			break
		}
		k--
	}
	buf = append(buf, byte(k))
	for i := 0; i < k; i++ {
		buf = binary.BigEndian.AppendUint64(buf, w[i])
	}
	return buf
}

// loadWide reads what appendWide wrote into w and returns the rest of buf.
func loadWide(buf []byte, w *wideInt) ([]byte, error) {
	if len(buf) == 0 || int(buf[0]) < 1 || int(buf[0]) > len(w) || len(buf) < 1+8*int(buf[0]) {
		return nil, errCorruptState
	}
	k := int(buf[0])
	buf = buf[1:]
	for i := 0; i < k; i++ {
		w[i] = binary.BigEndian.Uint64(buf[8*i:])
	}
	ext := uint64(int64(w[k-1]) >> 63)
	for i := k; i < len(w); i++ {
		w[i] = ext
	}
	return buf[8*k:], nil
}
