package eval

import (
	"github.com/streamsql/streamsql/ir"
	"github.com/streamsql/streamsql/sqlerr"
	"github.com/streamsql/streamsql/types"
)

var (
	errWindowMonths = sqlerr.New(sqlerr.FeatureNotSupported, "window sizes with months or years are not supported (use days)")
	errWindowSize   = sqlerr.New(sqlerr.InvalidParameterValue, "window size must be positive")
)

func init() {
	ivl := types.IntervalT
	for _, t := range []types.T{types.TimestampT, types.TimestampTZT} {
		tumble := fixed(func(_ *kctx, a []types.Datum) (types.Datum, *sqlerr.Error) {
			var offset types.IntervalValue
			if len(a) == 3 {
				offset = a[2].Ivl
			}
			return tumbleStart(a[0].I, a[1].Ivl, offset)
		})
		reg(ir.FnTumbleStart, []types.T{t, ivl}, tumble)
		reg(ir.FnTumbleStart, []types.T{t, ivl, ivl}, tumble)
	}
}

// tumbleStart returns the start of the window of size that holds ts (both
// in microseconds), windows being aligned to the Unix epoch plus offset:
// date_bin(size, ts, offset), with the window functions' own errors.
func tumbleStart(ts int64, size, offset types.IntervalValue) (types.Datum, *sqlerr.Error) {
	if size.Months != 0 || offset.Months != 0 {
		return types.Null, errWindowMonths
	}
	if int64(size.Days)*microsPerDay+size.Micros <= 0 {
		return types.Null, errWindowSize
	}
	r, err := dateBin(size, ts, int64(offset.Days)*microsPerDay+offset.Micros)
	return types.DInt(r), err
}

// WindowStart returns the start of the window of size micros that holds ts,
// windows starting at offset + k*size for every integer k.
func WindowStart(ts, size, offset int64) int64 {
	r := (ts - offset) % size
	if r < 0 {
		r += size
	}
	return ts - r
}
