package exec

import (
	"encoding/binary"
	"fmt"
	"math/bits"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/bitutil"
	"github.com/streamsql/streamsql/ir"
	"github.com/streamsql/streamsql/types"
)

// bitAgg is bit_and, bit_or and bit_xor over smallint, integer and bigint.
// It keeps, per group, the count of non-NULL values and for each of the 64
// bits the count of values with that bit set: bit_or is the bits counted at
// least once, bit_and the bits counted n times, bit_xor the bits counted an
// odd number of times. The counts are exact under retraction, so bit_and
// and bit_or need no value set (see docs/decisions.md).
type bitAgg struct {
	fn    string
	width int // 16, 32 or 64 bits
	n     []int64
	ones  [][64]int64
}

func newBitAgg(fn string, t types.T) (*bitAgg, error) {
	a := &bitAgg{fn: fn}
	switch t.Kind {
	case types.Int16:
		a.width = 16
	case types.Int32:
		a.width = 32
	case types.Int64:
		a.width = 64
	default:
		return nil, fmt.Errorf("exec: %s over %s", fn, t)
	}
	return a, nil
}

func (a *bitAgg) grow(n int) {
	for len(a.n) < n {
		a.n = append(a.n, 0)
		a.ones = append(a.ones, [64]int64{})
	}
}

func (a *bitAgg) reset(slot int32) { a.n[slot], a.ones[slot] = 0, [64]int64{} }

func (a *bitAgg) update(col arrow.Array, slots []int32, signs []int8) error {
	switch c := col.(type) {
	case *array.Int16:
		countBits(a, c.Int16Values(), col, slots, signs)
	case *array.Int32:
		countBits(a, c.Int32Values(), col, slots, signs)
	case *array.Int64:
		countBits(a, c.Int64Values(), col, slots, signs)
	default:
		return fmt.Errorf("exec: %s over %s", a.fn, col.DataType())
	}
	return nil
}

func countBits[T int16 | int32 | int64](a *bitAgg, vals []T, col arrow.Array, slots []int32, signs []int8) {
	vbits, off, all := validity(col)
	for i, s := range signs {
		if s == 0 || !(all || bitutil.BitIsSet(vbits, off+i)) {
			continue
		}
		slot := slots[i]
		a.n[slot] += int64(s)
		// The value's two's complement bits within its type's width.
		v := uint64(int64(vals[i])) & (^uint64(0) >> (64 - a.width))
		for v != 0 {
			b := bits.TrailingZeros64(v)
			a.ones[slot][b] += int64(s)
			v &= v - 1
		}
	}
}

func (a *bitAgg) prepare([]int32) error { return nil }

func (a *bitAgg) result(slot int32) (types.Datum, error) {
	n := a.n[slot]
	if n == 0 {
		return types.Null, nil
	}
	var v uint64
	for b := 0; b < a.width; b++ {
		c := a.ones[slot][b]
		var set bool
		switch a.fn {
		case ir.AggBitAnd:
			set = c == n
		case ir.AggBitOr:
			set = c > 0
		default:
			set = c%2 != 0
		}
		if set {
			v |= 1 << b
		}
	}
	// Sign-extend from the type's width.
	shift := 64 - a.width
	return types.DInt(int64(v<<shift) >> shift), nil
}

func (a *bitAgg) appendState(buf []byte, slot int32) []byte {
	buf = binary.AppendVarint(buf, a.n[slot])
	for b := 0; b < a.width; b++ {
		buf = binary.AppendVarint(buf, a.ones[slot][b])
	}
	return buf
}

func (a *bitAgg) loadState(buf []byte, slot int32) ([]byte, error) {
	buf, err := loadVarints(buf, &a.n[slot])
	if err != nil {
		return nil, err
	}
	for b := 0; b < a.width; b++ {
		if buf, err = loadVarints(buf, &a.ones[slot][b]); err != nil {
			return nil, err
		}
	}
	return buf, nil
}
