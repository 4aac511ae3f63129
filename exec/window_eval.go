package exec

import (
	"bytes"
	"encoding/binary"
	"math"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/streamsql/streamsql/exec/eval"
	"github.com/streamsql/streamsql/ir"
	"github.com/streamsql/streamsql/planner"
	"github.com/streamsql/streamsql/sqlerr"
	"github.com/streamsql/streamsql/state"
	"github.com/streamsql/streamsql/types"
)

// The window evaluator computes the window function calls of the rows of one
// partition, in window order, the way PostgreSQL's WindowAgg does: per call,
// the frame's start and end move forward monotonically as the current row
// advances, and an aggregate adds the rows entering the frame and removes
// those leaving it (or restarts, when it has no inverse or the frame has an
// exclusion). It reads rows through a winSource, which loads them on
// demand, so the batch operator (a whole sorted partition in memory) and the
// streaming operator (a stretch of a partition read from its state table)
// share it.

// winSource is the evaluator's view of a partition's rows in window order:
// row 0 is the first row available, which is the partition's first row
// unless the evaluator was told otherwise.
type winSource interface {
	// load reports whether row i exists, reading rows up to i if needed.
	// Rows are loaded in order; once it returns false, the partition ends
	// before i.
	load(i int) bool
	// orderKey returns the encoded ORDER BY key of loaded row i; peers
	// have equal keys.
	orderKey(i int) []byte
	// datum returns input column c of loaded row i.
	datum(c, i int) types.Datum
}

// callKind sorts window calls by how they are computed.
type callKind uint8

const (
	kindRanking callKind = iota // row_number ... ntile
	kindLagLead
	kindFrame // aggregates, first_value, last_value, nth_value
)

// winSpec is a planner.Window compiled for the evaluator: constant
// arguments and frame offsets evaluated and checked.
type winSpec struct {
	inTypes   []types.T
	partCols  []int
	partTypes []types.T
	order     []planner.WindowOrder
	calls     []*winCall
	outTypes  []types.T
	// ranking is set if a call is row_number, rank or dense_rank, whose
	// streaming state carries each row's position and peer group number.
	ranking bool
	// whole is set if a call needs the partition's size (percent_rank,
	// cume_dist, ntile): every change recomputes the whole partition.
	whole bool
	// deferred is an error PostgreSQL reports only once a row is computed
	// (a negative RANGE offset); batch queries return it at the first row.
	deferred error
}

// winCall is one compiled call.
type winCall struct {
	planner.WindowCall
	kind callKind
	// param is the value of Param (lag's offset is negated: the distance to
	// the row read); paramNull is set when it is NULL.
	param     int64
	paramNull bool
	// sep is string_agg's separator (its Param).
	sep string
	// startOff and endOff are ROWS and GROUPS offsets; startRange and
	// endRange the RANGE bounds with offsets.
	startOff, endOff     int64
	startRange, endRange *rangeBound
	// running is set for a frame call whose frame starts at UNBOUNDED
	// PRECEDING without exclusion and ends before UNBOUNDED FOLLOWING: its
	// frames only grow, it is computed with an accumulator that only adds
	// rows, and the accumulator's state after a row resumes the computation
	// at the next one.
	running bool
	// direct is set for first_value, last_value and nth_value over other
	// frames: they read the frame's rows instead of accumulating them.
	direct bool
	// orderCol is the ORDER BY column RANGE offsets compare.
	orderCol int
}

// compileWindow compiles n, evaluating constants with ectx.
func compileWindow(ectx *eval.Context, n *planner.Window) (*winSpec, error) {
	s := &winSpec{
		inTypes:   planner.Types(n.Input.Columns()),
		partCols:  n.PartitionCols,
		partTypes: n.PartitionTypes,
		order:     n.Order,
	}
	for _, pc := range n.Calls {
		c := &winCall{WindowCall: pc, kind: kindFrame, orderCol: -1}
		s.outTypes = append(s.outTypes, pc.T)
		if len(n.Order) > 0 {
			c.orderCol = n.Order[0].Col
		}
		if pc.Param != nil {
			d, err := eval.EvalDatum(ectx, pc.Param)
			if err != nil {
				return nil, err
			}
			c.param, c.paramNull, c.sep = d.I, d.Null, d.S
		}
		switch {
		case ir.IsRanking(pc.Func):
			c.kind = kindRanking
			switch pc.Func {
			case ir.WinRowNumber, ir.WinRank, ir.WinDenseRank:
				s.ranking = true
			default:
				s.whole = true
			}
		case pc.Func == ir.WinLag || pc.Func == ir.WinLead:
			c.kind = kindLagLead
			if pc.Func == ir.WinLag {
				c.param = -c.param
			}
		default:
			if err := s.compileFrame(ectx, c); err != nil {
				return nil, err
			}
		}
		s.calls = append(s.calls, c)
	}
	return s, nil
}

// compileFrame evaluates a frame call's offsets and picks how it is
// computed.
func (s *winSpec) compileFrame(ectx *eval.Context, c *winCall) error {
	f := c.Frame
	for _, bound := range []struct {
		b     ir.FrameBound
		head  bool
		which string
	}{{f.Start, true, "starting"}, {f.End, false, "ending"}} {
		if bound.b.Kind != ir.BoundPreceding && bound.b.Kind != ir.BoundFollowing {
			continue
		}
		d, err := eval.EvalDatum(ectx, bound.b.Offset)
		if err != nil {
			return err
		}
		if d.Null {
			return sqlerr.New(nullValueNotAllowed, "frame %s offset must not be null", bound.which)
		}
		if f.Mode == ir.FrameRange {
			r, err := newRangeBound(s.inTypes[c.orderCol], ir.WindowKey{Desc: s.order[0].Desc, NullsFirst: s.order[0].NullsFirst}, bound.b, d, bound.head)
			if err != nil {
				s.deferred = err
				continue
			}
			if bound.head {
				c.startRange = r
			} else {
				c.endRange = r
			}
			continue
		}
		if d.I < 0 {
			return sqlerr.New(invalidPrecedingFollowing, "frame %s offset must not be negative", bound.which)
		}
		if bound.head {
			c.startOff = d.I
		} else {
			c.endOff = d.I
		}
	}
	c.running = f.Start.Kind == ir.BoundUnboundedPreceding && f.Exclude == ir.ExcludeNoOthers &&
		f.End.Kind != ir.BoundUnboundedFollowing
	switch c.Func {
	case ir.WinFirstValue, ir.WinLastValue, ir.WinNthValue:
		c.direct = !c.running
	}
	return nil
}

// winCallState is the evaluator's state of one call in a partition.
type winCallState struct {
	// head and tail are the frame of the last row computed: rows [head,
	// tail). RANGE bounds scan forward from them.
	head, tail int
	// acc holds the rows [accHead, accTail) when accValid.
	acc              frameAcc
	accHead, accTail int
	accValid         bool
}

// winEval computes window calls over the rows of one partition at a time.
// Rows are computed in order; a partition is started with reset.
type winEval struct {
	spec *winSpec
	ectx *eval.Context
	src  winSource
	// n rows are loaded; end is set once the partition's end is known.
	n   int
	end bool
	// startKnown is set when row 0 is the partition's first row.
	startKnown bool
	// grp is the peer group of each loaded row, counted from row 0's;
	// grpStart the first row of each group.
	grp      []int32
	grpStart []int32
	// posBase and grpBase are the position in the partition of row 0 and
	// the number of its group (0 when row 0 is the partition's first row).
	posBase, grpBase int64
	cs               []winCallState
	outs             []types.Datum
	// depHead is, after row, the row before the first row the bounded
	// calls' results of that row depend on (frame starts, peers, lag, and
	// where running frames ending n PRECEDING will grow from), or -1 if
	// they depend on where the partition starts (a frame or lag clipped by
	// it). A change at or before it cannot have moved those bounds: a
	// deleted row right before a frame's start may have been a peer of it.
	// Running and ranking calls are otherwise followed through their
	// carried state.
	depHead int
}

// newWinEval returns an evaluator of spec's calls; a call that fails (a
// sum's overflow, ntile(0)) fails as ectx's row-error policy says.
func newWinEval(spec *winSpec, ectx *eval.Context) (*winEval, error) {
	e := &winEval{spec: spec, ectx: ectx, cs: make([]winCallState, len(spec.calls)), outs: make([]types.Datum, len(spec.calls))}
	for k, c := range spec.calls {
		if c.kind != kindFrame || c.direct {
			continue
		}
		acc, err := newFrameAcc(c.Func, c.ArgType, c.T, c.IgnoreNulls, c.param, c.sep)
		if err != nil {
			return nil, err
		}
		e.cs[k].acc = acc
	}
	return e, nil
}

// reset starts a partition read through src; startKnown says whether its row
// 0 is the partition's first row.
func (e *winEval) reset(src winSource, startKnown bool) {
	e.src, e.n, e.end, e.startKnown = src, 0, false, startKnown
	e.grp, e.grpStart = e.grp[:0], e.grpStart[:0]
	e.posBase, e.grpBase = 0, 0
	for k := range e.cs {
		cs := &e.cs[k]
		cs.head, cs.tail, cs.accHead, cs.accTail, cs.accValid = 0, 0, 0, 0, false
	}
}

// ensure reports whether row i exists, loading rows up to it.
func (e *winEval) ensure(i int) bool {
	for e.n <= i {
		if e.end || !e.src.load(e.n) {
			e.end = true
			return false
		}
		switch {
		case e.n == 0:
			e.grp = append(e.grp, 0)
			e.grpStart = append(e.grpStart, 0)
		case bytes.Equal(e.src.orderKey(e.n), e.src.orderKey(e.n-1)):
			e.grp = append(e.grp, e.grp[e.n-1])
		default:
			e.grp = append(e.grp, e.grp[e.n-1]+1)
			e.grpStart = append(e.grpStart, int32(e.n))
		}
		e.n++
	}
	return true
}

// rows loads the whole partition and returns its number of rows.
func (e *winEval) rows() int {
	for e.ensure(e.n) {
	}
	return e.n
}

// groupStart returns the first row of group g (the partition's end if
// there is no such group).
func (e *winEval) groupStart(g int64) int {
	for int64(len(e.grpStart)) <= g && e.ensure(e.n) {
	}
	if g < int64(len(e.grpStart)) {
		return int(e.grpStart[g])
	}
	return e.n
}

// groupEnd returns the row after the last row of group g.
func (e *winEval) groupEnd(g int64) int { return e.groupStart(satAdd(g, 1)) }

// seed resumes the running and ranking calls after row at, whose carried
// state (appendCarry's encoding) is carry: the rows before it are not loaded.
func (e *winEval) seed(at int, carry []byte) error {
	if !e.ensure(at) {
		return errCorruptState
	}
	var err error
	if e.spec.ranking {
		var pos, grp int64
		if carry, err = loadVarints(carry, &pos, &grp); err != nil {
			return err
		}
		e.posBase = pos - int64(at)
		e.grpBase = grp - int64(e.grp[at])
	}
	for k, c := range e.spec.calls {
		if !c.running {
			continue
		}
		cs := &e.cs[k]
		if carry, err = cs.acc.loadState(carry); err != nil {
			return err
		}
		cs.accValid, cs.accHead = true, 0
		cs.accTail = e.frameTail(c, cs, at)
		cs.tail = cs.accTail
	}
	return nil
}

// appendCarry appends the state carried after the last row computed, i:
// its position and group (ranking calls) and the accumulators of the
// running calls.
func (e *winEval) appendCarry(buf []byte, i int) []byte {
	if e.spec.ranking {
		buf = binary.AppendVarint(buf, e.posBase+int64(i))
		buf = binary.AppendVarint(buf, e.grpBase+int64(e.grp[i]))
	}
	for k, c := range e.spec.calls {
		if c.running {
			buf = e.cs[k].acc.appendState(buf)
		}
	}
	return buf
}

// row computes every call for row i, which must exist (ensure), after the
// rows before it in the partition (or after seed). The results are valid
// until the next call.
func (e *winEval) row(i int) ([]types.Datum, error) {
	if e.spec.deferred != nil {
		return nil, e.spec.deferred
	}
	e.depHead = i
	for k, c := range e.spec.calls {
		var d types.Datum
		var err error
		switch c.kind {
		case kindRanking:
			d, err = e.ranking(c, i)
		case kindLagLead:
			d = e.lagLead(c, i)
		default:
			d, err = e.frameCall(c, &e.cs[k], i)
		}
		if err != nil {
			if d, err = e.ectx.RowError(err); err != nil {
				return nil, err
			}
		}
		e.outs[k] = d
	}
	if e.depHead >= 0 {
		e.depHead--
	}
	return e.outs, nil
}

func (e *winEval) ranking(c *winCall, i int) (types.Datum, error) {
	g := int64(e.grp[i])
	switch c.Func {
	case ir.WinRowNumber:
		return types.DInt(e.posBase + int64(i) + 1), nil
	case ir.WinRank:
		return types.DInt(e.posBase + int64(e.grpStart[g]) + 1), nil
	case ir.WinDenseRank:
		return types.DInt(e.grpBase + g + 1), nil
	case ir.WinPercentRank:
		n := e.rows()
		if n <= 1 {
			return types.DFloat(0), nil
		}
		return types.DFloat(float64(e.grpStart[g]) / float64(n-1)), nil
	case ir.WinCumeDist:
		end := e.groupEnd(g)
		return types.DFloat(float64(end) / float64(e.rows())), nil
	}
	// ntile: the first (n mod buckets) buckets have one row more.
	if c.paramNull {
		return types.Null, nil
	}
	if c.param <= 0 {
		return types.Null, sqlerr.New(invalidArgumentForNtile, "argument of ntile must be greater than zero")
	}
	n, pos := int64(e.rows()), int64(i)
	q, r := n/c.param, n%c.param
	if q == 0 {
		return types.DInt(pos + 1), nil
	}
	if big := r * (q + 1); pos < big {
		return types.DInt(pos/(q+1) + 1), nil
	} else {
		return types.DInt(r + (pos-big)/q + 1), nil
	}
}

func (e *winEval) arg(c *winCall, j int) types.Datum {
	if c.ArgCol < 0 {
		return types.Datum{}
	}
	return e.src.datum(c.ArgCol, j)
}

func (e *winEval) passes(c *winCall, j int) bool {
	if c.FilterCol < 0 {
		return true
	}
	d := e.src.datum(c.FilterCol, j)
	return !d.Null && d.I != 0
}

// lagLead reads the row param rows away (the default, or NULL, outside the
// partition).
func (e *winEval) lagLead(c *winCall, i int) types.Datum {
	if c.paramNull {
		return types.Null
	}
	dist := c.param
	j := int64(i) + dist
	if dist < 0 && j > int64(i) || dist > 0 && j < int64(i) {
		j = -1 // overflow: outside
	}
	if c.IgnoreNulls && dist != 0 {
		step, left := int64(1), dist
		if dist < 0 {
			step, left = -1, -dist
		}
		e.depHead = -1
		j = int64(i)
		for left > 0 {
			j += step
			if j < 0 || !e.ensure(int(j)) {
				j = -1
				break
			}
			if !e.arg(c, int(j)).Null {
				left--
			}
		}
	} else if dist < 0 && j < 0 {
		e.depHead = -1
	} else if dist < 0 && int(j) < e.depHead {
		e.depHead = int(j)
	}
	if j < 0 || j > math.MaxInt32 || !e.ensure(int(j)) {
		if c.DefaultCol >= 0 {
			return e.src.datum(c.DefaultCol, i)
		}
		return types.Null
	}
	return e.arg(c, int(j))
}

// frameCall computes an aggregate or value function over row i's frame.
func (e *winEval) frameCall(c *winCall, cs *winCallState, i int) (types.Datum, error) {
	if c.Func == ir.WinNthValue {
		if c.paramNull {
			return types.Null, nil
		}
		if c.param <= 0 {
			return types.Null, sqlerr.New(invalidArgumentForNthValue, "argument of nth_value must be greater than zero")
		}
	}
	h := e.frameHead(c, cs, i)
	t := e.frameTail(c, cs, i)
	cs.head, cs.tail = h, t
	if t < h {
		t = h
	}
	if c.running && c.Frame.End.Kind == ir.BoundPreceding {
		// The rows from the frame's end on are added to the carried state
		// at later rows; a frame ending at row 0 may end before it.
		switch {
		case t == 0 && e.startKnown:
			e.depHead = -1
		case t < e.depHead:
			e.depHead = t
		}
	}
	if !c.running {
		if g := e.grpStart[e.grp[i]]; int(g) < e.depHead {
			e.depHead = int(g)
		}
		switch {
		case h == 0 && e.startKnown:
			// The frame may be clipped by the partition's start.
			e.depHead = -1
		case h < e.depHead:
			e.depHead = h
		}
	}
	if c.direct {
		return e.valueAt(c, i, h, t), nil
	}
	if c.Frame.Exclude != ir.ExcludeNoOthers {
		// PostgreSQL aggregates the frame afresh for every row.
		cs.acc.reset()
		cs.accValid = false
		for j := h; j < t; j++ {
			if !e.excluded(c, i, j) && e.passes(c, j) {
				cs.acc.add(e.arg(c, j))
			}
		}
		return cs.acc.result()
	}
	switch {
	case c.running && cs.accValid:
		// The frame's start never moves; the accumulator may hold rows
		// before row 0 (seed).
	case !cs.accValid || h >= cs.accTail || (h > cs.accHead && !cs.acc.invertible()):
		cs.acc.reset()
		cs.accValid, cs.accHead, cs.accTail = true, h, h
	case h > cs.accHead:
		for j := cs.accHead; j < h; j++ {
			if e.passes(c, j) {
				cs.acc.remove(e.arg(c, j))
			}
		}
		cs.accHead = h
	}
	for j := cs.accTail; j < t; j++ {
		if e.passes(c, j) {
			cs.acc.add(e.arg(c, j))
		}
	}
	if t > cs.accTail {
		cs.accTail = t
	}
	return cs.acc.result()
}

// excluded reports whether the frame exclusion removes row j from row i's
// frame.
func (e *winEval) excluded(c *winCall, i, j int) bool {
	switch c.Frame.Exclude {
	case ir.ExcludeCurrentRow:
		return j == i
	case ir.ExcludeGroup:
		return e.grp[j] == e.grp[i]
	case ir.ExcludeTies:
		return j != i && e.grp[j] == e.grp[i]
	}
	return false
}

// valueAt computes first_value, last_value or nth_value from the frame
// [h, t) of row i.
func (e *winEval) valueAt(c *winCall, i, h, t int) types.Datum {
	plain := c.Frame.Exclude == ir.ExcludeNoOthers && !c.IgnoreNulls
	ok := func(j int) (types.Datum, bool) {
		if e.excluded(c, i, j) {
			return types.Null, false
		}
		d := e.arg(c, j)
		return d, !(c.IgnoreNulls && d.Null)
	}
	switch c.Func {
	case ir.WinFirstValue:
		if plain {
			if h < t {
				return e.arg(c, h)
			}
			return types.Null
		}
		for j := h; j < t; j++ {
			if d, yes := ok(j); yes {
				return d
			}
		}
	case ir.WinLastValue:
		if plain {
			if h < t {
				return e.arg(c, t-1)
			}
			return types.Null
		}
		for j := t - 1; j >= h; j-- {
			if d, yes := ok(j); yes {
				return d
			}
		}
	case ir.WinNthValue:
		if plain {
			if j := int64(h) + c.param - 1; j < int64(t) {
				return e.arg(c, int(j))
			}
			return types.Null
		}
		seen := int64(0)
		for j := h; j < t; j++ {
			if d, yes := ok(j); yes {
				if seen++; seen == c.param {
					return d
				}
			}
		}
	}
	return types.Null
}

// frameHead returns the first row of row i's frame.
func (e *winEval) frameHead(c *winCall, cs *winCallState, i int) int {
	f := c.Frame
	switch f.Start.Kind {
	case ir.BoundUnboundedPreceding:
		return 0
	case ir.BoundCurrentRow:
		if f.Mode == ir.FrameRows {
			return i
		}
		return int(e.grpStart[e.grp[i]])
	}
	following := f.Start.Kind == ir.BoundFollowing
	switch f.Mode {
	case ir.FrameRows:
		if !following {
			if c.startOff >= int64(i) {
				return 0
			}
			return i - int(c.startOff)
		}
		return e.rowOrEnd(satAdd(int64(i), c.startOff))
	case ir.FrameGroups:
		g := int64(e.grp[i])
		if !following {
			if c.startOff >= g {
				return 0
			}
			return int(e.grpStart[g-c.startOff])
		}
		return e.groupStart(satAdd(g, c.startOff))
	}
	h := cs.head
	v := e.src.datum(c.orderCol, i)
	for e.ensure(h) && c.startRange.beforeHead(e.src.datum(c.orderCol, h), v) {
		h++
	}
	return h
}

// frameTail returns the row after the last row of row i's frame.
func (e *winEval) frameTail(c *winCall, cs *winCallState, i int) int {
	f := c.Frame
	switch f.End.Kind {
	case ir.BoundUnboundedFollowing:
		return e.rows()
	case ir.BoundCurrentRow:
		if f.Mode == ir.FrameRows {
			return i + 1
		}
		return e.groupEnd(int64(e.grp[i]))
	}
	following := f.End.Kind == ir.BoundFollowing
	switch f.Mode {
	case ir.FrameRows:
		if !following {
			if c.endOff > int64(i) {
				return 0
			}
			return i - int(c.endOff) + 1
		}
		return e.rowOrEnd(satAdd(satAdd(int64(i), c.endOff), 1))
	case ir.FrameGroups:
		g := int64(e.grp[i])
		if !following {
			if c.endOff > g {
				return 0
			}
			return e.groupEnd(g - c.endOff)
		}
		return e.groupEnd(satAdd(g, c.endOff))
	}
	t := cs.tail
	v := e.src.datum(c.orderCol, i)
	for e.ensure(t) && c.endRange.withinTail(e.src.datum(c.orderCol, t), v) {
		t++
	}
	return t
}

// rowOrEnd returns j if row j exists, else the partition's end.
func (e *winEval) rowOrEnd(j int64) int {
	if j < math.MaxInt32 && e.ensure(int(j)) {
		return int(j)
	}
	return e.rows()
}

// Keys. Rows are sorted (batch) and stored (streaming) by the
// memcomparable encoding of their partition key, then of their ORDER BY key;
// equal encodings are equal SQL values, so rows with equal partition keys
// are one partition and rows with equal ORDER BY keys are peers. The
// encodings are state.AppendKey's, except that an interval keeps only its
// length (PostgreSQL's interval equality: '1 mon' = '30 days') and an ORDER
// BY key puts NULLs first or last as asked and inverts the bytes of a
// descending value.

const (
	orderKeyNullFirst byte = 0x00
	orderKeyValue     byte = 0x01
	orderKeyNullLast  byte = 0x02
)

// intervalKeyTail is the part of state's interval key encoding after the
// length: months and days, which PostgreSQL's equality ignores.
const intervalKeyTail = 8

// appendPartKey appends the partition key encoding of row i of col.
func appendPartKey(buf []byte, t types.T, col arrow.Array, i int) []byte {
	buf = state.AppendKey(buf, t, col, i)
	if t.Kind == types.Interval && !col.IsNull(i) {
		buf = buf[:len(buf)-intervalKeyTail]
	}
	return buf
}

// appendOrderKey appends the ORDER BY key encoding of row i of col, of type
// t, descending or not, NULLs first or last. TopN, session windows and
// window functions share it.
func appendOrderKey(buf []byte, t types.T, col arrow.Array, i int, desc, nullsFirst bool) []byte {
	o := planner.WindowOrder{T: t, Desc: desc, NullsFirst: nullsFirst}
	if col.IsNull(i) {
		return appendNullOrderKey(buf, o)
	}
	start := len(buf)
	buf = state.AppendKey(buf, t, col, i)
	return finishOrderKey(buf, start, o)
}

// appendOrderKeyDatum is appendOrderKey for a datum.
func appendOrderKeyDatum(buf []byte, o planner.WindowOrder, d types.Datum) []byte {
	if d.Null {
		return appendNullOrderKey(buf, o)
	}
	start := len(buf)
	buf = state.AppendKeyDatum(buf, o.T, d)
	return finishOrderKey(buf, start, o)
}

func appendNullOrderKey(buf []byte, o planner.WindowOrder) []byte {
	if o.NullsFirst {
		return append(buf, orderKeyNullFirst)
	}
	return append(buf, orderKeyNullLast)
}

func finishOrderKey(buf []byte, start int, o planner.WindowOrder) []byte {
	buf[start] = orderKeyValue
	if o.T.Kind == types.Interval {
		buf = buf[:len(buf)-intervalKeyTail]
	}
	if o.Desc {
		// Every value encoding is self-delimiting, so inverting its bytes
		// inverts its order among the others.
		for k := start + 1; k < len(buf); k++ {
			buf[k] = ^buf[k]
		}
	}
	return buf
}
