package exec

import (
	"encoding/binary"
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/bitutil"
	"github.com/streamsql/streamsql/types"
)

// boolAgg is bool_and (every) and bool_or. It counts the group's true and
// false values, so a retraction is a decrement: bool_and is true while no
// false value is left, bool_or while a true one is; NULL without values.
type boolAgg struct {
	or     bool
	trues  []int64
	falses []int64
}

func (a *boolAgg) grow(n int) {
	for len(a.trues) < n {
		a.trues = append(a.trues, 0)
		a.falses = append(a.falses, 0)
	}
}
func (a *boolAgg) reset(slot int32) { a.trues[slot], a.falses[slot] = 0, 0 }
func (a *boolAgg) update(col arrow.Array, slots []int32, signs []int8) error {
	c, ok := col.(*array.Boolean)
	if !ok {
		return fmt.Errorf("exec: bool_and over %s", col.DataType())
	}
	bits, off, all := validity(col)
	for i, s := range signs {
		if s == 0 || !(all || bitutil.BitIsSet(bits, off+i)) {
			continue
		}
		if c.Value(i) {
			a.trues[slots[i]] += int64(s)
		} else {
			a.falses[slots[i]] += int64(s)
		}
	}
	return nil
}
func (a *boolAgg) prepare([]int32) error { return nil }
func (a *boolAgg) result(slot int32) (types.Datum, error) {
	t, f := a.trues[slot], a.falses[slot]
	if t+f <= 0 {
		return types.Null, nil
	}
	if a.or {
		return types.DBool(t > 0), nil
	}
	return types.DBool(f == 0), nil
}
func (a *boolAgg) appendState(buf []byte, slot int32) []byte {
	buf = binary.AppendVarint(buf, a.trues[slot])
	return binary.AppendVarint(buf, a.falses[slot])
}
func (a *boolAgg) loadState(buf []byte, slot int32) ([]byte, error) {
	return loadVarints(buf, &a.trues[slot], &a.falses[slot])
}
