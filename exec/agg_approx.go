package exec

import (
	"encoding/binary"
	"fmt"
	"math"
	"math/bits"
	"slices"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/bitutil"
	"github.com/cespare/xxhash/v2"
	"github.com/streamsql/streamsql/state"
	"github.com/streamsql/streamsql/types"
)

// HyperLogLog parameters of approx_count_distinct: 2^hllP registers give a
// relative standard error of 1.04/sqrt(2^hllP), about 3.25%.
const (
	hllP = 10
	hllM = 1 << hllP
	// hllMaxRho is the largest register value: the position of the first
	// 1 bit in the 64-hllP hash bits that follow the register index.
	hllMaxRho = 64 - hllP + 1
	// hllSparseMax is the most registers kept sparse: 4 bytes each, so a
	// sparse group never takes more than a dense one.
	hllSparseMax = hllM / 4
)

// approxDistinctAgg is approx_count_distinct: a HyperLogLog sketch per group
// (2^hllP registers, each the largest rho of the values hashed to it), made
// retractable by counting. In a streaming aggregation the value set holds,
// per group, register and rho value, how many input rows hashed there (key:
// group key, valueSetTag, register (2 bytes), rho (1 byte); value: the
// count). An insert increments its cell and raises the register; a
// retraction decrements it, and when the register's top cell empties, one
// seek finds the next lower non-empty cell. The registers themselves are in
// memory and in the group's state, sparse (sorted index/value pairs) while
// at most hllSparseMax are set; the estimate is computed from them.
//
// Values are hashed (xxhash64) by their memcomparable key encoding, so
// values equal as keys count once. In a batch query (insert-only, no value
// set) only the registers are kept.
type approxDistinctAgg struct {
	t        types.T
	set      *state.Table
	groupKey func(slot int32) []byte
	regs     []hllRegisters

	keyBuf, valBuf []byte
}

// hllRegisters is one group's registers: sparse entries (index<<8 | value,
// sorted, values > 0) until dense is allocated.
type hllRegisters struct {
	sparse []uint32
	dense  []uint8
}

func (r *hllRegisters) get(idx int) uint8 {
	if r.dense != nil {
		return r.dense[idx]
	}
	if j, ok := r.find(idx); ok {
		return uint8(r.sparse[j])
	}
	return 0
}

func (r *hllRegisters) find(idx int) (int, bool) {
	return slices.BinarySearchFunc(r.sparse, uint32(idx), func(e, idx uint32) int {
		return int(e>>8) - int(idx)
	})
}

func (r *hllRegisters) set(idx int, v uint8) {
	if r.dense != nil {
		r.dense[idx] = v
		return
	}
	j, ok := r.find(idx)
	switch {
	case ok && v == 0:
		r.sparse = slices.Delete(r.sparse, j, j+1)
	case ok:
		r.sparse[j] = uint32(idx)<<8 | uint32(v)
	case v == 0:
	case len(r.sparse) < hllSparseMax:
		r.sparse = slices.Insert(r.sparse, j, uint32(idx)<<8|uint32(v))
	default:
		r.dense = make([]uint8, hllM)
		for _, e := range r.sparse {
			r.dense[e>>8] = uint8(e)
		}
		r.sparse = nil
		r.dense[idx] = v
	}
}

// estimate is the HyperLogLog estimate of the number of distinct values,
// with linear counting while it is below 2.5·m and registers are empty.
func (r *hllRegisters) estimate() int64 {
	zeros := hllM
	sum := 0.0
	if r.dense != nil {
		zeros = 0
		for _, v := range r.dense {
			if v == 0 {
				zeros++
			}
			sum += math.Ldexp(1, -int(v))
		}
	} else {
		zeros -= len(r.sparse)
		sum = float64(zeros)
		for _, e := range r.sparse {
			sum += math.Ldexp(1, -int(uint8(e)))
		}
	}
	if zeros == hllM {
		return 0
	}
	m := float64(hllM)
	alpha := 0.7213 / (1 + 1.079/m)
	est := alpha * m * m / sum
	if est <= 2.5*m && zeros > 0 {
		est = m * math.Log(m/float64(zeros))
	}
	return int64(math.Round(est))
}

func (a *approxDistinctAgg) grow(n int) {
	for len(a.regs) < n {
		a.regs = append(a.regs, hllRegisters{})
	}
}

func (a *approxDistinctAgg) reset(slot int32) {
	a.regs[slot].sparse, a.regs[slot].dense = a.regs[slot].sparse[:0], nil
}

func (a *approxDistinctAgg) update(col arrow.Array, slots []int32, signs []int8) error {
	bits, off, all := validity(col)
	for i, s := range signs {
		if s == 0 || !(all || bitutil.BitIsSet(bits, off+i)) {
			continue
		}
		a.keyBuf = state.AppendKey(a.keyBuf[:0], a.t, col, i)
		idx, rho := hllPosition(xxhash.Sum64(a.keyBuf))
		r := &a.regs[slots[i]]
		if a.set == nil {
			if s < 0 {
				return fmt.Errorf("exec: retraction in an insert-only approx_count_distinct")
			}
			if rho > r.get(idx) {
				r.set(idx, rho)
			}
			continue
		}
		if err := a.count(slots[i], idx, rho, s); err != nil {
			return err
		}
	}
	return nil
}

// hllPosition splits a hash into its register index (the top hllP bits) and
// rho, the position of the first 1 in the remaining bits (1-based).
func hllPosition(h uint64) (int, uint8) {
	idx := int(h >> (64 - hllP))
	rest := h<<hllP | 1<<(hllP-1)
	return idx, uint8(bits.LeadingZeros64(rest) + 1)
}

// count adds s to the group's cell (idx, rho) and updates the register.
func (a *approxDistinctAgg) count(slot int32, idx int, rho uint8, s int8) error {
	a.keyBuf = append(a.keyBuf[:0], a.groupKey(slot)...)
	a.keyBuf = append(a.keyBuf, valueSetTag, byte(idx>>8), byte(idx), rho)
	_, n, err := addCount(a.set, a.keyBuf, int64(s), &a.valBuf)
	if err != nil {
		return err
	}
	r := &a.regs[slot]
	cur := r.get(idx)
	switch {
	case s > 0 && rho > cur:
		r.set(idx, rho)
	case s < 0 && n <= 0 && rho == cur:
		// The register's top cell emptied: the next lower one is its value.
		cellKey := a.keyBuf[:len(a.keyBuf)-1]
		it, err := a.set.NewIter(cellKey, a.keyBuf)
		if err != nil {
			return err
		}
		var v uint8
		if it.Last() {
			v = it.Key()[len(it.Key())-1]
		}
		err = it.Error()
		it.Close()
		if err != nil {
			return err
		}
		r.set(idx, v)
	}
	return nil
}

func (a *approxDistinctAgg) prepare([]int32) error { return nil }

func (a *approxDistinctAgg) result(slot int32) (types.Datum, error) {
	return types.DInt(a.regs[slot].estimate()), nil
}

// State: 0 and the sparse entries (a count, then 3 bytes each: index and
// value), or 1 and the hllM dense registers.
func (a *approxDistinctAgg) appendState(buf []byte, slot int32) []byte {
	r := &a.regs[slot]
	if r.dense != nil {
		return append(append(buf, 1), r.dense...)
	}
	buf = append(buf, 0)
	buf = binary.AppendUvarint(buf, uint64(len(r.sparse)))
	for _, e := range r.sparse {
		buf = append(buf, byte(e>>16), byte(e>>8), byte(e))
	}
	return buf
}

func (a *approxDistinctAgg) loadState(buf []byte, slot int32) ([]byte, error) {
	r := &a.regs[slot]
	if len(buf) == 0 {
		return nil, errCorruptState
	}
	if buf[0] == 1 {
		if len(buf) < 1+hllM {
			return nil, errCorruptState
		}
		r.sparse, r.dense = nil, append([]uint8(nil), buf[1:1+hllM]...)
		return buf[1+hllM:], nil
	}
	n, k := binary.Uvarint(buf[1:])
	if k <= 0 || n > hllSparseMax || uint64(len(buf)-1-k) < 3*n {
		return nil, errCorruptState
	}
	buf = buf[1+k:]
	r.dense, r.sparse = nil, r.sparse[:0]
	for j := 0; j < int(n); j++ {
		r.sparse = append(r.sparse, uint32(buf[0])<<16|uint32(buf[1])<<8|uint32(buf[2]))
		buf = buf[3:]
	}
	return buf, nil
}
