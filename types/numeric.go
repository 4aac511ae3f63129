package types

import (
	"math/bits"

	"github.com/apache/arrow-go/v18/arrow/decimal128"
)

// Numeric values come in two layouts, both in Decimal128 slots:
//
//   - numeric(p,s) (a declared typmod): the slot is the mantissa at scale s,
//     value = slot·10^-s, up to NumericPrecision digits.
//   - unconstrained numeric: the slot packs a mantissa and its own display
//     scale (PostgreSQL's dscale): the top DynScaleBits bits hold the scale
//     (0..DynMaxScale), the low 122 bits the two's complement mantissa m,
//     value = m·10^-scale with |m| < 10^DynDigits. So '1.50' and '1.5' are
//     different slots of equal values: equality, ordering, hashing and keys go
//     through UnpackNumeric (or NormalizeNumeric), never the raw bits.
//
// The zero slot is the value 0 with scale 0 in both layouts.
const (
	// DynDigits is the number of significant digits an unconstrained numeric
	// holds.
	DynDigits = 36
	// DynMaxScale is the largest display scale of an unconstrained numeric.
	DynMaxScale = 63
	// DynScaleBits is the width of the packed scale.
	DynScaleBits = 6
)

// DynamicNumeric reports whether t is unconstrained numeric, whose values
// carry their own scale (PackNumeric).
func (t T) DynamicNumeric() bool { return t.Kind == Numeric && !t.HasTypmod }

// PackNumeric returns the slot of the unconstrained numeric m·10^-scale.
// m must be below 10^DynDigits in magnitude and scale in 0..DynMaxScale.
func PackNumeric(m decimal128.Num, scale int32) decimal128.Num {
	const mask = 1<<(64-DynScaleBits) - 1
	hi := uint64(m.HighBits())&mask | uint64(scale)<<(64-DynScaleBits)
	return decimal128.New(int64(hi), m.LowBits())
}

// UnpackNumeric returns the mantissa and scale of the unconstrained numeric
// slot p.
func UnpackNumeric(p decimal128.Num) (m decimal128.Num, scale int32) {
	h := p.HighBits()
	return decimal128.New(h<<DynScaleBits>>DynScaleBits, p.LowBits()), int32(uint64(h) >> (64 - DynScaleBits))
}

// NumericParts returns the mantissa and scale of slot n, a value of the
// numeric type t.
func NumericParts(t T, n decimal128.Num) (m decimal128.Num, scale int32) {
	if t.HasTypmod {
		return n, t.Scale
	}
	return UnpackNumeric(n)
}

// NormalizeNumeric returns the slot of the unconstrained numeric p without
// trailing fractional zeros, so that equal values have equal slots.
func NormalizeNumeric(p decimal128.Num) decimal128.Num {
	m, s := UnpackNumeric(p)
	if s == 0 {
		return p
	}
	if m == (decimal128.Num{}) {
		return decimal128.Num{}
	}
	neg := m.Sign() < 0
	a := m.Abs()
	hi, lo := uint64(a.HighBits()), a.LowBits()
	for s > 0 {
		qh, r := bits.Div64(0, hi, 10)
		ql, r := bits.Div64(r, lo, 10)
		if r != 0 {
			break
		}
		hi, lo, s = qh, ql, s-1
	}
	m = decimal128.New(int64(hi), lo)
	if neg {
		m = m.Negate()
	}
	return PackNumeric(m, s)
}

// dynLimit is 10^DynDigits, the exclusive bound of a packed mantissa.
var dynLimit = decimal128.GetScaleMultiplier(DynDigits)

// DynFits reports whether mantissa m fits an unconstrained numeric.
func DynFits(m decimal128.Num) bool { return m.Abs().Less(dynLimit) }
