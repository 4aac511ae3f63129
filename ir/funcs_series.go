package ir

import (
	"github.com/streamsql/streamsql/types"
)

// FnSeriesArray is series_array(start, stop, step): the integers
// generate_series(start, stop, step) returns, as an array. A correlated
// generate_series in FROM is unnest over it (decorrelator.series).
const FnSeriesArray = "series_array"

func init() {
	for _, t := range []types.T{types.Int32T, types.Int64T} {
		def(FnSeriesArray, types.ArrayOf(t), t, t, t)
	}
}
