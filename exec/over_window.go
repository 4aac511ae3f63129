package exec

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"slices"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/streamsql/streamsql/barrier"
	"github.com/streamsql/streamsql/exec/eval"
	"github.com/streamsql/streamsql/ir"
	"github.com/streamsql/streamsql/planner"
	"github.com/streamsql/streamsql/state"
	"github.com/streamsql/streamsql/types"
)

// OverWindow maintains window functions (OVER) in a materialized view under
// inserts, updates and deletes. Its output is every input row with the
// results of the calls after its columns; its stream key is the input's.
//
// State: one table holding every input row, keyed by the virtual node of
// the partition key (state.SetVNode), the partition key, the ORDER BY key
// (see appendOrderKey) and the input's stream key, so a partition is a key
// range in window order and the partitions of the virtual nodes an actor
// owns (vnodes) are one key range. A row's value holds its input
// columns, the results last emitted for it and the state carried after it
// by the running and ranking calls (see winEval.appendCarry):
//
//	uvarint len(input) | input (RowCodec) | uvarint len(results) | results (RowCodec) | carry
//
// A row written in the current epoch and not yet computed has no results
// part. Nothing else is kept between barriers: a restarted operator reads
// the table.
//
// During an epoch the operator only records the changed keys (the last
// change per key wins). At the barrier, for each partition touched, in key
// order, it applies the changes to the table, emitting the retraction of
// every deleted row, and then recomputes only the rows whose results may
// change: from the first changed row back as far as the calls' frames reach
// forward (rows, peer groups, RANGE offsets; aligned to a peer group), with
// the rows before that as far as the frames reach back as context. It goes
// on past the last change as long as a row's frame can hold a changed row,
// and after that until a row's results and carried state equal the stored
// ones: every later row is then unchanged too (the running and ranking
// calls resume from the carried state of the row before the first one
// recomputed, so a change at the end of a large partition reads a few rows,
// not the partition). Every row whose results changed is emitted as an
// UpdateDelete/UpdateInsert pair and rewritten. Calls that need the whole
// partition (percent_rank, cume_dist, ntile, frames to UNBOUNDED FOLLOWING,
// IGNORE NULLS lag/lead) read it whole.
//
// The epoch's deletes are emitted first, then the updates and inserts, so
// that a row moving to another key (its ORDER BY or partition value
// changed) is deleted before it is inserted again under the same stream
// key.
type OverWindow struct {
	// passWatermark is the input column whose watermarks pass, or -1; held
	// keeps them until the barrier's rows are out.
	passWatermark int
	held          heldWatermarks
	clean         owCleaner

	mem    memory.Allocator
	ectx   *eval.Context
	spec   *winSpec
	ev     *winEval
	table  *state.Table
	vnodes state.VNodes
	reach  winReach

	inKey      []int
	inKeyTypes []types.T
	inCodec    *state.RowCodec
	outCodec   *state.RowCodec
	nIn        int

	// changes are the epoch's changed rows; index finds a key's change.
	changes []owChange
	index   map[string]int
	arena   []byte
	keyBuf  []byte

	src    owSource
	dels   *changeBuilder
	main   *changeBuilder
	outBuf []byte
	encBuf []byte
	valBuf []byte
}

// owChange is the last change of a row in the epoch.
type owChange struct {
	key     []byte
	partLen int
	// row is the encoded input row: inserted, or deleted when deleted is
	// set.
	row     []byte
	deleted bool
}

// winReach says how far the calls' results depend on other rows of their
// partition: back (rows before) and forward (rows after), in rows, peer
// groups (-1: none, 0: the row's peers) and RANGE offsets, or all of them.
// carry is set when running or ranking calls resume from the state carried
// after the previous row; whole when a call needs the whole partition.
type winReach struct {
	backRows, fwdRows     int64
	backGroups, fwdGroups int64
	backRange, fwdRange   []*rangeBound
	backAll, fwdAll       bool
	carry, whole          bool
	// carryRange are the RANGE ends with PRECEDING offsets of running
	// calls: their accumulators resume from the frame end of the carried
	// row, before it.
	carryRange []*rangeBound
}

func reachOf(spec *winSpec) winReach {
	r := winReach{backGroups: -1, fwdGroups: -1}
	for _, c := range spec.calls {
		switch c.kind {
		case kindRanking:
			switch c.Func {
			case ir.WinRowNumber:
				r.carry = true
			case ir.WinRank, ir.WinDenseRank:
				r.carry = true
				r.fwdGroups = max(r.fwdGroups, 0)
			default:
				r.whole = true
			}
		case kindLagLead:
			switch {
			case c.paramNull:
			case c.IgnoreNulls && c.param < 0:
				r.backAll = true
			case c.IgnoreNulls && c.param > 0:
				r.fwdAll = true
			case c.param < 0:
				r.backRows = max(r.backRows, -c.param)
			default:
				r.fwdRows = max(r.fwdRows, c.param)
			}
		default:
			r.frameReach(c)
		}
	}
	return r
}

// frameReach adds a frame call's reach.
func (r *winReach) frameReach(c *winCall) {
	f := c.Frame
	peers := f.Mode != ir.FrameRows || f.Exclude == ir.ExcludeGroup || f.Exclude == ir.ExcludeTies
	if peers {
		r.backGroups, r.fwdGroups = max(r.backGroups, 0), max(r.fwdGroups, 0)
	}
	if c.running {
		r.carry = true
		// A frame ending n PRECEDING ends before the carried row: the rows
		// from its end on are added again.
		if f.End.Kind == ir.BoundPreceding {
			widen(f.Mode, c.endOff, c.endRange, &r.backRows, &r.backGroups, &r.carryRange)
		}
	} else {
		switch f.Start.Kind {
		case ir.BoundUnboundedPreceding:
			r.backAll = true
		case ir.BoundPreceding:
			widen(f.Mode, c.startOff, c.startRange, &r.backRows, &r.backGroups, &r.backRange)
		}
	}
	switch f.End.Kind {
	case ir.BoundUnboundedFollowing:
		r.fwdAll = true
	case ir.BoundFollowing:
		widen(f.Mode, c.endOff, c.endRange, &r.fwdRows, &r.fwdGroups, &r.fwdRange)
	}
}

// widen extends one side of a reach by a frame bound's offset: in rows,
// peer groups or a RANGE bound, by the frame's mode.
func widen(mode ir.FrameMode, off int64, rng *rangeBound, rows, groups *int64, ranges *[]*rangeBound) {
	switch mode {
	case ir.FrameRows:
		*rows = max(*rows, off)
	case ir.FrameGroups:
		*groups = max(*groups, off)
	default:
		*ranges = append(*ranges, rng)
	}
}

// NewOverWindow returns the streaming operator of n, keeping the rows of
// the partitions of virtual nodes vnodes (the zero value: all of them) in
// table. ectx evaluates the constant arguments and counts row errors.
func NewOverWindow(mem memory.Allocator, ectx *eval.Context, n *planner.Window, table *state.Table, vnodes state.VNodes) (*OverWindow, error) {
	if vnodes.Hi == 0 {
		vnodes = state.AllVNodes
	}
	spec, err := compileWindow(ectx, n)
	if err != nil {
		return nil, err
	}
	if spec.deferred != nil {
		return nil, spec.deferred
	}
	ev, err := newWinEval(spec, ectx)
	if err != nil {
		return nil, err
	}
	outTypes := append(append([]types.T(nil), spec.inTypes...), spec.outTypes...)
	o := &OverWindow{
		mem: mem, ectx: ectx, spec: spec, ev: ev, table: table, vnodes: vnodes, reach: reachOf(spec),
		inKey: n.InputKey, inKeyTypes: n.InputKeyTypes,
		inCodec: state.NewRowCodec(spec.inTypes), outCodec: state.NewRowCodec(spec.outTypes),
		nIn: len(spec.inTypes), index: map[string]int{},
		dels: newChangeBuilder(mem, outTypes), main: newChangeBuilder(mem, outTypes),
		passWatermark: -1,
	}
	if n.PassWatermarks {
		o.passWatermark = n.Order[0].Col
		if o.reach.cleans() {
			o.clean = owCleaner{on: true, all: true, unclean: map[string]struct{}{}}
		}
	}
	o.src.o = o
	return o, nil
}

// OnBatch records the batch's changes.
func (o *OverWindow) OnBatch(_ context.Context, b *Batch, _ Output) error {
	defer b.Release()
	rec := b.Rec
	cols := rec.Columns()
	for i := 0; i < b.Len(); i++ {
		k := state.AppendVNode(o.keyBuf[:0], 0)
		for j, c := range o.spec.partCols {
			k = appendPartKey(k, o.spec.partTypes[j], cols[c], i)
		}
		partLen := len(k)
		state.SetVNode(k, partLen)
		for _, ord := range o.spec.order {
			k = appendOrderKey(k, ord.T, cols[ord.Col], i, ord.Desc, ord.NullsFirst)
		}
		for j, c := range o.inKey {
			k = state.AppendKey(k, o.inKeyTypes[j], cols[c], i)
		}
		o.keyBuf = k
		start := len(o.arena)
		o.arena = o.inCodec.Append(o.arena, cols, i)
		row := o.arena[start:len(o.arena):len(o.arena)]
		deleted := !b.Ops[i].IsInsert()
		if at, ok := o.index[string(k)]; ok {
			o.changes[at].row, o.changes[at].deleted = row, deleted
			continue
		}
		start = len(o.arena)
		o.arena = append(o.arena, k...)
		key := o.arena[start:len(o.arena):len(o.arena)]
		o.index[string(key)] = len(o.changes)
		o.changes = append(o.changes, owChange{key: key, partLen: partLen, row: row, deleted: deleted})
	}
	return nil
}

// OnBarrier applies the epoch's changes partition by partition, emits the
// changed results and seals the state.
func (o *OverWindow) OnBarrier(ctx context.Context, br *barrier.Barrier, out Output) error {
	slices.SortFunc(o.changes, func(a, b owChange) int { return bytes.Compare(a.key, b.key) })
	for start := 0; start < len(o.changes); {
		part := o.changes[start].key[:o.changes[start].partLen]
		end := start + 1
		for end < len(o.changes) && bytes.HasPrefix(o.changes[end].key, part) && o.changes[end].partLen == len(part) {
			end++
		}
		if err := o.partition(o.changes[start:end]); err != nil {
			return err
		}
		start = end
	}
	if err := o.cleanState(); err != nil {
		return err
	}
	o.changes = o.changes[:0]
	clear(o.index)
	o.arena = o.arena[:0]
	o.table.Seal(br.Epoch)
	if err := o.dels.emit(ctx, out); err != nil {
		return err
	}
	if err := o.main.emit(ctx, out); err != nil {
		return err
	}
	return o.held.flush(ctx, out)
}

// OnWatermark holds, for a window that passes watermarks (see
// planner.Window.PassWatermarks), a watermark on its first ORDER BY column
// until the epoch's rows are out.
func (o *OverWindow) OnWatermark(_ context.Context, w *barrier.Watermark, _ Output) error {
	if o.passWatermark >= 0 && w.Column == o.passWatermark {
		o.held.hold(w)
		o.clean.observe(w.Value)
	}
	return nil
}

// partition applies one partition's changes (sorted by key) and emits the
// results that changed.
func (o *OverWindow) partition(changes []owChange) error {
	part := changes[0].key[:changes[0].partLen]
	o.clean.touched(part)
	kmin, kmax := changes[0].key, changes[len(changes)-1].key
	o.src.reset()
	kminVals := o.src.decodeInput(changes[0].row)
	var kminOkey []byte
	for _, ord := range o.spec.order {
		kminOkey = appendOrderKeyDatum(kminOkey, ord, kminVals[ord.Col])
	}
	var kminVal types.Datum
	if len(o.spec.order) > 0 {
		kminVal = kminVals[o.spec.order[0].Col]
	}
	it, err := o.table.NewIter(part, state.PrefixEnd(part))
	if err != nil {
		return err
	}
	defer it.Close()
	as, startKnown, err := o.scanBack(it, kmin, kminOkey, kminVal)
	if err != nil {
		return err
	}
	o.src.openForward(it, kmin, changes)
	ev := o.ev
	ev.reset(&o.src, startKnown)
	if as > 0 && o.reach.carry {
		_, stored := splitWindowValue(o.src.rows[as-1].value)
		carry, err := skipResults(stored)
		if err != nil {
			return err
		}
		if err := ev.seed(as-1, carry); err != nil {
			return err
		}
	}
	for i := as; ev.ensure(i); i++ {
		outs, err := ev.row(i)
		if err != nil {
			return err
		}
		o.outBuf = o.outCodec.AppendDatums(o.outBuf[:0], outs)
		enc := binary.AppendUvarint(o.encBuf[:0], uint64(len(o.outBuf)))
		enc = append(enc, o.outBuf...)
		enc = ev.appendCarry(enc, i)
		o.encBuf = enc
		r := &o.src.rows[i]
		input, stored := splitWindowValue(r.value)
		same := stored != nil && bytes.Equal(stored, enc)
		if !same {
			if err := o.emitRow(r, input, stored, outs); err != nil {
				return err
			}
			o.valBuf = append(appendInputPart(o.valBuf[:0], input), enc...)
			o.table.Put(r.key, o.valBuf)
		}
		if same && !o.reach.whole && bytes.Compare(r.key, kmax) > 0 && ev.depHead >= 0 && bytes.Compare(o.src.rows[ev.depHead].key, kmax) > 0 {
			break
		}
	}
	if err := o.src.err; err != nil {
		return err
	}
	return it.Error()
}

// emitRow emits the change of a recomputed row whose stored part (results
// and carry) was stored (nil for a row written this epoch).
func (o *OverWindow) emitRow(r *owRow, input, stored []byte, outs []types.Datum) error {
	if stored == nil {
		old := r.old
		if old == nil {
			return o.main.add(Insert, o.inCodec, input, outs)
		}
		oldInput, oldStored := splitWindowValue(old)
		oldOut, _ := resultsPart(oldStored)
		if bytes.Equal(oldInput, input) && bytes.Equal(oldOut, o.outBuf) {
			return nil
		}
		if err := o.retract(o.main, UpdateDelete, old); err != nil {
			return err
		}
		return o.main.add(UpdateInsert, o.inCodec, input, outs)
	}
	oldOut, _ := resultsPart(stored)
	if bytes.Equal(oldOut, o.outBuf) {
		return nil // only the carried state changed
	}
	if err := o.retract(o.main, UpdateDelete, r.value); err != nil {
		return err
	}
	return o.main.add(UpdateInsert, o.inCodec, input, outs)
}

// retract adds the row last emitted for a stored value.
func (o *OverWindow) retract(cb *changeBuilder, op Op, value []byte) error {
	input, stored := splitWindowValue(value)
	out, ok := resultsPart(stored)
	if !ok {
		return errCorruptState
	}
	return cb.addEncoded(op, o.inCodec, input, o.outCodec, out)
}

// scanBack reads the partition's rows before kmin, newest state, backwards:
// first the rows to recompute (those whose frames reach forward to kmin),
// then the rows before them that their frames, lag and carried state need.
// It leaves them in o.src in window order and returns the index of the
// first row to recompute; startKnown is set when the rows reach the
// partition's first row.
func (o *OverWindow) scanBack(it *state.Iter, kmin, kminOkey []byte, kminVal types.Datum) (as int, startKnown bool, err error) {
	r := &o.reach
	s := &o.src
	asD := -1 // rows between the first row to recompute and kmin, once known
	d, g, gSafe := 0, int64(0), int64(0)
	prevOkey, refVal := kminOkey, kminVal
	var carryVal types.Datum
	startKnown = true
	for ok := it.SeekLT(kmin); ok; ok = it.Prev() {
		s.push(it.Key(), it.Value(), nil)
		d++
		row := &s.rows[len(s.rows)-1]
		lastOfGroup := !bytes.Equal(row.okey, prevOkey)
		if lastOfGroup {
			g++
		}
		prevOkey = row.okey
		var v types.Datum
		if len(o.spec.order) > 0 {
			v = s.datum(o.spec.order[0].Col, len(s.rows)-1)
		}
		if asD < 0 {
			if !lastOfGroup || !r.safeBefore(int64(d), g, v, kminVal) {
				refVal = v
				continue
			}
			asD, gSafe, carryVal = d-1, g, v
		}
		back := int64(d - asD)
		if !r.neededBefore(back, g-gSafe+1, v, refVal, carryVal) {
			s.pop()
			startKnown = false
			break
		}
	}
	if err := it.Error(); err != nil {
		return 0, false, err
	}
	s.reverse()
	if asD < 0 {
		return 0, startKnown, nil
	}
	return len(s.rows) - asD, startKnown, nil
}

// safeBefore reports whether a row d rows and g peer groups before the
// first change, with ORDER BY value v, has results that cannot depend on
// the change (nor can any row before it).
func (r *winReach) safeBefore(d, g int64, v, changed types.Datum) bool {
	if r.whole || r.fwdAll || d <= r.fwdRows || g <= r.fwdGroups {
		return false
	}
	for _, b := range r.fwdRange {
		if b.withinTail(changed, v) {
			return false
		}
	}
	return true
}

// neededBefore reports whether a row back rows and g peer groups before
// the first row to recompute (whose ORDER BY value is ref; the row before
// it, whose carried state resumes the running calls, has carried), with
// ORDER BY value v, is needed to compute it.
func (r *winReach) neededBefore(back, g int64, v, ref, carried types.Datum) bool {
	if r.whole || r.backAll || (r.carry && back == 1) || back <= r.backRows || g <= r.backGroups {
		return true
	}
	for _, b := range r.backRange {
		if !b.beforeHead(v, ref) {
			return true
		}
	}
	for _, b := range r.carryRange {
		if !b.withinTail(v, carried) {
			return true
		}
	}
	return false
}

// Close releases nothing: OverWindow holds no Arrow memory between calls.
func (o *OverWindow) Close() {
	o.dels.release()
	o.main.release()
}

func (o *OverWindow) String() string {
	return fmt.Sprintf("OverWindow(calls=%d)", len(o.spec.calls))
}

// Stored values.

// appendInputPart appends the input part of a stored value.
func appendInputPart(buf, input []byte) []byte {
	buf = binary.AppendUvarint(buf, uint64(len(input)))
	return append(buf, input...)
}

// splitWindowValue splits a stored value into its input row and its stored
// part (results and carry; nil if there is none).
func splitWindowValue(v []byte) (input, stored []byte) {
	n, k := binary.Uvarint(v)
	if k <= 0 || uint64(len(v)-k) < n {
		return nil, nil
	}
	input = v[k : k+int(n)]
	if len(v) == k+int(n) {
		return input, nil
	}
	return input, v[k+int(n):]
}

// resultsPart returns the results row of a stored part.
func resultsPart(stored []byte) ([]byte, bool) {
	n, k := binary.Uvarint(stored)
	if k <= 0 || uint64(len(stored)-k) < n {
		return nil, false
	}
	return stored[k : k+int(n)], true
}

// skipResults returns the carry after the results of a stored part.
func skipResults(stored []byte) ([]byte, error) {
	n, k := binary.Uvarint(stored)
	if k <= 0 || uint64(len(stored)-k) < n {
		return nil, errCorruptState
	}
	return stored[k+int(n):], nil
}

// owSource is the streaming operator's winSource: rows of one partition,
// first read backwards from the table (scanBack), then forwards from the
// first change on demand, merging the table's rows with the epoch's
// changes: a changed row is read as its new input without results (and
// the value it replaces), a deleted one is retracted, deleted from the
// table and skipped.
type owSource struct {
	o       *OverWindow
	rows    []owRow
	vals    []types.Datum
	arena   []byte
	it      *state.Iter
	more    bool
	changes []owChange
	dec     []types.Datum
	err     error
}

// owRow is a loaded row: its state key, stored value (for a changed row,
// its new input only), ORDER BY key, and for a changed row the value it
// replaced (nil for a new row).
type owRow struct {
	key, value, okey, old []byte
}

func (s *owSource) reset() {
	s.rows, s.vals, s.arena = s.rows[:0], s.vals[:0], s.arena[:0]
	s.it, s.changes, s.err = nil, nil, nil
}

// decodeInput decodes an input row into the scratch datums.
func (s *owSource) decodeInput(row []byte) []types.Datum {
	if cap(s.dec) < s.o.nIn {
		s.dec = make([]types.Datum, s.o.nIn)
	}
	s.dec = s.dec[:s.o.nIn]
	if err := s.o.inCodec.DecodeDatums(row, s.dec); err != nil {
		for i := range s.dec {
			s.dec[i] = types.Null
		}
	}
	return s.dec
}

// push appends a row (copying its key, value and old value).
func (s *owSource) push(key, value, old []byte) {
	start := len(s.arena)
	s.arena = append(s.arena, key...)
	k := s.arena[start:len(s.arena):len(s.arena)]
	start = len(s.arena)
	s.arena = append(s.arena, value...)
	v := s.arena[start:len(s.arena):len(s.arena)]
	var o []byte
	if old != nil {
		start = len(s.arena)
		s.arena = append(s.arena, old...)
		o = s.arena[start:len(s.arena):len(s.arena)]
	}
	input, _ := splitWindowValue(v)
	vals := s.decodeInput(input)
	s.vals = append(s.vals, vals...)
	ostart := len(s.arena)
	for _, ord := range s.o.spec.order {
		s.arena = appendOrderKeyDatum(s.arena, ord, vals[ord.Col])
	}
	s.rows = append(s.rows, owRow{key: k, value: v, okey: s.arena[ostart:len(s.arena):len(s.arena)], old: o})
}

func (s *owSource) pop() {
	s.rows = s.rows[:len(s.rows)-1]
	s.vals = s.vals[:len(s.vals)-s.o.nIn]
}

// reverse puts the rows read backwards in window order.
func (s *owSource) reverse() {
	slices.Reverse(s.rows)
	n := s.o.nIn
	for i, j := 0, len(s.rows)-1; i < j; i, j = i+1, j-1 {
		for c := 0; c < n; c++ {
			s.vals[i*n+c], s.vals[j*n+c] = s.vals[j*n+c], s.vals[i*n+c]
		}
	}
}

// openForward positions the source to read, on demand, the partition's
// rows from kmin on, merged with changes (sorted, the first at kmin).
func (s *owSource) openForward(it *state.Iter, kmin []byte, changes []owChange) {
	s.it, s.changes = it, changes
	s.more = it.SeekGE(kmin)
}

func (s *owSource) load(i int) bool {
	for len(s.rows) <= i {
		if !s.next() {
			return false
		}
	}
	return true
}

// next loads the next row of the merge.
func (s *owSource) next() bool {
	o := s.o
	for s.err == nil {
		c := 0
		switch {
		case !s.more && len(s.changes) == 0:
			return false
		case !s.more:
			c = 1
		case len(s.changes) == 0:
			c = -1
		default:
			c = bytes.Compare(s.it.Key(), s.changes[0].key)
		}
		if c < 0 {
			s.push(s.it.Key(), s.it.Value(), nil)
			s.more = s.it.Next()
			return true
		}
		ch := s.changes[0]
		s.changes = s.changes[1:]
		var old []byte
		if c == 0 {
			old = s.it.Value()
			if ch.deleted {
				s.err = o.retract(o.dels, Delete, old)
				o.table.Delete(ch.key)
			}
		}
		if !ch.deleted {
			o.encBuf = appendInputPart(o.encBuf[:0], ch.row)
			s.push(ch.key, o.encBuf, old)
		}
		if c == 0 {
			s.more = s.it.Next()
		}
		if !ch.deleted {
			return true
		}
	}
	return false
}

func (s *owSource) orderKey(i int) []byte      { return s.rows[i].okey }
func (s *owSource) datum(c, i int) types.Datum { return s.vals[i*s.o.nIn+c] }

// changeBuilder accumulates output rows (input columns, then results) and
// their ops.
type changeBuilder struct {
	mem    memory.Allocator
	types  []types.T
	bs     []array.Builder
	ops    []Op
	schema *arrow.Schema
}

func newChangeBuilder(mem memory.Allocator, ts []types.T) *changeBuilder {
	return &changeBuilder{mem: mem, types: ts, bs: newBuilders(mem, ts), schema: SchemaOf(ts)}
}

// add appends a row of an encoded input row and result datums.
func (cb *changeBuilder) add(op Op, in *state.RowCodec, input []byte, outs []types.Datum) error {
	nIn := len(in.Types())
	if err := in.Decode(input, cb.bs[:nIn]); err != nil {
		return err
	}
	for k, d := range outs {
		types.AppendDatum(cb.bs[nIn+k], cb.types[nIn+k], d)
	}
	cb.ops = append(cb.ops, op)
	return nil
}

// addEncoded appends a row of an encoded input row and an encoded results
// row.
func (cb *changeBuilder) addEncoded(op Op, in *state.RowCodec, input []byte, out *state.RowCodec, results []byte) error {
	nIn := len(in.Types())
	if err := in.Decode(input, cb.bs[:nIn]); err != nil {
		return err
	}
	if err := out.Decode(results, cb.bs[nIn:]); err != nil {
		return err
	}
	cb.ops = append(cb.ops, op)
	return nil
}

// emit sends the accumulated rows in batches of at most BatchSize rows.
func (cb *changeBuilder) emit(ctx context.Context, out Output) error {
	if len(cb.ops) == 0 {
		return nil
	}
	rec := buildRecord(cb.schema, cb.bs, len(cb.ops))
	defer rec.Release()
	ops := cb.ops
	cb.ops = nil
	for start := 0; start < len(ops); {
		end := min(start+BatchSize, len(ops))
		// An UpdateDelete and its UpdateInsert stay in one batch.
		if end < len(ops) && ops[end-1] == UpdateDelete {
			end++
		}
		slice := rec.NewSlice(int64(start), int64(end))
		if err := out.Emit(ctx, Message{Batch: NewBatch(slice, ops[start:end:end])}); err != nil {
			return err
		}
		start = end
	}
	return nil
}

func (cb *changeBuilder) release() { releaseBuilders(cb.bs) }
