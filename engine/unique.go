package engine

import (
	"context"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/streamsql/streamsql/catalog"
	"github.com/streamsql/streamsql/exec"
	"github.com/streamsql/streamsql/sqlerr"
	"github.com/streamsql/streamsql/state"
	"github.com/streamsql/streamsql/types"
)

// indexSuffix is the suffix of the name of an unnamed index: key for a
// constraint's, idx otherwise.
func indexSuffix(constraint bool) string {
	if constraint {
		return "key"
	}
	return "idx"
}

// uniquePrefix encodes the index columns of def for row i of rec (every
// column of the table): the prefix of the row's index entry. ok is false
// when one is NULL (NULLs are distinct: such a row never conflicts).
func (w *tableWriter) uniquePrefix(buf []byte, def catalog.Index, rec arrow.RecordBatch, i int) (_ []byte, ok bool) {
	for _, c := range def.Columns {
		if rec.Column(c).IsNull(i) {
			return buf, false
		}
		buf = state.AppendKey(buf, w.types[c], rec.Column(c), i)
	}
	return buf, true
}

// uniqueError is the 23505 error of row i of rec repeating the columns of
// unique index def; verb ends the detail ("already exists", "is
// duplicated").
func (w *tableWriter) uniqueError(msg string, def catalog.Index, rec arrow.RecordBatch, i int, verb string) error {
	var names, vals []string
	for _, c := range def.Columns {
		names = append(names, w.rel.Columns[c].Name)
		vals = append(vals, types.DatumAt(w.types[c], rec.Column(c), i).Text(w.types[c]))
	}
	return sqlerr.New(sqlerr.UniqueViolation, msg, def.Name).
		WithDetail("Key (" + strings.Join(names, ", ") + ")=(" + strings.Join(vals, ", ") + ") " + verb + ".")
}

// checkUnique fails with 23505 if a row of news (records of every column)
// would repeat the columns of a unique index: of another row of news, or
// of a stored row that is not among olds (the rows the statement replaces
// or deletes). The caller holds mu, before writing anything.
func (w *tableWriter) checkUnique(news, olds []arrow.RecordBatch) error {
	var replaced map[string]bool
	for _, x := range w.indexes {
		if !x.Def.Unique {
			continue
		}
		if replaced == nil {
			replaced = map[string]bool{}
			for _, r := range olds {
				for i := range int(r.NumRows()) {
					replaced[string(w.key(r, i))] = true
				}
			}
		}
		seen := map[string]bool{}
		var buf []byte
		for _, r := range news {
			for i := range int(r.NumRows()) {
				var ok bool
				if buf, ok = w.uniquePrefix(buf[:0], x.Def, r, i); !ok {
					continue
				}
				if seen[string(buf)] {
					return w.uniqueError("duplicate key value violates unique constraint \"%s\"", x.Def, r, i, "already exists")
				}
				seen[string(buf)] = true
				taken, err := w.entryOutside(x.Table, buf, replaced)
				if err != nil {
					return err
				}
				if taken {
					return w.uniqueError("duplicate key value violates unique constraint \"%s\"", x.Def, r, i, "already exists")
				}
			}
		}
	}
	return nil
}

// entryOutside reports whether index table t holds an entry starting with
// prefix whose row (the key after the prefix) is not in replaced.
func (w *tableWriter) entryOutside(t *state.Table, prefix []byte, replaced map[string]bool) (bool, error) {
	it, err := t.NewIter(prefix, state.PrefixEnd(prefix))
	if err != nil {
		return false, err
	}
	found := false
	for ok := it.First(); ok && !found; ok = it.Next() {
		found = !replaced[string(it.Key()[len(prefix):])]
	}
	err = it.Error()
	if cerr := it.Close(); err == nil {
		err = cerr
	}
	return found, err
}

// checkUniqueRows fails with 23505 if the table's rows repeat the columns
// of def, a unique index about to be built over them. The caller holds mu.
func (w *tableWriter) checkUniqueRows(def catalog.Index) error {
	if !def.Unique {
		return nil
	}
	seen := map[string]bool{}
	var buf []byte
	return exec.ScanTable(w.e.ctx, w.e.mem, w.table, w.types, exec.OutputFunc(func(_ context.Context, m exec.Message) error {
		if m.Batch == nil {
			return nil
		}
		defer m.Batch.Release()
		rec := m.Batch.Rec
		for i := range int(rec.NumRows()) {
			var ok bool
			if buf, ok = w.uniquePrefix(buf[:0], def, rec, i); !ok {
				continue
			}
			if seen[string(buf)] {
				return w.uniqueError("could not create unique index \"%s\"", def, rec, i, "is duplicated")
			}
			seen[string(buf)] = true
		}
		return nil
	}))
}
