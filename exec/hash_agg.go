package exec

import (
	"context"
	"encoding/binary"
	"fmt"
	"sync/atomic"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/bitutil"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/streamsql/streamsql/barrier"
	"github.com/streamsql/streamsql/exec/eval"
	"github.com/streamsql/streamsql/ir"
	"github.com/streamsql/streamsql/memlimit"
	"github.com/streamsql/streamsql/state"
	"github.com/streamsql/streamsql/types"
)

// HashAggSpec configures a HashAgg.
type HashAggSpec struct {
	// GroupCols are the input columns of the group key, of types GroupTypes.
	GroupCols  []int
	GroupTypes []types.T
	// Calls are the aggregate calls; ArgCols[i] is the input column of call
	// i's argument (-1 for count(*)), of type ArgTypes[i]; FilterCols[i] is the
	// boolean input column of its FILTER clause, or -1.
	Calls      []ir.AggCall
	ArgCols    []int
	ArgTypes   []types.T
	FilterCols []int
	// Result holds, per group key, the group's row count, every aggregate's
	// state and the output row last emitted.
	Result *state.Table
	// ValueSets[i] is the multiset of call i's values per group, for min, max
	// and DISTINCT aggregates; nil for the others. In batch queries min and
	// max have none (their input is insert-only).
	ValueSets []*state.Table
	// InputKey are the input's stream key columns, of types InputKeyTypes:
	// min and max value sets keep one entry per input row, keyed by it.
	InputKey      []int
	InputKeyTypes []types.T
	// CacheGroups bounds the groups kept in memory across barriers (0:
	// DefaultAggCacheGroups). Every group's state is in Result, so evicting
	// one loses nothing; its next change reloads it.
	CacheGroups int
	// CachePool is the budget's pool of operator caches; beyond its share
	// groups are evicted too (cache_budget.go). Nil: CacheGroups only.
	CachePool *memlimit.Pool
	// Watermark, if set, holds the watermark reached on the first group
	// column's input, GroupCols[0] (see hash_agg_window.go); the groups it
	// passes are final. EmitOnWindowClose emits each group once, when it
	// becomes final. LateRows counts the rows dropped for arriving late.
	Watermark         *state.Table
	EmitOnWindowClose bool
	LateRows          *atomic.Int64
	// VNodes are the virtual nodes whose groups this aggregation holds (the
	// zero value: all of them). Every state key starts with the group key's
	// virtual node (state.SetVNode); cleaning by watermark deletes and scans
	// within VNodes only.
	VNodes state.VNodes
}

// DefaultAggCacheGroups is the default HashAggSpec.CacheGroups.
const DefaultAggCacheGroups = 1 << 20

// NeedsValueSet reports whether call needs a value-set state table.
func NeedsValueSet(call ir.AggCall) bool {
	return call.Func == ir.AggMin || call.Func == ir.AggMax || call.Distinct
}

// HashAgg is the streaming grouped aggregation. It consumes a change stream
// and, at every barrier, emits the changes of its output: for each group
// touched in the epoch, the retraction of the row it emitted before and the
// new row (as an UpdateDelete/UpdateInsert pair, or a lone Insert or Delete
// when the group appears or disappears). Groups whose output did not change
// emit nothing. Without group columns there is exactly one group, which
// exists (and is emitted) even when no row has arrived.
//
// Groups are loaded from the Result table on first touch, so a restarted
// operator picks up where the last committed epoch left it, and an evicted
// group where it was evicted. The groups touched in an epoch stay in memory
// until its barrier; after it, beyond CacheGroups groups, the least recently
// used ones (approximately: a CLOCK sweep) are evicted, so aggregation state
// is bounded by the cache, not by the number of groups.
type HashAgg struct {
	mem  memory.Allocator
	ectx *eval.Context
	spec HashAggSpec

	aggs     []aggregator
	outTypes []types.T
	// needRowKeys is set if a min or max keeps a per-row value set.
	needRowKeys bool
	outCodec    *state.RowCodec

	groups map[string]int32
	keys   [][]byte
	// live marks the slots holding a group; used marks those touched since
	// the eviction sweep last passed them; hand is the sweep's position.
	live    []bool
	used    []bool
	hand    int
	rows    []int64
	emitted [][]byte
	dirty   []int32
	isDirty []bool
	free    []int32

	slots []int32
	signs []int8
	// rowKeys holds the encoded input stream keys of the current batch,
	// row i at rowKeys[rowKeyEnds[i-1]:rowKeyEnds[i]].
	rowKeys    []byte
	rowKeyEnds []int
	signsK     []int8
	keyBuf     []byte
	valBuf     []byte
	datums     []types.Datum
	// groupScales are the hidden aggregators (at the end of aggs) of the
	// unconstrained numeric group columns' display scales.
	groupScales []*groupScaleAgg

	// wm is the watermark of the first group column (nil without
	// spec.Watermark).
	wm *groupWatermark

	// charges accounts the cached groups in spec.CachePool.
	charges cacheCharges
}

// NewHashAgg returns a HashAgg. ectx counts and logs aggregate errors
// (overflow) in lenient mode and returns them in strict mode.
func NewHashAgg(mem memory.Allocator, ectx *eval.Context, spec HashAggSpec) (*HashAgg, error) {
	if spec.CacheGroups <= 0 {
		spec.CacheGroups = DefaultAggCacheGroups
	}
	if spec.VNodes.Hi == 0 {
		spec.VNodes = state.AllVNodes
	}
	a := &HashAgg{mem: mem, ectx: ectx, spec: spec, groups: map[string]int32{}, charges: newCacheCharges(spec.CachePool)}
	for i, call := range spec.Calls {
		agg, err := newAggregator(call, spec.ArgTypes[i], spec.ValueSets[i], a.groupKey, a.rowKey)
		if err != nil {
			return nil, err
		}
		a.aggs = append(a.aggs, agg)
	}
	a.shareValueSets()
	for j, t := range spec.GroupTypes {
		if t.DynamicNumeric() {
			gs := &groupScaleAgg{col: j}
			a.groupScales = append(a.groupScales, gs)
			a.aggs = append(a.aggs, gs) // after the calls' aggregators
		}
	}
	for i, call := range spec.Calls {
		if needsRowKeys(call) && spec.ValueSets[i] != nil {
			a.needRowKeys = true
		}
	}
	a.outTypes = append(append([]types.T{}, spec.GroupTypes...), callTypes(spec.Calls)...)
	a.outCodec = state.NewRowCodec(a.outTypes)
	if spec.Watermark != nil {
		var err error
		if a.wm, err = newGroupWatermark(spec.Watermark, spec.GroupCols[0], spec.GroupTypes[0]); err != nil {
			return nil, err
		}
	}
	return a, nil
}

// shareValueSets makes each min or max whose values (argument, type and
// FILTER) are those of an earlier min or max read that one's value set
// instead of keeping its own: both hold the same entries, so min(v) and
// max(v) together cost one write per row, not two. The later call's own
// table stays empty.
func (a *HashAgg) shareValueSets() {
	for j := range a.spec.Calls {
		mj, ok := a.aggs[j].(*minMaxAgg)
		if !ok || mj.set == nil || mj.exact {
			continue
		}
		for i := range j {
			mi, ok := a.aggs[i].(*minMaxAgg)
			if ok && mi.set != nil && !mi.exact && !mi.readsSet && a.sameValues(i, j) {
				mj.set, mj.readsSet = mi.set, true
				break
			}
		}
	}
}

// sameValues reports whether calls i and j aggregate the same values.
func (a *HashAgg) sameValues(i, j int) bool {
	s := a.spec
	return s.ArgCols[i] == s.ArgCols[j] && s.FilterCols[i] == s.FilterCols[j] && s.ArgTypes[i] == s.ArgTypes[j]
}

func callTypes(calls []ir.AggCall) []types.T {
	ts := make([]types.T, len(calls))
	for i, c := range calls {
		ts[i] = c.T
	}
	return ts
}

// globalGroupKey is the state key of the group of an aggregation without
// group columns: the virtual node of the empty key.
var globalGroupKey = func() []byte {
	k := state.AppendVNode(nil, 0)
	state.SetVNode(k, len(k))
	return k
}()

// groupKey returns the state key of the group in slot: its virtual node,
// then the memcomparable encoding of its group columns. Every state table
// of the aggregation keys its rows by it first.
func (a *HashAgg) groupKey(slot int32) []byte { return a.keys[slot] }

func (a *HashAgg) rowKey(i int) []byte {
	start := 0
	if i > 0 {
		start = a.rowKeyEnds[i-1]
	}
	return a.rowKeys[start:a.rowKeyEnds[i]]
}

// encodeRowKeys encodes the input stream key of every row of rec, if any
// aggregate keeps per-row value sets.
func (a *HashAgg) encodeRowKeys(rec arrow.RecordBatch) {
	if len(a.spec.InputKey) == 0 {
		a.rowKeys, a.rowKeyEnds = a.rowKeys[:0], a.rowKeyEnds[:0]
		for i := 0; i < int(rec.NumRows()); i++ {
			a.rowKeyEnds = append(a.rowKeyEnds, 0)
		}
		return
	}
	a.rowKeys, a.rowKeyEnds = a.rowKeys[:0], a.rowKeyEnds[:0]
	for i := 0; i < int(rec.NumRows()); i++ {
		for k, c := range a.spec.InputKey {
			a.rowKeys = state.AppendKey(a.rowKeys, a.spec.InputKeyTypes[k], rec.Column(c), i)
		}
		a.rowKeyEnds = append(a.rowKeyEnds, len(a.rowKeys))
	}
}

// slotFor returns the slot of the group with key, loading it from state or
// creating it.
func (a *HashAgg) slotFor(key []byte) (int32, error) {
	if slot, ok := a.groups[string(key)]; ok {
		a.used[slot] = true
		return slot, nil
	}
	var slot int32
	if n := len(a.free); n > 0 {
		slot = a.free[n-1]
		a.free = a.free[:n-1]
	} else {
		slot = int32(len(a.keys))
		a.keys = append(a.keys, nil)
		a.rows = append(a.rows, 0)
		a.emitted = append(a.emitted, nil)
		a.isDirty = append(a.isDirty, false)
		a.live = append(a.live, false)
		a.used = append(a.used, false)
		for _, agg := range a.aggs {
			agg.grow(len(a.keys))
		}
	}
	k := append([]byte(nil), key...)
	a.keys[slot] = k
	a.live[slot], a.used[slot] = true, true
	a.rows[slot] = 0
	a.emitted[slot] = nil
	for _, agg := range a.aggs {
		agg.reset(slot)
	}
	a.groups[string(k)] = slot
	v, ok, err := a.spec.Result.Get(k)
	if err == nil && ok {
		err = a.loadGroup(slot, v)
	}
	a.charge(slot)
	return slot, err
}

// charge accounts the group in slot at its current size.
func (a *HashAgg) charge(slot int32) {
	a.charges.set(slot, int64(groupOverhead+2*len(a.keys[slot])+len(a.emitted[slot])+aggSlotBytes*len(a.aggs)))
}

// Group state layout: varint row count, each aggregator's state, then the
// last emitted output row (RowCodec encoding) to the end; an empty tail means
// nothing was emitted.
func (a *HashAgg) loadGroup(slot int32, v []byte) error {
	rows, n := binary.Varint(v)
	if n <= 0 {
		return errCorruptState
	}
	a.rows[slot] = rows
	rest := v[n:]
	var err error
	for _, agg := range a.aggs {
		if rest, err = agg.loadState(rest, slot); err != nil {
			return err
		}
	}
	if len(rest) > 0 {
		a.emitted[slot] = append([]byte(nil), rest...)
	}
	return nil
}

func (a *HashAgg) markDirty(slot int32) {
	if !a.isDirty[slot] {
		a.isDirty[slot] = true
		a.dirty = append(a.dirty, slot)
	}
}

// OnBatch folds the batch's rows into their groups.
func (a *HashAgg) OnBatch(ctx context.Context, b *Batch, out Output) error {
	b, err := a.dropLate(b)
	if err != nil {
		return err
	}
	defer b.Release()
	n := b.Len()
	rec := b.Rec
	a.slots = a.slots[:0]
	a.signs = a.signs[:0]
	keyCols := make([]arrow.Array, len(a.spec.GroupCols))
	for j, c := range a.spec.GroupCols {
		keyCols[j] = rec.Column(c)
	}
	for i := 0; i < n; i++ {
		a.keyBuf = state.AppendVNode(a.keyBuf[:0], 0)
		for j, col := range keyCols {
			a.keyBuf = state.AppendKey(a.keyBuf, a.spec.GroupTypes[j], col, i)
		}
		a.keyBuf = setPartitionVNode(a.keyBuf, a.spec.GroupTypes, rec, a.spec.GroupCols, i)
		slot, err := a.slotFor(a.keyBuf)
		if err != nil {
			return err
		}
		var s int8 = 1
		if !b.Ops[i].IsInsert() {
			s = -1
		}
		a.slots = append(a.slots, slot)
		a.signs = append(a.signs, s)
		a.rows[slot] += int64(s)
		a.markDirty(slot)
	}
	if a.needRowKeys {
		a.encodeRowKeys(rec)
	}
	for _, gs := range a.groupScales {
		if err := gs.update(keyCols[gs.col], a.slots, a.signs); err != nil {
			return err
		}
	}
	for k, agg := range a.aggs[:len(a.spec.Calls)] {
		if ra, ok := agg.(recordAggregator); ok {
			ra.setRecord(rec)
		}
		signs := a.signs
		if fc := a.spec.FilterCols[k]; fc >= 0 {
			signs = a.filterSigns(rec.Column(fc).(*array.Boolean), signs)
		}
		var col arrow.Array
		if ac := a.spec.ArgCols[k]; ac >= 0 {
			col = rec.Column(ac)
			if a.spec.Calls[k].Distinct && a.spec.ValueSets[k] != nil &&
				a.spec.Calls[k].Func != ir.AggMin && a.spec.Calls[k].Func != ir.AggMax {
				var err error
				if signs, err = a.distinctSigns(k, col, signs); err != nil {
					return err
				}
			}
		}
		if err := agg.update(col, a.slots, signs); err != nil {
			return err
		}
	}
	return nil
}

// filterSigns zeroes the signs of rows whose FILTER is not true.
func (a *HashAgg) filterSigns(pred *array.Boolean, signs []int8) []int8 {
	a.signsK = append(a.signsK[:0], signs...)
	for i := range a.signsK {
		if pred.IsNull(i) || !pred.Value(i) {
			a.signsK[i] = 0
		}
	}
	return a.signsK
}

// distinctSigns passes a row on to a DISTINCT aggregate only when its value's
// multiplicity in the group goes from 0 to 1 (sign +1) or 1 to 0 (sign -1).
func (a *HashAgg) distinctSigns(k int, col arrow.Array, signs []int8) ([]int8, error) {
	out := make([]int8, len(signs))
	set := a.spec.ValueSets[k]
	t := a.spec.ArgTypes[k]
	bits, off, all := validity(col)
	// array_agg(DISTINCT x) has NULL among its values.
	all = all || a.spec.Calls[k].Func == ir.AggArrayAgg || a.spec.Calls[k].Func == ir.AggJSONBAgg
	for i, s := range signs {
		if s == 0 || !(all || bitutil.BitIsSet(bits, off+i)) {
			continue
		}
		a.keyBuf = append(a.keyBuf[:0], a.keys[a.slots[i]]...)
		if a.spec.Calls[k].SpanDistinct {
			// Intervals of equal span are one distinct value.
			a.keyBuf = state.AppendEqualKey(a.keyBuf, t, col, i)
		} else {
			a.keyBuf = state.AppendKey(a.keyBuf, t, col, i)
		}
		before, cnt, err := addCount(set, a.keyBuf, int64(s), &a.valBuf)
		if err != nil {
			return nil, err
		}
		switch {
		case before <= 0 && cnt > 0:
			out[i] = 1
		case before > 0 && cnt <= 0:
			out[i] = -1
		}
	}
	return out, nil
}

// OnBarrier emits the epoch's output changes and seals the state.
func (a *HashAgg) OnBarrier(ctx context.Context, br *barrier.Barrier, out Output) error {
	if len(a.spec.GroupCols) == 0 {
		slot, err := a.slotFor(globalGroupKey)
		if err != nil {
			return err
		}
		if a.emitted[slot] == nil {
			a.markDirty(slot)
		}
	}
	for _, agg := range a.aggs {
		if err := agg.prepare(a.dirty); err != nil {
			return err
		}
	}
	bs := make([]array.Builder, len(a.outTypes))
	for i, t := range a.outTypes {
		bs[i] = array.NewBuilder(a.mem, t.ArrowType())
	}
	defer func() {
		for _, b := range bs {
			b.Release()
		}
	}()
	var ops []Op
	for _, slot := range a.dirty {
		a.isDirty[slot] = false
		if a.spec.EmitOnWindowClose {
			a.keepOpen(slot)
			continue
		}
		newRow, err := a.outputRow(slot)
		if err != nil {
			return err
		}
		old := a.emitted[slot]
		switch {
		case old == nil && newRow == nil:
		case old == nil:
			ops = append(ops, Insert)
			err = a.outCodec.Decode(newRow, bs)
		case newRow == nil:
			ops = append(ops, Delete)
			err = a.outCodec.Decode(old, bs)
		case string(old) != string(newRow):
			ops = append(ops, UpdateDelete, UpdateInsert)
			if err = a.outCodec.Decode(old, bs); err == nil {
				err = a.outCodec.Decode(newRow, bs)
			}
		}
		if err != nil {
			return err
		}
		a.persist(slot, newRow)
	}
	a.dirty = a.dirty[:0]
	if len(ops) > 0 {
		cols := make([]arrow.Array, len(bs))
		for i, b := range bs {
			cols[i] = b.NewArray()
		}
		rec := array.NewRecordBatch(SchemaOf(a.outTypes), cols, int64(len(ops)))
		for _, c := range cols {
			c.Release()
		}
		if err := out.Emit(ctx, Message{Batch: NewBatch(rec, ops)}); err != nil {
			return err
		}
	}
	if err := a.closeWindows(ctx, out); err != nil {
		return err
	}
	a.evict()
	a.spec.Result.Seal(br.Epoch)
	for _, t := range a.spec.ValueSets {
		if t != nil {
			t.Seal(br.Epoch)
		}
	}
	if a.spec.Watermark != nil {
		a.spec.Watermark.Seal(br.Epoch)
	}
	return nil
}

// keepOpen writes the state of a changed group that emits on window close:
// nothing is emitted before the window closes.
func (a *HashAgg) keepOpen(slot int32) {
	if a.rows[slot] <= 0 {
		a.spec.Result.Delete(a.keys[slot])
		a.drop(slot)
		return
	}
	a.persist(slot, []byte{})
}

// outputRow encodes the group's current output row, or returns nil if the
// group is empty (and grouped).
func (a *HashAgg) outputRow(slot int32) ([]byte, error) {
	if a.rows[slot] <= 0 && len(a.spec.GroupCols) > 0 {
		return nil, nil
	}
	a.datums = a.datums[:0]
	key := a.keys[slot][state.VNodePrefixLen:]
	for _, t := range a.spec.GroupTypes {
		d, rest, err := state.DecodeKeyDatum(key, t)
		if err != nil {
			return nil, err
		}
		key = rest
		a.datums = append(a.datums, d)
	}
	for _, gs := range a.groupScales {
		a.datums[gs.col] = gs.show(slot, a.datums[gs.col])
	}
	for _, agg := range a.aggs[:len(a.spec.Calls)] {
		d, err := agg.result(slot)
		if err != nil {
			if d, err = a.ectx.RowError(err); err != nil {
				return nil, err
			}
		}
		a.datums = append(a.datums, d)
	}
	// Never nil: a global aggregation without aggregates (SELECT 42
	// HAVING true) has a row of no columns.
	return a.outCodec.AppendDatums([]byte{}, a.datums), nil
}

// persist writes the group's state and remembers its emitted row; an empty
// group is deleted and its slot freed.
func (a *HashAgg) persist(slot int32, emitted []byte) {
	key := a.keys[slot]
	if emitted == nil && len(a.spec.GroupCols) > 0 {
		a.spec.Result.Delete(key)
		a.drop(slot)
		return
	}
	a.emitted[slot] = emitted
	a.charge(slot)
	a.valBuf = binary.AppendVarint(a.valBuf[:0], a.rows[slot])
	for _, agg := range a.aggs {
		a.valBuf = agg.appendState(a.valBuf, slot)
	}
	a.valBuf = append(a.valBuf, emitted...)
	a.spec.Result.Put(key, a.valBuf)
}

// drop forgets the group in slot and frees the slot.
func (a *HashAgg) drop(slot int32) {
	delete(a.groups, string(a.keys[slot]))
	a.keys[slot] = nil
	a.emitted[slot] = nil
	a.live[slot] = false
	a.free = append(a.free, slot)
	a.charges.drop(slot)
}

// evict drops groups from memory, least recently used first, until at most
// CacheGroups remain and the cache is within its share of the budget. It
// runs after a barrier's output, when no group is dirty: every group's state
// is in Result.
func (a *HashAgg) evict() {
	over := a.charges.overBy()
	for len(a.groups) > a.spec.CacheGroups || (len(a.groups) > 0 && over()) {
		if a.hand >= len(a.keys) {
			a.hand = 0
		}
		slot := int32(a.hand)
		a.hand++
		switch {
		case !a.live[slot]:
		case a.used[slot]:
			a.used[slot] = false
		default:
			a.drop(slot)
		}
	}
}

// Close releases the cache's reservation; HashAgg holds no Arrow memory
// between calls.
func (a *HashAgg) Close() { a.charges.close() }

func (a *HashAgg) String() string {
	return fmt.Sprintf("HashAgg(groups=%d, calls=%d)", len(a.spec.GroupCols), len(a.spec.Calls))
}

// SchemaOf returns an Arrow schema with one anonymous column per type.
func SchemaOf(ts []types.T) *arrow.Schema {
	fields := make([]arrow.Field, len(ts))
	for i, t := range ts {
		fields[i] = arrow.Field{Name: fmt.Sprintf("c%d", i), Type: t.ArrowType(), Nullable: true}
	}
	return arrow.NewSchema(fields, nil)
}
