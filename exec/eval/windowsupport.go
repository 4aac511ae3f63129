package eval

import "github.com/streamsql/streamsql/types"

// TimestampAddInterval is PostgreSQL's timestamp + interval over
// microseconds since the epoch: months first (clamping the day to the end of
// the month), then days, then microseconds. ok is false when the result is
// out of range. Window frames with RANGE offsets over dates and timestamps
// use it.
func TimestampAddInterval(ts int64, iv types.IntervalValue) (r int64, ok bool) {
	return tsAddInterval(ts, iv)
}

// AddInterval adds intervals field by field, as PostgreSQL's interval +
// interval; ok is false when a field overflows.
func AddInterval(a, b types.IntervalValue) (r types.IntervalValue, ok bool) {
	return addInterval(a, b)
}

// NegInterval negates every field of iv; ok is false when one cannot be
// negated.
func NegInterval(iv types.IntervalValue) (r types.IntervalValue, ok bool) {
	return negInterval(iv)
}
