package exec

import (
	"context"

	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/streamsql/streamsql/exec/eval"
	"github.com/streamsql/streamsql/ir"
	"github.com/streamsql/streamsql/planner"
	"github.com/streamsql/streamsql/sqlerr"
	"github.com/streamsql/streamsql/types"
)

// emitValues evaluates constant rows and emits them as one Insert batch.
func emitValues(ctx context.Context, mem memory.Allocator, ectx *eval.Context, v *planner.Values, out Output) error {
	ts := planner.Types(v.Cols)
	bs := newBuilders(mem, ts)
	defer releaseBuilders(bs)
	for _, row := range v.Rows {
		for i, e := range row {
			d, err := eval.EvalDatum(ectx, e)
			if err != nil {
				return err
			}
			types.AppendDatum(bs[i], ts[i], d)
		}
	}
	if len(v.Rows) == 0 {
		return nil
	}
	rec := buildRecord(SchemaOf(ts), bs, len(v.Rows))
	return out.Emit(ctx, Message{Batch: NewBatch(rec, nil)})
}

// emitSeries emits generate_series(start, stop, step) in batches.
func emitSeries(ctx context.Context, mem memory.Allocator, ectx *eval.Context, s *planner.Series, out Output) error {
	var vals [3]types.Datum
	for i, e := range []ir.Expr{s.Start, s.Stop, s.Step} {
		var err error
		if vals[i], err = eval.EvalDatum(ectx, e); err != nil {
			return err
		}
	}
	if vals[0].Null || vals[1].Null || vals[2].Null {
		return nil
	}
	switch s.Col.Type.Kind {
	case types.Timestamp, types.TimestampTZ, types.Numeric:
		return emitSteppedSeries(ctx, mem, s.Col.Type, s.Zone, vals, out)
	}
	start, stop, step := vals[0].I, vals[1].I, vals[2].I
	if step == 0 {
		return sqlerr.New(sqlerr.InvalidParameterValue, "step size cannot equal zero")
	}
	t := s.Col.Type
	ts := []types.T{t}
	schema := SchemaOf(ts)
	bs := newBuilders(mem, ts)
	defer releaseBuilders(bs)
	n := 0
	for v := start; (step > 0 && v <= stop) || (step < 0 && v >= stop); {
		types.AppendDatum(bs[0], t, types.DInt(v))
		n++
		if n == BatchSize {
			if err := out.Emit(ctx, Message{Batch: NewBatch(buildRecord(schema, bs, n), nil)}); err != nil {
				return err
			}
			n = 0
			if err := ctx.Err(); err != nil {
				return err
			}
		}
		next := v + step
		if (step > 0 && next < v) || (step < 0 && next > v) {
			break // overflow: the series ends at the type's limit
		}
		v = next
	}
	if n > 0 {
		return out.Emit(ctx, Message{Batch: NewBatch(buildRecord(schema, bs, n), nil)})
	}
	return nil
}
