package eval

import (
	"github.com/streamsql/streamsql/types"
)

// IntervalLerp is PostgreSQL's interval_lerp, percentile_cont's
// interpolation between interval values: lo + (hi - lo) * pct with
// interval_mi, interval_mul and interval_pl.
func IntervalLerp(lo, hi types.IntervalValue, pct float64) (types.IntervalValue, error) {
	neg, ok := negInterval(lo)
	if !ok {
		return lo, errIntervalRange
	}
	diff, ok := addInterval(hi, neg)
	if !ok {
		return lo, errIntervalRange
	}
	mul, err := mulInterval(diff, pct)
	if err != nil {
		return lo, err
	}
	sum, ok := addInterval(mul.Ivl, lo)
	if !ok {
		return lo, errIntervalRange
	}
	return sum, nil
}
