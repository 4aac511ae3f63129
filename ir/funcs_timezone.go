package ir

import (
	"github.com/streamsql/streamsql/types"
)

// The session's time zone is bound into expressions: every operation whose
// result depends on the TimeZone setting (casts between timestamptz and
// timestamp, date or text, timestamptz ± an interval with days or months,
// date_trunc, extract, date_part and to_char of a timestamptz) becomes a
// call of a function below that takes the zone's name as a constant last
// argument. A bound expression therefore means the same wherever it runs: a
// materialized view keeps the zone of the session that created it (stored
// in its catalog entry and bound again at a restart), while the stored
// timestamptz values are instants that each reader's session prints in its
// own zone. In UTC the binder leaves the plain operations, which compute in
// UTC, as they are.
//
// The zone arguments of these functions are read as SET TIME ZONE reads a
// name (LoadZone); those of timezone() and date_trunc(text, timestamptz,
// text), which users write, as AT TIME ZONE does (ZoneAt).
const (
	FnTimezone      = "timezone"      // timezone(zone, timestamptz) -> timestamp and timezone(zone, timestamp) -> timestamptz: AT TIME ZONE
	FnTstzToTS      = "$tstz_to_ts"   // $tstz_to_ts(timestamptz, zone): the local time in zone
	FnTSToTstz      = "$ts_to_tstz"   // $ts_to_tstz(timestamp, zone): the instant of a local time in zone
	FnTstzOut       = "$tstz_out"     // $tstz_out(timestamptz, zone): the text of the value in zone
	FnTstzIn        = "$tstz_in"      // $tstz_in(text, zone): text input, a time without offset read in zone
	FnTstzAdd       = "$tstz_add"     // $tstz_add(timestamptz, interval, zone): days and months added in zone's calendar
	FnTstzSub       = "$tstz_sub"     // $tstz_sub(timestamptz, interval, zone)
	FnDateTrunc3    = "$date_trunc"   // $date_trunc(field, timestamptz, zone): date_trunc in zone
	FnExtractTZ     = "$extract"      // $extract(field, timestamptz, zone)
	FnDatePartTZ    = "$date_part"    // $date_part(field, timestamptz, zone)
	FnToCharTZ      = "$to_char_tz"   // $to_char_tz(timestamptz, format, zone)
	FnToTimestampTZ = "$to_timestamp" // $to_timestamp(text, format, zone): a value without TZH/OF read in zone
)

func init() {
	txt, ts, tstz, ivl := types.TextT, types.TimestampT, types.TimestampTZT, types.IntervalT
	def(FnTimezone, ts, txt, tstz)
	def(FnTimezone, tstz, txt, ts)
	def(FnTimezone, ts, ivl, tstz)
	def(FnTimezone, tstz, ivl, ts)
	def(FnDateTrunc, tstz, txt, tstz, txt)
	def(FnTstzToTS, ts, tstz, txt)
	def(FnTSToTstz, tstz, ts, txt)
	def(FnTstzOut, txt, tstz, txt)
	def(FnTstzIn, tstz, txt, txt)
	def(FnTstzAdd, tstz, tstz, ivl, txt)
	def(FnTstzSub, tstz, tstz, ivl, txt)
	def(FnDateTrunc3, tstz, txt, tstz, txt)
	def(FnExtractTZ, types.NumericT, txt, tstz, txt)
	def(FnDatePartTZ, types.Float64T, txt, tstz, txt)
	def(FnToCharTZ, txt, tstz, txt, txt)
	def(FnToTimestampTZ, tstz, txt, txt, txt)
}
