package exec

import (
	"context"
	"encoding/binary"
	"fmt"
	"slices"
	"sync/atomic"
	"unsafe"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/streamsql/streamsql/barrier"
	"github.com/streamsql/streamsql/exec/eval"
	"github.com/streamsql/streamsql/ir"
	"github.com/streamsql/streamsql/state"
	"github.com/streamsql/streamsql/types"
)

// preserved reports whether rows of side s appear in the output even without
// a match (NULL-padded, or as semi/anti rows), so the join tracks their
// number of matches.
func preserved(t ir.JoinType, s int) bool {
	switch t {
	case ir.LeftJoin, ir.SemiJoin, ir.AntiJoin, ir.NullAwareAntiJoin:
		return s == 0
	case ir.RightJoin:
		return s == 1
	case ir.FullJoin:
		return true
	}
	return false
}

// HashJoinSpec configures a HashJoin. Index 0 is the left input, 1 the right.
type HashJoinSpec struct {
	Type ir.JoinType
	// Types are the column types of each input.
	Types [2][]types.T
	// Keys are the equi-join key columns of each input, of types KeyTypes;
	// rows whose key has a NULL never match. An empty key joins every pair
	// (a nested-loop join, for non-equi conditions and scalar subqueries).
	Keys     [2][]int
	KeyTypes []types.T
	// StreamKeys identify a row within each input. An input with Sequence
	// set has no stream key (a batch query's insert-only input): its stored
	// rows are told apart by a sequence number instead.
	StreamKeys [2][]int
	Sequence   [2]bool
	// Cond, if set, is evaluated over the left columns followed by the right
	// columns; only pairs for which it is true match.
	Cond eval.Evaluator
	// Tables hold each input's rows, keyed by join key then stream key. The
	// value is the row's match count (for preserved sides), a visibility flag
	// and the row.
	Tables [2]*state.Table
	// CleanFirstKey and Intervals make a join drop the stored rows
	// no later row can match, by watermark (see hash_join_clean.go);
	// TimeIndex indexes an input's rows by time for Intervals, Watermark
	// keeps the watermarks reached, LateRows counts the rows dropped for
	// arriving behind them.
	CleanFirstKey bool
	Intervals     []IntervalClean
	TimeIndex     [2]*state.Table
	Watermark     *state.Table
	LateRows      *atomic.Int64
	// RightFirst is set in batch plans, where the whole right input arrives
	// before the first left row: left rows are joined and not stored, since
	// no later right row can probe them.
	RightFirst bool
	// Budget, if set, is checked as a batch's candidate pairs accumulate
	// (a batch query's memory budget).
	Budget *Budget
	// VNodes are the virtual nodes whose join keys this join holds (the
	// zero value: all of them). Every key of Tables and TimeIndex starts
	// with the join key's virtual node (state.SetVNode); scans and cleaning
	// stay within VNodes.
	VNodes state.VNodes
}

// HashJoin is the streaming equi-join of two inputs, retractable on both
// sides: each input's rows are kept in a state table keyed by join key, a
// change on one side is joined with the other side's stored rows, and rows of
// preserved sides carry their number of matches so that NULL-padded rows (and
// semi/anti join rows) are emitted and retracted as matches come and go.
//
// Output rows are the left columns followed by the right columns (semi and
// anti joins: the left columns only), with Insert or Delete ops. Join state
// is read through the state tables, so it is bounded by the store's cache,
// not by memory.
type HashJoin struct {
	mem  memory.Allocator
	ectx *eval.Context
	spec HashJoinSpec
	// wm forwards the smaller watermark of each key pair with watermarks on
	// both inputs (a join on window_start), on both output columns.
	wm watermarkMin
	// keyWM are the inputs' watermarks on the first key column, cleaned the
	// one the state was cleaned up to; timeWM are their watermarks on the
	// time columns (timeCol) of interval bounds (see hash_join_clean.go).
	keyWM        [2]int64
	keyWMValid   [2]bool
	cleaned      int64
	cleanedValid bool
	timeCol      [2]int
	timeWM       [2]int64
	timeWMValid  [2]bool
	timeWMDirty  bool
	idxBuf       []byte

	codecs    [2]*state.RowCodec
	appenders [2][]appendFunc
	outTypes  []types.T
	pairTypes []types.T

	// Null-aware anti join: the number of right rows and of right rows with a
	// NULL key; -1 until counted.
	rightRows, rightNulls int64

	keyBuf []byte
	endBuf []byte  // the upper bound of a probe
	probes []probe // the rows of a batch with a join key, to probe
	hasKey []bool  // whether each row of a batch has a join key without NULLs
	// inRows and otherRows are pairRecord's scratch.
	inRows, otherRows []int32
	// cands and sorted hold a batch's candidates (byRow swaps them);
	// rowStarts is byRow's scratch.
	cands, sorted []candidate
	rowStarts     []int
	// arena holds a batch's row keys and its candidates' keys and rows.
	arena   []byte
	valBuf  []byte
	rowKeys [][]byte
	seq     uint64
}

// NewHashJoin returns a HashJoin.
func NewHashJoin(mem memory.Allocator, ectx *eval.Context, spec HashJoinSpec) *HashJoin {
	if spec.VNodes.Hi == 0 {
		spec.VNodes = state.AllVNodes
	}
	j := &HashJoin{mem: mem, ectx: ectx, spec: spec, rightRows: -1, timeCol: [2]int{-1, -1}}
	for s := 0; s < 2; s++ {
		j.codecs[s] = state.NewRowCodec(spec.Types[s])
		for _, t := range spec.Types[s] {
			j.appenders[s] = append(j.appenders[s], appenderFor(t))
		}
	}
	j.pairTypes = append(append([]types.T{}, spec.Types[0]...), spec.Types[1]...)
	if spec.Type.KeepsRight() {
		j.outTypes = j.pairTypes
	} else {
		j.outTypes = spec.Types[0]
	}
	return j
}

// NewCleaningHashJoin is NewHashJoin for a join that cleans its state by
// watermark (spec.Watermark set): it restores the watermarks reached.
func NewCleaningHashJoin(mem memory.Allocator, ectx *eval.Context, spec HashJoinSpec) (*HashJoin, error) {
	j := NewHashJoin(mem, ectx, spec)
	if err := j.initCleaning(); err != nil {
		return nil, err
	}
	return j, nil
}

// OutputTypes returns the types of the output columns.
func (j *HashJoin) OutputTypes() []types.T { return j.outTypes }

// candidate is a stored row of the other side with the input row's join key.
type candidate struct {
	row   int   // input row
	other int32 // the stored row's index in the batch's decoded rows
	// key and value are the stored row's key and row (without match count
	// and flags), kept only when the other side is preserved.
	key   []byte
	value []byte
	// deg and flags are the stored match count and flags, as of phase 1
	// (the other side's state changes only after phase 3).
	deg   int64
	flags byte
}

// stored value layout: uvarint match count, one flag byte (bit 0: the row is
// currently emitted by a null-aware anti join), then the RowCodec row.
func decodeStored(v []byte) (deg int64, flags byte, row []byte, err error) {
	d, n := binary.Uvarint(v)
	if n <= 0 || len(v) <= n {
		return 0, 0, nil, errCorruptState
	}
	return int64(d), v[n], v[n+1:], nil
}

func appendStored(buf []byte, deg int64, flags byte, row []byte) []byte {
	buf = binary.AppendUvarint(buf, uint64(deg))
	buf = append(buf, flags)
	return append(buf, row...)
}

// outEntry is one output row: a pair (pair >= 0), or a row of one side padded
// with NULLs for the other (pad side s: row from input row or stored bytes).
type outEntry struct {
	op     Op
	pair   int
	side   int
	row    int    // input row, when the padded row comes from the input batch
	stored []byte // stored row, when it comes from state
}

// probe is an input row to look up in the other side's state.
type probe struct {
	row int
	key []byte // its join key
}

// byRow returns cands in input row order (of n rows), each row's candidates
// in the order found: a counting sort into the join's second buffer.
func (j *HashJoin) byRow(cands []candidate, n int) []candidate {
	starts := slices.Grow(j.rowStarts[:0], n+1)[:n+1]
	clear(starts)
	for _, c := range cands {
		starts[c.row+1]++
	}
	for i := 1; i <= n; i++ {
		starts[i] += starts[i-1]
	}
	out := slices.Grow(j.sorted[:0], len(cands))[:len(cands)]
	for _, c := range cands {
		out[starts[c.row]] = c
		starts[c.row]++
	}
	j.rowStarts, j.sorted, j.cands = starts, cands, out
	return out
}

// OnBatch joins the changes of input s with the other input's rows.
func (j *HashJoin) OnBatch(ctx context.Context, s int, b *Batch, out Output) error {
	b, err := j.dropLateRows(s, b)
	if err != nil {
		return err
	}
	defer b.Release()
	o := 1 - s
	rec := b.Rec
	n := b.Len()
	spec := &j.spec
	if spec.Type == ir.NullAwareAntiJoin {
		if err := j.countRight(); err != nil {
			return err
		}
	}

	// Phase 1: the candidates of every input row, from the other side's state.
	cands, otherRec, err := j.findCandidates(s, rec, n)
	if err != nil {
		return err
	}
	defer otherRec.Release()
	hasKey := j.hasKey
	pairRec, err := j.pairRecord(s, rec, otherRec, cands)
	if err != nil {
		return err
	}
	defer pairRec.Release()

	// Phase 2: the non-equi condition over all candidate pairs at once.
	pass := make([]bool, len(cands))
	if spec.Cond != nil && len(cands) > 0 {
		res, err := spec.Cond.Eval(j.ectx, pairRec)
		if err != nil {
			return err
		}
		bools := res.(*array.Boolean)
		for p := range pass {
			pass[p] = bools.IsValid(p) && bools.Value(p)
		}
		res.Release()
	} else {
		for p := range pass {
			pass[p] = true
		}
	}

	// Phase 3: rows in order: emit pairs, padded rows and semi/anti rows, and
	// update both sides' states.
	var entries []outEntry
	otherDeg := map[string]int64{} // match counts of other-side rows touched
	otherRow := map[string][]byte{}
	otherFlags := map[string]byte{}
	loadDeg := func(c candidate) int64 {
		if d, ok := otherDeg[string(c.key)]; ok {
			return d
		}
		otherRow[string(c.key)] = c.value
		otherDeg[string(c.key)] = c.deg
		otherFlags[string(c.key)] = c.flags
		return c.deg
	}
	// A null-aware anti join re-evaluates every left row when the right side
	// becomes empty or non-empty, or gains or loses its last NULL key.
	oldRightRows, oldRightNulls := j.rightRows > 0, j.rightNulls > 0
	p := 0
	for i := 0; i < n; i++ {
		ins := b.Ops[i].IsInsert()
		op := Delete
		if ins {
			op = Insert
		}
		var sign int64 = -1
		if ins {
			sign = 1
		}
		start := p
		for p < len(cands) && cands[p].row == i {
			p++
		}
		deg := int64(0)
		for q := start; q < p; q++ {
			if pass[q] {
				deg++
			}
		}
		for q := start; q < p; q++ {
			if !pass[q] {
				continue
			}
			c := cands[q]
			if preserved(spec.Type, o) {
				old := loadDeg(c)
				now := old + sign
				otherDeg[string(c.key)] = now
				if spec.Type.KeepsRight() {
					if ins && old == 0 {
						entries = append(entries, outEntry{op: Delete, pair: -1, side: o, stored: c.value})
					}
					entries = append(entries, outEntry{op: op, pair: q})
					if !ins && now == 0 {
						entries = append(entries, outEntry{op: Insert, pair: -1, side: o, stored: c.value})
					}
				} else if spec.Type == ir.SemiJoin {
					if ins && old == 0 {
						entries = append(entries, outEntry{op: Insert, pair: -1, side: o, stored: c.value})
					} else if !ins && now == 0 {
						entries = append(entries, outEntry{op: Delete, pair: -1, side: o, stored: c.value})
					}
				} else if spec.Type == ir.AntiJoin {
					if ins && old == 0 {
						entries = append(entries, outEntry{op: Delete, pair: -1, side: o, stored: c.value})
					} else if !ins && now == 0 {
						entries = append(entries, outEntry{op: Insert, pair: -1, side: o, stored: c.value})
					}
				}
			} else if spec.Type.KeepsRight() {
				entries = append(entries, outEntry{op: op, pair: q})
			}
		}
		var flags byte
		if preserved(spec.Type, s) {
			switch spec.Type {
			case ir.SemiJoin:
				if deg > 0 {
					entries = append(entries, outEntry{op: op, pair: -1, side: s, row: i})
				}
			case ir.AntiJoin:
				if deg == 0 {
					entries = append(entries, outEntry{op: op, pair: -1, side: s, row: i})
				}
			case ir.NullAwareAntiJoin:
				if j.nullAwareVisible(hasKey[i], deg) {
					entries = append(entries, outEntry{op: op, pair: -1, side: s, row: i})
					flags = 1
				}
			default:
				if deg == 0 {
					entries = append(entries, outEntry{op: op, pair: -1, side: s, row: i})
				}
			}
		}
		if spec.Type == ir.NullAwareAntiJoin && s == 1 {
			j.rightRows += sign
			if !hasKey[i] {
				j.rightNulls += sign
			}
		}
		// Store or remove the input row.
		if s == 0 && spec.RightFirst {
			// No right row comes after it.
		} else if ins {
			j.valBuf = appendStored(j.valBuf[:0], deg, flags, nil)
			j.valBuf = j.codecs[s].Append(j.valBuf, rec.Columns(), i)
			spec.Tables[s].Put(j.rowKeys[i], j.valBuf)
		} else {
			spec.Tables[s].Delete(j.rowKeys[i])
		}
		j.indexRow(s, rec, i, j.rowKeys[i], ins)
	}
	globalFlip := spec.Type == ir.NullAwareAntiJoin && s == 1 &&
		(oldRightRows != (j.rightRows > 0) || oldRightNulls != (j.rightNulls > 0))
	// Write back the other side's changed match counts (and, for a null-aware
	// anti join, the visibility of the left rows they changed).
	if preserved(spec.Type, o) {
		for k, d := range otherDeg {
			flags := otherFlags[k]
			if spec.Type == ir.NullAwareAntiJoin && !globalFlip {
				want := j.nullAwareVisible(true, d)
				if want != (flags&1 == 1) {
					op := Delete
					if want {
						op = Insert
					}
					entries = append(entries, outEntry{op: op, pair: -1, side: o, stored: otherRow[k]})
					flags ^= 1
				}
			}
			j.valBuf = appendStored(j.valBuf[:0], d, flags, otherRow[k])
			spec.Tables[o].Put([]byte(k), j.valBuf)
		}
	}
	if globalFlip {
		more, err := j.refreshNullAware()
		if err != nil {
			return err
		}
		entries = append(entries, more...)
	}
	if len(entries) == 0 {
		return nil
	}
	outRec, ops, err := j.buildOutput(entries, pairRec, rec, s)
	if err != nil {
		return err
	}
	return out.Emit(ctx, Message{Batch: NewBatch(outRec, ops)})
}

// budgetStride is how many candidate pairs a join collects between checks
// of its budget.
const budgetStride = 4096

// checkBudget checks the join's budget, counting the batch's candidates and
// their copied keys and rows, which live outside Arrow buffers.
func (j *HashJoin) checkBudget(cands []candidate) error {
	if j.spec.Budget == nil {
		return nil
	}
	return j.spec.Budget.Check(int64(cap(j.arena)) + int64(cap(cands))*int64(unsafe.Sizeof(candidate{})))
}

// nullAwareVisible says whether a left row is emitted by NOT IN.
func (j *HashJoin) nullAwareVisible(hasKey bool, deg int64) bool {
	if j.rightRows == 0 {
		return true
	}
	return hasKey && j.rightNulls == 0 && deg == 0
}

// countRight counts the right rows for a null-aware anti join (once, after
// start or restart).
func (j *HashJoin) countRight() error {
	if j.rightRows >= 0 {
		return nil
	}
	it, err := j.spec.Tables[1].NewIter(j.spec.VNodes.Bounds())
	if err != nil {
		return err
	}
	defer it.Close()
	j.rightRows, j.rightNulls = 0, 0
	bs := newBuilders(j.mem, j.spec.Types[1])
	defer releaseBuilders(bs)
	for ok := it.First(); ok; ok = it.Next() {
		j.rightRows++
		// A NULL join key encodes with the NULL marker first.
		if k := it.Key()[state.VNodePrefixLen:]; len(k) > 0 && len(j.spec.Keys[1]) > 0 && isNullKey(k, j.spec.KeyTypes) {
			j.rightNulls++
		}
	}
	return it.Error()
}

// isNullKey reports whether any column of the encoded join key is NULL.
func isNullKey(key []byte, ts []types.T) bool {
	for _, t := range ts {
		d, rest, err := state.DecodeKeyDatum(key, t)
		if err != nil || d.Null {
			return true
		}
		key = rest
	}
	return false
}

// refreshNullAware re-evaluates every left row of a null-aware anti join
// after the right side changed, emitting the rows whose visibility flipped.
func (j *HashJoin) refreshNullAware() ([]outEntry, error) {
	it, err := j.spec.Tables[0].NewIter(j.spec.VNodes.Bounds())
	if err != nil {
		return nil, err
	}
	var entries []outEntry
	type update struct{ key, val []byte }
	var updates []update
	for ok := it.First(); ok; ok = it.Next() {
		deg, flags, row, err := decodeStored(it.Value())
		if err != nil {
			it.Close()
			return nil, err
		}
		hasKey := !isNullKey(it.Key()[state.VNodePrefixLen:], j.spec.KeyTypes)
		want := j.nullAwareVisible(hasKey, deg)
		if want == (flags&1 == 1) {
			continue
		}
		op, nf := Delete, byte(0)
		if want {
			op, nf = Insert, 1
		}
		rowCopy := append([]byte(nil), row...)
		entries = append(entries, outEntry{op: op, pair: -1, side: 0, stored: rowCopy})
		updates = append(updates, update{key: append([]byte(nil), it.Key()...), val: appendStored(nil, deg, nf, rowCopy)})
	}
	if err := it.Close(); err != nil {
		return nil, err
	}
	for _, u := range updates {
		j.spec.Tables[0].Put(u.key, u.val)
	}
	return entries, nil
}

// buildOutput assembles the output batch from entries.
func (j *HashJoin) buildOutput(entries []outEntry, pairRec, in arrow.RecordBatch, s int) (arrow.RecordBatch, []Op, error) {
	ops := make([]Op, len(entries))
	if rec, ok, err := j.takePairs(entries, pairRec, ops); ok || err != nil {
		return rec, ops, err
	}
	bs := newBuilders(j.mem, j.outTypes)
	defer releaseBuilders(bs)
	nl := len(j.spec.Types[0])
	pairApp := make([]appendFunc, len(j.pairTypes))
	for c, t := range j.pairTypes {
		pairApp[c] = appenderFor(t)
	}
	for k, e := range entries {
		ops[k] = e.op
		switch {
		case e.pair >= 0:
			for c := range bs {
				pairApp[c](bs[c], pairRec.Column(c), e.pair)
			}
		default:
			sideB := bs[:nl]
			if e.side == 1 {
				sideB = bs[nl:]
			}
			if e.stored != nil {
				if err := j.codecs[e.side].Decode(e.stored, sideB); err != nil {
					return nil, nil, err
				}
			} else {
				for c, app := range j.appenders[e.side] {
					app(sideB[c], in.Column(c), e.row)
				}
			}
			if j.spec.Type.KeepsRight() {
				padB := bs[nl:]
				if e.side == 1 {
					padB = bs[:nl]
				}
				for _, b := range padB {
					b.AppendNull()
				}
			}
		}
	}
	return buildRecord(SchemaOf(j.outTypes), bs, len(entries)), ops, nil
}

// takePairs builds the output batch column by column when every entry is
// a pair (as in an inner join), setting ops; ok is false otherwise.
func (j *HashJoin) takePairs(entries []outEntry, pairRec arrow.RecordBatch, ops []Op) (rec arrow.RecordBatch, ok bool, err error) {
	rows := slices.Grow(j.inRows[:0], len(entries))[:len(entries)]
	for k, e := range entries {
		if e.pair < 0 {
			return nil, false, nil
		}
		rows[k], ops[k] = int32(e.pair), e.op
	}
	j.inRows = rows
	if isIdentity(rows, int(pairRec.NumRows())) {
		pairRec.Retain()
		return pairRec, true, nil
	}
	rec, err = eval.TakeRecord(j.mem, pairRec, rows)
	return rec, true, err
}

// OnBarrier seals both sides' state.
func (j *HashJoin) OnBarrier(_ context.Context, b *barrier.Barrier, _ Output) error {
	if err := j.cleanState(); err != nil {
		return err
	}
	for _, t := range append(j.spec.Tables[:], j.spec.TimeIndex[0], j.spec.TimeIndex[1], j.spec.Watermark) {
		if t != nil {
			t.Seal(b.Epoch)
		}
	}
	return nil
}

// Close does nothing: the join holds no Arrow memory between calls.
func (j *HashJoin) Close() {}

// OnWatermark forwards the watermarks of the key columns of both inputs.
func (j *HashJoin) OnWatermark(ctx context.Context, input int, w *barrier.Watermark, out Output) error {
	if err := j.observeWatermark(input, w); err != nil {
		return err
	}
	return j.wm.onWatermark(ctx, input, w, out)
}

func (j *HashJoin) String() string { return fmt.Sprintf("HashJoin(%s)", j.spec.Type) }
