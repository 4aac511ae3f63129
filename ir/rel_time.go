package ir

import "github.com/streamsql/streamsql/types"

// FnTumbleStart is tumble_start(ts, size [, offset]): the start of the
// tumbling window of the given size (an interval without months) that holds
// ts, windows being aligned to the Unix epoch shifted by offset. TUMBLE in
// FROM computes its window_start with it.
const FnTumbleStart = "tumble_start"

func init() {
	for _, t := range []types.T{types.TimestampT, types.TimestampTZT} {
		def(FnTumbleStart, t, t, types.IntervalT)
		def(FnTumbleStart, t, t, types.IntervalT, types.IntervalT)
	}
}

// HopWindow is HOP(input, ts, slide, size [, offset]) in FROM: every input
// row once per hopping window that holds its time column, windows of Size
// starting every Slide (Size a multiple of Slide), aligned to the Unix epoch
// shifted by Offset (all in microseconds). Its columns are the input's, then
// window_start and window_end, of the time column's type.
type HopWindow struct {
	Input               Rel
	TimeCol             int
	Slide, Size, Offset int64
	Cols                []Column
}

func (r *HopWindow) Columns() []Column { return r.Cols }
