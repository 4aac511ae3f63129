package exec

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"sync/atomic"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/streamsql/streamsql/barrier"
	"github.com/streamsql/streamsql/ir"
	"github.com/streamsql/streamsql/memlimit"
	"github.com/streamsql/streamsql/planner"
	"github.com/streamsql/streamsql/sqlerr"
	"github.com/streamsql/streamsql/state"
	"github.com/streamsql/streamsql/types"
)

// TopNSpec configures a TopN.
type TopNSpec struct {
	// Types are the input's column types.
	Types []types.T
	// GroupCols are the group (partition) key columns; none: one group.
	GroupCols []int
	// Keys order the rows of a group: input columns, with ASC/DESC and NULLS
	// FIRST/LAST as in PostgreSQL.
	Keys []ir.SortKey
	// InputKey is the input's stream key: rows that are peers in Keys order
	// are ordered by it. With Sequence the input is insert-only (a batch
	// query) and rows are ordered by arrival instead.
	InputKey []int
	Sequence bool
	// Offset and Limit (both >= 0) are the window [Offset, Offset+Limit) of
	// each group, numbered as Kind says.
	Offset, Limit int64
	Kind          ir.RankKind
	// RankCol appends the row's number in its group as a bigint column.
	RankCol bool
	// Table holds every input row: key = virtual node of the group key
	// (state.SetVNode), group key, order key, input stream key (or arrival
	// number); value = the order key's length (uvarint) and the row
	// (RowCodec).
	Table *state.Table
	// VNodes are the virtual nodes whose groups this TopN holds (the zero
	// value: all of them). Dropping final groups by watermark deletes and
	// scans within VNodes only.
	VNodes state.VNodes
	// CacheGroups bounds the groups kept in memory across barriers (0:
	// DefaultAggCacheGroups).
	CacheGroups int
	// CachePool is the budget's pool of operator caches (see
	// HashAggSpec.CachePool).
	CachePool *memlimit.Pool
	// AppendOnly inputs never retract: a row that falls out of its group's
	// window can never come back, so it is not kept (a row sorting after a
	// full window is not stored; the rows a barrier's window leaves behind
	// are deleted), and the state is the windows.
	AppendOnly bool
	// Watermark, if set, holds the watermark reached on the first group
	// column, GroupCols[0]: the groups below it are final (see
	// top_n_window.go). EmitOnWindowClose emits each group's window once,
	// when it becomes final. LateRows counts the rows dropped for arriving
	// late.
	Watermark         *state.Table
	EmitOnWindowClose bool
	LateRows          *atomic.Int64
}

// TopN is the streaming TopN: per group of its input, the rows in a window
// of the group's rows in ORDER BY order (LIMIT/OFFSET, DISTINCT ON, FETCH
// FIRST ... WITH TIES, row_number()/rank()/dense_rank() <= N).
//
// It keeps every input row in its state table and, at every barrier, emits
// the changes of each group's window over the epoch, net: Deletes, then
// UpdateDelete/UpdateInsert pairs (a row still in the window whose values or
// number changed), then Inserts, so that a row whose order key changed is
// deleted before it is inserted again. A deleted row of the window is
// replaced by the next row from state; an inserted row that enters the
// window pushes the last one out.
//
// Memory: per group in memory, a cache of the group's first rows (about
// twice Offset+Limit, more while peers extend the window), read from the
// state table with an iterator when it runs short; beyond CacheGroups
// groups, the least recently used ones are evicted after a barrier. A
// change sorting after the window's last row costs a state write only. The
// window of each group whose window may have changed is recomputed at the
// barrier: O(Offset+Limit) per such group and epoch.
//
// Restart: the state table is the operator's whole state. The window
// emitted at the last committed barrier is a function of it, so a
// restarted TopN recomputes it from state at each group's first change.
type TopN struct {
	mem   memory.Allocator
	spec  TopNSpec
	codec *state.RowCodec
	out   []types.T
	// end is Offset+Limit (saturated); capacity is the number of rows a
	// group's cache keeps at least (2*end, at most 65536), and the least it
	// reads from state at a time.
	end      int64
	capacity int

	groups  map[string]*topNGroup
	clock   []*topNGroup
	hand    int
	touched []*topNGroup
	// evicted is set once a group with rows was evicted.
	evicted bool
	seq     uint64

	keyBuf, valBuf  []byte
	lowBuf, highBuf []byte
	vnodeBuf        []byte
	cols            []arrow.Array
	// groupCols are the batch's group columns, of types groupTypes.
	groupCols   []arrow.Array
	groupTypes  []types.T
	cur         []topNOut
	dels, pairs []topNOut
	ins         []topNOut

	// wm is the watermark of the first group column (nil without
	// spec.Watermark).
	wm *groupWatermark

	// charges accounts the cached groups in spec.CachePool (each group
	// keeps its charge).
	charges cacheCharges
}

// NewTopN returns a TopN.
func NewTopN(mem memory.Allocator, spec TopNSpec) *TopN {
	if spec.CacheGroups <= 0 {
		spec.CacheGroups = DefaultAggCacheGroups
	}
	if spec.VNodes.Hi == 0 {
		spec.VNodes = state.AllVNodes
	}
	t := &TopN{mem: mem, spec: spec, codec: state.NewRowCodec(spec.Types), groups: map[string]*topNGroup{}, charges: newCacheCharges(spec.CachePool)}
	t.out = spec.Types
	for _, c := range spec.GroupCols {
		t.groupTypes = append(t.groupTypes, spec.Types[c])
	}
	if spec.RankCol {
		t.out = append(append([]types.T(nil), spec.Types...), types.Int64T)
	}
	t.end = spec.Offset + spec.Limit
	if t.end < spec.Offset {
		t.end = 1<<63 - 1
	}
	t.capacity = 1 << 16
	if t.end < int64(t.capacity/2) {
		t.capacity = max(int(2*t.end), 2)
	}
	return t
}

// encode builds row i's state key in keyBuf: the virtual node and the
// group key (their length is returned), the order key (its length too) and
// the tiebreak.
func (t *TopN) encode(i int) (group, ord int) {
	var v uint16
	v, t.vnodeBuf = partitionVNode(t.vnodeBuf, t.groupTypes, t.groupCols, i)
	buf := state.AppendVNode(t.keyBuf[:0], v)
	for _, c := range t.spec.GroupCols {
		// Ascending with NULLs first: the state key encoding, but equal
		// intervals ('1 mon', '30 days') in one group.
		buf = appendOrderKey(buf, t.spec.Types[c], t.cols[c], i, false, true)
	}
	group = len(buf)
	for _, k := range t.spec.Keys {
		buf = appendOrderKey(buf, t.spec.Types[k.Column], t.cols[k.Column], i, k.Desc, k.NullsFirst)
	}
	ord = len(buf) - group
	if t.spec.Sequence {
		buf = binary.BigEndian.AppendUint64(buf, t.seq)
		t.seq++
	} else {
		for _, c := range t.spec.InputKey {
			buf = state.AppendKey(buf, t.spec.Types[c], t.cols[c], i)
		}
	}
	t.keyBuf = buf
	return group, ord
}

// group returns the group with key, creating it (unread) if it is not in
// memory, and marks it used.
func (t *TopN) group(key []byte) *topNGroup {
	g, ok := t.groups[string(key)]
	if !ok {
		g = &topNGroup{key: append([]byte(nil), key...), slot: len(t.clock)}
		// A batch query's state starts empty: a group never seen has no rows.
		g.complete = t.spec.Sequence && !t.evicted
		t.groups[string(g.key)] = g
		t.clock = append(t.clock, g)
	}
	g.used = true
	return g
}

// touch prepares g for its first change of the epoch: it records the window
// as emitted and its boundary.
func (t *TopN) touch(g *topNGroup) error {
	if g.touched {
		return nil
	}
	g.touched = true
	t.touched = append(t.touched, g)
	var err error
	g.old, err = t.window(g, g.old[:0])
	return err
}

// OnBatch applies the batch's changes to state and the groups' caches.
func (t *TopN) OnBatch(_ context.Context, b *Batch, _ Output) error {
	b, err := t.dropLate(b)
	if err != nil {
		return err
	}
	defer b.Release()
	t.cols = append(t.cols[:0], b.Rec.Columns()...)
	t.groupCols = t.groupCols[:0]
	for _, c := range t.spec.GroupCols {
		t.groupCols = append(t.groupCols, t.cols[c])
	}
	for i, op := range b.Ops {
		if t.spec.Sequence && !op.IsInsert() {
			return sqlerr.New(sqlerr.InternalError, "exec: TopN without a stream key got a retraction")
		}
		glen, ord := t.encode(i)
		g := t.group(t.keyBuf[:glen])
		if err := t.touch(g); err != nil {
			return err
		}
		key := t.keyBuf[glen:]
		inside := t.inside(g, key, ord)
		if t.spec.AppendOnly && !inside {
			continue // it sorts after a full window: it can never enter it
		}
		if !g.dirty && inside {
			g.dirty = true
		}
		if op.IsInsert() {
			t.valBuf = binary.AppendUvarint(t.valBuf[:0], uint64(ord))
			n := len(t.valBuf)
			t.valBuf = t.codec.Append(t.valBuf, t.cols, i)
			t.spec.Table.Put(t.keyBuf, t.valBuf)
			if t.spec.AppendOnly {
				t.insertAppendOnly(g, key, ord, t.valBuf[n:])
				continue
			}
			g.insert(key, ord, t.valBuf[n:], t.keep(g))
		} else {
			t.spec.Table.Delete(t.keyBuf)
			g.remove(key)
		}
	}
	return nil
}

// keep is the number of rows g's cache keeps.
func (t *TopN) keep(g *topNGroup) int { return max(t.capacity, g.scanned) }

// OnBarrier emits the epoch's changes of every window and seals the state.
func (t *TopN) OnBarrier(ctx context.Context, br *barrier.Barrier, out Output) error {
	t.dels, t.pairs, t.ins = t.dels[:0], t.pairs[:0], t.ins[:0]
	for _, g := range t.touched {
		if g.dirty && !t.spec.EmitOnWindowClose {
			var err error
			if t.cur, err = t.window(g, t.cur[:0]); err != nil {
				return err
			}
			t.diff(g.old, t.cur)
			if t.spec.AppendOnly {
				t.dropBeyond(g)
			}
		}
		g.touched, g.dirty = false, false
		clear(g.old)
		g.old = g.old[:0]
		g.trim(t.keep(g))
		if g.complete && len(g.rows) == 0 {
			t.drop(g)
		} else {
			t.charges.setAt(&g.charged, g.bytes())
		}
	}
	clear(t.touched)
	t.touched = t.touched[:0]
	err := t.emit(ctx, out)
	clear(t.dels)
	clear(t.pairs)
	clear(t.ins)
	if err == nil {
		err = t.closeGroups(ctx, out)
	}
	t.evict()
	t.spec.Table.Seal(br.Epoch)
	if t.spec.Watermark != nil {
		t.spec.Watermark.Seal(br.Epoch)
	}
	return err
}

// insertAppendOnly adds a row to the cache of a group of an append-only
// input, which holds all its stored rows. With row numbers, the rows it
// pushes beyond the cache's size (at least twice the window's end) can
// never come back, so they are deleted from state too; with ranks, peers
// may extend the window without bound, so the barrier's dropBeyond does it.
func (t *TopN) insertAppendOnly(g *topNGroup, key []byte, ord int, row []byte) {
	keep := t.keep(g)
	g.insert(key, ord, row, len(g.rows)+1)
	for t.spec.Kind == ir.RowNumber && len(g.rows) > keep {
		last := g.rows[len(g.rows)-1]
		t.lowBuf = append(append(t.lowBuf[:0], g.key...), last.key...)
		t.spec.Table.Delete(t.lowBuf)
		g.rows[len(g.rows)-1] = topNRow{}
		g.rows = g.rows[:len(g.rows)-1]
	}
}

// dropBeyond deletes, for an append-only input, the rows of g after the
// window just computed: none can enter it again.
func (t *TopN) dropBeyond(g *topNGroup) {
	if !g.bounded || g.scanned < 1 || g.scanned > len(g.rows) {
		return
	}
	if g.complete {
		// The cache holds every stored row: point deletions (a range
		// deletion per group and epoch would slow every later read).
		for _, r := range g.rows[g.scanned-1:] {
			t.lowBuf = append(append(t.lowBuf[:0], g.key...), r.key...)
			t.spec.Table.Delete(t.lowBuf)
		}
	} else {
		first := g.rows[g.scanned-1]
		t.lowBuf = append(append(t.lowBuf[:0], g.key...), first.key...)
		t.spec.Table.DeleteRange(t.lowBuf, state.PrefixEnd(g.key))
	}
	clear(g.rows[g.scanned-1:])
	g.rows = g.rows[:g.scanned-1]
	g.complete = true
}

// diff adds the changes from window old to window cur (both in key order).
func (t *TopN) diff(old, cur []topNOut) {
	i, j := 0, 0
	for i < len(old) || j < len(cur) {
		c := 0
		switch {
		case i == len(old):
			c = 1
		case j == len(cur):
			c = -1
		default:
			c = bytes.Compare(old[i].key, cur[j].key)
		}
		switch {
		case c < 0:
			t.dels = append(t.dels, old[i])
			i++
		case c > 0:
			t.ins = append(t.ins, cur[j])
			j++
		default:
			if !bytes.Equal(old[i].row, cur[j].row) || t.spec.RankCol && old[i].rank != cur[j].rank {
				t.pairs = append(t.pairs, old[i], cur[j])
			}
			i++
			j++
		}
	}
}

// emit sends the collected changes in batches of at most BatchSize rows,
// never splitting an update pair.
func (t *TopN) emit(ctx context.Context, out Output) error {
	if len(t.dels)+len(t.pairs)+len(t.ins) == 0 {
		return nil
	}
	bs := newBuilders(t.mem, t.out)
	defer releaseBuilders(bs)
	schema := SchemaOf(t.out)
	var ops []Op
	flush := func() error {
		if len(ops) == 0 {
			return nil
		}
		rec := buildRecord(schema, bs, len(ops))
		err := out.Emit(ctx, Message{Batch: NewBatch(rec, ops)})
		ops = nil
		return err
	}
	add := func(r topNOut, op Op) error {
		if err := t.codec.Decode(r.row, bs[:len(t.spec.Types)]); err != nil {
			return err
		}
		if t.spec.RankCol {
			bs[len(t.spec.Types)].(*array.Int64Builder).Append(r.rank)
		}
		ops = append(ops, op)
		return nil
	}
	for _, r := range t.dels {
		if err := add(r, Delete); err != nil {
			return err
		}
		if len(ops) == BatchSize {
			if err := flush(); err != nil {
				return err
			}
		}
	}
	for k := 0; k < len(t.pairs); k += 2 {
		if len(ops)+2 > BatchSize {
			if err := flush(); err != nil {
				return err
			}
		}
		if err := add(t.pairs[k], UpdateDelete); err != nil {
			return err
		}
		if err := add(t.pairs[k+1], UpdateInsert); err != nil {
			return err
		}
	}
	for _, r := range t.ins {
		if len(ops) == BatchSize {
			if err := flush(); err != nil {
				return err
			}
		}
		if err := add(r, Insert); err != nil {
			return err
		}
	}
	return flush()
}

// drop forgets g.
func (t *TopN) drop(g *topNGroup) {
	t.charges.setAt(&g.charged, 0)
	delete(t.groups, string(g.key))
	last := len(t.clock) - 1
	t.clock[g.slot] = t.clock[last]
	t.clock[g.slot].slot = g.slot
	t.clock[last] = nil
	t.clock = t.clock[:last]
}

// evict drops groups from memory, least recently used first (a CLOCK
// sweep), until at most CacheGroups remain. It runs after a barrier, when no
// group is touched: every group's rows are in the state table.
func (t *TopN) evict() {
	over := t.charges.overBy()
	for len(t.groups) > t.spec.CacheGroups || (len(t.groups) > 0 && over()) {
		if t.hand >= len(t.clock) {
			t.hand = 0
		}
		g := t.clock[t.hand]
		if g.used {
			g.used = false
			t.hand++
			continue
		}
		t.drop(g)
		t.evicted = true
	}
}

// Close releases the cache's reservation; TopN holds no Arrow memory
// between calls.
func (t *TopN) Close() { t.charges.close() }

func (t *TopN) String() string {
	return fmt.Sprintf("TopN(groups=%d, keys=%d, offset=%d, limit=%d, %s)",
		len(t.spec.GroupCols), len(t.spec.Keys), t.spec.Offset, t.spec.Limit, t.spec.Kind)
}

func newTopNOperator(env Env, n *planner.TopN) (*TopN, error) {
	spec := TopNSpec{
		Types:       planner.Types(n.Input.Columns()),
		GroupCols:   n.GroupCols,
		Keys:        n.Keys,
		InputKey:    n.Input.StreamKey(),
		Sequence:    n.Sequence,
		Offset:      n.Offset,
		Limit:       n.Limit,
		Kind:        n.Kind,
		RankCol:     n.RankCol,
		Table:       env.Table(n.Table),
		CacheGroups: env.AggCacheGroups,
		CachePool:   env.CachePool,
		AppendOnly:  !n.Sequence && planner.AppendOnly(n.Input),
		LateRows:    env.LateRows,
		VNodes:      env.VNodes,
	}
	if n.WatermarkTable >= 0 {
		spec.Watermark, spec.EmitOnWindowClose = env.Table(n.WatermarkTable), n.EmitOnWindowClose
	}
	t := NewTopN(env.Mem, spec)
	if spec.Watermark != nil {
		c := spec.GroupCols[0]
		var err error
		if t.wm, err = newGroupWatermark(spec.Watermark, c, spec.Types[c]); err != nil {
			return nil, err
		}
	}
	return t, nil
}
