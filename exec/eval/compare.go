package eval

import (
	"cmp"
	"unsafe"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/streamsql/streamsql/ir"
	"github.com/streamsql/streamsql/types"
)

// cmpOp is a comparison computed by the vector loops: eq, lt or gt. The
// others are their negations (ne = !eq, ge = !lt, le = !gt), valid because
// every type is totally ordered here (NaN equals NaN and sorts last).
type cmpOp uint8

const (
	opEq cmpOp = iota
	opLt
	opGt
)

// holds reports whether a three-way comparison result c satisfies op.
func (op cmpOp) holds(c int) bool {
	switch op {
	case opEq:
		return c == 0
	case opLt:
		return c < 0
	}
	return c > 0
}

// cmpNode is a comparison of two values of one type, vectorized.
type cmpNode struct {
	t      types.T // argument type
	a, b   node
	op     cmpOp
	negate bool
}

// newCmpNode returns the vectorized comparison, or nil when the arguments are
// numerics of different scales (left to the row-at-a-time kernel).
func newCmpNode(fn string, ta, tb types.T, a, b node, _ scalarFn) node {
	if ta.Kind == types.Numeric && (ta.HasTypmod != tb.HasTypmod || ta.EffectiveScale() != tb.EffectiveScale()) {
		return nil
	}
	if ta.Kind == types.Unknown || tb.Kind == types.Unknown {
		return nil
	}
	n := &cmpNode{t: ta, a: a, b: b}
	switch fn {
	case ir.FnEq:
		n.op = opEq
	case ir.FnNe:
		n.op, n.negate = opEq, true
	case ir.FnLt:
		n.op = opLt
	case ir.FnGe:
		n.op, n.negate = opLt, true
	case ir.FnGt:
		n.op = opGt
	case ir.FnLe:
		n.op, n.negate = opGt, true
	}
	_, aConst := asConst(a)
	_, bConst := asConst(b)
	if aConst && !bConst {
		// c < x  <=>  x > c
		n.a, n.b = b, a
		switch n.op {
		case opLt:
			n.op = opGt
		case opGt:
			n.op = opLt
		}
	}
	return n
}

func (n *cmpNode) typ() types.T { return types.BoolT }

func (n *cmpNode) eval(c *ectx, rec arrow.RecordBatch) (arrow.Array, error) {
	vals, valid, err := n.compute(c, rec)
	if err != nil {
		return nil, err
	}
	return makeArray(arrow.FixedWidthTypes.Boolean, c.n, valid, vals), nil
}

// compute returns the comparison's values bitmap (meaningless where invalid)
// and validity (nil: all valid).
func (n *cmpNode) compute(c *ectx, rec arrow.RecordBatch) (vals, valid *memory.Buffer, err error) {
	cols, err := evalArgs(c, rec, []node{n.a, n.b})
	if err != nil {
		return nil, nil, err
	}
	defer releaseAll(cols)
	ac, bc := cols[0], cols[1]
	if ac == nil {
		k, _ := asConst(n.a)
		ac = ConstArray(c.mem, n.t, k.d, c.n)
		cols[0] = ac
	}
	var bk types.Datum
	if bc == nil {
		k, _ := asConst(n.b)
		bk = k.d
		if bk.Null {
			return allocBits(c.mem, c.n, false), allocBits(c.mem, c.n, false), nil
		}
	}
	vals = allocBits(c.mem, c.n, false)
	out := vals.Bytes()
	switch n.t.Kind {
	case types.Bool:
		cmpBools(n.op, out, ac, bc, bk.Bool(), c.n)
	case types.Int16:
		cmpOrdered(n.op, out, fixedVals[int16](ac), colOrNil[int16](bc), int16(bk.I))
	case types.Int32, types.Date:
		cmpOrdered(n.op, out, fixedVals[int32](ac), colOrNil[int32](bc), int32(bk.I))
	case types.Int64, types.Timestamp, types.TimestampTZ:
		cmpOrdered(n.op, out, fixedVals[int64](ac), colOrNil[int64](bc), bk.I)
	case types.Float32:
		cmpFloats(n.op, out, fixedVals[float32](ac), colOrNil[float32](bc), float32(bk.F))
	case types.Float64:
		cmpFloats(n.op, out, fixedVals[float64](ac), colOrNil[float64](bc), bk.F)
	case types.Text, types.Bytea, types.UUID:
		cmpStrings(n.op, out, ac, bc, bk.S, c.n)
	case types.Numeric:
		if n.t.DynamicNumeric() {
			cmpDynDecimals(n.op, out, fixedVals[decimal128.Num](ac), colOrNil[decimal128.Num](bc), bk.Dec)
			break
		}
		cmpDecimals(n.op, out, fixedVals[decimal128.Num](ac), colOrNil[decimal128.Num](bc), bk.Dec)
	case types.Interval:
		cmpIntervals(n.op, out, fixedVals[arrow.MonthDayNanoInterval](ac), colOrNil[arrow.MonthDayNanoInterval](bc), bk.Ivl.ToArrow())
	}
	if n.negate {
		for i := range out {
			out[i] = ^out[i]
		}
		clearPadding(out, c.n)
	}
	return vals, andValidity(c.mem, c.n, ac, bc), nil
}

func colOrNil[T any](arr arrow.Array) []T {
	if arr == nil {
		return nil
	}
	return fixedVals[T](arr)
}

func b2u(b bool) byte { return *(*byte)(unsafe.Pointer(&b)) }

// cmpOrdered compares a with b (or, when b is nil, with the constant k) into
// the bitmap out.
func cmpOrdered[T cmp.Ordered](op cmpOp, out []byte, a, b []T, k T) {
	if b == nil {
		switch op {
		case opEq:
			for i := range a {
				out[i>>3] |= b2u(a[i] == k) << (i & 7)
			}
		case opLt:
			for i := range a {
				out[i>>3] |= b2u(a[i] < k) << (i & 7)
			}
		case opGt:
			for i := range a {
				out[i>>3] |= b2u(a[i] > k) << (i & 7)
			}
		}
		return
	}
	b = b[:len(a)]
	switch op {
	case opEq:
		for i := range a {
			out[i>>3] |= b2u(a[i] == b[i]) << (i & 7)
		}
	case opLt:
		for i := range a {
			out[i>>3] |= b2u(a[i] < b[i]) << (i & 7)
		}
	case opGt:
		for i := range a {
			out[i>>3] |= b2u(a[i] > b[i]) << (i & 7)
		}
	}
}

// cmpFloats is cmpOrdered with PostgreSQL's float order: NaN equals NaN and
// is greater than everything else.
func cmpFloats[T float](op cmpOp, out []byte, a, b []T, k T) {
	if b == nil {
		kNaN := k != k
		switch op {
		case opEq:
			for i := range a {
				x := a[i]
				out[i>>3] |= b2u(x == k || (x != x && kNaN)) << (i & 7)
			}
		case opLt:
			for i := range a {
				x := a[i]
				out[i>>3] |= b2u(x < k || (kNaN && x == x)) << (i & 7)
			}
		case opGt:
			for i := range a {
				x := a[i]
				out[i>>3] |= b2u(x > k || (x != x && !kNaN)) << (i & 7)
			}
		}
		return
	}
	b = b[:len(a)]
	switch op {
	case opEq:
		for i := range a {
			x, y := a[i], b[i]
			out[i>>3] |= b2u(x == y || (x != x && y != y)) << (i & 7)
		}
	case opLt:
		for i := range a {
			x, y := a[i], b[i]
			out[i>>3] |= b2u(x < y || (y != y && x == x)) << (i & 7)
		}
	case opGt:
		for i := range a {
			x, y := a[i], b[i]
			out[i>>3] |= b2u(x > y || (x != x && y == y)) << (i & 7)
		}
	}
}

func cmpStrings(op cmpOp, out []byte, ac, bc arrow.Array, k string, n int) {
	a := viewOf(ac)
	if bc == nil {
		switch op {
		case opEq:
			for i := 0; i < n; i++ {
				out[i>>3] |= b2u(a.at(i) == k) << (i & 7)
			}
		case opLt:
			for i := 0; i < n; i++ {
				out[i>>3] |= b2u(a.at(i) < k) << (i & 7)
			}
		case opGt:
			for i := 0; i < n; i++ {
				out[i>>3] |= b2u(a.at(i) > k) << (i & 7)
			}
		}
		return
	}
	b := viewOf(bc)
	switch op {
	case opEq:
		for i := 0; i < n; i++ {
			out[i>>3] |= b2u(a.at(i) == b.at(i)) << (i & 7)
		}
	case opLt:
		for i := 0; i < n; i++ {
			out[i>>3] |= b2u(a.at(i) < b.at(i)) << (i & 7)
		}
	case opGt:
		for i := 0; i < n; i++ {
			out[i>>3] |= b2u(a.at(i) > b.at(i)) << (i & 7)
		}
	}
}

// cmpBools compares boolean bitmaps a byte at a time.
func cmpBools(op cmpOp, out []byte, ac, bc arrow.Array, k bool, n int) {
	abits, aoff := boolBits(ac)
	for i := 0; i < (n+7)>>3; i++ {
		x := loadByte(abits, aoff+i*8)
		var y byte
		if bc == nil {
			if k {
				y = 0xff
			}
		} else {
			bbits, boff := boolBits(bc)
			y = loadByte(bbits, boff+i*8)
		}
		switch op {
		case opEq:
			out[i] = ^(x ^ y)
		case opLt:
			out[i] = ^x & y
		case opGt:
			out[i] = x &^ y
		}
	}
	clearPadding(out, n)
}

// i128 views a decimal128.Num (little-endian low word first) for ordering.
type i128 struct {
	lo uint64
	hi int64
}

func cmp128(x, y i128) int {
	switch {
	case x.hi < y.hi:
		return -1
	case x.hi > y.hi:
		return 1
	case x.lo < y.lo:
		return -1
	case x.lo > y.lo:
		return 1
	}
	return 0
}

func cmpDecimals(op cmpOp, out []byte, a, b []decimal128.Num, k decimal128.Num) {
	av := unsafe.Slice((*i128)(unsafe.Pointer(unsafe.SliceData(a))), len(a))
	var bv []i128
	if b != nil {
		bv = unsafe.Slice((*i128)(unsafe.Pointer(unsafe.SliceData(b))), len(b))
	}
	kv := i128{lo: k.LowBits(), hi: k.HighBits()}
	for i := range av {
		y := kv
		if bv != nil {
			y = bv[i]
		}
		c := cmp128(av[i], y)
		out[i>>3] |= b2u(op.holds(c)) << (i & 7)
	}
}

// cmpDynDecimals compares unconstrained numerics by value (their slots
// carry display scales).
func cmpDynDecimals(op cmpOp, out []byte, a, b []decimal128.Num, k decimal128.Num) {
	for i := range a {
		y := k
		if b != nil {
			y = b[i]
		}
		c := dynCompare(a[i], y)
		out[i>>3] |= b2u(op.holds(c)) << (i & 7)
	}
}

// intervalSpan is an interval's length in microseconds with a month as 30
// days, as a 128-bit number (PostgreSQL's interval comparison key).
func intervalSpan(v arrow.MonthDayNanoInterval) i128 {
	days := int64(v.Months)*30 + int64(v.Days)
	r := decimal128.FromI64(days).Mul(decimal128.FromI64(microsPerDay)).Add(decimal128.FromI64(v.Nanoseconds / 1000))
	return i128{lo: r.LowBits(), hi: r.HighBits()}
}

func cmpIntervals(op cmpOp, out []byte, a, b []arrow.MonthDayNanoInterval, k arrow.MonthDayNanoInterval) {
	ks := intervalSpan(k)
	for i := range a {
		y := ks
		if b != nil {
			y = intervalSpan(b[i])
		}
		c := cmp128(intervalSpan(a[i]), y)
		out[i>>3] |= b2u(op.holds(c)) << (i & 7)
	}
}

// distinctNode is IS [NOT] DISTINCT FROM: equality where NULL equals NULL,
// never NULL itself.
type distinctNode struct {
	eq       *cmpNode
	distinct bool
}

func (n *distinctNode) typ() types.T { return types.BoolT }

func (n *distinctNode) eval(c *ectx, rec arrow.RecordBatch) (arrow.Array, error) {
	// Validity of each side is needed separately: evaluate them here.
	cols, err := evalArgs(c, rec, []node{n.eq.a, n.eq.b})
	if err != nil {
		return nil, err
	}
	defer releaseAll(cols)
	va := constOrColValid(c, n.eq.a, cols[0])
	vb := constOrColValid(c, n.eq.b, cols[1])
	sub := &cmpNode{t: n.eq.t, a: colNode(n.eq.a, cols[0]), b: colNode(n.eq.b, cols[1]), op: opEq}
	vals, valid, err := sub.compute(c, rec)
	if err != nil {
		return nil, err
	}
	if valid != nil {
		valid.Release()
	}
	out := vals.Bytes()
	for i := range out {
		// same = (both valid and equal) or both NULL
		same := (va[i] & vb[i] & out[i]) | (^va[i] & ^vb[i])
		if n.distinct {
			same = ^same
		}
		out[i] = same
	}
	clearPadding(out, c.n)
	return makeArray(arrow.FixedWidthTypes.Boolean, c.n, nil, vals), nil
}

// colNode wraps an already evaluated column (or keeps a constant) so that a
// node can be re-run without evaluating its children again.
func colNode(orig node, col arrow.Array) node {
	if col == nil {
		return orig
	}
	return &evaluatedNode{t: orig.typ(), col: col}
}

type evaluatedNode struct {
	t   types.T
	col arrow.Array
}

func (n *evaluatedNode) typ() types.T { return n.t }
func (n *evaluatedNode) eval(*ectx, arrow.RecordBatch) (arrow.Array, error) {
	n.col.Retain()
	return n.col, nil
}

// constOrColValid returns the validity of a column or constant as an offset-0
// bitmap.
func constOrColValid(c *ectx, orig node, col arrow.Array) []byte {
	if col == nil {
		k, _ := asConst(orig)
		b := make([]byte, (c.n+7)>>3)
		if !k.d.Null {
			for i := range b {
				b[i] = 0xff
			}
		}
		return b
	}
	return validBitsCopy(col, c.n)
}
