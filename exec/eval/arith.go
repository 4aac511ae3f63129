package eval

import (
	"math"
	"math/bits"
	"unsafe"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/streamsql/streamsql/ir"
	"github.com/streamsql/streamsql/types"
)

// Vectorized arithmetic. Each loop computes every row of a batch (NULL rows
// too: their values are ignored) and reports whether some row *may* have
// failed (overflow, division by zero); only then does checkRows re-run the
// scalar kernel on the valid, active rows to find the real failures. The fast
// loops are therefore free to be conservative.

type integer interface{ ~int16 | ~int32 | ~int64 }
type float interface{ ~float32 | ~float64 }

// arithNode is a binary operator on two numbers of the same kind.
type arithNode struct {
	fn   string
	t    types.T
	a, b node
	ref  scalarFn
}

func newArithNode(fn string, t types.T, a, b node, ref scalarFn) node {
	_, aConst := asConst(a)
	_, bConst := asConst(b)
	if aConst && !bConst && (fn == ir.FnAdd || fn == ir.FnMul || fn == ir.FnBitAnd || fn == ir.FnBitOr || fn == ir.FnBitXor) {
		a, b = b, a // commutative: keep the constant on the right
	}
	return &arithNode{fn: fn, t: t, a: a, b: b, ref: ref}
}

func (n *arithNode) typ() types.T { return n.t }

func (n *arithNode) eval(c *ectx, rec arrow.RecordBatch) (arrow.Array, error) {
	cols, err := evalArgs(c, rec, []node{n.a, n.b})
	if err != nil {
		return nil, err
	}
	defer releaseAll(cols)
	ac, bc := cols[0], cols[1]
	if ac == nil {
		// constant op column: materialise the constant (rare for - / %).
		k, _ := asConst(n.a)
		ac = ConstArray(c.mem, n.t, k.d, c.n)
		cols[0] = ac
	}
	var bconst types.Datum
	if bc == nil {
		k, _ := asConst(n.b)
		bconst = k.d
	}
	valid := andValidity(c.mem, c.n, ac, bc)
	var vals *memory.Buffer
	var bad bool
	switch n.t.Kind {
	case types.Int16:
		vals, bad = intArith[int16](c, n.fn, ac, bc, int16(bconst.I), math.MinInt16)
	case types.Int32:
		vals, bad = intArith[int32](c, n.fn, ac, bc, int32(bconst.I), math.MinInt32)
	case types.Int64:
		vals, bad = intArith[int64](c, n.fn, ac, bc, bconst.I, math.MinInt64)
	case types.Float32:
		vals, bad = floatArithVec[float32](c, n.fn, ac, bc, float32(bconst.F))
	case types.Float64:
		vals, bad = floatArithVec[float64](c, n.fn, ac, bc, bconst.F)
	case types.Numeric:
		vals, bad = numArithVec(c, n.fn, ac, bc, bconst.Dec)
	}
	if bad {
		if valid, err = checkRows(c, n.t, n.ref, valid, ac, bc, bconst); err != nil {
			vals.Release()
			if valid != nil {
				valid.Release()
			}
			return nil, err
		}
	}
	return makeArray(n.t.ArrowType(), c.n, valid, vals), nil
}

// checkRows re-evaluates the valid, active rows of a binary operator with its
// scalar kernel and turns the failing ones into row errors (NULLs, or a
// returned error in strict mode). b may be nil for the constant bconst.
func checkRows(c *ectx, t types.T, ref scalarFn, valid *memory.Buffer, a, b arrow.Array, bconst types.Datum) (*memory.Buffer, error) {
	ra := reader(t, a)
	rb := func(int) types.Datum { return bconst }
	if b != nil {
		rb = reader(t, b)
	}
	var ds [2]types.Datum
	for i := 0; i < c.n; i++ {
		if valid != nil && !bitIsSet(valid.Bytes(), i) {
			continue
		}
		ds[0], ds[1] = ra(i), rb(i)
		if _, kerr := ref(&c.k, ds[:]); kerr != nil {
			if err := c.rowErr(i, kerr); err != nil {
				return valid, err
			}
			if valid == nil {
				valid = allocBits(c.mem, c.n, true)
			}
			clearBit(valid.Bytes(), i)
		}
	}
	return valid, nil
}

func bitIsSet(b []byte, i int) bool { return b[i>>3]&(1<<(i&7)) != 0 }
func clearBit(b []byte, i int)      { b[i>>3] &^= 1 << (i & 7) }

func intArith[T integer](c *ectx, fn string, ac, bc arrow.Array, bk T, minv T) (*memory.Buffer, bool) {
	buf, out := allocFixed[T](c.mem, c.n)
	a := fixedVals[T](ac)
	var bad bool
	if bc == nil {
		switch fn {
		case ir.FnAdd:
			bad = addIC(out, a, bk)
		case ir.FnSub:
			bad = subIC(out, a, bk)
		case ir.FnMul:
			bad = mulIC(out, a, bk)
		case ir.FnDiv:
			bad = divIC(out, a, bk, minv)
		case ir.FnMod:
			bad = modIC(out, a, bk)
		case ir.FnBitAnd, ir.FnBitOr, ir.FnBitXor:
			bitIC(fn, out, a, bk)
		}
		return buf, bad
	}
	b := fixedVals[T](bc)
	switch fn {
	case ir.FnAdd:
		bad = addII(out, a, b)
	case ir.FnSub:
		bad = subII(out, a, b)
	case ir.FnMul:
		bad = mulII(out, a, b)
	case ir.FnDiv:
		bad = divII(out, a, b, minv)
	case ir.FnMod:
		bad = modII(out, a, b)
	case ir.FnBitAnd, ir.FnBitOr, ir.FnBitXor:
		bitII(fn, out, a, b)
	}
	return buf, bad
}

// bitII is the bitwise operator fn (&, |, #) over two integer columns; it
// cannot overflow.
func bitII[T integer](fn string, o, a, b []T) {
	b = b[:len(a)]
	o = o[:len(a)]
	switch fn {
	case ir.FnBitAnd:
		for i := range a {
			o[i] = a[i] & b[i]
		}
	case ir.FnBitOr:
		for i := range a {
			o[i] = a[i] | b[i]
		}
	default:
		for i := range a {
			o[i] = a[i] ^ b[i]
		}
	}
}

// bitIC is bitII with a constant right operand.
func bitIC[T integer](fn string, o, a []T, b T) {
	o = o[:len(a)]
	switch fn {
	case ir.FnBitAnd:
		for i := range a {
			o[i] = a[i] & b
		}
	case ir.FnBitOr:
		for i := range a {
			o[i] = a[i] | b
		}
	default:
		for i := range a {
			o[i] = a[i] ^ b
		}
	}
}

func addII[T integer](o, a, b []T) bool {
	var f T
	b = b[:len(a)]
	o = o[:len(a)]
	for i := range a {
		r := a[i] + b[i]
		f |= (a[i] ^ r) & (b[i] ^ r)
		o[i] = r
	}
	return f < 0
}

func addIC[T integer](o, a []T, b T) bool {
	var f T
	o = o[:len(a)]
	for i := range a {
		r := a[i] + b
		f |= (a[i] ^ r) & (b ^ r)
		o[i] = r
	}
	return f < 0
}

func subII[T integer](o, a, b []T) bool {
	var f T
	b = b[:len(a)]
	o = o[:len(a)]
	for i := range a {
		r := a[i] - b[i]
		f |= (a[i] ^ b[i]) & (a[i] ^ r)
		o[i] = r
	}
	return f < 0
}

func subIC[T integer](o, a []T, b T) bool {
	var f T
	o = o[:len(a)]
	for i := range a {
		r := a[i] - b
		f |= (a[i] ^ b) & (a[i] ^ r)
		o[i] = r
	}
	return f < 0
}

// mulII and mulIC detect overflow by widening: int16 and int32 products are
// exact in int64; int64 products use the 128-bit product.
func mulII[T integer](o, a, b []T) bool {
	b = b[:len(a)]
	o = o[:len(a)]
	var x T
	if isInt64(x) {
		var f uint64
		for i := range a {
			f |= mulHiCheck(int64(a[i]), int64(b[i]))
			o[i] = a[i] * b[i]
		}
		return f != 0
	}
	var f int64
	for i := range a {
		p := int64(a[i]) * int64(b[i])
		r := T(p)
		f |= p ^ int64(r)
		o[i] = r
	}
	return f != 0
}

func mulIC[T integer](o, a []T, b T) bool {
	o = o[:len(a)]
	if isInt64(b) {
		var f uint64
		for i := range a {
			f |= mulHiCheck(int64(a[i]), int64(b))
			o[i] = a[i] * b
		}
		return f != 0
	}
	var f int64
	for i := range a {
		p := int64(a[i]) * int64(b)
		r := T(p)
		f |= p ^ int64(r)
		o[i] = r
	}
	return f != 0
}

func isInt64[T integer](x T) bool { return unsafe.Sizeof(x) == 8 }

// mulHiCheck is non-zero when x*y overflows int64: the high half of the
// signed 128-bit product must be the sign extension of the low half.
func mulHiCheck(x, y int64) uint64 {
	hi, lo := bits.Mul64(uint64(x), uint64(y))
	hi -= uint64(x>>63) & uint64(y)
	hi -= uint64(y>>63) & uint64(x)
	return hi ^ uint64(int64(lo)>>63)
}

func divII[T integer](o, a, b []T, minv T) bool {
	bad := false
	b = b[:len(a)]
	o = o[:len(a)]
	for i := range a {
		switch d := b[i]; d {
		case 0:
			bad = true
			o[i] = 0
		case -1:
			bad = bad || a[i] == minv
			o[i] = -a[i]
		default:
			o[i] = a[i] / d
		}
	}
	return bad
}

func divIC[T integer](o, a []T, d T, minv T) bool {
	o = o[:len(a)]
	switch d {
	case 0:
		return true
	case -1:
		bad := false
		for i := range a {
			bad = bad || a[i] == minv
			o[i] = -a[i]
		}
		return bad
	}
	for i := range a {
		o[i] = a[i] / d
	}
	return false
}

func modII[T integer](o, a, b []T) bool {
	bad := false
	b = b[:len(a)]
	o = o[:len(a)]
	for i := range a {
		switch d := b[i]; d {
		case 0:
			bad = true
			o[i] = 0
		case -1:
			o[i] = 0
		default:
			o[i] = a[i] % d
		}
	}
	return bad
}

func modIC[T integer](o, a []T, d T) bool {
	o = o[:len(a)]
	switch d {
	case 0:
		return true
	case -1:
		clear(o)
		return false
	}
	for i := range a {
		o[i] = a[i] % d
	}
	return false
}

// floatArithVec: IEEE arithmetic; a row may have failed when its result is
// infinite (overflow), zero (underflow of * and /) or its divisor is zero.
func floatArithVec[T float](c *ectx, fn string, ac, bc arrow.Array, bk T) (*memory.Buffer, bool) {
	buf, out := allocFixed[T](c.mem, c.n)
	a := fixedVals[T](ac)
	out = out[:len(a)]
	bad := false
	if bc == nil {
		b := bk
		switch fn {
		case ir.FnAdd:
			for i := range a {
				r := a[i] + b
				bad = bad || r-r != 0
				out[i] = r
			}
		case ir.FnSub:
			for i := range a {
				r := a[i] - b
				bad = bad || r-r != 0
				out[i] = r
			}
		case ir.FnMul:
			for i := range a {
				r := a[i] * b
				bad = bad || r-r != 0 || r == 0
				out[i] = r
			}
		case ir.FnDiv:
			for i := range a {
				r := a[i] / b
				bad = bad || r-r != 0 || r == 0
				out[i] = r
			}
		}
		return buf, bad
	}
	b := fixedVals[T](bc)[:len(a)]
	switch fn {
	case ir.FnAdd:
		for i := range a {
			r := a[i] + b[i]
			bad = bad || r-r != 0
			out[i] = r
		}
	case ir.FnSub:
		for i := range a {
			r := a[i] - b[i]
			bad = bad || r-r != 0
			out[i] = r
		}
	case ir.FnMul:
		for i := range a {
			r := a[i] * b[i]
			bad = bad || r-r != 0 || r == 0
			out[i] = r
		}
	case ir.FnDiv:
		for i := range a {
			r := a[i] / b[i]
			bad = bad || r-r != 0 || r == 0
			out[i] = r
		}
	}
	return buf, bad
}

func numArithVec(c *ectx, fn string, ac, bc arrow.Array, bk decimal128.Num) (*memory.Buffer, bool) {
	buf, out := allocFixed[decimal128.Num](c.mem, c.n)
	a := fixedVals[decimal128.Num](ac)
	out = out[:len(a)]
	var b []decimal128.Num
	if bc != nil {
		b = fixedVals[decimal128.Num](bc)[:len(a)]
	}
	bad := false
	for i := range a {
		y := bk
		if b != nil {
			y = b[i]
		}
		var r decimal128.Num
		ok := true
		switch fn {
		case ir.FnAdd:
			r, ok = dynAdd(a[i], y)
		case ir.FnSub:
			r, ok = dynSub(a[i], y)
		case ir.FnMul:
			r, ok = dynMul(a[i], y)
		case ir.FnDiv:
			r, ok = dynDiv(a[i], y)
		case ir.FnMod:
			r, ok = dynMod(a[i], y)
		}
		bad = bad || !ok
		out[i] = r
	}
	return buf, bad
}

// negNode is unary minus on a number.
type negNode struct {
	t   types.T
	arg node
	ref scalarFn
}

func (n *negNode) typ() types.T { return n.t }

func (n *negNode) eval(c *ectx, rec arrow.RecordBatch) (arrow.Array, error) {
	a, err := n.arg.eval(c, rec)
	if err != nil {
		return nil, err
	}
	defer a.Release()
	valid := andValidity(c.mem, c.n, a)
	var vals *memory.Buffer
	bad := false
	switch n.t.Kind {
	case types.Int16:
		vals, bad = negInts[int16](c, a, math.MinInt16)
	case types.Int32:
		vals, bad = negInts[int32](c, a, math.MinInt32)
	case types.Int64:
		vals, bad = negInts[int64](c, a, math.MinInt64)
	case types.Float32:
		vals = negFloats[float32](c, a)
	case types.Float64:
		vals = negFloats[float64](c, a)
	case types.Numeric:
		var out []decimal128.Num
		vals, out = allocFixed[decimal128.Num](c.mem, c.n)
		for i, v := range fixedVals[decimal128.Num](a) {
			out[i] = dynNeg(v)
		}
	}
	if bad {
		if valid, err = checkUnary(c, n.t, n.ref, valid, a); err != nil {
			vals.Release()
			if valid != nil {
				valid.Release()
			}
			return nil, err
		}
	}
	return makeArray(n.t.ArrowType(), c.n, valid, vals), nil
}

func negInts[T integer](c *ectx, a arrow.Array, minv T) (*memory.Buffer, bool) {
	buf, out := allocFixed[T](c.mem, c.n)
	bad := false
	for i, v := range fixedVals[T](a) {
		bad = bad || v == minv
		out[i] = -v
	}
	return buf, bad
}

func negFloats[T float](c *ectx, a arrow.Array) *memory.Buffer {
	buf, out := allocFixed[T](c.mem, c.n)
	for i, v := range fixedVals[T](a) {
		out[i] = -v
	}
	return buf
}

// checkUnary is checkRows for a one-argument kernel.
func checkUnary(c *ectx, t types.T, ref scalarFn, valid *memory.Buffer, a arrow.Array) (*memory.Buffer, error) {
	ra := reader(t, a)
	var ds [1]types.Datum
	for i := 0; i < c.n; i++ {
		if valid != nil && !bitIsSet(valid.Bytes(), i) {
			continue
		}
		ds[0] = ra(i)
		if ds[0].Null {
			continue
		}
		if _, kerr := ref(&c.k, ds[:]); kerr != nil {
			if err := c.rowErr(i, kerr); err != nil {
				return valid, err
			}
			if valid == nil {
				valid = allocBits(c.mem, c.n, true)
			}
			clearBit(valid.Bytes(), i)
		}
	}
	return valid, nil
}

// tsIntervalNode is timestamp ± a constant interval without months, the
// common event-time computation (window ends, watermarks): a plain addition of
// microseconds with a range check.
type tsIntervalNode struct {
	t      types.T
	ts     node
	micros int64
	ref    scalarFn
	ivl    types.Datum
}

// compileTimeArith returns a fast node for date/time arithmetic, or nil.
func compileTimeArith(fn string, rt types.T, args []node, argTypes []types.T, ref scalarFn) node {
	if fn != ir.FnAdd && fn != ir.FnSub {
		return nil
	}
	if len(args) != 2 || (argTypes[0].Kind != types.Timestamp && argTypes[0].Kind != types.TimestampTZ) ||
		argTypes[1].Kind != types.Interval {
		return nil
	}
	k, ok := asConst(args[1])
	if !ok || k.d.Null || k.d.Ivl.Months != 0 {
		return nil
	}
	micros, ok1 := mul64(int64(k.d.Ivl.Days), microsPerDay)
	sum := micros + k.d.Ivl.Micros
	if !ok1 || (k.d.Ivl.Micros > 0 && sum < micros) || (k.d.Ivl.Micros < 0 && sum > micros) {
		return nil
	}
	if fn == ir.FnSub {
		if sum == math.MinInt64 {
			return nil
		}
		sum = -sum
	}
	return &tsIntervalNode{t: rt, ts: args[0], micros: sum, ref: ref, ivl: k.d}
}

func (n *tsIntervalNode) typ() types.T { return n.t }

func (n *tsIntervalNode) eval(c *ectx, rec arrow.RecordBatch) (arrow.Array, error) {
	a, err := n.ts.eval(c, rec)
	if err != nil {
		return nil, err
	}
	defer a.Release()
	valid := andValidity(c.mem, c.n, a)
	buf, out := allocFixed[int64](c.mem, c.n)
	d := n.micros
	bad := false
	for i, v := range fixedVals[int64](a) {
		r := v + d
		bad = bad || (v^r)&(d^r) < 0 || r < tsMinMicros || r >= tsEndMicros
		out[i] = r
	}
	if bad {
		ra := reader(n.t, a)
		ds := make([]types.Datum, 2)
		for i := 0; i < c.n; i++ {
			if valid != nil && !bitIsSet(valid.Bytes(), i) {
				continue
			}
			ds[0], ds[1] = ra(i), n.ivl
			if _, kerr := n.ref(&c.k, ds); kerr != nil {
				if err := c.rowErr(i, kerr); err != nil {
					buf.Release()
					if valid != nil {
						valid.Release()
					}
					return nil, err
				}
				if valid == nil {
					valid = allocBits(c.mem, c.n, true)
				}
				clearBit(valid.Bytes(), i)
			}
		}
	}
	return makeArray(n.t.ArrowType(), c.n, valid, buf), nil
}
