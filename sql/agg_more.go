package sql

import (
	"github.com/streamsql/streamsql/ir"
	"github.com/streamsql/streamsql/types"
)

// moreAggResultType is the result type of the aggregates of this file, ok
// false when fn is not one of them or t is not an argument type of it.
func moreAggResultType(fn string, t types.T) (types.T, bool) {
	switch {
	case ir.IsRegression(fn):
		if t.Kind != types.Float64 {
			return types.T{}, false
		}
		if fn == ir.AggRegrCount {
			return types.Int64T, true
		}
		return types.Float64T, true
	case fn == ir.AggBitAnd || fn == ir.AggBitOr || fn == ir.AggBitXor:
		switch t.Kind {
		case types.Int16, types.Int32, types.Int64:
			return t, true
		}
	}
	return types.T{}, false
}
