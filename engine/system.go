package engine

import (
	"fmt"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/streamsql/streamsql/catalog"
	"github.com/streamsql/streamsql/exec"
	"github.com/streamsql/streamsql/state"
	"github.com/streamsql/streamsql/types"
)

// System tables are computed when read. Their ids are reserved at the top of
// the id space and never persisted.
const systemIDBase = 0xFFFF0000

type systemTable struct {
	rel *catalog.Relation
	// rows computes the table's rows as a session of database cat sees them.
	rows func(e *Engine, cat *catalog.Catalog) ([][]types.Datum, error)
	// pg computes the rows of a pg_catalog relation instead (pgcatalog.go).
	pg func(v *pgView) [][]types.Datum
}

// global adapts the rows of a table that is the same in every database.
func global(rows func(*Engine) ([][]types.Datum, error)) func(*Engine, *catalog.Catalog) ([][]types.Datum, error) {
	return func(e *Engine, _ *catalog.Catalog) ([][]types.Datum, error) { return rows(e) }
}

var systemTables = append([]systemTable{
	{
		rel: &catalog.Relation{
			Name: "streamsql_views",
			Columns: []catalog.Column{
				{Name: "name", Type: types.TextT},
				{Name: "definition", Type: types.TextT},
				{Name: "expression_errors", Type: types.Int64T},
				{Name: "late_rows", Type: types.Int64T},
				{Name: "status", Type: types.TextT},
				{Name: "schema", Type: types.TextT},
				{Name: "kind", Type: types.TextT},
				{Name: "parallelism", Type: types.Int64T},
			},
		},
		rows: (*Engine).viewRows,
	},
	{
		rel: &catalog.Relation{
			Name: "streamsql_checkpoints",
			Columns: []catalog.Column{
				{Name: "epoch", Type: types.Int64T},
				{Name: "started_at", Type: types.TimestampTZT},
				{Name: "duration_ms", Type: types.Float64T},
				{Name: "keys_written", Type: types.Int64T},
				{Name: "bytes_written", Type: types.Int64T},
				{Name: "state_size_bytes", Type: types.Int64T},
				{Name: "max_alignment_ms", Type: types.Float64T},
				{Name: "status", Type: types.TextT},
				{Name: "error", Type: types.TextT},
				{Name: "commit_ms", Type: types.Float64T},
				{Name: "inject_ms", Type: types.Float64T},
				{Name: "dataflow_ms", Type: types.Float64T},
				{Name: "flush_ms", Type: types.Float64T},
				{Name: "sync_ms", Type: types.Float64T},
			},
		},
		rows: global((*Engine).checkpointRows),
	},
	{
		rel: &catalog.Relation{
			Name: "streamsql_alignments",
			Columns: []catalog.Column{
				{Name: "epoch", Type: types.Int64T},
				{Name: "view", Type: types.TextT},
				{Name: "alignment_ms", Type: types.Float64T},
			},
		},
		rows: global((*Engine).alignmentRows),
	},
	{
		rel: &catalog.Relation{
			Name: "streamsql_savepoints",
			Columns: []catalog.Column{
				{Name: "name", Type: types.TextT},
				{Name: "epoch", Type: types.Int64T},
				{Name: "created_at", Type: types.TimestampTZT},
				{Name: "size_bytes", Type: types.Int64T},
				{Name: "format_version", Type: types.Int64T},
				{Name: "path", Type: types.TextT},
			},
		},
		rows: global((*Engine).savepointRows),
	},
	{
		rel: &catalog.Relation{
			Name: "streamsql_state_tables",
			Columns: []catalog.Column{
				{Name: "relation", Type: types.TextT},
				{Name: "table_id", Type: types.Int64T},
				{Name: "role", Type: types.TextT},
				{Name: "keys", Type: types.Int64T},
			},
		},
		rows: (*Engine).stateTableRows,
	},
	{
		rel: &catalog.Relation{
			Name: "streamsql_sinks",
			Columns: []catalog.Column{
				{Name: "name", Type: types.TextT},
				{Name: "connector", Type: types.TextT},
				{Name: "rows_written", Type: types.Int64T},
				{Name: "status", Type: types.TextT},
				{Name: "schema", Type: types.TextT},
				{Name: "definition", Type: types.TextT},
			},
		},
		rows: (*Engine).sinkRows,
	},
	{
		rel: &catalog.Relation{
			Name: "streamsql_jobs",
			Columns: []catalog.Column{
				{Name: "job_id", Type: types.Int64T},
				{Name: "view", Type: types.TextT},
				{Name: "schema", Type: types.TextT},
				{Name: "rows_done", Type: types.Int64T},
				{Name: "rows_total", Type: types.Int64T},
				{Name: "started_at", Type: types.TimestampTZT},
				{Name: "elapsed_ms", Type: types.Float64T},
			},
		},
		rows: (*Engine).jobRows,
	},
	sourcesTable,
	sourcePartitionsTable,
	sourceFilesTable,
	cdcSystemTable(),
	historySystemTable,
}, pgCatalogTables...)

// stateTableRows lists every state table of every table and view with its
// number of keys at the committed epoch. It reads every table: a diagnostic,
// costly on large states.
func (e *Engine) stateTableRows(cat *catalog.Catalog) ([][]types.Datum, error) {
	snap := e.store.Snapshot()
	defer snap.Release()
	var rows [][]types.Datum
	add := func(rel *catalog.Relation, id uint32, role string) error {
		if id == 0 {
			return nil
		}
		it, err := snap.NewIter(state.TableID(id), nil, nil)
		if err != nil {
			return err
		}
		n := int64(0)
		for ok := it.First(); ok; ok = it.Next() {
			n++
		}
		err = it.Error()
		it.Close()
		rows = append(rows, []types.Datum{types.DText(rel.Name), types.DInt(int64(id)), types.DText(role), types.DInt(n)})
		return err
	}
	for _, r := range cat.InDatabase() {
		if r.Kind != catalog.Table && r.Kind != catalog.MaterializedView {
			continue
		}
		if err := add(r, r.StateTable, "rows"); err != nil {
			return nil, err
		}
		if err := add(r, r.WatermarkTable, "watermark"); err != nil {
			return nil, err
		}
		for i, id := range r.OperatorTables {
			if err := add(r, id, fmt.Sprintf("operator %d", i)); err != nil {
				return nil, err
			}
		}
		if err := add(r, r.PauseTable, "paused changes"); err != nil {
			return nil, err
		}
		if err := add(r, r.BackfillTable, "backfill positions"); err != nil {
			return nil, err
		}
		if err := add(r, r.HistoryTable, "history"); err != nil {
			return nil, err
		}
		for _, idx := range r.Indexes {
			if err := add(r, idx.StateTable, "index "+idx.Name); err != nil {
				return nil, err
			}
		}
	}
	return rows, nil
}

// The system tables' ids, kind and schema are set once, before any engine
// shares the relations.
func init() {
	for i, st := range systemTables {
		st.rel.ID = systemIDBase + uint32(i)
		st.rel.Kind = catalog.SystemTable
		if st.rel.Schema == "" {
			st.rel.Schema = catalog.PgCatalog
		}
	}
}

// registerSystemTables adds the system tables to the in-memory catalog.
func (e *Engine) registerSystemTables() {
	for _, st := range systemTables {
		e.cat.Add(st.rel)
	}
}

// systemRows computes a system table's rows as one record.
func (e *Engine) systemRows(cat *catalog.Catalog, rel *catalog.Relation) ([]arrow.RecordBatch, error) {
	return e.systemRowsAs(cat, "", rel)
}

// systemRowsAs computes a system table's rows as one record, as user sees
// them.
func (e *Engine) systemRowsAs(cat *catalog.Catalog, user string, rel *catalog.Relation) ([]arrow.RecordBatch, error) {
	for _, st := range systemTables {
		if st.rel.ID != rel.ID {
			continue
		}
		var rows [][]types.Datum
		var err error
		if st.pg != nil {
			rows = st.pg(&pgView{e: e, cat: cat, user: user})
		} else if rows, err = st.rows(e, cat); err != nil {
			return nil, err
		}
		if len(rows) == 0 {
			// No batch: operators need not see an empty one.
			return nil, nil
		}
		ts := rel.Types()
		bs := make([]array.Builder, len(ts))
		for i, t := range ts {
			bs[i] = array.NewBuilder(e.mem, t.ArrowType())
			defer bs[i].Release()
		}
		for _, row := range rows {
			for i, d := range row {
				appendDatum(bs[i], ts[i], d)
			}
		}
		cols := make([]arrow.Array, len(bs))
		for i, b := range bs {
			cols[i] = b.NewArray()
		}
		rec := array.NewRecordBatch(exec.SchemaOf(ts), cols, int64(len(rows)))
		for _, c := range cols {
			c.Release()
		}
		return []arrow.RecordBatch{rec}, nil
	}
	return nil, fmt.Errorf("engine: unknown system table %s", rel.Name)
}

func appendDatum(b array.Builder, t types.T, d types.Datum) {
	if d.Null {
		b.AppendNull()
		return
	}
	switch t.Kind {
	case types.Int64:
		b.(*array.Int64Builder).Append(d.I)
	case types.Float64:
		b.(*array.Float64Builder).Append(d.F)
	case types.TimestampTZ:
		b.(*array.TimestampBuilder).Append(arrow.Timestamp(d.I))
	case types.Text:
		b.(*array.StringBuilder).Append(d.S)
	default:
		types.AppendDatum(b, t, d)
	}
}

// viewRows lists the materialized views with their expression error and
// late row counts (since the server started) and status, and the plain
// views (without those).
func (e *Engine) viewRows(cat *catalog.Catalog) ([][]types.Datum, error) {
	var rows [][]types.Datum
	for _, r := range cat.InDatabase() {
		if r.Kind == catalog.View {
			rows = append(rows, []types.Datum{types.DText(r.Name), types.DText(r.SQL), types.Null, types.Null, types.Null,
				types.DText(r.Schema), types.DText(r.Kind.String()), types.Null})
			continue
		}
		if r.Kind != catalog.MaterializedView {
			continue
		}
		e.mu.Lock()
		v := e.views[r.ID]
		e.mu.Unlock()
		status, errs, late := "running", int64(0), int64(0)
		if r.Paused {
			status = "paused"
		}
		if v != nil {
			errs, late = v.exprErrors.Load(), v.lateRows.Load()
			if p := v.failed.Load(); p != nil {
				status = "failed: " + (*p).Error()
			}
		}
		actors := 1
		if v != nil && len(v.parallel) > 0 {
			actors = viewParallelism(r) // actors per partitioned fragment
		}
		rows = append(rows, []types.Datum{types.DText(r.Name), types.DText(r.SQL), types.DInt(errs), types.DInt(late), types.DText(status),
			types.DText(r.Schema), types.DText(r.Kind.String()), types.DInt(int64(actors))})
	}
	return rows, nil
}

func millis(d time.Duration) types.Datum { return types.DFloat(float64(d.Microseconds()) / 1000) }

// checkpointRows lists the checkpoint history (see history.go).
func (e *Engine) checkpointRows() ([][]types.Datum, error) { return e.checkpointHistoryRows() }

// alignmentRows lists the barrier alignment time of every multi-input view
// for the recent checkpoints.
func (e *Engine) alignmentRows() ([][]types.Datum, error) {
	var rows [][]types.Datum
	for _, r := range e.coord.History() {
		_, align := e.stats.get(r.Epoch)
		for view, d := range align {
			rows = append(rows, []types.Datum{types.DInt(int64(r.Epoch)), types.DText(view), millis(d)})
		}
	}
	return rows, nil
}
