package eval

import (
	"bytes"
	"math"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/streamsql/streamsql/ir"
	"github.com/streamsql/streamsql/sqlerr"
	"github.com/streamsql/streamsql/types"
)

var errDateForTimestamp = sqlerr.New(sqlerr.DatetimeFieldOverflow, "date out of range for timestamp")

// compileCast compiles an explicit conversion of arg to type to.
func compileCast(arg node, to types.T) (node, error) {
	return compileCastMode(arg, to, false)
}

// compileCastMode compiles a conversion; assign selects assignment-cast
// semantics (ir.Cast.Assignment).
func compileCastMode(arg node, to types.T, assign bool) (node, error) {
	from := arg.typ()
	if !ir.CastAllowed(from, to) {
		return nil, sqlerr.New(sqlerr.CannotCoerce, "cannot cast type %s to %s", from, to)
	}
	ref := castKernel(from, to, assign)
	if assign && to.Kind == types.Text && to.Width > 0 {
		if k, ok := asConst(arg); ok {
			if n, ok := fold(to, ref, true, []node{k}); ok {
				return n, nil
			}
		}
		return compileAssignText(arg, to)
	}
	if k, ok := asConst(arg); ok {
		if n, ok := fold(to, ref, true, []node{k}); ok {
			return n, nil
		}
	}
	switch {
	case from.Kind == types.Unknown:
		if _, ok := asConst(arg); !ok {
			return &constNode{t: to, d: types.Null}, nil // an untyped column is all NULL
		}
	case castIsIdentity(from, to):
		if arrow.TypeEqual(from.ArrowType(), to.ArrowType()) {
			return retype(arg, to), nil
		}
		return &relabelNode{t: to, arg: arg}, nil
	case vectorCast(from, to):
		return &castNode{from: from, to: to, arg: arg, ref: ref}, nil
	}
	return &rowNode{t: to, fn: ref, args: []node{arg}, strict: true}, nil
}

// compileAssignText compiles the assignment of arg to a varchar(n) column
// (to.Width > 0): the value as unbounded text, then PostgreSQL's varchar input
// rule, which fails with 22001 rather than truncate anything but spaces.
func compileAssignText(arg node, to types.T) (node, error) {
	from := arg.typ()
	if from.Kind == types.Text && from.Width > 0 && from.Width <= to.Width && (from.Bpchar || !to.Bpchar) {
		return retype(arg, to), nil
	}
	text, err := compileCast(arg, types.TextT)
	if err != nil {
		return nil, err
	}
	check := func(_ *kctx, a []types.Datum) (types.Datum, *sqlerr.Error) {
		v, err := types.ParseText(to, a[0].S)
		if err != nil {
			return types.Null, sqlerr.Wrap(err)
		}
		return v, nil
	}
	return &rowNode{t: to, fn: check, args: []node{text}, strict: true}, nil
}

// castIsIdentity reports whether values of from are values of to unchanged.
func castIsIdentity(from, to types.T) bool {
	switch {
	case from.Kind == types.Numeric && to.Kind == types.Numeric:
		if !from.HasTypmod || !to.HasTypmod {
			return from.HasTypmod == to.HasTypmod
		}
		return from.Scale == to.Scale && (to.Precision >= types.NumericPrecision || from.Precision <= to.Precision)
	case from.Kind == types.Text && to.Kind == types.Text:
		if to.Bpchar && !from.Bpchar {
			return false // trailing spaces go
		}
		return to.Width <= 0 || (from.Width > 0 && from.Width <= to.Width)
	case from.Kind == types.Struct && to.Kind == types.Struct, from.Kind == types.Map && to.Kind == types.Map:
		return types.Identical(from, to)
	case from.Kind == types.Array && to.Kind == types.Array:
		fe, te := from.ElemT(), to.ElemT()
		return castIsIdentity(fe, te) && arrow.TypeEqual(fe.ArrowType(), te.ArrowType())
	case from.Kind == to.Kind:
		return true
	case (from.Kind == types.Timestamp || from.Kind == types.TimestampTZ) &&
		(to.Kind == types.Timestamp || to.Kind == types.TimestampTZ):
		return true
	}
	return false
}

// retype gives a node another type of identical representation.
func retype(n node, t types.T) node {
	if n.typ() == t {
		return n
	}
	if k, ok := asConst(n); ok {
		return &constNode{t: t, d: k.d}
	}
	return &relabelNode{t: t, arg: n}
}

// vectorCast reports whether castNode handles from -> to.
func vectorCast(from, to types.T) bool {
	switch {
	case from.IsNumeric() && to.IsNumeric():
		return true
	case from.Kind == types.Bool && to.Kind == types.Int32, from.Kind == types.Int32 && to.Kind == types.Bool:
		return true
	case from.Kind == types.Date && (to.Kind == types.Timestamp || to.Kind == types.TimestampTZ):
		return true
	case (from.Kind == types.Timestamp || from.Kind == types.TimestampTZ) && to.Kind == types.Date:
		return true
	}
	return false
}

// relabelNode shares its argument's buffers under another Arrow type
// (timestamp <-> timestamptz, or an identical numeric/text type).
type relabelNode struct {
	t   types.T
	arg node
}

func (n *relabelNode) typ() types.T { return n.t }

func (n *relabelNode) eval(c *ectx, rec arrow.RecordBatch) (arrow.Array, error) {
	a, err := n.arg.eval(c, rec)
	if err != nil {
		return nil, err
	}
	defer a.Release()
	dt := n.t.ArrowType()
	if arrow.TypeEqual(a.DataType(), dt) {
		a.Retain()
		return a, nil
	}
	d := a.Data()
	data := array.NewData(dt, d.Len(), d.Buffers(), nil, a.NullN(), d.Offset())
	defer data.Release()
	return array.MakeFromData(data), nil
}

// castKernel is the scalar conversion from -> to.
func castKernel(from, to types.T, assign bool) scalarFn {
	return func(k *kctx, a []types.Datum) (types.Datum, *sqlerr.Error) {
		return castDatumMode(k, from, to, a[0], assign)
	}
}

// castDatum converts d from type from to type to with PostgreSQL's explicit
// cast semantics. A text result may alias k.buf.
func castDatum(k *kctx, from, to types.T, d types.Datum) (types.Datum, *sqlerr.Error) {
	return castDatumMode(k, from, to, d, false)
}

// castDatumMode is castDatum, with assignment-cast semantics when assign: a
// value too long for varchar(n) is then an error (22001) unless the excess
// is spaces, where an explicit cast truncates.
func castDatumMode(k *kctx, from, to types.T, d types.Datum, assign bool) (types.Datum, *sqlerr.Error) {
	if d.Null {
		return types.Null, nil
	}
	if assign && to.Kind == types.Text && to.Width > 0 {
		v, err := castDatumMode(k, from, types.TextT, d, false)
		if err != nil {
			return v, err
		}
		s, perr := types.ParseText(to, v.S)
		if perr != nil {
			return types.Null, sqlerr.Wrap(perr)
		}
		return s, nil
	}
	switch {
	case from.Kind == types.Struct && to.Kind == types.Struct:
		return castStruct(k, from, to, d, assign)
	case from.Kind == types.Array && to.Kind == types.Array && to.Elem == types.Struct && from.Elem == types.Struct:
		return castStructs(k, from.ElemT(), to.ElemT(), d, assign)
	case from.Kind == types.Array && to.Kind == types.Array && from.ElemT() != to.ElemT():
		return castArray(k, from.ElemT(), to.ElemT(), d, assign)
	case from.Kind == types.Map && to.Kind == types.Map:
		return castStructs(k, types.MapEntriesT(from).ElemT(), types.MapEntriesT(to).ElemT(), d, assign)
	case from.Kind == types.Unknown || (from.Kind == types.Text && to.Kind != types.Text):
		v, err := types.ParseText(to, d.S)
		if err != nil {
			return types.Null, sqlerr.Wrap(err)
		}
		return v, nil
	case to.Kind == types.Text:
		var s string
		switch from.Kind {
		case types.Text:
			s = d.S
		case types.Bool:
			s = "false"
			if d.Bool() {
				s = "true"
			}
		default:
			b := types.AppendText(k.buf[:0], from, d)
			if to.Width > 0 {
				b = b[:runeOffset(string(b), int64(to.Width))]
			}
			if to.Bpchar {
				b = bytes.TrimRight(b, " ")
			}
			return k.textResult(b), nil
		}
		if to.Width > 0 {
			s = s[:runeOffset(s, int64(to.Width))]
		}
		if to.Bpchar {
			s = strings.TrimRight(s, " ")
		}
		return types.DText(s), nil
	case from.IsNumeric() && to.IsNumeric():
		return castNumber(from, to, d)
	case from.Kind == types.JSONB && to.Kind != types.JSONB:
		return castJSONB(to, d)
	case from.Kind == types.Bool && to.Kind == types.Int32:
		return types.DInt(d.I & 1), nil
	case from.Kind == types.Int32 && to.Kind == types.Bool:
		return types.DBool(d.I != 0), nil
	case from.Kind == types.Date && (to.Kind == types.Timestamp || to.Kind == types.TimestampTZ):
		if d.I < minDay || d.I >= tsEndMicros/microsPerDay {
			return types.Null, errDateForTimestamp
		}
		return types.DInt(d.I * microsPerDay), nil
	case (from.Kind == types.Timestamp || from.Kind == types.TimestampTZ) && to.Kind == types.Date:
		return types.DInt(floorDiv(d.I, microsPerDay)), nil
	case from.Kind == to.Kind,
		(from.Kind == types.Timestamp || from.Kind == types.TimestampTZ) &&
			(to.Kind == types.Timestamp || to.Kind == types.TimestampTZ):
		return d, nil
	}
	return types.Null, sqlerr.New(sqlerr.CannotCoerce, "cannot cast type %s to %s", from, to)
}

// floatIntBounds are PostgreSQL's FLOAT8_FITS_IN_INTn bounds: lo <= x < hi.
func floatIntBounds(k types.Kind) (lo, hi float64) {
	switch k {
	case types.Int16:
		return math.MinInt16, -math.MinInt16
	case types.Int32:
		return math.MinInt32, -math.MinInt32
	}
	return math.MinInt64, -float64(math.MinInt64)
}

// floatDigits is the number of significant digits PostgreSQL keeps when it
// converts a float to numeric (DBL_DIG or FLT_DIG).
func floatDigits(k types.Kind) (digits, bitSize int) {
	if k == types.Float32 {
		return 6, 32
	}
	return 15, 64
}

// numToFloat32 converts a numeric mantissa to the nearest float32 (through
// its decimal text, as PostgreSQL's strtof does).
func numToFloat32(n decimal128.Num, scale int32) float64 {
	return float64(float32(parseMantissa(n, scale, 32)))
}

func castNumber(from, to types.T, d types.Datum) (types.Datum, *sqlerr.Error) {
	switch {
	case from.IsInteger():
		switch {
		case to.IsInteger():
			lo, hi := intBounds(to.Kind)
			if d.I < lo || d.I > hi {
				return types.Null, intRangeErr(to.Kind)
			}
			return d, nil
		case to.Kind == types.Float32:
			return types.DFloat(float64(float32(d.I))), nil
		case to.Kind == types.Float64:
			return types.DFloat(float64(d.I)), nil
		case to.Kind == types.Numeric:
			n, ok := numFromIntTo(d.I, to)
			if !ok || !numFitsType(n, to) {
				return types.Null, types.NumericOverflowError(to)
			}
			return types.DNumeric(n), nil
		}
	case from.Kind == types.Float32 || from.Kind == types.Float64:
		f := d.F
		switch {
		case to.IsInteger():
			r := math.RoundToEven(f)
			lo, hi := floatIntBounds(to.Kind)
			if !(r >= lo && r < hi) {
				return types.Null, intRangeErr(to.Kind)
			}
			return types.DInt(int64(r)), nil
		case to.Kind == types.Float32:
			r := float64(float32(f))
			if math.IsInf(r, 0) && !math.IsInf(f, 0) {
				return types.Null, errFloatOverflow
			}
			if r == 0 && f != 0 {
				return types.Null, errFloatUnderflow
			}
			return types.DFloat(r), nil
		case to.Kind == types.Float64:
			return d, nil
		case to.Kind == types.Numeric:
			digits, bitSize := floatDigits(from.Kind)
			n, err := numFromFloatTo(f, digits, bitSize, to)
			if err != nil {
				if err == errNumericOverflow {
					return types.Null, types.NumericOverflowError(to)
				}
				return types.Null, err
			}
			if !numFitsType(n, to) {
				return types.Null, types.NumericOverflowError(to)
			}
			return types.DNumeric(n), nil
		}
	case from.Kind == types.Numeric:
		m, scale := types.NumericParts(from, d.Dec)
		switch {
		case to.IsInteger():
			v, ok := numToInt(m, scale)
			lo, hi := intBounds(to.Kind)
			if !ok || v < lo || v > hi {
				return types.Null, intRangeErr(to.Kind)
			}
			return types.DInt(v), nil
		case to.Kind == types.Float32:
			return types.DFloat(numToFloat32(m, scale)), nil
		case to.Kind == types.Float64:
			return types.DFloat(numToFloat(m, scale)), nil
		case to.Kind == types.Numeric:
			n, ok := numConvert(from, d.Dec, to)
			if !ok || !numFitsType(n, to) {
				return types.Null, types.NumericOverflowError(to)
			}
			return types.DNumeric(n), nil
		}
	}
	return types.Null, sqlerr.New(sqlerr.CannotCoerce, "cannot cast type %s to %s", from, to)
}

// castNode is a vectorized conversion between numbers, booleans and
// integers, and dates and timestamps. Like the arithmetic loops it flags
// possible failures and leaves their diagnosis to the scalar kernel.
type castNode struct {
	from, to types.T
	arg      node
	ref      scalarFn
}

func (n *castNode) typ() types.T { return n.to }

func (n *castNode) eval(c *ectx, rec arrow.RecordBatch) (arrow.Array, error) {
	a, err := n.arg.eval(c, rec)
	if err != nil {
		return nil, err
	}
	defer a.Release()
	valid := andValidity(c.mem, c.n, a)
	vals, bad := n.convert(c, a)
	if bad {
		if valid, err = checkUnary(c, n.from, n.ref, valid, a); err != nil {
			vals.Release()
			if valid != nil {
				valid.Release()
			}
			return nil, err
		}
	}
	return makeArray(n.to.ArrowType(), c.n, valid, vals), nil
}

func (n *castNode) convert(c *ectx, a arrow.Array) (*memory.Buffer, bool) {
	to := n.to
	switch n.from.Kind {
	case types.Int16:
		return castFromInt(c, to, fixedVals[int16](a))
	case types.Int32:
		return castFromInt(c, to, fixedVals[int32](a))
	case types.Int64:
		return castFromInt(c, to, fixedVals[int64](a))
	case types.Float32:
		return castFromFloat(c, n.from, to, fixedVals[float32](a))
	case types.Float64:
		return castFromFloat(c, n.from, to, fixedVals[float64](a))
	case types.Numeric:
		return castFromNum(c, n.from, to, fixedVals[decimal128.Num](a))
	case types.Bool:
		buf, out := allocFixed[int32](c.mem, c.n)
		bm, off := boolBits(a)
		for i := range out {
			out[i] = int32(bm[(off+i)>>3] >> ((off + i) & 7) & 1)
		}
		return buf, false
	case types.Date:
		buf, out := allocFixed[int64](c.mem, c.n)
		bad := false
		endDay := tsEndMicros / microsPerDay
		for i, v := range fixedVals[int32](a) {
			bad = bad || int64(v) >= endDay || int64(v) < minDay
			out[i] = int64(v) * microsPerDay
		}
		return buf, bad
	case types.Timestamp, types.TimestampTZ:
		buf, out := allocFixed[int32](c.mem, c.n)
		for i, v := range fixedVals[int64](a) {
			out[i] = int32(floorDiv(v, microsPerDay))
		}
		return buf, false
	}
	panic("eval: unexpected vector cast from " + n.from.String())
}

func castFromInt[F integer](c *ectx, to types.T, in []F) (*memory.Buffer, bool) {
	switch to.Kind {
	case types.Int16:
		buf, out := allocFixed[int16](c.mem, c.n)
		return buf, castInts(out, in, math.MinInt16, math.MaxInt16)
	case types.Int32:
		buf, out := allocFixed[int32](c.mem, c.n)
		return buf, castInts(out, in, math.MinInt32, math.MaxInt32)
	case types.Int64:
		buf, out := allocFixed[int64](c.mem, c.n)
		return buf, castInts(out, in, math.MinInt64, math.MaxInt64)
	case types.Float32:
		buf, out := allocFixed[float32](c.mem, c.n)
		for i, v := range in {
			out[i] = float32(v)
		}
		return buf, false
	case types.Float64:
		buf, out := allocFixed[float64](c.mem, c.n)
		for i, v := range in {
			out[i] = float64(v)
		}
		return buf, false
	case types.Numeric:
		buf, out := allocFixed[decimal128.Num](c.mem, c.n)
		bad := false
		for i, v := range in {
			r, ok := numFromIntTo(int64(v), to)
			bad = bad || !ok || !numFitsType(r, to)
			out[i] = r
		}
		return buf, bad
	case types.Bool:
		vals := allocBits(c.mem, c.n, false)
		out := vals.Bytes()
		for i, v := range in {
			out[i>>3] |= b2u(v != 0) << (i & 7)
		}
		return vals, false
	}
	panic("eval: unexpected vector cast to " + to.String())
}

func castInts[F, T integer](out []T, in []F, lo, hi int64) bool {
	var bad bool
	out = out[:len(in)]
	for i, v := range in {
		x := int64(v)
		bad = bad || x < lo || x > hi
		out[i] = T(x)
	}
	return bad
}

func castFromFloat[F float](c *ectx, from, to types.T, in []F) (*memory.Buffer, bool) {
	switch to.Kind {
	case types.Int16:
		buf, out := allocFixed[int16](c.mem, c.n)
		return buf, floatToInts(out, in, to.Kind)
	case types.Int32:
		buf, out := allocFixed[int32](c.mem, c.n)
		return buf, floatToInts(out, in, to.Kind)
	case types.Int64:
		buf, out := allocFixed[int64](c.mem, c.n)
		return buf, floatToInts(out, in, to.Kind)
	case types.Float32:
		buf, out := allocFixed[float32](c.mem, c.n)
		bad := false
		for i, v := range in {
			r := float32(v)
			bad = bad || (r-r != 0 && v-v == 0) || (r == 0 && v != 0)
			out[i] = r
		}
		return buf, bad
	case types.Float64:
		buf, out := allocFixed[float64](c.mem, c.n)
		for i, v := range in {
			out[i] = float64(v)
		}
		return buf, false
	case types.Numeric:
		buf, out := allocFixed[decimal128.Num](c.mem, c.n)
		digits, bitSize := floatDigits(from.Kind)
		bad := false
		for i, v := range in {
			r, err := numFromFloatTo(float64(v), digits, bitSize, to)
			bad = bad || err != nil || !numFitsType(r, to)
			out[i] = r
		}
		return buf, bad
	}
	panic("eval: unexpected vector cast to " + to.String())
}

// floatToInts rounds half to even (rint) and range-checks.
func floatToInts[F float, T integer](out []T, in []F, k types.Kind) bool {
	lo, hi := floatIntBounds(k)
	bad := false
	out = out[:len(in)]
	for i, v := range in {
		r := math.RoundToEven(float64(v))
		ok := r >= lo && r < hi
		bad = bad || !ok
		if ok {
			out[i] = T(r)
		} else {
			out[i] = 0
		}
	}
	return bad
}

func castFromNum(c *ectx, from, to types.T, in []decimal128.Num) (*memory.Buffer, bool) {
	if from.DynamicNumeric() && to.Kind != types.Numeric {
		return castFromDynNum(c, to, in)
	}
	scale := from.EffectiveScale()
	switch to.Kind {
	case types.Int16:
		buf, out := allocFixed[int16](c.mem, c.n)
		return buf, numToInts(out, in, scale, to.Kind)
	case types.Int32:
		buf, out := allocFixed[int32](c.mem, c.n)
		return buf, numToInts(out, in, scale, to.Kind)
	case types.Int64:
		buf, out := allocFixed[int64](c.mem, c.n)
		return buf, numToInts(out, in, scale, to.Kind)
	case types.Float32:
		buf, out := allocFixed[float32](c.mem, c.n)
		for i, v := range in {
			out[i] = float32(numToFloat32(v, scale))
		}
		return buf, false
	case types.Float64:
		buf, out := allocFixed[float64](c.mem, c.n)
		for i, v := range in {
			out[i] = numToFloat(v, scale)
		}
		return buf, false
	case types.Numeric:
		buf, out := allocFixed[decimal128.Num](c.mem, c.n)
		bad := false
		for i, v := range in {
			r, ok := numConvert(from, v, to)
			bad = bad || !ok || !numFitsType(r, to)
			out[i] = r
		}
		return buf, bad
	}
	panic("eval: unexpected vector cast to " + to.String())
}

// castFromDynNum converts unconstrained numerics to integers and floats.
func castFromDynNum(c *ectx, to types.T, in []decimal128.Num) (*memory.Buffer, bool) {
	switch to.Kind {
	case types.Int16:
		buf, out := allocFixed[int16](c.mem, c.n)
		return buf, dynToInts(out, in, to.Kind)
	case types.Int32:
		buf, out := allocFixed[int32](c.mem, c.n)
		return buf, dynToInts(out, in, to.Kind)
	case types.Int64:
		buf, out := allocFixed[int64](c.mem, c.n)
		return buf, dynToInts(out, in, to.Kind)
	case types.Float32:
		buf, out := allocFixed[float32](c.mem, c.n)
		for i, v := range in {
			m, s := types.UnpackNumeric(v)
			out[i] = float32(numToFloat32(m, s))
		}
		return buf, false
	case types.Float64:
		buf, out := allocFixed[float64](c.mem, c.n)
		for i, v := range in {
			m, s := types.UnpackNumeric(v)
			out[i] = numToFloat(m, s)
		}
		return buf, false
	}
	panic("eval: unexpected vector cast to " + to.String())
}

func dynToInts[T integer](out []T, in []decimal128.Num, k types.Kind) bool {
	lo, hi := intBounds(k)
	bad := false
	out = out[:len(in)]
	for i, v := range in {
		m, s := types.UnpackNumeric(v)
		r, ok := numToInt(m, s)
		ok = ok && r >= lo && r <= hi
		bad = bad || !ok
		out[i] = T(r)
	}
	return bad
}

func numToInts[T integer](out []T, in []decimal128.Num, scale int32, k types.Kind) bool {
	lo, hi := intBounds(k)
	bad := false
	out = out[:len(in)]
	for i, v := range in {
		r, ok := numToInt(v, scale)
		ok = ok && r >= lo && r <= hi
		bad = bad || !ok
		out[i] = T(r)
	}
	return bad
}
