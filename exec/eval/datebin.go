package eval

import (
	"math"

	"github.com/streamsql/streamsql/ir"
	"github.com/streamsql/streamsql/sqlerr"
	"github.com/streamsql/streamsql/types"
)

var (
	errBinMonths = sqlerr.New(sqlerr.FeatureNotSupported, "timestamps cannot be binned into intervals containing months or years")
	errBinStride = sqlerr.New(sqlerr.DatetimeFieldOverflow, "stride must be greater than zero")
)

func init() {
	ivl := types.IntervalT
	for _, t := range []types.T{types.TimestampT, types.TimestampTZT} {
		reg(ir.FnDateBin, ts(ivl, t, t), fixed(func(_ *kctx, a []types.Datum) (types.Datum, *sqlerr.Error) {
			r, err := dateBin(a[0].Ivl, a[1].I, a[2].I)
			return types.DInt(r), err
		}))
	}
}

// dateBin is PostgreSQL's timestamp_bin: the start of the stride-wide bin,
// counted from origin, that holds source (rounding towards -infinity).
func dateBin(stride types.IntervalValue, source, origin int64) (int64, *sqlerr.Error) {
	if stride.Months != 0 {
		return 0, errBinMonths
	}
	const maxDays = math.MaxInt64 / microsPerDay
	if stride.Days > maxDays || stride.Days < -maxDays {
		return 0, errIntervalRange
	}
	dayUs := int64(stride.Days) * microsPerDay
	strideUs := dayUs + stride.Micros
	if (stride.Micros > 0 && strideUs < dayUs) || (stride.Micros < 0 && strideUs > dayUs) {
		return 0, errIntervalRange
	}
	if strideUs <= 0 {
		return 0, errBinStride
	}
	diff := source - origin
	if (origin < 0 && diff < source) || (origin > 0 && diff > source) {
		return 0, errIntervalRange
	}
	mod := diff % strideUs
	r := origin + (diff - mod)
	if mod < 0 {
		r -= strideUs
		if !validTS(r) {
			return 0, errTimestampRange
		}
	}
	return r, nil
}
