package eval

import (
	"strconv"

	"github.com/streamsql/streamsql/ir"
	"github.com/streamsql/streamsql/sqlerr"
	"github.com/streamsql/streamsql/types"
)

// sizePretty is pg_size_pretty(bigint): bytes, kB, MB, GB, TB or PB, each
// unit 1024 of the one before, rounded half away from zero, with PostgreSQL's
// thresholds (a unit is used up to 10240 of it, 20480 halves after a shift).
func sizePretty(k *kctx, a []types.Datum) (types.Datum, *sqlerr.Error) {
	size := a[0].I
	abs := func(x int64) int64 {
		if x < 0 {
			return -x
		}
		return x
	}
	half := func(x int64) int64 {
		if x < 0 {
			return (x - 1) / 2
		}
		return (x + 1) / 2
	}
	buf := k.buf[:0]
	if abs(size) < 10*1024 {
		buf = append(strconv.AppendInt(buf, size, 10), " bytes"...)
		return k.textResult(buf), nil
	}
	size >>= 9 // one extra bit for rounding
	for _, unit := range []string{" kB", " MB", " GB", " TB"} {
		if abs(size) < 20*1024-1 {
			buf = append(strconv.AppendInt(buf, half(size), 10), unit...)
			return k.textResult(buf), nil
		}
		size >>= 10
	}
	buf = append(strconv.AppendInt(buf, half(size), 10), " PB"...)
	return k.textResult(buf), nil
}

func init() {
	reg(ir.FnSizePretty, ts(types.Int64T), fixed(sizePretty))
	reg(ir.FnSetConfigRows, ts(types.TextT, types.TextT, types.BoolT), fixed(func(*kctx, []types.Datum) (types.Datum, *sqlerr.Error) {
		return types.Null, sqlerr.Unsupported("set_config with arguments that are not constants")
	}))
}
