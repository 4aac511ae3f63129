package exec

import (
	"encoding/binary"
	"slices"
	"strings"

	"github.com/streamsql/streamsql/ir"
	"github.com/streamsql/streamsql/state"
	"github.com/streamsql/streamsql/types"
)

// Frame accumulators (frameAcc) of the aggregates beyond count, sum, avg,
// min and max: bool_and/bool_or/every, the variances and standard
// deviations (the grouped aggregation's exact and float accumulators, on
// one slot), approx_count_distinct (exact over a frame), and array_agg and
// string_agg, which have no inverse and are recomputed when a frame's start
// moves, as PostgreSQL does.

// newOtherFrameAcc returns the accumulator of aggregate fn, or nil if fn is
// none of these. sep is string_agg's separator.
func newOtherFrameAcc(fn string, argT, resultT types.T, sep string) (frameAcc, error) {
	switch fn {
	case ir.AggBoolAnd, ir.AggEvery, ir.AggBoolOr:
		return &boolAcc{or: fn == ir.AggBoolOr}, nil
	case ir.AggStddev, ir.AggStddevSamp, ir.AggStddevPop, ir.AggVariance, ir.AggVarSamp, ir.AggVarPop:
		agg, err := newVarianceAgg(fn, argT)
		if err != nil {
			return nil, err
		}
		agg.grow(1)
		return &varianceAcc{agg: agg, argT: argT}, nil
	case ir.AggArrayAgg:
		return &listAcc{codec: state.NewRowCodec([]types.T{resultT})}, nil
	case ir.AggStringAgg:
		return &listAcc{text: true, sep: sep, codec: state.NewRowCodec([]types.T{types.ArrayOf(types.TextT)})}, nil
	case ir.AggApproxCountDistinct:
		return &distinctCountAcc{argT: argT, counts: map[string]int64{}}, nil
	}
	return nil, nil
}

// boolAcc is bool_and (every) and bool_or: counts of true and false values.
type boolAcc struct {
	or   bool
	t, f int64
}

func (a *boolAcc) reset() { a.t, a.f = 0, 0 }
func (a *boolAcc) add(d types.Datum) {
	switch {
	case d.Null:
	case d.I != 0:
		a.t++
	default:
		a.f++
	}
}
func (a *boolAcc) remove(d types.Datum) {
	switch {
	case d.Null:
	case d.I != 0:
		a.t--
	default:
		a.f--
	}
}
func (a *boolAcc) invertible() bool { return true }
func (a *boolAcc) result() (types.Datum, error) {
	switch {
	case a.t+a.f == 0:
		return types.Null, nil
	case a.or:
		return types.DBool(a.t > 0), nil
	}
	return types.DBool(a.f == 0), nil
}
func (a *boolAcc) appendState(buf []byte) []byte {
	return binary.AppendVarint(binary.AppendVarint(buf, a.t), a.f)
}
func (a *boolAcc) loadState(buf []byte) ([]byte, error) { return loadVarints(buf, &a.t, &a.f) }

// varianceAcc runs a variance aggregator on its slot 0.
type varianceAcc struct {
	agg  aggregator
	argT types.T
}

func (a *varianceAcc) reset()               { a.agg.reset(0) }
func (a *varianceAcc) add(d types.Datum)    { a.update(d, 1) }
func (a *varianceAcc) remove(d types.Datum) { a.update(d, -1) }
func (a *varianceAcc) invertible() bool     { return true }
func (a *varianceAcc) update(d types.Datum, s int8) {
	if d.Null {
		return
	}
	switch agg := a.agg.(type) {
	case *floatVarianceAgg:
		agg.add(0, s, d.F)
	case *exactVarianceAgg:
		if a.argT.Kind == types.Numeric {
			agg.addNumeric(0, s, d.Dec)
		} else {
			agg.add(0, s, d.I>>63, uint64(d.I))
		}
	}
}
func (a *varianceAcc) result() (types.Datum, error)       { return a.agg.result(0) }
func (a *varianceAcc) appendState(buf []byte) []byte      { return a.agg.appendState(buf, 0) }
func (a *varianceAcc) loadState(b []byte) ([]byte, error) { return a.agg.loadState(b, 0) }

// listAcc is array_agg (every value, NULLs too) and string_agg (the
// non-NULL values joined by sep; NULL if there are none), in frame order.
type listAcc struct {
	text  bool
	sep   string
	vals  []types.Datum
	codec *state.RowCodec // of the values as one array
}

func (a *listAcc) reset() { a.vals = a.vals[:0] }
func (a *listAcc) add(d types.Datum) {
	if a.text && d.Null {
		return
	}
	a.vals = append(a.vals, d)
}
func (a *listAcc) remove(types.Datum) {}
func (a *listAcc) invertible() bool   { return false }
func (a *listAcc) result() (types.Datum, error) {
	if len(a.vals) == 0 {
		return types.Null, nil
	}
	if !a.text {
		return types.DArray(append([]types.Datum(nil), a.vals...)), nil
	}
	var b strings.Builder
	for i, v := range a.vals {
		if i > 0 {
			b.WriteString(a.sep)
		}
		b.WriteString(v.S)
	}
	return types.DText(b.String()), nil
}
func (a *listAcc) appendState(buf []byte) []byte {
	return appendDatumState(buf, a.codec, types.DArray(a.vals))
}
func (a *listAcc) loadState(buf []byte) ([]byte, error) {
	d, rest, err := loadDatumState(buf, a.codec)
	if err != nil {
		return nil, err
	}
	a.vals = append(a.vals[:0], d.Arr...)
	return rest, nil
}

// distinctCountAcc is approx_count_distinct over a frame, computed exactly:
// the number of distinct non-NULL values, from a count per value's key
// encoding (so removing a value is exact).
type distinctCountAcc struct {
	argT   types.T
	counts map[string]int64
	keyBuf []byte
}

func (a *distinctCountAcc) reset() { clear(a.counts) }

// key encodes d into keyBuf; map accesses by string(keyBuf) copy the key
// only when they insert it.
func (a *distinctCountAcc) key(d types.Datum) {
	a.keyBuf = state.AppendKeyDatum(a.keyBuf[:0], a.argT, d)
}
func (a *distinctCountAcc) add(d types.Datum) {
	if !d.Null {
		a.key(d)
		a.counts[string(a.keyBuf)]++
	}
}
func (a *distinctCountAcc) remove(d types.Datum) {
	if d.Null {
		return
	}
	a.key(d)
	if n := a.counts[string(a.keyBuf)] - 1; n > 0 {
		a.counts[string(a.keyBuf)] = n
	} else {
		delete(a.counts, string(a.keyBuf))
	}
}
func (a *distinctCountAcc) invertible() bool { return true }
func (a *distinctCountAcc) result() (types.Datum, error) {
	return types.DInt(int64(len(a.counts))), nil
}

// appendState writes the values' keys and counts, in key order so that
// equal states encode alike.
func (a *distinctCountAcc) appendState(buf []byte) []byte {
	keys := make([]string, 0, len(a.counts))
	for k := range a.counts {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	buf = binary.AppendUvarint(buf, uint64(len(keys)))
	for _, k := range keys {
		buf = binary.AppendUvarint(buf, uint64(len(k)))
		buf = append(buf, k...)
		buf = binary.AppendVarint(buf, a.counts[k])
	}
	return buf
}
func (a *distinctCountAcc) loadState(buf []byte) ([]byte, error) {
	clear(a.counts)
	n, k := binary.Uvarint(buf)
	if k <= 0 {
		return nil, errCorruptState
	}
	buf = buf[k:]
	for ; n > 0; n-- {
		l, k := binary.Uvarint(buf)
		if k <= 0 || uint64(len(buf)-k) < l {
			return nil, errCorruptState
		}
		key := string(buf[k : k+int(l)])
		buf = buf[k+int(l):]
		var c int64
		var err error
		if buf, err = loadVarints(buf, &c); err != nil {
			return nil, err
		}
		a.counts[key] = c
	}
	return buf, nil
}
