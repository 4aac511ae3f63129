package engine

import (
	"github.com/apache/arrow-go/v18/arrow"
	"github.com/streamsql/streamsql/catalog"
	"github.com/streamsql/streamsql/exec/eval"
	"github.com/streamsql/streamsql/sql"
)

// compileChecks compiles the CHECK constraints of rel, over its columns.
func compileChecks(cat *catalog.Catalog, rel *catalog.Relation) ([]eval.Evaluator, error) {
	exprs, err := sql.BindChecks(cat, rel)
	if err != nil {
		return nil, err
	}
	out := make([]eval.Evaluator, len(exprs))
	for i, e := range exprs {
		if out[i], err = eval.Compile(e); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// checkRows fails with 23514 if a row of rec (every column of the table)
// makes a CHECK constraint false, as PostgreSQL reports it.
func (w *tableWriter) checkRows(rec arrow.RecordBatch) error { return w.op().CheckConstraints(rec) }
