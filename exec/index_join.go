package exec

import (
	"bytes"
	"context"
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

// IndexJoinSpec configures an IndexJoin.
type IndexJoinSpec struct {
	// Type is ir.InnerJoin, LeftJoin, SemiJoin or AntiJoin.
	Type ir.JoinType
	// InputTypes are the input's column types; InputKeys the input columns
	// looked up, of types KeyTypes (the looked-up columns' types).
	InputTypes []types.T
	InputKeys  []int
	KeyTypes   []types.T
	// RelTypes are the stored relation's column types; Rows reads its rows
	// (RowCodec values keyed by its key).
	RelTypes []types.T
	Rows     rowReader
	// Index, if set, reads the entries of a secondary index whose first
	// len(InputKeys) columns are looked up (IndexCols: the types of all its
	// columns): each entry's key ends with the key of its row in Rows. If
	// nil, the lookups are prefixes of Rows' keys.
	Index     rowReader
	IndexCols []types.T
	// Filter, if set, is over the relation's columns: rows failing it do
	// not match. Cond, if set, is over the input's columns followed by the
	// relation's: pairs failing it do not match.
	Filter, Cond eval.Evaluator
}

// IndexJoin joins each input row with the rows of a stored relation whose
// key (or secondary index) starts with the row's join key, read from a
// committed snapshot that does not change while the join runs (a batch
// query's lookup join, planner.IndexJoin). It encodes a batch's distinct
// keys once and looks them up in key order, one iterator each for the index
// and the rows. Rows with a NULL in their key match nothing. The output
// keeps each input row's op (Insert or Delete); pairs come in input row
// order. It holds no state across batches and no Arrow memory between
// calls.
type IndexJoin struct {
	mem      memory.Allocator
	ectx     *eval.Context
	spec     IndexJoinSpec
	codec    *state.RowCodec
	outTypes []types.T

	keyBuf, endBuf []byte
	arena          []byte
	probes         []probe
	pkArena        []byte
	pks            []int // ends of the row keys in pkArena
	// rowsIt and idxIt read the relation and its index during one batch.
	rowsIt, idxIt *state.Iter
}

// NewIndexJoin returns an IndexJoin.
func NewIndexJoin(mem memory.Allocator, ectx *eval.Context, spec IndexJoinSpec) *IndexJoin {
	j := &IndexJoin{mem: mem, ectx: ectx, spec: spec, codec: state.NewRowCodec(spec.RelTypes)}
	j.outTypes = spec.InputTypes
	if spec.Type.KeepsRight() {
		j.outTypes = append(slices.Clip(spec.InputTypes), spec.RelTypes...)
	}
	return j
}

// OnBatch joins the rows of b.
func (j *IndexJoin) OnBatch(ctx context.Context, b *Batch, out Output) error {
	defer b.Release()
	rec := b.Rec
	n := b.Len()
	// The distinct keys of the batch, in key order, and each row's.
	j.arena, j.probes = j.arena[:0], j.probes[:0]
	for i := 0; i < n; i++ {
		j.keyBuf = j.keyBuf[:0]
		null := false
		for k, c := range j.spec.InputKeys {
			col := rec.Column(c)
			if col.IsNull(i) {
				null = true
				break
			}
			j.keyBuf = state.AppendKey(j.keyBuf, j.spec.KeyTypes[k], col, i)
		}
		if null {
			continue
		}
		k0 := len(j.arena)
		j.arena = append(j.arena, j.keyBuf...)
		j.probes = append(j.probes, probe{row: i, key: j.arena[k0:len(j.arena):len(j.arena)]})
	}
	slices.SortStableFunc(j.probes, func(a, b probe) int { return bytes.Compare(a.key, b.key) })
	// Look each distinct key up; its matches are relation rows [lo, hi).
	relBs := newBuilders(j.mem, j.spec.RelTypes)
	defer releaseBuilders(relBs)
	lo := make([]int32, n)
	hi := make([]int32, n)
	found := 0
	if len(j.probes) > 0 {
		if err := j.openIters(); err != nil {
			return err
		}
		defer j.closeIters()
	}
	for p := 0; p < len(j.probes); {
		q := p + 1
		for q < len(j.probes) && bytes.Equal(j.probes[q].key, j.probes[p].key) {
			q++
		}
		start := found
		m, err := j.lookup(j.probes[p].key, relBs)
		if err != nil {
			return err
		}
		found += m
		for _, pr := range j.probes[p:q] {
			lo[pr.row], hi[pr.row] = int32(start), int32(found)
		}
		p = q
		if err := ctx.Err(); err != nil {
			return err
		}
	}
	// One all-NULL relation row at the end pads unmatched rows.
	for _, bl := range relBs {
		bl.AppendNull()
	}
	relRec := buildRecord(SchemaOf(j.spec.RelTypes), relBs, found+1)
	defer relRec.Release()
	keep := make([]bool, found)
	for i := range keep {
		keep[i] = true
	}
	if j.spec.Filter != nil && found > 0 {
		if err := j.evalMask(j.spec.Filter, relRec, keep); err != nil {
			return err
		}
	}
	// Candidate pairs in input row order.
	var inRows, relRows []int32
	for i := 0; i < n; i++ {
		for r := lo[i]; r < hi[i]; r++ {
			if keep[r] {
				inRows = append(inRows, int32(i))
				relRows = append(relRows, r)
			}
		}
	}
	pass := make([]bool, len(inRows))
	for i := range pass {
		pass[i] = true
	}
	if j.spec.Cond != nil && len(inRows) > 0 {
		pairs, err := j.pairRecord(rec, relRec, inRows, relRows)
		if err != nil {
			return err
		}
		err = j.evalMask(j.spec.Cond, pairs, pass)
		pairs.Release()
		if err != nil {
			return err
		}
	}
	return j.emit(ctx, b, relRec, inRows, relRows, pass, out)
}

// openIters opens the iterators a batch's lookups share.
func (j *IndexJoin) openIters() error {
	var err error
	if j.rowsIt, err = j.spec.Rows.NewIter(nil, nil); err != nil {
		return err
	}
	if j.spec.Index != nil {
		if j.idxIt, err = j.spec.Index.NewIter(nil, nil); err != nil {
			j.closeIters()
			return err
		}
	}
	return nil
}

// closeIters closes the batch's iterators. Their errors were seen by the
// lookups (Iter.Error).
func (j *IndexJoin) closeIters() {
	for _, it := range []**state.Iter{&j.rowsIt, &j.idxIt} {
		if *it != nil {
			_ = (*it).Close()
			*it = nil
		}
	}
}

// lookup appends to bs the relation rows matching the encoded key, and
// returns how many.
func (j *IndexJoin) lookup(key []byte, bs []array.Builder) (int, error) {
	if j.spec.Index == nil {
		return j.readRows(key, bs)
	}
	it := j.idxIt
	j.endBuf = state.AppendPrefixEnd(j.endBuf[:0], key)
	it.SetBounds(key, j.endBuf)
	j.pks, j.pkArena = j.pks[:0], j.pkArena[:0]
	var err error
	for ok := it.First(); ok; ok = it.Next() {
		rest := it.Key()
		for _, t := range j.spec.IndexCols {
			if _, rest, err = state.DecodeKeyDatum(rest, t); err != nil {
				return 0, err
			}
		}
		// The row keys end at offsets into one arena (the iterator reuses
		// its key buffer).
		j.pkArena = append(j.pkArena, rest...)
		j.pks = append(j.pks, len(j.pkArena))
	}
	if err := it.Error(); err != nil {
		return 0, err
	}
	n, start := 0, 0
	for _, end := range j.pks {
		pk := j.pkArena[start:end:end]
		start = end
		m, err := j.readRows(pk, bs)
		if err != nil {
			return 0, err
		}
		n += m
	}
	return n, nil
}

// readRows appends to bs the rows whose key starts with prefix.
func (j *IndexJoin) readRows(prefix []byte, bs []array.Builder) (int, error) {
	it := j.rowsIt
	j.endBuf = state.AppendPrefixEnd(j.endBuf[:0], prefix)
	it.SetBounds(prefix, j.endBuf)
	n := 0
	for ok := it.First(); ok; ok = it.Next() {
		if err := j.codec.Decode(it.Value(), bs); err != nil {
			return 0, err
		}
		n++
	}
	return n, it.Error()
}

// evalMask clears mask[i] where pred over rec is not true.
func (j *IndexJoin) evalMask(pred eval.Evaluator, rec arrow.RecordBatch, mask []bool) error {
	res, err := pred.Eval(j.ectx, rec)
	if err != nil {
		return err
	}
	defer res.Release()
	bools := res.(*array.Boolean)
	for i := range mask {
		mask[i] = mask[i] && bools.IsValid(i) && bools.Value(i)
	}
	return nil
}

// pairRecord gathers the pairs (input row inRows[k], relation row
// relRows[k]) into one record: the input's columns, then the relation's.
func (j *IndexJoin) pairRecord(in, rel arrow.RecordBatch, inRows, relRows []int32) (arrow.RecordBatch, error) {
	var cols []arrow.Array
	release := func() {
		for _, c := range cols {
			c.Release()
		}
	}
	for c := 0; c < int(in.NumCols()); c++ {
		a, err := eval.TakeArray(j.mem, in.Column(c), inRows)
		if err != nil {
			release()
			return nil, err
		}
		cols = append(cols, a)
	}
	for c := 0; c < int(rel.NumCols()); c++ {
		a, err := eval.TakeArray(j.mem, rel.Column(c), relRows)
		if err != nil {
			release()
			return nil, err
		}
		cols = append(cols, a)
	}
	ts := append(slices.Clip(j.spec.InputTypes), j.spec.RelTypes...)
	out := array.NewRecordBatch(SchemaOf(ts), cols, int64(len(inRows)))
	release()
	return out, nil
}

// emit sends the output of one input batch b: the pairs that pass, NULL-
// padded rows without one (left join), or the rows with (semi) or without
// (anti) one.
func (j *IndexJoin) emit(ctx context.Context, b *Batch, relRec arrow.RecordBatch, inRows, relRows []int32, pass []bool, out Output) error {
	n := b.Len()
	matched := make([]bool, n)
	for k, ok := range pass {
		if ok {
			matched[inRows[k]] = true
		}
	}
	pad := int32(relRec.NumRows() - 1) // the all-NULL row
	var outIn, outRel []int32
	switch j.spec.Type {
	case ir.InnerJoin, ir.LeftJoin:
		k := 0
		for i := 0; i < n; i++ {
			for ; k < len(inRows) && inRows[k] == int32(i); k++ {
				if pass[k] {
					outIn, outRel = append(outIn, int32(i)), append(outRel, relRows[k])
				}
			}
			if j.spec.Type == ir.LeftJoin && !matched[i] {
				outIn, outRel = append(outIn, int32(i)), append(outRel, pad)
			}
		}
	case ir.SemiJoin, ir.AntiJoin:
		for i := 0; i < n; i++ {
			if matched[i] == (j.spec.Type == ir.SemiJoin) {
				outIn = append(outIn, int32(i))
			}
		}
	default:
		return fmt.Errorf("exec: IndexJoin of type %s", j.spec.Type)
	}
	if len(outIn) == 0 {
		return nil
	}
	ops := make([]Op, len(outIn))
	for k, i := range outIn {
		ops[k] = Delete
		if b.Ops[i].IsInsert() {
			ops[k] = Insert
		}
	}
	var rec arrow.RecordBatch
	var err error
	if j.spec.Type.KeepsRight() {
		rec, err = j.pairRecord(b.Rec, relRec, outIn, outRel)
	} else {
		rec, err = eval.TakeRecord(j.mem, b.Rec, outIn)
	}
	if err != nil {
		return err
	}
	return out.Emit(ctx, Message{Batch: NewBatch(rec, ops)})
}

// OnBarrier does nothing: the join has no state.
func (j *IndexJoin) OnBarrier(context.Context, *barrier.Barrier, Output) error { return nil }

// Close does nothing: the join holds no Arrow memory between calls.
func (j *IndexJoin) Close() {}

func (j *IndexJoin) String() string { return fmt.Sprintf("IndexJoin(%s)", j.spec.Type) }

// newIndexJoinOperator builds the IndexJoin of a batch plan, reading
// env.Snapshot, or the tables env.Local gives (a DML's target).
func newIndexJoinOperator(env Env, n *planner.IndexJoin) (*IndexJoin, error) {
	if env.Snapshot == nil {
		return nil, fmt.Errorf("exec: a lookup join outside a batch run")
	}
	rel := n.Relation
	ts := rel.Types()
	spec := IndexJoinSpec{
		Type:       n.Type,
		InputTypes: planner.Types(n.Input.Columns()),
		InputKeys:  n.InputKeys,
		RelTypes:   ts,
		Rows:       env.reader(env.Snapshot, rel.StateTable),
	}
	for _, c := range n.LookupColumns() {
		spec.KeyTypes = append(spec.KeyTypes, ts[c])
	}
	if n.Index != nil {
		spec.Index = env.reader(env.Snapshot, n.Index.StateTable)
		for _, c := range n.Index.Columns {
			spec.IndexCols = append(spec.IndexCols, ts[c])
		}
	}
	var err error
	if n.Filter != nil {
		if spec.Filter, err = eval.Compile(n.Filter); err != nil {
			return nil, err
		}
	}
	if n.Cond != nil {
		if spec.Cond, err = eval.Compile(n.Cond); err != nil {
			return nil, err
		}
	}
	return NewIndexJoin(env.Mem, env.Eval, spec), nil
}
