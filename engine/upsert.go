package engine

import (
	"context"
	"slices"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/streamsql/streamsql/exec"
	"github.com/streamsql/streamsql/exec/eval"
	"github.com/streamsql/streamsql/planner"
	"github.com/streamsql/streamsql/sqlerr"
)

// conflict is a proposed row (row of record rec of the statement's rows)
// whose key a stored row holds (value, its encoding).
type conflict struct {
	rec, row int
	value    []byte
}

// upsert writes the rows of INSERT source records recs whose primary key
// is free, and for each of the others does nothing (set nil: DO NOTHING) or
// updates the stored row to what set (the plan of ir.OnConflict.Set)
// computes from it and the proposed row. As PostgreSQL, a row proposed
// twice is inserted once (DO NOTHING) or fails the statement with 21000 (DO
// UPDATE). All or nothing, as insert; n counts the rows inserted or updated.
func (w *tableWriter) upsert(ctx context.Context, recs []arrow.RecordBatch, set planner.Node, q batchQuery, written func(arrow.RecordBatch)) (epoch uint64, n int64, err error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if err := w.checkLive(); err != nil {
		return 0, 0, err
	}
	full, err := w.fullRows(recs)
	defer func() {
		for _, r := range full {
			r.Release()
		}
	}()
	if err != nil || !w.rel.PrimaryKey {
		if err != nil {
			return 0, 0, err
		}
		return w.insertFull(full, written, q.owner)
	}
	arena, keys := w.encodeKeys(full)
	take := make([][]int32, len(full))
	var conflicts []conflict
	proposed := map[string]bool{}
	for _, k := range keys {
		key := arena[k.off:k.end]
		if proposed[string(key)] {
			if set != nil {
				return 0, 0, sqlerr.New("21000", "ON CONFLICT DO UPDATE command cannot affect row a second time").
					WithHint("Ensure that no rows proposed for insertion within the same command have duplicate constrained values.")
			}
			continue
		}
		proposed[string(key)] = true
		v, exists, err := w.table.Get(key)
		if err != nil {
			return 0, 0, err
		}
		switch {
		case !exists:
			take[k.rec] = append(take[k.rec], int32(k.row))
		case set != nil:
			conflicts = append(conflicts, conflict{rec: k.rec, row: k.row, value: append([]byte(nil), v...)})
		}
	}
	if err := w.lockedError(q.owner, arenaKeys(arena, keys)); err != nil {
		return 0, 0, err
	}
	olds, news, err := w.conflictUpdates(ctx, full, conflicts, set, q)
	defer func() {
		for _, r := range append(olds, news...) {
			r.Release()
		}
	}()
	if err != nil {
		return 0, 0, err
	}
	for _, r := range news {
		if err := w.checkNotNull(r); err != nil {
			return 0, 0, err
		}
		if err := w.checkRows(r); err != nil {
			return 0, 0, err
		}
	}
	if err := w.checkUnique(news, olds); err != nil {
		return 0, 0, err
	}
	// Write: the new rows (checked as one INSERT), then the updates.
	var fresh []arrow.RecordBatch
	defer func() {
		for _, r := range fresh {
			r.Release()
		}
	}()
	for r, rows := range take {
		if len(rows) == 0 {
			continue
		}
		rec, err := eval.TakeRecord(w.e.mem, full[r], rows)
		if err != nil {
			return 0, 0, err
		}
		fresh = append(fresh, rec)
	}
	if len(fresh) > 0 {
		if _, n, err = w.insertFull(fresh, written, q.owner); err != nil {
			return 0, 0, err
		}
	}
	// The updates, checked above, as pairs through the table's write
	// operator: each replaces the stored row by its new version.
	for k, old := range olds {
		nw := news[k]
		if written != nil {
			written(nw)
		}
		b, err := exec.UpdatePairs(w.e.mem, old, nw)
		if err != nil {
			return 0, 0, err
		}
		if err := w.op().ApplyBatch(w.e.ctx, b, w.changes); err != nil {
			return 0, 0, err
		}
		n += nw.NumRows()
	}
	return w.sealed + 1, n, nil
}

// conflictUpdates computes the updates of DO UPDATE: for each conflict, the
// stored row and the proposed one go through set, and where its condition
// holds the stored row (olds) becomes set's result (news), in pairs of
// records of every column.
func (w *tableWriter) conflictUpdates(ctx context.Context, full []arrow.RecordBatch, conflicts []conflict, set planner.Node, q batchQuery) (olds, news []arrow.RecordBatch, err error) {
	if len(conflicts) == 0 {
		return nil, nil, nil
	}
	in, err := w.conflictInput(full, conflicts)
	if err != nil {
		return nil, nil, err
	}
	defer in.Release()
	q.copyIn = func(ctx context.Context, out exec.Output) error {
		in.Retain()
		return out.Emit(ctx, exec.Message{Batch: exec.NewBatch(in, nil)})
	}
	env, release := w.e.batchEnv(q)
	defer release()
	snap := w.e.store.Snapshot()
	defer snap.Release()
	width := len(w.types)
	schema := exec.SchemaOf(w.types)
	var sel []int32 // rows of in whose condition holds
	var outs []arrow.RecordBatch
	defer func() {
		for _, r := range outs {
			r.Release()
		}
	}()
	seen := 0
	collect := exec.OutputFunc(func(_ context.Context, m exec.Message) error {
		if m.Batch == nil {
			return nil
		}
		defer m.Batch.Release()
		rec := m.Batch.Rec
		cond := rec.Column(width).(*array.Boolean)
		var keep []int32
		for i := range int(rec.NumRows()) {
			if cond.IsValid(i) && cond.Value(i) {
				keep = append(keep, int32(i))
				sel = append(sel, int32(seen+i))
			}
		}
		seen += int(rec.NumRows())
		if len(keep) == 0 {
			return nil
		}
		cut := array.NewRecordBatch(schema, rec.Columns()[:width], rec.NumRows())
		defer cut.Release()
		t, err := eval.TakeRecord(w.e.mem, cut, keep)
		if err != nil {
			return err
		}
		outs = append(outs, t)
		return nil
	})
	if err := exec.RunBatch(ctx, env, snap, set, collect); err != nil {
		return nil, nil, err
	}
	if seen != int(in.NumRows()) {
		return nil, nil, sqlerr.New(sqlerr.InternalError, "ON CONFLICT DO UPDATE computed %d rows for %d conflicts", seen, in.NumRows())
	}
	if len(sel) == 0 {
		return nil, nil, nil
	}
	stored := array.NewRecordBatch(schema, in.Columns()[:width], in.NumRows())
	defer stored.Release()
	old, err := eval.TakeRecord(w.e.mem, stored, sel)
	if err != nil {
		return nil, nil, err
	}
	nw, err := concatRecords(w.e, schema, outs)
	if err != nil {
		old.Release()
		return nil, nil, err
	}
	return []arrow.RecordBatch{old}, []arrow.RecordBatch{nw}, nil
}

// conflictInput builds the input of set: per conflict, the stored row's
// columns, then the proposed row's.
func (w *tableWriter) conflictInput(full []arrow.RecordBatch, conflicts []conflict) (arrow.RecordBatch, error) {
	builders := make([]array.Builder, len(w.types))
	for i, t := range w.types {
		builders[i] = array.NewBuilder(w.e.mem, t.ArrowType())
		defer builders[i].Release()
	}
	for _, c := range conflicts {
		if err := w.codec.Decode(c.value, builders); err != nil {
			return nil, err
		}
	}
	var cols []arrow.Array
	defer func() {
		for _, c := range cols {
			c.Release()
		}
	}()
	for _, b := range builders {
		cols = append(cols, b.NewArray())
	}
	// The proposed rows, record by record, in conflict order.
	var parts []arrow.RecordBatch
	defer func() {
		for _, p := range parts {
			p.Release()
		}
	}()
	for start := 0; start < len(conflicts); {
		end := start
		var rows []int32
		for end < len(conflicts) && conflicts[end].rec == conflicts[start].rec {
			rows = append(rows, int32(conflicts[end].row))
			end++
		}
		p, err := eval.TakeRecord(w.e.mem, full[conflicts[start].rec], rows)
		if err != nil {
			return nil, err
		}
		parts = append(parts, p)
		start = end
	}
	proposed, err := concatRecords(w.e, exec.SchemaOf(w.types), parts)
	if err != nil {
		return nil, err
	}
	defer proposed.Release()
	for _, c := range proposed.Columns() {
		c.Retain()
		cols = append(cols, c)
	}
	both := append(slices.Clone(w.types), w.types...)
	return array.NewRecordBatch(exec.SchemaOf(both), cols, int64(len(conflicts))), nil
}

// concatRecords concatenates records of schema into one.
func concatRecords(e *Engine, schema *arrow.Schema, recs []arrow.RecordBatch) (arrow.RecordBatch, error) {
	if len(recs) == 1 {
		recs[0].Retain()
		return recs[0], nil
	}
	cols := make([]arrow.Array, schema.NumFields())
	defer func() {
		for _, c := range cols {
			if c != nil {
				c.Release()
			}
		}
	}()
	var n int64
	for _, r := range recs {
		n += r.NumRows()
	}
	for i := range cols {
		parts := make([]arrow.Array, len(recs))
		for j, r := range recs {
			parts[j] = r.Column(i)
		}
		c, err := array.Concatenate(parts, e.mem)
		if err != nil {
			return nil, err
		}
		cols[i] = c
	}
	return array.NewRecordBatch(schema, cols, n), nil
}

// dropRepeats keeps only the first of the rows of olds (with their new
// versions in news, for UPDATE) that have the same key: UPDATE ... FROM and
// DELETE ... USING select a row once per row of FROM it matches, and
// PostgreSQL changes it once. Records are replaced in place.
func (w *tableWriter) dropRepeats(olds, news []arrow.RecordBatch) error {
	if len(olds) == 1 && olds[0].NumRows() <= 1 || len(olds) == 0 {
		return nil
	}
	seen := map[string]bool{}
	for r, rec := range olds {
		var keep []int32
		for i := range int(rec.NumRows()) {
			k := string(w.key(rec, i))
			if !seen[k] {
				seen[k] = true
				keep = append(keep, int32(i))
			}
		}
		if len(keep) == int(rec.NumRows()) {
			continue
		}
		for _, recs := range [][]arrow.RecordBatch{olds, news} {
			if len(recs) == 0 {
				continue
			}
			t, err := eval.TakeRecord(w.e.mem, recs[r], keep)
			if err != nil {
				return err
			}
			recs[r].Release()
			recs[r] = t
		}
	}
	return nil
}
