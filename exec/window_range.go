package exec

import (
	"cmp"
	"math"

	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/streamsql/streamsql/exec/eval"
	"github.com/streamsql/streamsql/ir"
	"github.com/streamsql/streamsql/sqlerr"
	"github.com/streamsql/streamsql/types"
)

// SQLSTATEs of window errors raised while running.
const (
	nullValueNotAllowed        = "22004" // null_value_not_allowed
	invalidPrecedingFollowing  = "22013" // invalid_preceding_or_following_size
	invalidArgumentForNtile    = "22014" // invalid_argument_for_ntile_function
	invalidArgumentForNthValue = "22016" // invalid_argument_for_nth_value_function
)

var errInvalidRangeOffset = sqlerr.New(invalidPrecedingFollowing, "invalid preceding or following size in window function")

// rangeBound is one bound of a RANGE frame with an offset (n PRECEDING or n
// FOLLOWING). For the ORDER BY value v of the current row it decides where
// the frame starts or ends among the partition's rows, as PostgreSQL's
// nodeWindowAgg does with the in_range support function of the column's
// type: in_range(w, v, offset, sub, less) is w <= v ± offset when less, else
// w >= v ± offset, with - when sub.
type rangeBound struct {
	t          types.T // the ORDER BY column's type
	off        types.Datum
	offT       types.T
	sub, less  bool
	nullsFirst bool
}

// newRangeBound returns the bound for an offset (a non-NULL constant
// already evaluated) at the start (head) or end of the frame, over an ORDER
// BY column of type t sorted as key says. A negative offset is an error, as
// in PostgreSQL.
func newRangeBound(t types.T, key ir.WindowKey, b ir.FrameBound, off types.Datum, head bool) (*rangeBound, error) {
	r := &rangeBound{t: t, off: off, offT: b.Offset.Type(), nullsFirst: key.NullsFirst}
	r.sub = b.Kind == ir.BoundPreceding
	r.less = !head
	if key.Desc {
		r.sub, r.less = !r.sub, !r.less
	}
	switch t.Kind {
	case types.Int16, types.Int32, types.Int64:
		if off.I < 0 {
			return nil, errInvalidRangeOffset
		}
	case types.Float32, types.Float64:
		if math.IsNaN(off.F) || off.F < 0 {
			return nil, errInvalidRangeOffset
		}
	case types.Numeric:
		// Offsets and sums are unconstrained numerics.
		m, s := types.NumericParts(r.offT, off.Dec)
		if m.Sign() < 0 {
			return nil, errInvalidRangeOffset
		}
		var ok bool
		if r.off.Dec, ok = eval.NumericFromParts(m, s); !ok {
			return nil, errInvalidRangeOffset
		}
	case types.Date, types.Timestamp, types.TimestampTZ, types.Interval:
		if off.Ivl.Compare(types.IntervalValue{}) < 0 {
			return nil, errInvalidRangeOffset
		}
		if r.sub {
			neg, ok := eval.NegInterval(off.Ivl)
			if !ok {
				return nil, errInvalidRangeOffset
			}
			r.off = types.DInterval(neg)
		}
	default:
		return nil, sqlerr.New(sqlerr.FeatureNotSupported, "RANGE with offset PRECEDING/FOLLOWING is not supported for column type %s", t)
	}
	return r, nil
}

// inRange is in_range(w, v, offset, sub, less) for non-NULL values.
func (r *rangeBound) inRange(w, v types.Datum) bool {
	switch r.t.Kind {
	case types.Int16, types.Int32, types.Int64:
		off := r.off.I
		if r.sub {
			off = -off
		}
		sum := v.I + off
		if (off > 0 && sum < v.I) || (off < 0 && sum > v.I) {
			// The true sum is beyond every value: above them when adding.
			return r.sub != r.less
		}
		return r.cmp(types.Compare(r.t, w, types.DInt(sum)))
	case types.Float32, types.Float64:
		return r.inRangeFloat(w.F, v.F)
	case types.Numeric:
		m, s := types.NumericParts(r.t, v.Dec)
		base, ok := eval.NumericFromParts(m, s)
		var sum decimal128.Num
		if ok {
			if r.sub {
				sum, ok = eval.NumericSub(base, r.off.Dec)
			} else {
				sum, ok = eval.NumericAdd(base, r.off.Dec)
			}
		}
		if !ok {
			// The true sum is beyond every value.
			return r.sub != r.less
		}
		mw, sw := types.NumericParts(r.t, w.Dec)
		ms, ss := types.UnpackNumeric(sum)
		return r.cmp(types.CompareParts(mw, sw, ms, ss))
	case types.Date, types.Timestamp, types.TimestampTZ:
		wt, vt := w.I, v.I
		if r.t.Kind == types.Date {
			wt, vt = wt*microsPerDay, vt*microsPerDay
		}
		sum, ok := eval.TimestampAddInterval(vt, r.off.Ivl)
		if !ok {
			return r.sub != r.less
		}
		return r.cmp(cmp.Compare(wt, sum))
	case types.Interval:
		sum, ok := eval.AddInterval(v.Ivl, r.off.Ivl)
		if !ok {
			return r.sub != r.less
		}
		return r.cmp(w.Ivl.Compare(sum))
	}
	return false
}

const microsPerDay = 24 * 3600 * 1_000_000

// cmp turns a comparison of w with v ± offset into the in_range result.
func (r *rangeBound) cmp(c int) bool {
	if r.less {
		return c <= 0
	}
	return c >= 0
}

// inRangeFloat is PostgreSQL's in_range_float8_float8: NaN is above every
// number, and an infinite base with an infinite offset stays infinite.
func (r *rangeBound) inRangeFloat(w, v float64) bool {
	off := r.off.F
	switch {
	case math.IsNaN(w):
		if math.IsNaN(v) {
			return true
		}
		return !r.less
	case math.IsNaN(v):
		return r.less
	}
	if math.IsInf(off, 0) && math.IsInf(v, 0) && ((r.sub && v > 0) || (!r.sub && v < 0)) {
		return true
	}
	sum := v + off
	if r.sub {
		sum = v - off
	}
	if r.less {
		return w <= sum
	}
	return w >= sum
}

// beforeHead reports whether a row with value w lies before the frame
// start of a current row with value v (the head moves past it).
func (r *rangeBound) beforeHead(w, v types.Datum) bool {
	if w.Null || v.Null {
		// NULLs are peers of each other and sort first or last.
		if r.nullsFirst {
			return w.Null && !v.Null
		}
		return !w.Null && v.Null
	}
	return !r.inRange(w, v)
}

// withinTail reports whether a row with value w (after the frame start)
// lies inside the frame end of a current row with value v.
func (r *rangeBound) withinTail(w, v types.Datum) bool {
	if w.Null || v.Null {
		if r.nullsFirst {
			return w.Null
		}
		return v.Null
	}
	return r.inRange(w, v)
}
