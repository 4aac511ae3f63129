package state

import (
	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/streamsql/streamsql/types"
)

// AppendEqualKey appends the key of row i of col as AppendKey does, except
// that an interval is encoded by its span alone (the null marker, then 16
// bytes): intervals PostgreSQL calls equal get equal keys. The key cannot be
// decoded; it serves to find equal values (DISTINCT aggregates).
func AppendEqualKey(buf []byte, t types.T, col arrow.Array, i int) []byte {
	if t.Kind != types.Interval {
		return AppendKey(buf, t, col, i)
	}
	if col.IsNull(i) {
		return append(buf, keyNull)
	}
	v := col.(*array.MonthDayNanoInterval).Value(i)
	start := len(buf)
	buf = append(buf, keyNotNull)
	buf = appendKeyInterval(buf, v.Months, v.Days, v.Nanoseconds/1000)
	// Drop the months and days that follow the span.
	return buf[:start+1+16]
}
