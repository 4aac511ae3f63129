package ir

// The two-variable statistics, as PostgreSQL defines them over double
// precision (Y, X) pairs: each skips the rows where either is NULL.
const (
	AggCorr          = "corr"
	AggCovarPop      = "covar_pop"
	AggCovarSamp     = "covar_samp"
	AggRegrSlope     = "regr_slope"
	AggRegrIntercept = "regr_intercept"
	AggRegrCount     = "regr_count"
	AggRegrR2        = "regr_r2"
	AggRegrAvgX      = "regr_avgx"
	AggRegrAvgY      = "regr_avgy"
	AggRegrSxx       = "regr_sxx"
	AggRegrSyy       = "regr_syy"
	AggRegrSxy       = "regr_sxy"
)

// The bitwise aggregates over smallint, integer and bigint.
const (
	AggBitAnd = "bit_and"
	AggBitOr  = "bit_or"
	AggBitXor = "bit_xor"
)

// IsRegression reports whether fn is one of the two-variable statistics.
func IsRegression(fn string) bool {
	switch fn {
	case AggCorr, AggCovarPop, AggCovarSamp, AggRegrSlope, AggRegrIntercept, AggRegrCount,
		AggRegrR2, AggRegrAvgX, AggRegrAvgY, AggRegrSxx, AggRegrSyy, AggRegrSxy:
		return true
	}
	return false
}

func init() {
	for _, fn := range []string{AggCorr, AggCovarPop, AggCovarSamp, AggRegrSlope, AggRegrIntercept, AggRegrCount,
		AggRegrR2, AggRegrAvgX, AggRegrAvgY, AggRegrSxx, AggRegrSyy, AggRegrSxy, AggBitAnd, AggBitOr, AggBitXor} {
		AggregateNames[fn] = true
	}
}
