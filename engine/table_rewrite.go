package engine

import (
	"context"
	"encoding/binary"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/streamsql/streamsql/catalog"
	"github.com/streamsql/streamsql/exec"
	"github.com/streamsql/streamsql/planner"
	"github.com/streamsql/streamsql/sqlerr"
	"github.com/streamsql/streamsql/state"
	"github.com/streamsql/streamsql/types"
)

// rewrite stores the table's rows again as rel describes them: root (a
// batch plan over the table's merged view) computes each row's new version,
// which is checked (NOT NULL, a unique key) and written into rel's state
// table; then the indexes are built again into theirs, serial counters move
// with their columns, and the writer switches to rel. The old state tables
// are cleared at the next barrier. On error nothing changes. The caller
// holds mu, between two barriers, and writes rel's catalog entry in the same
// epoch; colMap maps rel's columns to the old ones (-1: new).
func (w *tableWriter) rewrite(ctx context.Context, rel *catalog.Relation, root planner.Node, q batchQuery, colMap []int) error {
	env, release := w.e.batchEnv(q)
	defer release()
	env.Local = w.localTable
	snap := w.e.store.Snapshot()
	defer snap.Release()
	next := &tableWriter{e: w.e, rel: rel, types: rel.Types(), table: w.e.store.Table(state.TableID(rel.StateTable))}
	next.codec = state.NewRowCodec(next.types)
	write := exec.OutputFunc(func(_ context.Context, m exec.Message) error {
		if m.Batch == nil {
			return nil
		}
		defer m.Batch.Release()
		return next.putRewritten(m.Batch.Rec)
	})
	fail := func(err error) error {
		w.e.cleanup.add(next.table)
		for _, x := range next.indexes {
			w.e.cleanup.add(x.Table)
		}
		return err
	}
	if err := exec.RunBatch(ctx, env, snap, root, write); err != nil {
		return fail(err)
	}
	for _, def := range rel.Indexes {
		x := next.openIndex(def)
		next.indexes = append(next.indexes, x)
		if err := x.Build(w.e.ctx, w.e.mem, next.table); err != nil {
			return fail(err)
		}
	}
	checks, err := compileChecks(w.e.cat, rel)
	if err != nil {
		return fail(err)
	}
	w.e.cleanup.add(w.table)
	for _, x := range w.indexes {
		w.e.cleanup.add(x.Table)
	}
	if w.seq != nil {
		w.moveCounters(colMap)
	}
	seq, err := openSequences(w.e, rel)
	if err != nil {
		return err
	}
	w.rel, w.types, w.codec, w.table, w.indexes, w.seq, w.checks = rel, next.types, next.codec, next.table, next.indexes, seq, checks
	w.rowID = -1
	if !rel.PrimaryKey {
		w.rowID = rel.Key[0]
	}
	w.visTypes = w.visTypes[:0]
	for _, ci := range rel.VisibleColumns() {
		w.visTypes = append(w.visTypes, w.types[ci])
	}
	return nil
}

// putRewritten checks and writes the rows of rec (every column of the new
// table) for rewrite.
func (w *tableWriter) putRewritten(rec arrow.RecordBatch) error {
	for i, c := range w.rel.Columns {
		if c.NotNull && rec.Column(i).NullN() > 0 {
			return sqlerr.New(sqlerr.NotNullViolation, "column \"%s\" of relation \"%s\" contains null values", c.Name, w.rel.Name)
		}
	}
	cols := rec.Columns()
	for i := range int(rec.NumRows()) {
		key := w.key(rec, i)
		if w.rel.PrimaryKey {
			if _, exists, err := w.table.Get(key); err != nil {
				return err
			} else if exists {
				return w.duplicatedKey(rec, i)
			}
		}
		w.valBuf = w.codec.Append(w.valBuf[:0], cols, i)
		w.table.Put(key, w.valBuf)
	}
	return nil
}

// duplicatedKey is the 23505 error of a primary key added over rows that
// repeat row i's key, as PostgreSQL reports it when building the index.
func (w *tableWriter) duplicatedKey(rec arrow.RecordBatch, i int) error {
	var names, vals []string
	for _, k := range w.rel.Key {
		names = append(names, w.rel.Columns[k].Name)
		vals = append(vals, types.DatumAt(w.types[k], rec.Column(k), i).Text(w.types[k]))
	}
	return sqlerr.New(sqlerr.UniqueViolation, "could not create unique index \"%s\"", primaryKeyName(w.rel)).
		WithDetail("Key (" + strings.Join(names, ", ") + ")=(" + strings.Join(vals, ", ") + ") is duplicated.")
}

// primaryKeyName is the name of rel's primary key constraint.
func primaryKeyName(rel *catalog.Relation) string {
	if rel.PrimaryKeyName != "" {
		return rel.PrimaryKeyName
	}
	return rel.Name + "_pkey"
}

// moveCounters rewrites the serial counters whose columns a rewrite moves
// (colMap: new column to old), in the current epoch.
func (w *tableWriter) moveCounters(colMap []int) {
	var puts [][2]int // new column, counter
	for n, o := range colMap {
		if o < 0 || o == n {
			continue
		}
		for j, c := range w.seq.cols {
			if c == o {
				w.seq.table.Delete(sequenceKey(o))
				puts = append(puts, [2]int{n, j})
			}
		}
	}
	for _, p := range puts {
		w.seq.table.Put(sequenceKey(p[0]), binary.BigEndian.AppendUint64(nil, uint64(w.seq.next[p[1]])))
	}
}
