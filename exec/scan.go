package exec

import (
	"context"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/streamsql/streamsql/catalog"
	"github.com/streamsql/streamsql/exec/eval"
	"github.com/streamsql/streamsql/planner"
	"github.com/streamsql/streamsql/state"
	"github.com/streamsql/streamsql/types"
)

// BatchSize is the number of rows sources put in one batch.
const BatchSize = 1024

// rowReader is where a relation's stored rows are read from: a committed
// snapshot or a table's own merged view.
type rowReader interface {
	NewIter(lower, upper []byte) (*state.Iter, error)
}

// snapshotTable reads one table of a snapshot.
type snapshotTable struct {
	snap *state.Snapshot
	id   state.TableID
}

func (s snapshotTable) NewIter(lower, upper []byte) (*state.Iter, error) {
	return s.snap.NewIter(s.id, lower, upper)
}

// ScanSnapshot emits every row of rel stored in snap, as Insert batches of up
// to BatchSize rows in key order, to out.
func ScanSnapshot(ctx context.Context, mem memory.Allocator, snap *state.Snapshot, rel *catalog.Relation, out Output) error {
	return scanRows(ctx, mem, snapshotTable{snap: snap, id: state.TableID(rel.StateTable)}, rel.Types(), nil, out)
}

// scanLeaf emits the rows of a batch plan's scan from snap, or from the
// tables env.Local gives: only those in the key ranges its filter pins and
// bounds (Scan.Lookup, Scan.Range), if it narrows any, or else those its
// index lookup finds (Scan.Index).
func scanLeaf(ctx context.Context, env Env, snap *state.Snapshot, scan *planner.Scan, out Output) error {
	rel := scan.Relation
	reader := func(id uint32) rowReader { return env.reader(snap, id) }
	ectx := env.Eval
	if ectx == nil {
		ectx = &eval.Context{Strict: true}
	}
	var ranges []KeyRange
	if r, ok := KeyRangesOf(ectx, scan.Lookup, scan.Range, rel.Key, rel.Types()); ok {
		ranges = r
		if ranges == nil {
			ranges = []KeyRange{}
		}
	} else if scan.Index != nil {
		r, ok, err := IndexRowRanges(reader(scan.Index.Index.StateTable), scan.Index, rel)
		if err != nil {
			return err
		}
		if ok {
			ranges = r
		}
	}
	return scanRows(ctx, env.Mem, reader(rel.StateTable), rel.Types(), ranges, out)
}

// reader returns where a batch run reads state table id: the table
// env.Local gives, if it gives one, else snap.
func (env Env) reader(snap *state.Snapshot, id uint32) rowReader {
	if env.Local != nil {
		if t := env.Local(state.TableID(id)); t != nil {
			return t
		}
	}
	return snapshotTable{snap: snap, id: state.TableID(id)}
}

// KeyRange is the range of state keys [Lower, Upper); a nil bound is open.
type KeyRange struct{ Lower, Upper []byte }

// scanRows decodes the RowCodec-encoded values of r into batches: every row,
// or with ranges (sorted, not overlapping) the rows in them, in key order.
func scanRows(ctx context.Context, mem memory.Allocator, r rowReader, ts []types.T, ranges []KeyRange, out Output) error {
	if ranges == nil {
		ranges = []KeyRange{{}}
	}
	if len(ranges) == 0 {
		return nil
	}
	it, err := r.NewIter(ranges[0].Lower, ranges[0].Upper)
	if err != nil {
		return err
	}
	defer it.Close()
	codec := state.NewRowCodec(ts)
	bs := newBuilders(mem, ts)
	defer releaseBuilders(bs)
	schema := SchemaOf(ts)
	n := 0
	flush := func() error {
		if n == 0 {
			return nil
		}
		rec := buildRecord(schema, bs, n)
		n = 0
		return out.Emit(ctx, Message{Batch: NewBatch(rec, nil)})
	}
	for i, kr := range ranges {
		if i > 0 {
			it.SetBounds(kr.Lower, kr.Upper)
		}
		for ok := it.First(); ok; ok = it.Next() {
			if err := codec.Decode(it.Value(), bs); err != nil {
				return err
			}
			n++
			if n == BatchSize {
				if err := flush(); err != nil {
					return err
				}
				if err := ctx.Err(); err != nil {
					return err
				}
			}
		}
		if err := it.Error(); err != nil {
			return err
		}
	}
	return flush()
}

func newBuilders(mem memory.Allocator, ts []types.T) []array.Builder {
	bs := make([]array.Builder, len(ts))
	for i, t := range ts {
		bs[i] = array.NewBuilder(mem, t.ArrowType())
	}
	return bs
}

func releaseBuilders(bs []array.Builder) {
	for _, b := range bs {
		b.Release()
	}
}

// buildRecord finishes the builders' arrays into a record of n rows; the
// builders are reset and can be reused.
func buildRecord(schema *arrow.Schema, bs []array.Builder, n int) arrow.RecordBatch {
	cols := make([]arrow.Array, len(bs))
	for i, b := range bs {
		cols[i] = b.NewArray()
	}
	rec := array.NewRecordBatch(schema, cols, int64(n))
	for _, c := range cols {
		c.Release()
	}
	return rec
}

// ScanTable emits every row of a table's merged view (committed and
// uncommitted writes) as Insert batches; the rows are RowCodec-encoded
// values of the given types.
func ScanTable(ctx context.Context, mem memory.Allocator, t *state.Table, ts []types.T, out Output) error {
	return scanRows(ctx, mem, t, ts, nil, out)
}

// ScanTableRanges is ScanTable restricted to the keys in ranges, which must
// be sorted and must not overlap.
func ScanTableRanges(ctx context.Context, mem memory.Allocator, t *state.Table, ts []types.T, ranges []KeyRange, out Output) error {
	if ranges == nil {
		ranges = []KeyRange{}
	}
	return scanRows(ctx, mem, t, ts, ranges, out)
}
