package exec

import (
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/bitutil"
	"github.com/streamsql/streamsql/exec/eval"
	"github.com/streamsql/streamsql/types"
)

// groupScaleAgg keeps the display scales of an unconstrained numeric group
// column. Group keys drop trailing zeros (1.5 and 1.50 are one group), so
// HashAgg shows a group's value with the largest display scale among its
// live rows: the group of 1.50 prints 1.50, as PostgreSQL prints the value
// of a row of the group. It is a hidden aggregator of HashAgg, persisted
// with the group like the others.
type groupScaleAgg struct {
	col    int // index into the group columns
	scales [][]scaleCount
}

func (a *groupScaleAgg) grow(n int) {
	for len(a.scales) < n {
		a.scales = append(a.scales, nil)
	}
}
func (a *groupScaleAgg) reset(slot int32) { a.scales[slot] = a.scales[slot][:0] }

func (a *groupScaleAgg) update(col arrow.Array, slots []int32, signs []int8) error {
	c, ok := col.(*array.Decimal128)
	if !ok {
		return fmt.Errorf("exec: group scale over %s", col.DataType())
	}
	vals := c.Values()
	bits, off, all := validity(col)
	for i, s := range signs {
		if s != 0 && (all || bitutil.BitIsSet(bits, off+i)) {
			_, scale := types.UnpackNumeric(vals[i])
			countScale(&a.scales[slots[i]], scale, s)
		}
	}
	return nil
}

func (a *groupScaleAgg) prepare([]int32) error { return nil }

// result is the display scale to show (as an integer datum).
func (a *groupScaleAgg) result(slot int32) (types.Datum, error) {
	return types.DInt(int64(maxScale(a.scales[slot]))), nil
}

// show returns the group value d (decoded from the key, so without trailing
// zeros) at the group's display scale.
func (a *groupScaleAgg) show(slot int32, d types.Datum) types.Datum {
	if d.Null {
		return d
	}
	if v, ok := eval.NumericRescale(d.Dec, maxScale(a.scales[slot])); ok {
		d.Dec = v
	}
	return d
}

func (a *groupScaleAgg) appendState(buf []byte, slot int32) []byte {
	return appendScaleCounts(buf, a.scales[slot])
}
func (a *groupScaleAgg) loadState(buf []byte, slot int32) ([]byte, error) {
	return loadScaleCounts(buf, &a.scales[slot])
}
