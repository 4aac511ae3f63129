package exec

import (
	"encoding/binary"
	"fmt"
	"math"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/bitutil"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/streamsql/streamsql/exec/eval"
	"github.com/streamsql/streamsql/ir"
	"github.com/streamsql/streamsql/state"
	"github.com/streamsql/streamsql/types"
)

// orderedSetAgg is percentile_cont, percentile_disc and mode. Each group's
// non-NULL values are a multiset in the value set table, keyed by the group
// key then the value's memcomparable encoding, with the value's count: the
// table's order is the values' order, and a retraction decrements a count.
// The group state holds the number of values; the result is computed from
// a scan of the group's entries when first read after a change, and cached.
type orderedSetAgg struct {
	fn string
	t  types.T // of the values
	// desc walks the values in descending order (ORDER BY x DESC).
	desc bool
	// fracs are the percentiles' fractions; array says the result is an
	// array of one percentile per fraction.
	fracs    []float64
	array    bool
	set      *state.Table
	groupKey func(slot int32) []byte

	n     []int64
	cur   []types.Datum
	stale []bool

	keyBuf, valBuf []byte
}

func newOrderedSetAgg(call ir.AggCall, t types.T, set *state.Table, groupKey func(int32) []byte) (*orderedSetAgg, error) {
	if set == nil {
		return nil, fmt.Errorf("exec: %s without its value set", call.Func)
	}
	a := &orderedSetAgg{fn: call.Func, t: t, fracs: call.Direct, array: call.T.Kind == types.Array, set: set, groupKey: groupKey}
	if len(call.OrderBy) > 0 {
		a.desc = call.OrderBy[0].Desc
	}
	return a, nil
}

func (a *orderedSetAgg) grow(n int) {
	for len(a.n) < n {
		a.n = append(a.n, 0)
		a.cur = append(a.cur, types.Null)
		a.stale = append(a.stale, false)
	}
}

func (a *orderedSetAgg) reset(slot int32) {
	a.n[slot], a.cur[slot], a.stale[slot] = 0, types.Null, false
}

func (a *orderedSetAgg) update(col arrow.Array, slots []int32, signs []int8) error {
	bits, off, all := validity(col)
	for i, s := range signs {
		if s == 0 || !(all || bitutil.BitIsSet(bits, off+i)) {
			continue
		}
		slot := slots[i]
		a.keyBuf = append(a.keyBuf[:0], a.groupKey(slot)...)
		a.keyBuf = state.AppendKey(a.keyBuf, a.t, col, i)
		if err := a.addValue(col, i, int64(s)); err != nil {
			return err
		}
		a.n[slot] += int64(s)
		a.stale[slot] = true
	}
	return nil
}

func (a *orderedSetAgg) prepare([]int32) error { return nil }

func (a *orderedSetAgg) result(slot int32) (types.Datum, error) {
	if !a.stale[slot] {
		return a.cur[slot], nil
	}
	v, err := a.compute(slot)
	if err != nil {
		return types.Null, err
	}
	a.cur[slot], a.stale[slot] = v, false
	return v, nil
}

// entry is one distinct value of a group and its count.
type entry struct {
	v types.Datum
	n int64
}

// walk calls fn with the group's values in the ORDER BY's order until fn
// returns false.
func (a *orderedSetAgg) walk(slot int32, fn func(e entry) bool) error {
	prefix := a.groupKey(slot)
	it, err := a.set.NewIter(prefix, state.PrefixEnd(prefix))
	if err != nil {
		return err
	}
	defer it.Close()
	ok := it.First()
	if a.desc {
		ok = it.Last()
	}
	for ; ok; ok = a.step(it) {
		d, _, err := state.DecodeKeyDatum(it.Key()[len(prefix):], a.t)
		if err != nil {
			return err
		}
		if a.t.Kind == types.Text {
			d.S = strings.Clone(d.S)
		}
		cnt, n := binary.Varint(it.Value())
		if n <= 0 {
			return errCorruptState
		}
		if rest := it.Value()[n:]; len(rest) > 0 && a.t.DynamicNumeric() {
			d.Dec = withDisplayScale(d.Dec, int32(rest[0]))
		}
		if !fn(entry{v: d, n: cnt}) {
			break
		}
	}
	return it.Error()
}

func (a *orderedSetAgg) step(it *state.Iter) bool {
	if a.desc {
		return it.Prev()
	}
	return it.Next()
}

func (a *orderedSetAgg) compute(slot int32) (types.Datum, error) {
	total := a.n[slot]
	if total <= 0 {
		return types.Null, nil
	}
	if a.fn == ir.AggMode {
		// The most frequent value, the first in the order among equals.
		var best entry
		err := a.walk(slot, func(e entry) bool {
			if e.n > best.n {
				best = e
			}
			return true
		})
		return best.v, err
	}
	out := make([]types.Datum, len(a.fracs))
	for i, f := range a.fracs {
		if ir.IsNullFraction(f) {
			out[i] = types.Null
			continue
		}
		var err error
		if a.fn == ir.AggPercentileDisc {
			out[i], err = a.disc(slot, total, f)
		} else {
			out[i], err = a.cont(slot, total, f)
		}
		if err != nil {
			return types.Null, err
		}
	}
	if a.array {
		return types.Datum{Arr: out}, nil
	}
	return out[0], nil
}

// at returns the values at 0-based positions lo <= hi of the group's order.
func (a *orderedSetAgg) at(slot int32, lo, hi int64) (types.Datum, types.Datum, error) {
	var vlo, vhi types.Datum
	var seen int64
	err := a.walk(slot, func(e entry) bool {
		if seen <= lo && lo < seen+e.n {
			vlo = e.v
		}
		if seen <= hi && hi < seen+e.n {
			vhi = e.v
			return false
		}
		seen += e.n
		return true
	})
	return vlo, vhi, err
}

// disc is percentile_disc_final: the first value whose position in the
// order is at least f·n.
func (a *orderedSetAgg) disc(slot int32, total int64, f float64) (types.Datum, error) {
	row := int64(math.Ceil(f * float64(total)))
	if row < 1 {
		row = 1
	}
	v, _, err := a.at(slot, row-1, row-1)
	return v, err
}

// cont is percentile_cont_final: the interpolation between the values at
// positions floor(f·(n−1)) and ceil(f·(n−1)).
func (a *orderedSetAgg) cont(slot int32, total int64, f float64) (types.Datum, error) {
	pos := f * float64(total-1)
	first, second := int64(math.Floor(pos)), int64(math.Ceil(pos))
	lo, hi, err := a.at(slot, first, second)
	if err != nil || first == second {
		return lo, err
	}
	pct := pos - float64(first)
	if a.t.Kind == types.Interval {
		iv, err := eval.IntervalLerp(lo.Ivl, hi.Ivl, pct)
		if err != nil {
			return types.Null, err
		}
		return types.DInterval(iv), nil
	}
	return types.DFloat(lo.F + pct*(hi.F-lo.F)), nil
}

// The group's values are in the value set; the state is their number. A
// group loaded from state computes its result when first read.
func (a *orderedSetAgg) appendState(buf []byte, slot int32) []byte {
	return binary.AppendVarint(buf, a.n[slot])
}

func (a *orderedSetAgg) loadState(buf []byte, slot int32) ([]byte, error) {
	a.stale[slot] = true
	return loadVarints(buf, &a.n[slot])
}

// addValue adds delta to the count of the value at row i of col, whose key
// is in keyBuf. The key of an unconstrained numeric ignores trailing zeros
// (1.5 and 1.50 are one value), so its entry also keeps the largest display
// scale added, which the result shows, as min and max do.
func (a *orderedSetAgg) addValue(col arrow.Array, i int, delta int64) error {
	if !a.t.DynamicNumeric() {
		_, _, err := addCount(a.set, a.keyBuf, delta, &a.valBuf)
		return err
	}
	v, ok, err := a.set.Get(a.keyBuf)
	if err != nil {
		return err
	}
	var before int64
	scale := int32(-1)
	if ok {
		var n int
		if before, n = binary.Varint(v); n <= 0 {
			return errCorruptState
		}
		if len(v) > n {
			scale = int32(v[n])
		}
	}
	if delta > 0 {
		_, s := types.UnpackNumeric(col.(*array.Decimal128).Value(i))
		scale = max(scale, s)
	}
	after := before + delta
	if after <= 0 {
		a.set.Delete(a.keyBuf)
		return nil
	}
	a.valBuf = binary.AppendVarint(a.valBuf[:0], after)
	if scale >= 0 {
		a.valBuf = append(a.valBuf, byte(scale))
	}
	a.set.Put(a.keyBuf, a.valBuf)
	return nil
}

// withDisplayScale returns the unconstrained numeric p, as its key decoded
// it (no trailing zeros), with scale fractional digits, if they fit.
func withDisplayScale(p decimal128.Num, scale int32) decimal128.Num {
	m, s := types.UnpackNumeric(p)
	if scale <= s {
		return p
	}
	r := m.IncreaseScaleBy(scale - s)
	if !types.DynFits(r) {
		return p
	}
	return types.PackNumeric(r, scale)
}
