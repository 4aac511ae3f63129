package ir

import "github.com/streamsql/streamsql/types"

// defFormatting declares date_bin and the formatting functions (to_char,
// to_timestamp and to_date with a template).
func defFormatting() {
	txt, ts, tstz, ivl := types.TextT, types.TimestampT, types.TimestampTZT, types.IntervalT
	def(FnDateBin, ts, ivl, ts, ts)
	def(FnDateBin, tstz, ivl, tstz, tstz)
	for _, t := range []types.T{ts, tstz, ivl, types.NumericT, types.Int32T, types.Int64T, types.Float32T, types.Float64T} {
		def(FnToChar, txt, t, txt)
	}
	def(FnToTimestamp, tstz, txt, txt)
	def(FnToDate, types.DateT, txt, txt)
}
