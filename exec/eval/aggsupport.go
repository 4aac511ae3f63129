package eval

import "github.com/streamsql/streamsql/types"

// DivInterval is PostgreSQL's interval_div (interval / double precision),
// which avg(interval) applies to the sum and the count: fractional months
// cascade into days and fractional days into time. It fails with 22012 for a
// zero divisor and 22008 when the result is out of range.
func DivInterval(iv types.IntervalValue, divisor float64) (types.Datum, error) {
	d, err := divInterval(iv, divisor)
	if err != nil {
		return types.Null, err
	}
	return d, nil
}
