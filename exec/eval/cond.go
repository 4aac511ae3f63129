package eval

import (
	"math"
	"math/bits"
	"slices"
	"strings"
	"unsafe"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/streamsql/streamsql/ir"
	"github.com/streamsql/streamsql/sqlerr"
	"github.com/streamsql/streamsql/types"
)

// branch is one source of values for gather: a column, or a constant when
// col is nil, that supplies the rows set in rows (n bits, offset 0). The
// rows of different branches are disjoint.
type branch struct {
	col  arrow.Array
	d    types.Datum
	rows []byte
}

// gather builds a column of type t whose row i comes from the branch whose
// rows contain i, or is NULL when no branch does.
func gather(c *ectx, t types.T, brs []branch) arrow.Array {
	switch t.Kind {
	case types.Bool:
		return gatherBool(c, brs)
	case types.Int16:
		return gatherFixed[int16](c, t, brs)
	case types.Int32, types.Date, types.Float32:
		return gatherFixed[int32](c, t, brs)
	case types.Int64, types.Timestamp, types.TimestampTZ, types.Float64:
		return gatherFixed[int64](c, t, brs)
	case types.Numeric, types.Interval:
		return gatherFixed[decimal128.Num](c, t, brs)
	case types.Text, types.Bytea, types.UUID, types.JSONB:
		return gatherText(c, t, brs)
	case types.Array, types.Struct, types.Map:
		return gatherNested(c, t, brs)
	}
	return array.NewNull(c.n)
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

// isNullBranch reports whether b supplies only NULLs.
func isNullBranch(b branch) bool {
	if b.col == nil {
		return b.d.Null
	}
	return b.col.DataType().ID() == arrow.NULL
}

// gatherValidity ors into vb the rows of each branch where its value is
// valid, a byte at a time.
func gatherValidity(c *ectx, vb []byte, brs []branch) {
	for _, b := range brs {
		if isNullBranch(b) {
			continue
		}
		if b.col == nil || !hasNulls(b.col) {
			for i, m := range b.rows {
				vb[i] |= m
			}
			continue
		}
		v := validBitsCopy(b.col, c.n)
		for i, m := range b.rows {
			vb[i] |= m & v[i]
		}
	}
}

func gatherFixed[T any](c *ectx, t types.T, brs []branch) arrow.Array {
	buf, out := allocFixed[T](c.mem, c.n)
	clear(out)
	valid := allocBits(c.mem, c.n, false)
	gatherValidity(c, valid.Bytes(), brs)
	for _, b := range brs {
		if isNullBranch(b) {
			continue
		}
		if b.col == nil {
			v := fixedConst[T](t, b.d)
			for bi, m := range b.rows {
				for ; m != 0; m &= m - 1 {
					out[bi<<3+bits.TrailingZeros8(m)] = v
				}
			}
			continue
		}
		src := fixedVals[T](b.col)
		for bi, m := range b.rows {
			if m == 0xff {
				copy(out[bi<<3:bi<<3+8], src[bi<<3:])
				continue
			}
			for ; m != 0; m &= m - 1 {
				i := bi<<3 + bits.TrailingZeros8(m)
				out[i] = src[i]
			}
		}
	}
	return makeArray(t.ArrowType(), c.n, valid, buf)
}

func gatherBool(c *ectx, brs []branch) arrow.Array {
	vals := allocBits(c.mem, c.n, false)
	valid := allocBits(c.mem, c.n, false)
	out := vals.Bytes()
	gatherValidity(c, valid.Bytes(), brs)
	for _, b := range brs {
		if isNullBranch(b) {
			continue
		}
		if b.col == nil {
			if b.d.Bool() {
				for i, m := range b.rows {
					out[i] |= m
				}
			}
			continue
		}
		v := boolBitsCopy(b.col, c.n)
		for i, m := range b.rows {
			out[i] |= m & v[i]
		}
	}
	return makeArray(arrow.FixedWidthTypes.Boolean, c.n, valid, vals)
}

func gatherText(c *ectx, t types.T, brs []branch) arrow.Array {
	const none = -1
	which := make([]int16, c.n)
	for i := range which {
		which[i] = none
	}
	views := make([]strView, len(brs))
	size := 0
	for k, b := range brs {
		if b.col != nil && isVarBytes(b.col) {
			views[k] = viewOf(b.col)
			size += len(views[k].data)
		}
		for bi, m := range b.rows {
			for ; m != 0; m &= m - 1 {
				which[bi<<3+bits.TrailingZeros8(m)] = int16(k)
			}
		}
	}
	valid := allocBits(c.mem, c.n, false)
	vb := valid.Bytes()
	gatherValidity(c, vb, brs)
	o := newVarOut(c.mem, t, c.n, size)
	o.valid = valid
	for i := 0; i < c.n; i++ {
		w := which[i]
		switch {
		case w == none || !bitIsSet(vb, i):
			o.appendString("")
		case brs[w].col == nil:
			o.appendString(brs[w].d.S)
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
		return branch{d: k.d, rows: rows}, nil
	}
	var col arrow.Array
	err := c.withActive(rows, func() error {
		var err error
		col, err = n.eval(c, rec)
		return err
	})
	return branch{col: col, rows: rows}, err
}

func releaseBranches(brs []branch) {
	for _, b := range brs {
		if b.col != nil {
			b.col.Release()
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

func compileCase(e *ir.Case) (node, error) {
	if len(e.Whens) >= math.MaxInt16 {
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
	}
	if anyBit(remaining) {
		br, err := evalBranch(c, rec, n.els, remaining)
		if err != nil {
			return nil, err
		}
		brs = append(brs, br)
	}
	return gather(c, n.t, brs), nil
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
	var brs []branch
	defer func() { releaseBranches(brs) }()
	for _, a := range n.args {
		if !anyBit(remaining) {
			break
		}
		br, err := evalBranch(c, rec, a, slices.Clone(remaining))
		if err != nil {
			return nil, err
		}
		if br.col == nil {
			if br.d.Null {
				continue
			}
			brs = append(brs, br) // a constant takes every remaining row
			break
		}
		// The column supplies the rows where it is not NULL.
		if hasNulls(br.col) {
			v := validBitsCopy(br.col, c.n)
			for i := range br.rows {
				br.rows[i] &= v[i]
			}
		}
		brs = append(brs, br)
		for i := range remaining {
			remaining[i] &^= br.rows[i]
		}
	}
	return gather(c, n.t, brs), nil
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
