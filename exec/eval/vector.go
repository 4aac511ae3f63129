package eval

import (
	"strconv"
	"strings"

	"github.com/streamsql/streamsql/ir"
	"github.com/streamsql/streamsql/sqlerr"
	"github.com/streamsql/streamsql/types"
)

// vectorSubscript is vector_subscript(v, i): number i, counted from 0, of
// the catalog vector v (int2vector or oidvector text, numbers separated by
// spaces); NULL when v has no number i.
func vectorSubscript([]types.T, types.T) scalarFn {
	return func(_ *kctx, a []types.Datum) (types.Datum, *sqlerr.Error) {
		i := a[1].I
		if i < 0 {
			return types.Null, nil
		}
		for j, f := range strings.Fields(a[0].S) {
			if int64(j) < i {
				continue
			}
			n, err := strconv.ParseInt(f, 10, 64)
			if err != nil {
				return types.Null, sqlerr.New(sqlerr.InvalidTextRepresentation, "invalid input syntax for type bigint: %q", f)
			}
			return types.DInt(n), nil
		}
		return types.Null, nil
	}
}

func init() {
	reg(ir.FnVectorSubscript, ts(types.TextT, types.Int32T), vectorSubscript)
}
