// Package datagen generates rows for a declared schema, deterministically:
// row n's values depend only on the options (seed included) and n, so a
// reader that resumes from a checkpointed row number reproduces exactly the
// rows it would have produced, which makes the source replayable.
//
// Options (all strings, as given in CREATE SOURCE ... WITH (...)):
//
//	datagen.seed = N                 seed of the random fields (default 0)
//	datagen.rows.per.second = N      pacing (default 1000; 0: as fast as the consumer takes them)
//	datagen.total.rows = N           stop after N rows (default: unbounded)
//	datagen.split.num = K            splits (default 1): split i has rows i, i+K, ..., so the
//	                                 rows do not depend on K, only how readers share them
//	fields.<col>.kind = sequence|random   (default random)
//	fields.<col>.start / .end        sequence range (numbers; dates and timestamps as text):
//	                                 the sequence ends the source when it passes end
//	fields.<col>.step                sequence step (default 1; an interval such as '1 second'
//	                                 for dates and timestamps)
//	fields.<col>.min / .max          range of random numbers, dates and timestamps
//	fields.<col>.length              length of random strings (default 10)
//	fields.<col>.null.rate           fraction of NULLs, 0..1 (default 0)
package datagen

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/streamsql/streamsql/sqlerr"
	"github.com/streamsql/streamsql/types"
)

// Column is one generated column.
type Column struct {
	Name string
	Type types.T
}

// Generator produces the rows of a datagen source. It is immutable and safe
// for concurrent use.
type Generator struct {
	cols   []Column
	fields []field
	seed   uint64
	// Rate is the pacing in rows per second (0: unpaced); Total the number of
	// rows, or -1 for unbounded.
	Rate  float64
	Total int64
	// Splits is the number of splits: split s has rows s, s+Splits, ...
	Splits int
}

type field struct {
	sequence bool
	start    float64 // numbers, days or microseconds
	end      float64
	step     float64
	hasEnd   bool
	min, max float64
	length   int
	nullRate float64
	salt     uint64
}

// New validates opts against the columns and returns the generator. Errors
// are 22023 (invalid_parameter_value) naming the option.
func New(cols []Column, opts map[string]string) (*Generator, error) {
	g := &Generator{cols: cols, Rate: 1000, Total: -1, Splits: 1}
	known := map[string]bool{"connector": true}
	num := func(key string, def float64) (float64, error) {
		v, ok := opts[key]
		if !ok {
			return def, nil
		}
		known[key] = true
		f, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
		if err != nil || math.IsNaN(f) {
			return 0, sqlerr.New(sqlerr.InvalidParameterValue, "option %s: %q is not a number", key, v)
		}
		return f, nil
	}
	seed, err := num("datagen.seed", 0)
	if err != nil {
		return nil, err
	}
	g.seed = uint64(int64(seed))
	if g.Rate, err = num("datagen.rows.per.second", 1000); err != nil {
		return nil, err
	}
	if g.Rate < 0 {
		return nil, sqlerr.New(sqlerr.InvalidParameterValue, "option datagen.rows.per.second must not be negative")
	}
	total, err := num("datagen.total.rows", -1)
	if err != nil {
		return nil, err
	}
	g.Total = int64(total)
	splits, err := num("datagen.split.num", 1)
	if err != nil {
		return nil, err
	}
	if splits < 1 || splits > 1<<16 || splits != math.Trunc(splits) {
		return nil, sqlerr.New(sqlerr.InvalidParameterValue, "option datagen.split.num must be a whole number from 1 to %d", 1<<16)
	}
	g.Splits = int(splits)
	for i, c := range cols {
		p := "fields." + c.Name + "."
		f := field{salt: mix(uint64(i)+0x9e3779b97f4a7c15, g.seed)}
		kind := strings.ToLower(strings.TrimSpace(opts[p+"kind"]))
		known[p+"kind"] = true
		switch kind {
		case "", "random":
		case "sequence":
			f.sequence = true
		default:
			return nil, sqlerr.New(sqlerr.InvalidParameterValue, "option %skind: %q is not sequence or random", p, kind)
		}
		// Ranges are read in the column's unit: numbers as they are, dates in
		// days, timestamps in microseconds, text lengths in characters.
		value := func(key string, def float64) (float64, bool, error) {
			v, ok := opts[p+key]
			if !ok {
				return def, false, nil
			}
			known[p+key] = true
			x, err := parseValue(c.Type, v)
			if err != nil {
				return 0, false, sqlerr.New(sqlerr.InvalidParameterValue, "option %s%s: %v", p, key, err)
			}
			return x, true, nil
		}
		lo, hi := defaultRange(c.Type)
		if f.start, _, err = value("start", 0); err != nil {
			return nil, err
		}
		if f.end, f.hasEnd, err = value("end", 0); err != nil {
			return nil, err
		}
		if f.min, _, err = value("min", lo); err != nil {
			return nil, err
		}
		if f.max, _, err = value("max", hi); err != nil {
			return nil, err
		}
		if f.min > f.max {
			return nil, sqlerr.New(sqlerr.InvalidParameterValue, "option %smin is greater than %smax", p, p)
		}
		f.step = 1
		if v, ok := opts[p+"step"]; ok {
			known[p+"step"] = true
			if f.step, err = parseStep(c.Type, v); err != nil || f.step == 0 {
				return nil, sqlerr.New(sqlerr.InvalidParameterValue, "option %sstep: %q is not a non-zero step", p, v)
			}
		} else if c.Type.Kind == types.Timestamp || c.Type.Kind == types.TimestampTZ {
			f.step = 1e6 // one second
		}
		length, err := num(p+"length", 10)
		if err != nil {
			return nil, err
		}
		f.length = int(length)
		if f.nullRate, err = num(p+"null.rate", 0); err != nil {
			return nil, err
		}
		if f.sequence && f.hasEnd {
			n := int64(math.Floor((f.end-f.start)/f.step)) + 1
			if n < 0 {
				n = 0
			}
			if g.Total < 0 || n < g.Total {
				g.Total = n
			}
		}
		g.fields = append(g.fields, f)
	}
	for k := range opts {
		if !known[k] {
			return nil, sqlerr.New(sqlerr.InvalidParameterValue, "unknown datagen option %q", k)
		}
	}
	return g, nil
}

func defaultRange(t types.T) (float64, float64) {
	switch t.Kind {
	case types.Int16:
		return 0, math.MaxInt16
	case types.Date:
		// 2024-01-01 .. 2024-12-31.
		return float64(types.DaysFromCivil(2024, 1, 1)), float64(types.DaysFromCivil(2024, 12, 31))
	case types.Timestamp, types.TimestampTZ:
		return float64(types.DaysFromCivil(2024, 1, 1)) * 864e8, float64(types.DaysFromCivil(2025, 1, 1))*864e8 - 1
	}
	return 0, 1000
}

// parseValue reads a range bound in the column's unit.
func parseValue(t types.T, s string) (float64, error) {
	switch t.Kind {
	case types.Date, types.Timestamp, types.TimestampTZ:
		d, err := types.ParseText(t, s)
		if err != nil {
			return 0, err
		}
		return float64(d.I), nil
	}
	return strconv.ParseFloat(strings.TrimSpace(s), 64)
}

// parseStep reads a sequence step: a number, or an interval for dates
// (whole days) and timestamps.
func parseStep(t types.T, s string) (float64, error) {
	switch t.Kind {
	case types.Date, types.Timestamp, types.TimestampTZ:
		if f, err := strconv.ParseFloat(strings.TrimSpace(s), 64); err == nil {
			return f, nil
		}
		d, err := types.ParseText(types.IntervalT, s)
		if err != nil {
			return 0, err
		}
		us := float64(d.Ivl.Micros) + float64(d.Ivl.Days)*864e8 + float64(d.Ivl.Months)*30*864e8
		if t.Kind == types.Date {
			return math.Round(us / 864e8), nil
		}
		return us, nil
	}
	return strconv.ParseFloat(strings.TrimSpace(s), 64)
}

// mix is splitmix64's finaliser of a and b.
func mix(a, b uint64) uint64 {
	z := a + b*0x9e3779b97f4a7c15
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	return z ^ (z >> 31)
}

// unit returns a uniform value in [0, 1) for (field, row, draw).
func (f *field) unit(row int64, draw uint64) float64 {
	return float64(mix(f.salt+draw, uint64(row))>>11) / (1 << 53)
}

// Schema returns the Arrow schema of the generated batches: the columns,
// then the row number as a bigint.
func (g *Generator) Schema() *arrow.Schema {
	fields := make([]arrow.Field, 0, len(g.cols)+1)
	for _, c := range g.cols {
		fields = append(fields, arrow.Field{Name: c.Name, Type: c.Type.ArrowType(), Nullable: true})
	}
	fields = append(fields, arrow.Field{Name: "_row_id", Type: arrow.PrimitiveTypes.Int64})
	return arrow.NewSchema(fields, nil)
}

// Batch returns rows [first, first+n) (fewer at the end of a bounded
// source), each followed by its row number. The caller releases it.
func (g *Generator) Batch(mem memory.Allocator, first, n int64) arrow.RecordBatch {
	if g.Total >= 0 && first+n > g.Total {
		n = max(g.Total-first, 0)
	}
	return g.rows(mem, first, 1, n)
}

// SplitRows returns the number of rows of split s, or -1 if unbounded.
func (g *Generator) SplitRows(s int) int64 {
	if g.Total < 0 {
		return -1
	}
	k := int64(g.Splits)
	return max(g.Total-int64(s)+k-1, 0) / k
}

// SplitBatch returns rows [first, first+n) of split s (fewer at its end):
// the source's rows s+first*K, s+(first+1)*K, ... of K splits, each
// followed by its row number. The caller releases it.
func (g *Generator) SplitBatch(mem memory.Allocator, s int, first, n int64) arrow.RecordBatch {
	if total := g.SplitRows(s); total >= 0 && first+n > total {
		n = max(total-first, 0)
	}
	k := int64(g.Splits)
	return g.rows(mem, int64(s)+first*k, k, n)
}

// rows returns the n rows start, start+stride, ...
func (g *Generator) rows(mem memory.Allocator, start, stride, n int64) arrow.RecordBatch {
	cols := make([]arrow.Array, 0, len(g.cols)+1)
	for i, c := range g.cols {
		cols = append(cols, g.column(mem, i, c.Type, start, stride, n))
	}
	ids := array.NewInt64Builder(mem)
	ids.Reserve(int(n))
	for j := int64(0); j < n; j++ {
		ids.UnsafeAppend(start + j*stride)
	}
	cols = append(cols, ids.NewArray())
	ids.Release()
	rec := array.NewRecordBatch(g.Schema(), cols, n)
	for _, c := range cols {
		c.Release()
	}
	return rec
}

func (g *Generator) column(mem memory.Allocator, i int, t types.T, start, stride, n int64) arrow.Array {
	f := &g.fields[i]
	b := array.NewBuilder(mem, t.ArrowType())
	defer b.Release()
	b.Reserve(int(n))
	var buf []byte
	for r := start; r < start+n*stride; r += stride {
		if f.nullRate > 0 && f.unit(r, 1) < f.nullRate {
			b.AppendNull()
			continue
		}
		var x float64
		switch {
		case f.sequence:
			x = f.start + float64(r)*f.step
		case isIntegral(t):
			// Uniform over [min, max], both included.
			x = f.min + math.Floor(f.unit(r, 0)*(f.max-f.min+1))
		default:
			x = f.min + f.unit(r, 0)*(f.max-f.min)
		}
		switch bb := b.(type) {
		case *array.BooleanBuilder:
			if f.sequence {
				bb.Append(int64(x)%2 == 1)
			} else {
				bb.Append(f.unit(r, 0) < 0.5)
			}
		case *array.Int16Builder:
			bb.Append(int16(integer(f, x)))
		case *array.Int32Builder:
			bb.Append(int32(integer(f, x)))
		case *array.Int64Builder:
			bb.Append(integer(f, x))
		case *array.Float32Builder:
			bb.Append(float32(x))
		case *array.Float64Builder:
			bb.Append(x)
		case *array.Decimal128Builder:
			if t.DynamicNumeric() {
				d, err := types.ParseText(t, strconv.FormatFloat(x, 'g', 15, 64))
				if err != nil {
					bb.AppendNull()
					continue
				}
				bb.Append(d.Dec)
				continue
			}
			scale := t.EffectiveScale()
			v, err := decimal128.FromFloat64(x, types.NumericPrecision, scale)
			if err != nil {
				bb.AppendNull()
				continue
			}
			bb.Append(v)
		case *array.StringBuilder:
			if f.sequence {
				buf = strconv.AppendInt(buf[:0], int64(x), 10)
			} else {
				buf = randomString(buf[:0], f, r)
			}
			bb.BinaryBuilder.Append(buf)
		case *array.Date32Builder:
			bb.Append(arrow.Date32(integer(f, x)))
		case *array.TimestampBuilder:
			bb.Append(arrow.Timestamp(integer(f, x)))
		case *array.MonthDayNanoIntervalBuilder:
			bb.Append(arrow.MonthDayNanoInterval{Nanoseconds: integer(f, x) * 1000})
		default:
			panic(fmt.Sprintf("datagen: no generator for %s", t))
		}
	}
	return b.NewArray()
}

// integer rounds a generated value.
func integer(f *field, x float64) int64 { return int64(math.Round(x)) }

// isIntegral reports whether t's values are whole units (integers, dates,
// timestamps, intervals).
func isIntegral(t types.T) bool {
	switch t.Kind {
	case types.Int16, types.Int32, types.Int64, types.Date, types.Timestamp, types.TimestampTZ, types.Interval, types.Bool:
		return true
	}
	return false
}

const letters = "abcdefghijklmnopqrstuvwxyz"

// randomString appends the random string of row to buf.
func randomString(buf []byte, f *field, row int64) []byte {
	for k := 0; k < f.length; k++ {
		buf = append(buf, letters[int(f.unit(row, uint64(2+k))*float64(len(letters)))])
	}
	return buf
}
