package eval

import "github.com/apache/arrow-go/v18/arrow/decimal128"

// The unconstrained numeric operations for operators outside the evaluator
// (sum, avg and window aggregates). Values are types.PackNumeric slots; ok is
// false on overflow (and, for NumericDiv, division by zero).

// NumericAdd returns a+b with display scale max(sa, sb).
func NumericAdd(a, b decimal128.Num) (decimal128.Num, bool) { return dynAdd(a, b) }

// NumericSub returns a-b with display scale max(sa, sb).
func NumericSub(a, b decimal128.Num) (decimal128.Num, bool) { return dynSub(a, b) }

// NumericDiv returns a/b with PostgreSQL's select_div_scale display scale.
func NumericDiv(a, b decimal128.Num) (decimal128.Num, bool) { return dynDiv(a, b) }

// NumericInt returns the integer v (display scale 0).
func NumericInt(v int64) decimal128.Num { return dynInt(v) }

// NumericFromParts packs mantissa m at scale (up to 38 digits; fraction
// digits beyond what an unconstrained numeric holds are rounded away).
func NumericFromParts(m decimal128.Num, scale int32) (decimal128.Num, bool) {
	return dynFromParts(m, scale)
}

// NumericRescale gives p the display scale to, rounding half away from zero
// when digits are dropped.
func NumericRescale(p decimal128.Num, to int32) (decimal128.Num, bool) { return dynRescale(p, to) }

// NumericToFixed converts p to a mantissa at scale to, rounding half away
// from zero; ok is false beyond 38 digits.
func NumericToFixed(p decimal128.Num, to int32) (decimal128.Num, bool) { return dynToFixed(p, to) }
