package exec

import (
	"bytes"
	"context"
	"fmt"
	"slices"
	"strconv"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/streamsql/streamsql/barrier"
	"github.com/streamsql/streamsql/exec/eval"
	"github.com/streamsql/streamsql/planner"
	"github.com/streamsql/streamsql/types"
)

// WindowBatch computes window functions in a batch query: it buffers its
// whole (insert-only) input and, at the barrier that ends it, sorts the rows
// by partition key and ORDER BY key (rows that tie keep their input order)
// and emits them in that order, each with its window function results after
// its input columns.
type WindowBatch struct {
	mem  memory.Allocator
	spec *winSpec
	ev   *winEval
	recs []arrow.RecordBatch
}

// NewWindowBatch returns the batch operator of n. ectx evaluates the
// constant arguments.
func NewWindowBatch(mem memory.Allocator, ectx *eval.Context, n *planner.Window) (*WindowBatch, error) {
	spec, err := compileWindow(ectx, n)
	if err != nil {
		return nil, err
	}
	ev, err := newWinEval(spec, ectx)
	if err != nil {
		return nil, err
	}
	return &WindowBatch{mem: mem, spec: spec, ev: ev}, nil
}

// OnBatch buffers b.
func (w *WindowBatch) OnBatch(_ context.Context, b *Batch, _ Output) error {
	if b.Len() == 0 {
		b.Release()
		return nil
	}
	for _, op := range b.Ops {
		if op != Insert {
			b.Release()
			return fmt.Errorf("exec: a batch window got a retraction")
		}
	}
	w.recs = append(w.recs, b.Rec)
	b.Rec = nil
	return nil
}

// OnBarrier sorts the buffered rows, computes the window functions and
// emits the result.
func (w *WindowBatch) OnBarrier(ctx context.Context, _ *barrier.Barrier, out Output) error {
	defer w.release()
	if len(w.recs) == 0 {
		return nil
	}
	rec, err := w.concat()
	if err != nil {
		return err
	}
	defer rec.Release()
	n := int(rec.NumRows())
	// One key per row: partition key, then ORDER BY key.
	var keys []byte
	ends := make([]int, n)
	partEnds := make([]int, n)
	for i := 0; i < n; i++ {
		for k, c := range w.spec.partCols {
			keys = appendPartKey(keys, w.spec.partTypes[k], rec.Column(c), i)
		}
		partEnds[i] = len(keys)
		for _, o := range w.spec.order {
			keys = appendOrderKey(keys, o.T, rec.Column(o.Col), i, o.Desc, o.NullsFirst)
		}
		ends[i] = len(keys)
	}
	start := func(i int) int {
		if i == 0 {
			return 0
		}
		return ends[i-1]
	}
	key := func(i int) []byte { return keys[start(i):ends[i]] }
	idx := make([]int32, n)
	for i := range idx {
		idx[i] = int32(i)
	}
	slices.SortStableFunc(idx, func(a, b int32) int { return bytes.Compare(key(int(a)), key(int(b))) })
	sorted, err := eval.TakeRecord(w.mem, rec, idx)
	if err != nil {
		return err
	}
	defer sorted.Release()
	src := &batchSource{rec: sorted, types: w.spec.inTypes}
	src.orderKeyOf = func(j int) []byte {
		i := int(idx[j])
		return keys[partEnds[i]:ends[i]]
	}
	partKey := func(j int) []byte {
		i := int(idx[j])
		return keys[start(i):partEnds[i]]
	}
	em := newBatchEmitter(w.mem, sorted, w.spec.outTypes)
	defer em.release()
	for ps := 0; ps < n; {
		pe := ps + 1
		for pe < n && bytes.Equal(partKey(pe), partKey(ps)) {
			pe++
		}
		src.start, src.n = ps, pe-ps
		w.ev.reset(src, true)
		for i := 0; i < pe-ps; i++ {
			w.ev.ensure(i)
			outs, err := w.ev.row(i)
			if err != nil {
				return err
			}
			if err := em.add(ctx, outs, out); err != nil {
				return err
			}
		}
		ps = pe
	}
	return em.flush(ctx, out)
}

// concat returns the buffered rows as one record.
func (w *WindowBatch) concat() (arrow.RecordBatch, error) {
	if len(w.recs) == 1 {
		w.recs[0].Retain()
		return w.recs[0], nil
	}
	schema := w.recs[0].Schema()
	cols := make([]arrow.Array, len(w.spec.inTypes))
	defer releaseAll(cols)
	rows := int64(0)
	for _, r := range w.recs {
		rows += r.NumRows()
	}
	for c := range cols {
		parts := make([]arrow.Array, len(w.recs))
		for i, r := range w.recs {
			parts[i] = r.Column(c)
		}
		var err error
		if cols[c], err = array.Concatenate(parts, w.mem); err != nil {
			return nil, err
		}
	}
	return array.NewRecordBatch(schema, cols, rows), nil
}

func releaseAll(arrs []arrow.Array) {
	for _, a := range arrs {
		if a != nil {
			a.Release()
		}
	}
}

func (w *WindowBatch) release() {
	for _, r := range w.recs {
		r.Release()
	}
	w.recs = nil
}

// Close releases buffered rows.
func (w *WindowBatch) Close() { w.release() }

// batchSource is a partition of a sorted record: rows [start, start+n).
type batchSource struct {
	rec        arrow.RecordBatch
	types      []types.T
	start, n   int
	orderKeyOf func(j int) []byte
}

func (s *batchSource) load(i int) bool       { return i < s.n }
func (s *batchSource) orderKey(i int) []byte { return s.orderKeyOf(s.start + i) }
func (s *batchSource) datum(c, i int) types.Datum {
	return types.DatumAt(s.types[c], s.rec.Column(c), s.start+i)
}

// batchEmitter emits the rows of a sorted record in order, with the window
// results of each, in batches of at most BatchSize rows.
type batchEmitter struct {
	mem      memory.Allocator
	rec      arrow.RecordBatch
	outTypes []types.T
	bs       []array.Builder
	schema   *arrow.Schema
	// next is the first row of rec not emitted; pending rows follow it.
	next, pending int
}

func newBatchEmitter(mem memory.Allocator, rec arrow.RecordBatch, outTypes []types.T) *batchEmitter {
	em := &batchEmitter{mem: mem, rec: rec, outTypes: outTypes, bs: newBuilders(mem, outTypes)}
	fields := append([]arrow.Field(nil), rec.Schema().Fields()...)
	for i, t := range outTypes {
		fields = append(fields, arrow.Field{Name: "w" + strconv.Itoa(i), Type: t.ArrowType(), Nullable: true})
	}
	em.schema = arrow.NewSchema(fields, nil)
	return em
}

// add appends the results of the next row.
func (em *batchEmitter) add(ctx context.Context, outs []types.Datum, out Output) error {
	for k, d := range outs {
		types.AppendDatum(em.bs[k], em.outTypes[k], d)
	}
	em.pending++
	if em.pending == BatchSize {
		return em.flush(ctx, out)
	}
	return nil
}

// flush emits the pending rows.
func (em *batchEmitter) flush(ctx context.Context, out Output) error {
	if em.pending == 0 {
		return nil
	}
	slice := em.rec.NewSlice(int64(em.next), int64(em.next+em.pending))
	defer slice.Release()
	cols := append([]arrow.Array(nil), slice.Columns()...)
	results := make([]arrow.Array, len(em.bs))
	for k, b := range em.bs {
		results[k] = b.NewArray()
	}
	defer releaseAll(results)
	cols = append(cols, results...)
	batch := array.NewRecordBatch(em.schema, cols, int64(em.pending))
	em.next += em.pending
	em.pending = 0
	return out.Emit(ctx, Message{Batch: NewBatch(batch, nil)})
}

func (em *batchEmitter) release() { releaseBuilders(em.bs) }
