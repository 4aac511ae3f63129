package exec

import (
	"bytes"
	"cmp"
	"context"
	"encoding/binary"
	"math"
	"slices"
	"strings"
	"sync/atomic"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/streamsql/streamsql/barrier"
	"github.com/streamsql/streamsql/planner"
	"github.com/streamsql/streamsql/sqlerr"
	"github.com/streamsql/streamsql/state"
	"github.com/streamsql/streamsql/types"
)

// SessionWindowSpec configures a SessionWindow.
type SessionWindowSpec struct {
	// Types are the input's column types; TimeCol is a timestamp or
	// timestamptz column.
	Types   []types.T
	TimeCol int
	// Gap is the session gap in microseconds (positive).
	Gap int64
	// PartitionCols split the rows into partitions (none: one partition).
	PartitionCols []int
	// KeepNulls emits the rows whose time is NULL with NULL bounds; without
	// it they are dropped.
	KeepNulls bool
	// InputKey is the input's stream key. With Sequence the input is
	// insert-only (a batch query) and rows are told apart by arrival.
	InputKey []int
	Sequence bool
	// Table holds the input rows with a time: key = virtual node of the
	// partition key, partition key, time, input stream key (or arrival
	// number); value = the row (RowCodec).
	Table *state.Table
	// Index and Watermark are set when the time column carries a
	// watermark: Index holds one key per session, virtual node, window_end
	// then partition key, so that the sessions the watermark makes final
	// are a prefix of each virtual node; Watermark holds the watermark
	// reached.
	Index, Watermark *state.Table
	// VNodes are the virtual nodes whose partitions the operator holds (the
	// zero value: all of them); dropping final sessions scans only theirs.
	VNodes state.VNodes
	// LateRows counts the rows dropped behind the watermark; Errors the
	// window ends beyond the timestamp range (in a view, NULL). Either may
	// be nil.
	LateRows, Errors *atomic.Int64
}

// SessionWindow assigns every input row the session that holds it and
// keeps the assignment up to date under inserts, updates and deletes (SESSION
// in FROM, and the sessions of a SESSION WITH GAP frame). Its output is the
// input's columns, then window_start and window_end.
//
// Sessions. A partition's session is a maximal run of its rows in time
// order in which each row is less than Gap after the previous one;
// window_start is its first time, window_end its last time plus Gap. An
// insert can extend a session or merge two (a row that bridges them); a
// delete can shrink one or split it. Each input row is one output row, whose
// bounds change when its session does: the output's stream key is the
// input's.
//
// State. Every input row with a time is in Table under (partition key,
// time, input stream key), so a partition's rows are one key range in time
// order and the neighbours of a time are a seek away. Changes are not
// applied during the epoch but logged in memory (key and row in one arena).
// At the barrier the log is sorted by key and netted per key; then, for each
// partition and cluster of changed times, the operator finds the region
// around the changes by seeking in Table (which still holds the rows as of
// the last barrier, O): the maximal run, over the rows before and after the
// epoch (O and N) and the changed times, that holds them. A region is a union
// of whole sessions of O and of N (each of those is a run of O or N, so it
// lies inside one run of their union), and the sessions outside every region
// are unchanged (a session of N without inserted rows is a run of O rows
// with no row of O between them removed; with none removed either it is a
// whole session of O). Two passes over each region compute its sessions of O
// and of N, then emit the difference: Delete (old bounds) for rows removed,
// an UpdateDelete/UpdateInsert pair for rows whose bounds or values changed,
// Insert for rows added. Inserts are emitted last, after every Delete of the
// barrier, so a row whose time changed is deleted before it is inserted again
// (it may move to another partition or region). Then the netted changes are
// written to Table. A region is read three times (back to its start, two
// passes) and a session's rows are all re-emitted when its bounds change:
// the cost per epoch follows the sizes of the sessions changed, not of the
// partitions.
//
// Watermarks. With a watermark w on the time column, rows (and deletes)
// with a time below w are late: dropped and counted. Sessions whose
// window_end is at most w are final: no row that is not late can join them
// (it would be at least Gap after their last row), so after the epoch's
// changes their rows are deleted from Table (one range deletion per
// session, found in Index, which holds window_end and partition key of every
// session of Table), and the watermark reached is kept in the Watermark
// table so that a restart drops the same rows. The output carries a
// watermark on window_end only, of w + 1 microsecond: every row emitted
// after it, insert or retraction, has window_end > w. Proof: a row is
// emitted with the bounds of a session of O or of N of a later epoch. The
// sessions of O are those left in Table, whose window_end is > w (the others
// were dropped). A session of N holding an inserted row, whose time t >= w,
// ends at or after t + Gap > w. A session of N without inserted rows is a run
// of O rows; its last row l is the last of its session of O (window_end
// > w) or is followed in O by a deleted row d, with d >= w (deletes are not
// late) and d - l < Gap, so l + Gap > d >= w. No other column carries a
// watermark: a row re-emitted later keeps its old values, its time among
// them, which may be below the input's watermarks; and window_start has no
// bound (a session can go on forever).
//
// Restart: Table (with Index and Watermark) is the operator's whole state;
// the output as of the last barrier is a function of it.
//
// Batch queries (Sequence): every row is logged at arrival, Table stays
// empty, and the final barrier emits every row with its session.
type SessionWindow struct {
	mem      memory.Allocator
	spec     SessionWindowSpec
	codec    *state.RowCodec
	outTypes []types.T
	schema   *arrow.Schema
	width    int

	// log holds the epoch's changes, keys and rows in arena.
	log   []sessionChange
	arena []byte
	net   []sessionNet
	seq   uint64

	// wm is the watermark of the time column (when wmValid); the state has
	// been cleaned up to wmDone (once wmSet).
	wm, wmDone     int64
	wmValid, wmSet bool

	// now collects Deletes and update pairs, emitted as they fill; ins
	// collects Inserts, emitted after everything else.
	now, ins []array.Builder
	nowOps   []Op
	nowRows  int
	insRows  int
	insRecs  []arrow.RecordBatch

	oldSpans, newSpans []sessionSpan
	points             []regionPoint
	pointVals          []byte
	cols               []arrow.Array
	keyBuf, seekBuf    []byte
	vnodeBuf           []byte
	// partTypes are the types of the partition columns, parts the batch's
	// partition columns.
	partTypes []types.T
	parts     []arrow.Array
}

// sessionChange is one logged change: key arena[off:off+keyLen] (virtual node and partition
// key of length partLen, time, stream key), row after it, of valLen bytes.
type sessionChange struct {
	off            int
	keyLen, valLen int
	partLen        int
	ts             int64
	null           bool // the time is NULL (KeepNulls)
	insert         bool
}

// sessionNet is the net change of one key over the epoch: after says
// whether the row exists after it, with row val; existed whether the key's
// first change was a delete, of row firstVal (the row before the epoch).
type sessionNet struct {
	key      []byte
	partLen  int
	ts       int64
	null     bool
	after    bool
	val      []byte
	existed  bool
	firstVal []byte
}

// sessionSpan is a session: the times of its first and last rows.
type sessionSpan struct{ start, last int64 }

// NewSessionWindow returns a SessionWindow; it restores the watermark the
// state has reached.
func NewSessionWindow(mem memory.Allocator, spec SessionWindowSpec) (*SessionWindow, error) {
	if spec.VNodes.Hi == 0 {
		spec.VNodes = state.AllVNodes
	}
	t := spec.Types[spec.TimeCol]
	out := append(append([]types.T(nil), spec.Types...), t, t)
	s := &SessionWindow{mem: mem, spec: spec, codec: state.NewRowCodec(spec.Types), outTypes: out,
		schema: SchemaOf(out), width: len(spec.Types)}
	for _, c := range spec.PartitionCols {
		s.partTypes = append(s.partTypes, spec.Types[c])
	}
	if spec.Watermark != nil {
		if err := loadVarint(spec.Watermark, watermarkKey, &s.wm, &s.wmValid); err != nil {
			return nil, err
		}
		if s.wmValid {
			s.wmDone, s.wmSet = s.wm, true
		}
	}
	return s, nil
}

// OnBatch logs the batch's changes; the output comes at the barrier.
func (s *SessionWindow) OnBatch(_ context.Context, b *Batch, _ Output) error {
	defer b.Release()
	s.cols = append(s.cols[:0], b.Rec.Columns()...)
	s.parts = s.parts[:0]
	for _, c := range s.spec.PartitionCols {
		s.parts = append(s.parts, s.cols[c])
	}
	ts := s.cols[s.spec.TimeCol].(*array.Timestamp)
	vals := ts.Values()
	late := 0
	for i, op := range b.Ops {
		if s.spec.Sequence && !op.IsInsert() {
			return sqlerr.New(sqlerr.InternalError, "exec: SessionWindow without a stream key got a retraction")
		}
		null := ts.IsNull(i)
		if null && !s.spec.KeepNulls {
			continue
		}
		if !null && s.wmValid && int64(vals[i]) < s.wm {
			late++
			continue
		}
		c := sessionChange{off: len(s.arena), null: null, insert: op.IsInsert()}
		var v uint16
		v, s.vnodeBuf = partitionVNode(s.vnodeBuf, s.partTypes, s.parts, i)
		s.arena = state.AppendVNode(s.arena, v)
		for _, p := range s.spec.PartitionCols {
			// NULLs first, and equal intervals ('1 mon', '30 days') in one
			// partition, as in PARTITION BY.
			s.arena = appendOrderKey(s.arena, s.spec.Types[p], s.cols[p], i, false, true)
		}
		c.partLen = len(s.arena) - c.off
		s.arena = state.AppendKey(s.arena, s.spec.Types[s.spec.TimeCol], ts, i)
		if !null {
			c.ts = int64(vals[i])
		}
		if s.spec.Sequence {
			s.arena = binary.BigEndian.AppendUint64(s.arena, s.seq)
			s.seq++
		} else {
			for _, k := range s.spec.InputKey {
				s.arena = state.AppendKey(s.arena, s.spec.Types[k], s.cols[k], i)
			}
		}
		c.keyLen = len(s.arena) - c.off
		s.arena = s.codec.Append(s.arena, s.cols, i)
		c.valLen = len(s.arena) - c.off - c.keyLen
		s.log = append(s.log, c)
	}
	if late > 0 && s.spec.LateRows != nil {
		s.spec.LateRows.Add(int64(late))
	}
	return nil
}

func (s *SessionWindow) keyOf(c *sessionChange) []byte {
	return s.arena[c.off : c.off+c.keyLen : c.off+c.keyLen]
}

func (s *SessionWindow) valOf(c *sessionChange) []byte {
	o := c.off + c.keyLen
	return s.arena[o : o+c.valLen : o+c.valLen]
}

// OnWatermark records a watermark of the time column; the operator acts on
// it at the barrier. Watermarks of other columns stop here.
func (s *SessionWindow) OnWatermark(_ context.Context, w *barrier.Watermark, _ Output) error {
	if s.spec.Index == nil || w.Column != s.spec.TimeCol {
		return nil
	}
	if !s.wmValid || w.Value > s.wm {
		s.wm, s.wmValid = w.Value, true
	}
	return nil
}

// OnBarrier emits the epoch's changes of the rows' sessions, drops the
// sessions the watermark made final, forwards the watermark and seals the
// state.
func (s *SessionWindow) OnBarrier(ctx context.Context, br *barrier.Barrier, out Output) error {
	if len(s.log) > 0 {
		if err := s.apply(ctx, out); err != nil {
			return err
		}
	}
	if s.spec.Index != nil && s.wmValid {
		if !s.wmSet || s.wm > s.wmDone {
			if err := s.dropFinal(); err != nil {
				return err
			}
		}
		wm := s.wm
		if wm < math.MaxInt64 {
			wm++
		}
		col := s.width + 1
		if err := out.Emit(ctx, Message{Watermark: &barrier.Watermark{Column: col, Value: wm}}); err != nil {
			return err
		}
	}
	s.spec.Table.Seal(br.Epoch)
	if s.spec.Index != nil {
		s.spec.Index.Seal(br.Epoch)
		s.spec.Watermark.Seal(br.Epoch)
	}
	return nil
}

// apply nets the log, emits the changes of every region it touches and
// writes the net changes to the state.
func (s *SessionWindow) apply(ctx context.Context, out Output) error {
	s.netLog()
	// One iterator for the barrier, over Table as of the last barrier (O):
	// the writes come after every region is read.
	it, err := s.spec.Table.NewIter(nil, nil)
	if err != nil {
		return err
	}
	defer it.Close()
	back, err := s.spec.Table.NewIter(nil, nil)
	if err != nil {
		return err
	}
	defer back.Close()
	for lo := 0; lo < len(s.net); {
		part := s.net[lo].key[:s.net[lo].partLen]
		hi := lo + 1
		for hi < len(s.net) && bytes.HasPrefix(s.net[hi].key, part) && s.net[hi].partLen == len(part) {
			hi++
		}
		cs := s.net[lo:hi]
		n := 0
		for n < len(cs) && cs[n].null {
			if err := s.nullChange(&cs[n]); err != nil {
				return err
			}
			n++
		}
		if n < len(cs) {
			if err := s.partition(ctx, it, back, part, cs[n:], out); err != nil {
				return err
			}
		}
		lo = hi
	}
	if err := s.flushNow(ctx, out); err != nil {
		return err
	}
	if err := s.flushInserts(ctx, out); err != nil {
		return err
	}
	if !s.spec.Sequence {
		for i := range s.net {
			c := &s.net[i]
			switch {
			case c.null:
			case c.after:
				s.spec.Table.Put(c.key, c.val)
			default:
				s.spec.Table.Delete(c.key)
			}
		}
	}
	s.log, s.arena = s.log[:0], s.arena[:0]
	clear(s.net)
	s.net = s.net[:0]
	return nil
}

// netLog sorts the log by key (stably: a key's changes stay in order) and
// reduces it to one net change per key in s.net.
func (s *SessionWindow) netLog() {
	slices.SortStableFunc(s.log, func(a, b sessionChange) int { return bytes.Compare(s.keyOf(&a), s.keyOf(&b)) })
	for i := 0; i < len(s.log); {
		first := &s.log[i]
		j := i + 1
		key := s.keyOf(first)
		for j < len(s.log) && bytes.Equal(s.keyOf(&s.log[j]), key) {
			j++
		}
		last := &s.log[j-1]
		n := sessionNet{key: key, partLen: first.partLen, ts: first.ts, null: first.null,
			after: last.insert, existed: !first.insert}
		if n.after {
			n.val = s.valOf(last)
		}
		if n.existed {
			n.firstVal = s.valOf(first)
		}
		s.net = append(s.net, n)
		i = j
	}
}

// nullChange emits the net change of a row whose time is NULL (KeepNulls):
// its bounds are NULL and depend on nothing else.
func (s *SessionWindow) nullChange(c *sessionNet) error {
	switch {
	case c.existed && !c.after:
		return s.emitNow(Delete, c.firstVal, sessionSpan{}, true)
	case !c.existed && c.after:
		return s.emitInsert(c.val, sessionSpan{}, true)
	case c.existed && c.after && !bytes.Equal(c.firstVal, c.val):
		if err := s.emitNow(UpdateDelete, c.firstVal, sessionSpan{}, true); err != nil {
			return err
		}
		return s.emitNow(UpdateInsert, c.val, sessionSpan{}, true)
	}
	return nil
}

// partition handles the net changes cs (times not NULL, in key order) of
// the partition with key part, region by region.
func (s *SessionWindow) partition(ctx context.Context, it, back *state.Iter, part []byte, cs []sessionNet, out Output) error {
	s.seekBuf = append(append(s.seekBuf[:0], part...), 0x01)
	n := len(s.seekBuf)
	s.seekBuf = append(append(s.seekBuf, part...), 0x02)
	it.SetBounds(s.seekBuf[:n], s.seekBuf[n:]) // copied
	for len(cs) > 0 {
		lo := s.regionStart(back, part, cs[0].ts)
		n, err := s.region(ctx, it, part, lo, cs, out)
		if err != nil {
			return err
		}
		if n == 0 {
			return sqlerr.New(sqlerr.InternalError, "exec: SessionWindow: a region without changes")
		}
		cs = cs[n:]
	}
	if err := back.Error(); err != nil {
		return err
	}
	return it.Error()
}

// near reports whether b, at or after a, is less than the gap after it
// (without overflow: the difference of two times fits in a uint64).
func (s *SessionWindow) near(a, b int64) bool { return uint64(b)-uint64(a) < uint64(s.spec.Gap) }

// timeKey returns the key prefix of the rows of partition part at time t.
func (s *SessionWindow) timeKey(part []byte, t int64) []byte {
	s.keyBuf = s.appendTimeKey(append(s.keyBuf[:0], part...), t)
	return s.keyBuf
}

// keyTime decodes the time of a state key of a partition key of partLen
// bytes.
func keyTime(key []byte, partLen int) int64 {
	return int64(binary.BigEndian.Uint64(key[partLen+1:partLen+9]) ^ (1 << 63))
}

// regionStart returns the start of the region around time t: walking back
// over the stored rows while each is less than the gap before the next.
// Changes before t belong to earlier regions, which end at least a gap
// before the first stored row after them.
//
// Each step moves to the earliest stored row less than the gap before lo,
// with back bounded to those rows: an unbounded step back would skip the
// tombstones of every row deleted before (final sessions leave a prefix of
// tombstones in each partition until Pebble compacts them).
func (s *SessionWindow) regionStart(back *state.Iter, part []byte, t int64) int64 {
	lo := t
	for {
		s.seekBuf = s.appendTimeKey(append(s.seekBuf[:0], part...), satSub(lo, s.spec.Gap-1))
		n := len(s.seekBuf)
		s.seekBuf = s.appendTimeKey(append(s.seekBuf, part...), lo)
		back.SetBounds(s.seekBuf[:n], s.seekBuf[n:])
		if !back.First() {
			return lo
		}
		lo = keyTime(back.Key(), len(part))
	}
}

// appendTimeKey appends the key encoding of time t.
func (s *SessionWindow) appendTimeKey(buf []byte, t int64) []byte {
	return state.AppendKeyDatum(buf, s.spec.Types[s.spec.TimeCol], types.DInt(t))
}

// regionPoints iterates the points of a region in key order: the stored
// rows (O) merged with the net changes.
type regionPoints struct {
	s       *SessionWindow
	it      *state.Iter
	partLen int
	cs      []sessionNet
	k       int // next change
	stateOK bool

	// The current point: its time, whether it is a row of O (with its
	// stored row) and of N (with its new row), and its change, if any.
	ts       int64
	inO, inN bool
	oldVal   []byte
	newVal   []byte
	change   *sessionNet
	fromIter bool
}

func (r *regionPoints) start(part []byte, lo int64) {
	r.stateOK = r.it.SeekGE(r.s.timeKey(part, lo))
	r.k = 0
}

// next moves to the next point; false at the end of the partition.
func (r *regionPoints) next() bool {
	if r.fromIter {
		r.stateOK = r.it.Next()
	}
	if r.change != nil {
		r.k++
	}
	r.fromIter, r.change = false, nil
	cmp := 0
	switch {
	case r.stateOK && r.k < len(r.cs):
		cmp = bytes.Compare(r.it.Key(), r.cs[r.k].key)
	case r.stateOK:
		cmp = -1
	case r.k < len(r.cs):
		cmp = 1
	default:
		return false
	}
	r.inO, r.inN = cmp <= 0, cmp < 0
	if cmp <= 0 {
		r.fromIter = true
		r.ts = keyTime(r.it.Key(), r.partLen)
		r.oldVal = r.it.Value()
		r.newVal = r.oldVal
	}
	if cmp >= 0 {
		c := &r.cs[r.k]
		r.change, r.ts = c, c.ts
		r.inN, r.newVal = c.after, c.val
	}
	return true
}

// region emits the changes of the region starting at lo, whose first
// changes are cs, and returns how many changes it holds.
func (s *SessionWindow) region(ctx context.Context, it *state.Iter, part []byte, lo int64, cs []sessionNet, out Output) (int, error) {
	// Pass 1: the region's end and its sessions of O and N; the points of a
	// small region are kept for pass 2.
	r := regionPoints{s: s, it: it, partLen: len(part), cs: cs}
	r.start(part, lo)
	s.oldSpans, s.newSpans = s.oldSpans[:0], s.newSpans[:0]
	s.points, s.pointVals = s.points[:0], s.pointVals[:0]
	kept := true
	hi, started := lo, false
	for r.next() {
		if started && !s.near(hi, r.ts) {
			break
		}
		hi, started = r.ts, true
		if r.inO {
			s.oldSpans = s.addSpan(s.oldSpans, r.ts)
		}
		if r.inN {
			s.newSpans = s.addSpan(s.newSpans, r.ts)
		}
		if kept = kept && len(s.points) < maxRegionPoints; kept {
			s.keepPoint(&r)
		}
	}
	if err := it.Error(); err != nil {
		return 0, err
	}
	consumed := r.k
	if s.spec.Index != nil {
		s.updateIndex(part)
	}
	// Pass 2: emit the difference.
	e := regionEmitter{s: s}
	if kept {
		for i := range s.points {
			p := &s.points[i]
			if err := e.emit(ctx, p.ts, p.inO, p.inN, p.changed, s.pointVal(p.old), s.pointVal(p.new), out); err != nil {
				return 0, err
			}
		}
		return consumed, nil
	}
	r = regionPoints{s: s, it: it, partLen: len(part), cs: cs[:consumed]}
	r.start(part, lo)
	for r.next() && r.ts <= hi {
		if err := e.emit(ctx, r.ts, r.inO, r.inN, r.change != nil, r.oldVal, r.newVal, out); err != nil {
			return 0, err
		}
	}
	return consumed, it.Error()
}

// maxRegionPoints bounds the points of a region kept in memory between its
// two passes; a larger region is read again.
const maxRegionPoints = 4 * BatchSize

// regionPoint is a point of a region kept for pass 2: its rows before and
// after the epoch are pointVals[off:off+len] (old: a copy of the stored
// row) or, for a changed row's new value, the log's arena (len < 0 for
// none).
type regionPoint struct {
	ts                int64
	inO, inN, changed bool
	old, new          pointRef
}

type pointRef struct {
	vals []byte // the log's arena, or nil: pointVals
	off  int
	n    int
}

func (s *SessionWindow) keepPoint(r *regionPoints) {
	p := regionPoint{ts: r.ts, inO: r.inO, inN: r.inN, changed: r.change != nil}
	if r.inO {
		p.old = pointRef{off: len(s.pointVals), n: len(r.oldVal)}
		s.pointVals = append(s.pointVals, r.oldVal...)
	}
	switch {
	case r.change != nil && r.inN:
		p.new = pointRef{vals: r.newVal, n: len(r.newVal)}
	case r.inN:
		p.new = p.old
	}
	s.points = append(s.points, p)
}

func (s *SessionWindow) pointVal(ref pointRef) []byte {
	if ref.vals != nil {
		return ref.vals
	}
	return s.pointVals[ref.off : ref.off+ref.n]
}

// regionEmitter emits the difference of a region's points, in time order,
// given the region's sessions of O and N.
type regionEmitter struct {
	s      *SessionWindow
	oi, ni int
}

func (e *regionEmitter) emit(ctx context.Context, ts int64, inO, inN, changed bool, oldVal, newVal []byte, out Output) error {
	s := e.s
	var old, cur sessionSpan
	if inO {
		for s.oldSpans[e.oi].last < ts {
			e.oi++
		}
		old = s.oldSpans[e.oi]
	}
	if inN {
		for s.newSpans[e.ni].last < ts {
			e.ni++
		}
		cur = s.newSpans[e.ni]
	}
	var err error
	switch {
	case inO && !inN:
		err = s.emitNow(Delete, oldVal, old, false)
	case !inO && inN:
		err = s.emitInsert(newVal, cur, false)
	case inO && inN && (old != cur || (changed && !bytes.Equal(oldVal, newVal))):
		if err = s.emitNow(UpdateDelete, oldVal, old, false); err == nil {
			err = s.emitNow(UpdateInsert, newVal, cur, false)
		}
	}
	if err != nil || s.nowRows < BatchSize {
		return err
	}
	return s.flushNow(ctx, out)
}

// addSpan adds a row at time t, at or after every row of spans, to the
// sessions spans.
func (s *SessionWindow) addSpan(spans []sessionSpan, t int64) []sessionSpan {
	if n := len(spans); n > 0 && s.near(spans[n-1].last, t) {
		spans[n-1].last = t
		return spans
	}
	return append(spans, sessionSpan{start: t, last: t})
}

// end returns the window_end of a session, false if it is beyond the
// timestamp range.
func (s *SessionWindow) end(sp sessionSpan) (int64, bool) {
	if sp.last >= tsEndMicros-s.spec.Gap {
		return 0, false
	}
	return sp.last + s.spec.Gap, true
}

// tsEndMicros is the first timestamp beyond the supported range.
const tsEndMicros = math.MaxInt64 / (24 * 3600 * 1_000_000) * (24 * 3600 * 1_000_000)

// indexKey builds the Index key of a session of partition part (virtual
// node, partition key): the virtual node, window_end, the partition key.
func (s *SessionWindow) indexKey(part []byte, sp sessionSpan) []byte {
	end, ok := s.end(sp)
	if !ok {
		end = math.MaxInt64
	}
	s.keyBuf = s.appendTimeKey(append(s.keyBuf[:0], part[:state.VNodePrefixLen]...), end)
	s.keyBuf = append(s.keyBuf, part[state.VNodePrefixLen:]...)
	return s.keyBuf
}

// updateIndex replaces the region's sessions of O by those of N in Index.
func (s *SessionWindow) updateIndex(part []byte) {
	for _, sp := range s.oldSpans {
		s.spec.Index.Delete(s.indexKey(part, sp))
	}
	for _, sp := range s.newSpans {
		s.spec.Index.Put(s.indexKey(part, sp), binary.BigEndian.AppendUint64(s.seekBuf[:0], uint64(sp.start)))
	}
}

// dropFinal deletes the rows of the sessions whose window_end is at most
// the watermark, and records the watermark. It deletes keys one by one, each
// session's from its first row (in its Index value) to its last: a range
// deletion per partition would cost Pebble a range tombstone each, to be
// fragmented by every later iterator, and a range from the partition's start
// would read the tombstones of the rows dropped before.
func (s *SessionWindow) dropFinal() error {
	upper := s.appendTimeKey(nil, s.wm)
	upper = state.AppendPrefixEnd(nil, upper) // every window_end <= wm
	it, err := s.spec.Index.NewIter(nil, nil)
	if err != nil {
		return err
	}
	type final struct {
		part        string
		start, last int64
	}
	var finals []final
	var lo, hi []byte
	const p = state.VNodePrefixLen
	for v := s.spec.VNodes.Lo; v < s.spec.VNodes.Hi; v++ {
		lo = state.AppendVNode(lo[:0], v)
		hi = append(state.AppendVNode(hi[:0], v), upper...)
		it.SetBounds(lo, hi)
		for ok := it.First(); ok; ok = it.Next() {
			key, val := it.Key(), it.Value()
			if len(key) < p+9 || key[p] != 0x01 || len(val) != 8 {
				it.Close()
				return errCorruptState
			}
			end := int64(binary.BigEndian.Uint64(key[p+1:p+9]) ^ (1 << 63))
			part := string(key[:p]) + string(key[p+9:])
			finals = append(finals, final{part: part, start: int64(binary.BigEndian.Uint64(val)), last: end - s.spec.Gap})
			s.spec.Index.Delete(key)
		}
	}
	err = it.Error()
	it.Close()
	if err != nil {
		return err
	}
	if len(finals) > 0 {
		// In key order: the fastest way to probe an iterator.
		slices.SortFunc(finals, func(a, b final) int {
			if c := strings.Compare(a.part, b.part); c != 0 {
				return c
			}
			return cmp.Compare(a.start, b.start)
		})
		rows, err := s.spec.Table.NewIter(nil, nil)
		if err != nil {
			return err
		}
		for _, f := range finals {
			s.seekBuf = s.appendTimeKey(append(s.seekBuf[:0], f.part...), f.start)
			n := len(s.seekBuf)
			s.seekBuf = s.appendTimeKey(append(s.seekBuf, f.part...), f.last+1)
			rows.SetBounds(s.seekBuf[:n], s.seekBuf[n:])
			for ok := rows.First(); ok; ok = rows.Next() {
				s.spec.Table.Delete(rows.Key())
			}
		}
		err = rows.Error()
		rows.Close()
		if err != nil {
			return err
		}
	}
	s.wmDone, s.wmSet = s.wm, true
	s.spec.Watermark.Put(watermarkKey, binary.AppendVarint(nil, s.wm))
	return nil
}

// emitNow adds a Delete or half of an update pair to the current output.
func (s *SessionWindow) emitNow(op Op, row []byte, sp sessionSpan, null bool) error {
	if s.now == nil {
		s.now = newBuilders(s.mem, s.outTypes)
	}
	if err := s.appendRow(s.now, row, sp, null); err != nil {
		return err
	}
	s.nowOps = append(s.nowOps, op)
	s.nowRows++
	return nil
}

// emitInsert adds an Insert, emitted after every Delete of the barrier.
func (s *SessionWindow) emitInsert(row []byte, sp sessionSpan, null bool) error {
	if s.ins == nil {
		s.ins = newBuilders(s.mem, s.outTypes)
	}
	if err := s.appendRow(s.ins, row, sp, null); err != nil {
		return err
	}
	if s.insRows++; s.insRows == BatchSize {
		s.insRecs = append(s.insRecs, buildRecord(s.schema, s.ins, s.insRows))
		s.insRows = 0
	}
	return nil
}

// appendRow appends row with the bounds of sp (NULL bounds if null) to bs.
func (s *SessionWindow) appendRow(bs []array.Builder, row []byte, sp sessionSpan, null bool) error {
	if err := s.codec.Decode(row, bs[:s.width]); err != nil {
		return err
	}
	start, end := bs[s.width].(*array.TimestampBuilder), bs[s.width+1].(*array.TimestampBuilder)
	if null {
		start.AppendNull()
		end.AppendNull()
		return nil
	}
	start.Append(arrow.Timestamp(sp.start))
	e, ok := s.end(sp)
	if !ok {
		if s.spec.Sequence {
			return sqlerr.New(sqlerr.DatetimeFieldOverflow, "timestamp out of range")
		}
		if s.spec.Errors != nil {
			s.spec.Errors.Add(1)
		}
		end.AppendNull()
		return nil
	}
	end.Append(arrow.Timestamp(e))
	return nil
}

func (s *SessionWindow) flushNow(ctx context.Context, out Output) error {
	if s.nowRows == 0 {
		return nil
	}
	rec := buildRecord(s.schema, s.now, s.nowRows)
	ops := append([]Op(nil), s.nowOps...)
	s.nowOps, s.nowRows = s.nowOps[:0], 0
	return out.Emit(ctx, Message{Batch: NewBatch(rec, ops)})
}

func (s *SessionWindow) flushInserts(ctx context.Context, out Output) error {
	if s.insRows > 0 {
		s.insRecs = append(s.insRecs, buildRecord(s.schema, s.ins, s.insRows))
		s.insRows = 0
	}
	recs := s.insRecs
	s.insRecs = s.insRecs[:0]
	return emitInserts(ctx, out, recs)
}

// Close releases the builders and any records not emitted.
func (s *SessionWindow) Close() {
	if s.now != nil {
		releaseBuilders(s.now)
	}
	if s.ins != nil {
		releaseBuilders(s.ins)
	}
	for _, r := range s.insRecs {
		r.Release()
	}
	s.insRecs = nil
}

// newSessionWindowOperator builds the operator of a planned SessionWindow.
func newSessionWindowOperator(env Env, n *planner.SessionWindow) (*SessionWindow, error) {
	spec := SessionWindowSpec{
		Types: planner.Types(n.Input.Columns()), TimeCol: n.TimeCol, Gap: n.Gap,
		PartitionCols: n.PartitionCols, KeepNulls: n.KeepNulls,
		InputKey: n.Key, Sequence: n.Key == nil,
		Table: env.Table(n.Table), LateRows: env.LateRows, VNodes: env.VNodes,
	}
	if env.Eval != nil {
		spec.Errors = env.Eval.Errors
	}
	if n.Watermark {
		spec.Index, spec.Watermark = env.Table(n.IndexTable), env.Table(n.WatermarkTable)
	}
	return NewSessionWindow(env.Mem, spec)
}
