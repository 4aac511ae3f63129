package engine

import (
	"context"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/streamsql/streamsql/catalog"
	"github.com/streamsql/streamsql/exec"
)

// indexSuffix is the suffix of the name of an unnamed index: key for a
// constraint's, idx otherwise.
func indexSuffix(constraint bool) string {
	if constraint {
		return "key"
	}
	return "idx"
}

// checkUnique fails with 23505 if a row of news (records of every column)
// would repeat the columns of a unique index: of another row of news, or
// of a stored row that is not among olds (the rows the statement replaces
// or deletes). The caller holds mu, before writing anything.
func (w *tableWriter) checkUnique(news, olds []arrow.RecordBatch) error {
	return w.op().CheckUnique(news, olds)
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
			if buf, ok = exec.UniquePrefix(buf[:0], w.types, def, rec, i); !ok {
				continue
			}
			if seen[string(buf)] {
				return w.op().UniqueError("could not create unique index \"%s\"", def, rec, i, "is duplicated")
			}
			seen[string(buf)] = true
		}
		return nil
	}))
}
