package engine

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/streamsql/streamsql/catalog"
	"github.com/streamsql/streamsql/exec"
	"github.com/streamsql/streamsql/ir"
	"github.com/streamsql/streamsql/pgwire"
	"github.com/streamsql/streamsql/planner"
	"github.com/streamsql/streamsql/sql"
	"github.com/streamsql/streamsql/sqlerr"
	"github.com/streamsql/streamsql/state"
	"github.com/streamsql/streamsql/types"
)

// Verification differences.
const (
	// VerifyMissing: the recomputed query has the row, the view does not
	// (one line per missing copy).
	VerifyMissing = "missing"
	// VerifyExtra: the view has the row, the recomputed query does not.
	VerifyExtra = "extra"
)

// VerifyDifference is one row that differs between a view and its query
// recomputed in batch.
type VerifyDifference struct {
	Kind string // VerifyMissing or VerifyExtra
	Row  string // the row's visible columns as text: (a, b, NULL)
}

// Verify recomputes view name's query in batch over the committed snapshot
// the view's rows are read from and returns the rows that differ (none is
// expected of an exactly-once view), and the number of rows compared. path
// resolves the name (nil: public).
//
// Views whose query is not deterministic over a snapshot (now(), random(),
// float sums whose rounding depends on the order of the rows, LIMIT with
// ties) may legitimately differ.
func (e *Engine) Verify(ctx context.Context, database string, path []string, name ir.ObjectName) ([]VerifyDifference, int, error) {
	cat := e.cat.In(database)
	if cat == nil {
		return nil, 0, sqlerr.New(sqlerr.InvalidCatalogName, "database \"%s\" does not exist", database)
	}
	if path == nil {
		path = []string{catalog.Public}
	}
	rel, err := e.resolve(cat, path, name)
	if err != nil {
		return nil, 0, err
	}
	if rel == nil || rel.Kind != catalog.MaterializedView {
		return nil, 0, sqlerr.New(sqlerr.UndefinedTable, "materialized view \"%s\" does not exist", name.Name)
	}
	if err := e.viewError(rel); err != nil {
		return nil, 0, err
	}
	start := time.Now()
	parsed, err := sql.Parse(rel.SQL)
	if err != nil || len(parsed) != 1 {
		return nil, 0, fmt.Errorf("engine: stored definition of %s does not parse: %v", rel.Name, err)
	}
	st, err := sql.BindStoredView(cat, rel, parsed[0])
	if err != nil {
		return nil, 0, err
	}
	cmv, ok := st.(*ir.CreateMaterializedView)
	if !ok {
		return nil, 0, fmt.Errorf("engine: stored definition of %s is a %s", rel.Name, st.Tag())
	}
	var source *catalog.Relation
	walkScans(cmv.Query, func(r *catalog.Relation) {
		if r.Kind == catalog.Source && source == nil {
			source = r
		}
	})
	if source != nil {
		return nil, 0, sqlerr.Unsupported("VERIFY of materialized view %s, which reads source %s: a source keeps no rows to recompute the view from", rel.Name, source.Name)
	}
	stored, err := sql.Parse(fmt.Sprintf("SELECT * FROM %s.%s", quoteIdent(rel.Schema), quoteIdent(rel.Name)))
	if err != nil {
		return nil, 0, err
	}
	sst, err := sql.BindIn(cat, path, stored[0])
	if err != nil {
		return nil, 0, err
	}
	q := batchQuery{now: time.Now().UnixMicro(), cat: cat}
	snap := e.store.Snapshot()
	defer snap.Release()
	want, err := e.rowTexts(ctx, snap, cmv.Query, q)
	if err != nil {
		return nil, 0, err
	}
	have, err := e.rowTexts(ctx, snap, sst.(*ir.Select).Query, q)
	if err != nil {
		return nil, 0, err
	}
	var diffs []VerifyDifference
	for row, n := range want {
		for ; n > have[row]; n-- {
			diffs = append(diffs, VerifyDifference{Kind: VerifyMissing, Row: row})
		}
	}
	for row, n := range have {
		for ; n > want[row]; n-- {
			diffs = append(diffs, VerifyDifference{Kind: VerifyExtra, Row: row})
		}
	}
	sort.Slice(diffs, func(a, b int) bool {
		if diffs[a].Row != diffs[b].Row {
			return diffs[a].Row < diffs[b].Row
		}
		return diffs[a].Kind < diffs[b].Kind
	})
	rows := 0
	for _, n := range have {
		rows += n
	}
	log := e.log.Info
	if len(diffs) > 0 {
		log = e.log.Error
	}
	log("materialized view verified", "view", rel.Name, "epoch", e.store.CommittedEpoch(), "rows", rows,
		"differences", len(diffs), "duration", time.Since(start))
	return diffs, rows, nil
}

// rowTexts runs rel in batch over snap and counts its rows by their text
// (visible columns only).
func (e *Engine) rowTexts(ctx context.Context, snap *state.Snapshot, rel ir.Rel, q batchQuery) (map[string]int, error) {
	root, _, err := planner.PlanBatchWith(rel, planner.BatchOptions{Rows: rowCounts(snap)})
	if err != nil {
		return nil, err
	}
	cols := rel.Columns()
	vis := ir.VisibleColumns(rel)
	env, release := e.batchEnv(q)
	defer release()
	counts := map[string]int{}
	var sb strings.Builder
	err = exec.RunBatch(ctx, env, snap, root, exec.OutputFunc(func(_ context.Context, m exec.Message) error {
		if m.Batch == nil {
			return nil
		}
		defer m.Batch.Release()
		rec := m.Batch.Rec
		for i := 0; i < int(rec.NumRows()); i++ {
			sb.Reset()
			sb.WriteByte('(')
			for j, c := range vis {
				if j > 0 {
					sb.WriteString(", ")
				}
				t := cols[c].Type
				sb.WriteString(types.DatumAt(t, rec.Column(c), i).Text(t))
			}
			sb.WriteByte(')')
			if m.Batch.Ops[i].IsInsert() {
				counts[sb.String()]++
			} else {
				counts[sb.String()]--
			}
		}
		return nil
	}))
	return counts, err
}

// quoteIdent quotes a name for SQL text.
func quoteIdent(s string) string { return `"` + strings.ReplaceAll(s, `"`, `""`) + `"` }

// verifyView runs VERIFY MATERIALIZED VIEW: one result row per difference
// (none when the view is right), with a notice saying how many rows matched.
func (s *session) verifyView(ctx context.Context, st *sql.VerifyView, w pgwire.ResultWriter) error {
	diffs, rows, err := s.e.Verify(ctx, s.cat.DatabaseName(), st.Path, st.Name)
	if err != nil {
		return err
	}
	if err := w.BeginRows(verifyColumns()); err != nil {
		return err
	}
	if len(diffs) > 0 {
		kinds := array.NewStringBuilder(s.e.mem)
		defer kinds.Release()
		rowText := array.NewStringBuilder(s.e.mem)
		defer rowText.Release()
		for _, d := range diffs {
			kinds.Append(d.Kind)
			rowText.Append(d.Row)
		}
		k, r := kinds.NewArray(), rowText.NewArray()
		defer k.Release()
		defer r.Release()
		rec := array.NewRecordBatch(exec.SchemaOf([]types.T{types.TextT, types.TextT}), []arrow.Array{k, r}, int64(len(diffs)))
		defer rec.Release()
		if err := w.WriteRows(rec); err != nil {
			return err
		}
	}
	if len(diffs) == 0 {
		if err := w.Notice("NOTICE", "00000", fmt.Sprintf("materialized view %s matches its query (%d rows)", st.Name.Name, rows)); err != nil {
			return err
		}
	}
	return w.Complete(fmt.Sprintf("VERIFY %d", len(diffs)))
}

func verifyColumns() []pgwire.Column {
	return []pgwire.Column{{Name: "difference", Type: types.TextT}, {Name: "row", Type: types.TextT}}
}
