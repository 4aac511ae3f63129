package ir

// The ordered-set aggregates: f(direct args) WITHIN GROUP (ORDER BY x). The
// AggCall's Arg is x, OrderBy its one ORDER BY item, and Direct the
// constant fractions of the percentiles.
const (
	AggPercentileCont = "percentile_cont"
	AggPercentileDisc = "percentile_disc"
	AggMode           = "mode"
)

// IsOrderedSet reports whether fn is an ordered-set aggregate.
func IsOrderedSet(fn string) bool {
	return fn == AggPercentileCont || fn == AggPercentileDisc || fn == AggMode
}

func init() {
	for _, fn := range []string{AggPercentileCont, AggPercentileDisc, AggMode} {
		AggregateNames[fn] = true
	}
}

// NullFraction stands for a NULL fraction: its percentile is NULL.
const NullFraction = -1

// IsNullFraction reports whether f stands for a NULL fraction.
func IsNullFraction(f float64) bool { return f == NullFraction }
