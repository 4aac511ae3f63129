package eval

import (
	"github.com/streamsql/streamsql/ir"
	"github.com/streamsql/streamsql/sqlerr"
	"github.com/streamsql/streamsql/types"
)

func init() {
	reg(ir.FnIntervalKey, ts(types.IntervalT), fixed(func(_ *kctx, a []types.Datum) (types.Datum, *sqlerr.Error) {
		return types.DInterval(intervalKey(a[0].Ivl)), nil
	}))
}

// intervalKey is the canonical interval of iv's span (months·30 days +
// days + micros): whole months of 30 days, then days, then micros, all of
// the span's sign. Intervals of equal span, which PostgreSQL calls equal,
// have the same one. A span whose months overflow int32 keeps its value.
func intervalKey(iv types.IntervalValue) types.IntervalValue {
	d := int64(iv.Months)*30 + int64(iv.Days) + iv.Micros/microsPerDay
	us := iv.Micros % microsPerDay
	if us != 0 && (d > 0) != (us > 0) && d != 0 {
		// Borrow a day so that the micros have the days' sign.
		if d > 0 {
			d--
			us += microsPerDay
		} else {
			d++
			us -= microsPerDay
		}
	}
	months := d / 30
	if months != int64(int32(months)) {
		return iv
	}
	return types.IntervalValue{Months: int32(months), Days: int32(d % 30), Micros: us}
}
