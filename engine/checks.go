package engine

import (
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/streamsql/streamsql/catalog"
	"github.com/streamsql/streamsql/exec/eval"
	"github.com/streamsql/streamsql/sql"
	"github.com/streamsql/streamsql/sqlerr"
	"github.com/streamsql/streamsql/types"
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
func (w *tableWriter) checkRows(rec arrow.RecordBatch) error {
	if len(w.checks) == 0 || rec.NumRows() == 0 {
		return nil
	}
	ctx := &eval.Context{Mem: w.e.mem, Strict: true}
	for j, ev := range w.checks {
		arr, err := ev.Eval(ctx, rec)
		if err != nil {
			return err
		}
		res := arr.(*array.Boolean)
		bad := -1
		for i := range res.Len() {
			if res.IsValid(i) && !res.Value(i) {
				bad = i
				break
			}
		}
		arr.Release()
		if bad >= 0 {
			return sqlerr.New(checkViolation, "new row for relation \"%s\" violates check constraint \"%s\"", w.rel.Name, w.rel.Checks[j].Name).
				WithDetail("Failing row contains (" + w.rowText(rec, bad) + ").")
		}
	}
	return nil
}

// rowText renders the visible columns of row i of rec as PostgreSQL's
// "Failing row contains" detail does.
func (w *tableWriter) rowText(rec arrow.RecordBatch, i int) string {
	var vals []string
	for _, ci := range w.rel.VisibleColumns() {
		d := types.DatumAt(w.types[ci], rec.Column(ci), i)
		if d.Null {
			vals = append(vals, "null")
			continue
		}
		vals = append(vals, d.Text(w.types[ci]))
	}
	return strings.Join(vals, ", ")
}

// checkViolation is SQLSTATE 23514.
const checkViolation = "23514"
