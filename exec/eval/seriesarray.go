package eval

import (
	"github.com/streamsql/streamsql/ir"
	"github.com/streamsql/streamsql/sqlerr"
	"github.com/streamsql/streamsql/types"
)

// maxSeriesArray bounds the elements of one series_array, which a
// correlated generate_series materializes per outer row.
const maxSeriesArray = 1 << 24

// seriesArray is series_array(start, stop, step): generate_series's values
// as an array (ir.FnSeriesArray).
func seriesArray(args []types.T, _ types.T) scalarFn {
	return func(k *kctx, a []types.Datum) (types.Datum, *sqlerr.Error) {
		start, stop, step := a[0].I, a[1].I, a[2].I
		if step == 0 {
			return types.Null, sqlerr.New(sqlerr.InvalidParameterValue, "step size cannot equal zero")
		}
		n := int64(0)
		if step > 0 && stop >= start {
			n = (stop-start)/step + 1
		} else if step < 0 && stop <= start {
			n = (start-stop)/(-step) + 1
		}
		if n > maxSeriesArray {
			return types.Null, sqlerr.New(codeProgramLimit, "a correlated generate_series may return at most %d rows per outer row", maxSeriesArray)
		}
		out := make([]types.Datum, n)
		for i := range out {
			out[i] = types.DInt(start + int64(i)*step)
		}
		return types.DArray(out), nil
	}
}

func init() {
	for _, t := range []types.T{types.Int32T, types.Int64T} {
		reg(ir.FnSeriesArray, []types.T{t, t, t}, seriesArray)
	}
}
