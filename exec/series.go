package exec

import (
	"context"

	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/streamsql/streamsql/exec/eval"
	"github.com/streamsql/streamsql/sqlerr"
	"github.com/streamsql/streamsql/types"
)

// emitSteppedSeries emits generate_series over timestamps (an interval
// step, added to the previous value each time as PostgreSQL does, so a
// month step from January 31st goes to February 28th and then March 28th)
// or numerics, from start (vals[0]) to stop (vals[1]) inclusive. A
// timestamptz series adds days and months in zone ("": UTC), as
// timestamptz + interval does there.
func emitSteppedSeries(ctx context.Context, mem memory.Allocator, t types.T, zone string, vals [3]types.Datum, out Output) error {
	var next func(v types.Datum) (types.Datum, bool)
	var sign int
	switch t.Kind {
	case types.Numeric:
		step := vals[2].Dec
		if t.DynamicNumeric() {
			m, _ := types.UnpackNumeric(step)
			sign = m.Sign()
			next = func(v types.Datum) (types.Datum, bool) {
				n, ok := eval.NumericAdd(v.Dec, step)
				return types.DNumeric(n), ok
			}
			break
		}
		sign = step.Sign()
		next = func(v types.Datum) (types.Datum, bool) {
			n := v.Dec.Add(step)
			// Stop at overflow rather than wrap around.
			return types.DNumeric(n), (sign > 0) == (n.Greater(v.Dec))
		}
	case types.TimestampTZ:
		if zone != "" {
			z, err := types.LoadZone(zone)
			if err != nil {
				return err
			}
			step := vals[2].Ivl
			sign = step.Compare(types.IntervalValue{})
			next = func(v types.Datum) (types.Datum, bool) {
				n, ok := eval.TimestampTZAddInterval(z, v.I, step)
				return types.Datum{I: n}, ok
			}
			break
		}
		fallthrough
	default:
		step := vals[2].Ivl
		sign = step.Compare(types.IntervalValue{})
		next = func(v types.Datum) (types.Datum, bool) {
			n, ok := eval.TimestampAddInterval(v.I, step)
			return types.Datum{I: n}, ok
		}
	}
	if sign == 0 {
		return sqlerr.New(sqlerr.InvalidParameterValue, "step size cannot equal zero")
	}
	ts := []types.T{t}
	schema := SchemaOf(ts)
	bs := newBuilders(mem, ts)
	defer releaseBuilders(bs)
	n := 0
	for v := vals[0]; ; {
		c := types.Compare(t, v, vals[1])
		if sign > 0 && c > 0 || sign < 0 && c < 0 {
			break
		}
		types.AppendDatum(bs[0], t, v)
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
		var ok bool
		if v, ok = next(v); !ok {
			break
		}
	}
	if n > 0 {
		return out.Emit(ctx, Message{Batch: NewBatch(buildRecord(schema, bs, n), nil)})
	}
	return nil
}
