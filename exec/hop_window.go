package exec

import (
	"context"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/streamsql/streamsql/barrier"
	"github.com/streamsql/streamsql/exec/eval"
	"github.com/streamsql/streamsql/types"
)

// HopWindow repeats every input row once per hopping window that holds its
// time column: size/slide windows, starting every slide, aligned to the Unix
// epoch plus offset. Each copy gets the window's start and end appended and
// the input row's operation. Rows whose time is NULL are in no window. It is
// stateless.
type HopWindow struct {
	mem                 memory.Allocator
	timeCol             int
	slide, size, offset int64
	tsType              *arrow.TimestampType
	schema              *arrow.Schema
	wm                  *watermarkMapper

	rows          []int32
	starts, ends  []arrow.Timestamp
	ops           []Op
	startB, endsB *array.TimestampBuilder
}

// NewHopWindow returns a HopWindow over rows of inTypes; sizes are in
// microseconds and size is a multiple of slide.
func NewHopWindow(mem memory.Allocator, inTypes []types.T, timeCol int, slide, size, offset int64) *HopWindow {
	t := inTypes[timeCol]
	outTypes := append(append([]types.T{}, inTypes...), t, t)
	tsType := t.ArrowType().(*arrow.TimestampType)
	return &HopWindow{mem: mem, timeCol: timeCol, slide: slide, size: size, offset: offset, tsType: tsType,
		schema: SchemaOf(outTypes),
		startB: array.NewTimestampBuilder(mem, tsType), endsB: array.NewTimestampBuilder(mem, tsType)}
}

// OnBatch emits the copies of b's rows.
func (h *HopWindow) OnBatch(ctx context.Context, b *Batch, out Output) error {
	defer b.Release()
	ts := b.Rec.Column(h.timeCol).(*array.Timestamp)
	vals := ts.Values()
	per := h.size / h.slide
	h.rows, h.starts, h.ends, h.ops = h.rows[:0], h.starts[:0], h.ends[:0], h.ops[:0]
	for i := 0; i < b.Len(); i++ {
		if ts.IsNull(i) {
			continue
		}
		first := eval.WindowStart(int64(vals[i]), h.slide, h.offset) - (h.size - h.slide)
		for k := int64(0); k < per; k++ {
			h.rows = append(h.rows, int32(i))
			start := first + k*h.slide
			h.starts = append(h.starts, arrow.Timestamp(start))
			h.ends = append(h.ends, arrow.Timestamp(start+h.size))
			h.ops = append(h.ops, b.Ops[i])
		}
	}
	if len(h.rows) == 0 {
		return nil
	}
	copies, err := eval.TakeRecord(h.mem, b.Rec, h.rows)
	if err != nil {
		return err
	}
	defer copies.Release()
	h.startB.AppendValues(h.starts, nil)
	h.endsB.AppendValues(h.ends, nil)
	starts, ends := h.startB.NewArray(), h.endsB.NewArray()
	cols := append(append([]arrow.Array{}, copies.Columns()...), starts, ends)
	rec := array.NewRecordBatch(h.schema, cols, int64(len(h.rows)))
	starts.Release()
	ends.Release()
	return out.Emit(ctx, Message{Batch: NewBatch(rec, append([]Op(nil), h.ops...))})
}

// OnBarrier does nothing: HopWindow has no state.
func (h *HopWindow) OnBarrier(context.Context, *barrier.Barrier, Output) error { return nil }

// OnWatermark passes the input's watermarks on and derives those of the
// window columns from the time column's.
func (h *HopWindow) OnWatermark(ctx context.Context, w *barrier.Watermark, out Output) error {
	if h.wm == nil {
		return nil
	}
	return h.wm.emit(ctx, w, out)
}

// Close releases the builders.
func (h *HopWindow) Close() {
	h.startB.Release()
	h.endsB.Release()
}
