package eval

import (
	"math"
	"strings"
	"unsafe"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/streamsql/streamsql/sql"
	"github.com/streamsql/streamsql/sqlerr"
	"github.com/streamsql/streamsql/types"
)

// noBranch marks a row that takes no branch (its result is NULL).
const noBranch = math.MaxUint16

// branch is one source of values for gather: a column, or a constant when
// col is nil.
type branch struct {
	col arrow.Array
	d   types.Datum
}

// gather builds a column of type t whose row i is row i of
// branches[which[i]], or NULL when which[i] is noBranch.
func gather(c *ectx, t types.T, brs []branch, which []uint16) arrow.Array {
	switch t.Kind {
	case types.Bool:
		return gatherBool(c, brs, which)
	case types.Int16:
		return gatherFixed[int16](c, t, brs, which)
	case types.Int32, types.Date, types.Float32:
		return gatherFixed[int32](c, t, brs, which)
	case types.Int64, types.Timestamp, types.TimestampTZ, types.Float64:
		return gatherFixed[int64](c, t, brs, which)
	case types.Numeric, types.Interval:
		return gatherFixed[decimal128.Num](c, t, brs, which)
	case types.Text:
		return gatherText(c, brs, which)
	}
	return array.NewNull(c.n)
}

// branchValidity returns each branch's validity as an offset-0 bitmap (nil:
// all valid).
func branchValidity(c *ectx, brs []branch) [][]byte {
	vs := make([][]byte, len(brs))
	for k, b := range brs {
		if b.col != nil && hasNulls(b.col) {
			vs[k] = validBitsCopy(b.col, c.n)
		}
	}
	return vs
}

// fixedConst returns the value of d as stored in a column of type t, viewed
// as T (a type of the same width).
func fixedConst[T any](t types.T, d types.Datum) T {
	var out T
	p := unsafe.Pointer(&out)
	switch t.Kind {
	case types.Int16:
		*(*int16)(p) = int16(d.I)
	case types.Int32, types.Date:
		*(*int32)(p) = int32(d.I)
	case types.Int64, types.Timestamp, types.TimestampTZ:
		*(*int64)(p) = d.I
	case types.Float32:
		*(*float32)(p) = float32(d.F)
	case types.Float64:
		*(*float64)(p) = d.F
	case types.Numeric:
		*(*decimal128.Num)(p) = d.Dec
	case types.Interval:
		*(*arrow.MonthDayNanoInterval)(p) = d.Ivl.ToArrow()
	}
	return out
}

func gatherFixed[T any](c *ectx, t types.T, brs []branch, which []uint16) arrow.Array {
	buf, out := allocFixed[T](c.mem, c.n)
	valid := allocBits(c.mem, c.n, true)
	vb := valid.Bytes()
	srcs := make([][]T, len(brs))
	consts := make([]T, len(brs))
	constNull := make([]bool, len(brs))
	for k, b := range brs {
		switch {
		case b.col == nil:
			constNull[k] = b.d.Null
			if !b.d.Null {
				consts[k] = fixedConst[T](t, b.d)
			}
		case b.col.DataType().ID() == arrow.NULL:
			constNull[k] = true
		default:
			srcs[k] = fixedVals[T](b.col)
		}
	}
	bvalid := branchValidity(c, brs)
	var zero T
	for i := range out {
		w := which[i]
		switch {
		case w == noBranch:
			out[i] = zero
			clearBit(vb, i)
		case srcs[w] != nil:
			out[i] = srcs[w][i]
			if bv := bvalid[w]; bv != nil && !bitIsSet(bv, i) {
				clearBit(vb, i)
			}
		case constNull[w]:
			out[i] = zero
			clearBit(vb, i)
		default:
			out[i] = consts[w]
		}
	}
	return makeArray(t.ArrowType(), c.n, valid, buf)
}

func gatherBool(c *ectx, brs []branch, which []uint16) arrow.Array {
	vals := allocBits(c.mem, c.n, false)
	valid := allocBits(c.mem, c.n, true)
	out, vb := vals.Bytes(), valid.Bytes()
	bits := make([][]byte, len(brs))
	for k, b := range brs {
		if b.col != nil && b.col.DataType().ID() == arrow.BOOL {
			bits[k] = boolBitsCopy(b.col, c.n)
		}
	}
	bvalid := branchValidity(c, brs)
	for i := 0; i < c.n; i++ {
		w := which[i]
		switch {
		case w == noBranch:
			clearBit(vb, i)
		case brs[w].col == nil:
			if brs[w].d.Null {
				clearBit(vb, i)
			} else if brs[w].d.Bool() {
				out[i>>3] |= 1 << (i & 7)
			}
		case bits[w] == nil: // a NULL-typed column
			clearBit(vb, i)
		default:
			out[i>>3] |= bits[w][i>>3] & (1 << (i & 7))
			if bv := bvalid[w]; bv != nil && !bitIsSet(bv, i) {
				clearBit(vb, i)
			}
		}
	}
	return makeArray(arrow.FixedWidthTypes.Boolean, c.n, valid, vals)
}

func gatherText(c *ectx, brs []branch, which []uint16) arrow.Array {
	views := make([]strView, len(brs))
	isStr := make([]bool, len(brs))
	size := 0
	for k, b := range brs {
		if b.col != nil && b.col.DataType().ID() == arrow.STRING {
			views[k], isStr[k] = viewOf(b.col), true
			size += len(views[k].data)
		}
	}
	bvalid := branchValidity(c, brs)
	o := newStrOut(c.mem, c.n, size)
	for i := 0; i < c.n; i++ {
		w := which[i]
		switch {
		case w == noBranch:
			o.appendNull(c.mem)
		case brs[w].col == nil:
			if brs[w].d.Null {
				o.appendNull(c.mem)
			} else {
				o.appendString(brs[w].d.S)
			}
		case !isStr[w] || (bvalid[w] != nil && !bitIsSet(bvalid[w], i)):
			o.appendNull(c.mem)
		default:
			o.appendString(views[w].at(i))
		}
	}
	return o.finish()
}

// rowsOf returns the activity mask as a fresh bitmap (all rows when c.active
// is nil).
func rowsOf(c *ectx) []byte {
	m := make([]byte, (c.n+7)>>3)
	if c.active != nil {
		copy(m, c.active)
	} else {
		for i := range m {
			m[i] = 0xff
		}
		clearPadding(m, c.n)
	}
	return m
}

func anyBit(b []byte) bool {
	for _, x := range b {
		if x != 0 {
			return true
		}
	}
	return false
}

// evalBranch evaluates n as a gather branch, with rows active.
func evalBranch(c *ectx, rec arrow.RecordBatch, n node, rows []byte) (branch, error) {
	if k, ok := asConst(n); ok {
		return branch{d: k.d}, nil
	}
	var col arrow.Array
	err := c.withActive(rows, func() error {
		var err error
		col, err = n.eval(c, rec)
		return err
	})
	return branch{col: col}, err
}

func releaseBranches(brs []branch) {
	for _, b := range brs {
		if b.col != nil {
			b.col.Release()
		}
	}
}

// assign records branch k for the rows set in take.
func assign(which []uint16, take []byte, k int, n int) {
	for i := 0; i < n; i++ {
		if take[i>>3]&(1<<(i&7)) != 0 {
			which[i] = uint16(k)
		}
	}
}

// caseNode is a searched CASE. Each condition is evaluated only for the rows
// no earlier arm took, each result only for the rows that take it.
type caseNode struct {
	t     types.T
	conds []node
	thens []node
	els   node
}

func compileCase(e *sql.Case) (node, error) {
	if len(e.Whens) >= noBranch {
		return nil, sqlerr.Unsupported("CASE with %d arms", len(e.Whens))
	}
	n := &caseNode{t: e.T}
	for _, w := range e.Whens {
		cond, err := compile(w.Cond)
		if err != nil {
			return nil, err
		}
		then, err := compile(w.Then)
		if err != nil {
			return nil, err
		}
		if k, ok := asConst(cond); ok {
			if k.d.Null || !k.d.Bool() {
				continue // never taken
			}
			// Always taken: it is the ELSE of the arms before it.
			n.els = then
			break
		}
		n.conds = append(n.conds, cond)
		n.thens = append(n.thens, then)
	}
	if n.els == nil {
		els, err := compile(e.Else)
		if err != nil {
			return nil, err
		}
		n.els = els
	}
	if len(n.conds) == 0 {
		return n.els, nil
	}
	return n, nil
}

func (n *caseNode) typ() types.T { return n.t }

func (n *caseNode) eval(c *ectx, rec arrow.RecordBatch) (arrow.Array, error) {
	nb := (c.n + 7) >> 3
	remaining := rowsOf(c)
	which := make([]uint16, c.n)
	for i := range which {
		which[i] = noBranch
	}
	var brs []branch
	defer func() { releaseBranches(brs) }()
	for k, cond := range n.conds {
		if !anyBit(remaining) {
			break
		}
		cb, err := evalBranch(c, rec, cond, remaining)
		if err != nil {
			return nil, err
		}
		take := make([]byte, nb)
		vbits, valid := boolBitsCopy(cb.col, c.n), validBitsCopy(cb.col, c.n)
		cb.col.Release()
		for i := range take {
			take[i] = remaining[i] & valid[i] & vbits[i]
			remaining[i] &^= take[i]
		}
		if !anyBit(take) {
			continue
		}
		br, err := evalBranch(c, rec, n.thens[k], take)
		if err != nil {
			return nil, err
		}
		brs = append(brs, br)
		assign(which, take, len(brs)-1, c.n)
	}
	if anyBit(remaining) {
		br, err := evalBranch(c, rec, n.els, remaining)
		if err != nil {
			return nil, err
		}
		brs = append(brs, br)
		assign(which, remaining, len(brs)-1, c.n)
	}
	return gather(c, n.t, brs, which), nil
}

// coalesceNode returns its first non-NULL argument; each argument is
// evaluated only for the rows still NULL.
type coalesceNode struct {
	t    types.T
	args []node
}

func (n *coalesceNode) typ() types.T { return n.t }

func (n *coalesceNode) eval(c *ectx, rec arrow.RecordBatch) (arrow.Array, error) {
	remaining := rowsOf(c)
	which := make([]uint16, c.n)
	for i := range which {
		which[i] = noBranch
	}
	var brs []branch
	defer func() { releaseBranches(brs) }()
	for _, a := range n.args {
		if !anyBit(remaining) {
			break
		}
		br, err := evalBranch(c, rec, a, remaining)
		if err != nil {
			return nil, err
		}
		brs = append(brs, br)
		var take []byte
		if br.col == nil {
			if br.d.Null {
				continue
			}
			take = remaining
		} else {
			take = validBitsCopy(br.col, c.n)
			for i := range take {
				take[i] &= remaining[i]
			}
		}
		assign(which, take, len(brs)-1, c.n)
		if br.col == nil {
			break // a constant ends the search
		}
		for i := range remaining {
			remaining[i] &^= take[i]
		}
	}
	return gather(c, n.t, brs, which), nil
}

// likeNode is LIKE/ILIKE with a constant pattern compiled once.
type likeNode struct {
	arg node
	m   *likeMatcher
}

func (n *likeNode) typ() types.T { return types.BoolT }

func (n *likeNode) eval(c *ectx, rec arrow.RecordBatch) (arrow.Array, error) {
	col, err := n.arg.eval(c, rec)
	if err != nil {
		return nil, err
	}
	defer col.Release()
	vals := allocBits(c.mem, c.n, false)
	out := vals.Bytes()
	v := viewOf(col)
	m := n.m
	switch {
	case m.simple && !m.fold && !m.anyOnly && len(m.segs) == 3 && m.segs[0] == "" && m.segs[2] == "":
		// '%foo%'
		needle := m.segs[1]
		for i := 0; i < c.n; i++ {
			out[i>>3] |= b2u(strings.Contains(v.at(i), needle)) << (i & 7)
		}
	default:
		for i := 0; i < c.n; i++ {
			out[i>>3] |= b2u(m.match(v.at(i))) << (i & 7)
		}
	}
	return makeArray(arrow.FixedWidthTypes.Boolean, c.n, andValidity(c.mem, c.n, col), vals), nil
}
