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

// Project computes one output column per expression; row operations pass
// through unchanged. It is stateless.
type Project struct {
	mem    memory.Allocator
	ectx   *eval.Context
	exprs  []eval.Evaluator
	schema *arrow.Schema
	// wm maps input watermarks to output columns; nil: the output carries
	// none.
	wm *watermarkMapper
}

// NewProject returns a Project evaluating exprs.
func NewProject(mem memory.Allocator, ectx *eval.Context, exprs []eval.Evaluator) *Project {
	ts := make([]types.T, len(exprs))
	for i, e := range exprs {
		ts[i] = e.Type()
	}
	return &Project{mem: mem, ectx: ectx, exprs: exprs, schema: SchemaOf(ts)}
}

// OnBatch evaluates the expressions over b.
func (p *Project) OnBatch(ctx context.Context, b *Batch, out Output) error {
	defer b.Release()
	cols := make([]arrow.Array, len(p.exprs))
	defer func() {
		for _, c := range cols {
			if c != nil {
				c.Release()
			}
		}
	}()
	for i, e := range p.exprs {
		c, err := e.Eval(p.ectx, b.Rec)
		if err != nil {
			return err
		}
		cols[i] = c
	}
	rec := array.NewRecordBatch(p.schema, cols, b.Rec.NumRows())
	return out.Emit(ctx, Message{Batch: NewBatch(rec, b.Ops)})
}

// OnBarrier does nothing: Project has no state.
func (p *Project) OnBarrier(context.Context, *barrier.Barrier, Output) error { return nil }

// OnWatermark emits the output watermarks that w gives.
func (p *Project) OnWatermark(ctx context.Context, w *barrier.Watermark, out Output) error {
	if p.wm == nil {
		return nil
	}
	return p.wm.emit(ctx, w, out)
}

// Close does nothing.
func (p *Project) Close() {}
