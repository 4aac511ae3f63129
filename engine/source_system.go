package engine

import (
	"github.com/streamsql/streamsql/catalog"
	"github.com/streamsql/streamsql/types"
)

// sourcesTable is streamsql_sources: one row per source and per table fed
// by Kafka, with the messages its readers skipped as bad (Kafka) and its
// status.
var sourcesTable = systemTable{
	rel: &catalog.Relation{
		Name: "streamsql_sources",
		Columns: []catalog.Column{
			{Name: "name", Type: types.TextT},
			{Name: "connector", Type: types.TextT},
			{Name: "bad_records", Type: types.Int64T},
			{Name: "status", Type: types.TextT},
			{Name: "schema", Type: types.TextT},
		},
	},
	rows: (*Engine).sourceRows,
}

// sourcePartitionsTable is streamsql_source_partitions: one row per
// partition of each view's reader of a Kafka source, with its consumer
// lag (the high watermark last seen less the next offset to read).
var sourcePartitionsTable = systemTable{
	rel: &catalog.Relation{
		Name: "streamsql_source_partitions",
		Columns: []catalog.Column{
			{Name: "source", Type: types.TextT},
			{Name: "view", Type: types.TextT},
			{Name: "partition", Type: types.Int64T},
			{Name: "offset", Type: types.Int64T},
			{Name: "high_watermark", Type: types.Int64T},
			{Name: "lag", Type: types.Int64T},
		},
	},
	rows: (*Engine).sourcePartitionRows,
}

// sourceFilesTable is streamsql_source_files: one row per file found by
// each view's reader of a posix_fs source, with how far it has been read.
var sourceFilesTable = systemTable{
	rel: &catalog.Relation{
		Name: "streamsql_source_files",
		Columns: []catalog.Column{
			{Name: "source", Type: types.TextT},
			{Name: "view", Type: types.TextT},
			{Name: "file", Type: types.TextT},
			{Name: "size", Type: types.Int64T},
			{Name: "bytes_read", Type: types.Int64T},
			{Name: "records_read", Type: types.Int64T},
			{Name: "done", Type: types.BoolT},
		},
	},
	rows: (*Engine).sourceFileRows,
}

// statusReader is a reader that counts bad records and can fail.
type statusReader interface {
	status() (bad int64, failed error)
}

// viewReaders calls fn for every view's reader of a source.
func (e *Engine) viewReaders(fn func(view *view, source *catalog.Relation, r viewSourceReader)) {
	e.mu.Lock()
	views := make([]*view, 0, len(e.views))
	for _, v := range e.views {
		views = append(views, v)
	}
	e.mu.Unlock()
	for _, v := range views {
		for _, r := range v.readers {
			if r != nil {
				fn(v, r.source(), r)
			}
		}
	}
}

// kafkaReaders calls fn for every view's reader of a Kafka source.
func (e *Engine) kafkaReaders(fn func(view *view, source *catalog.Relation, r *kafkaReader)) {
	e.viewReaders(func(v *view, src *catalog.Relation, r viewSourceReader) {
		if kr, ok := r.(*kafkaReader); ok {
			fn(v, src, kr)
		}
	})
}

func (e *Engine) sourceRows(cat *catalog.Catalog) ([][]types.Datum, error) {
	bad := map[uint32]int64{}
	failed := map[uint32]string{}
	e.viewReaders(func(_ *view, src *catalog.Relation, vr viewSourceReader) {
		r, ok := vr.(statusReader)
		if !ok {
			return
		}
		n, err := r.status()
		bad[src.ID] += n
		if err != nil {
			failed[src.ID] = "failed: " + err.Error()
		}
	})
	var rows [][]types.Datum
	for _, r := range cat.InDatabase() {
		if isKafkaTable(r) {
			rows = append(rows, e.kafkaTableRow(r))
			continue
		}
		if r.Kind != catalog.Source {
			continue
		}
		status := "running"
		if f, ok := failed[r.ID]; ok {
			status = f
		}
		rows = append(rows, []types.Datum{types.DText(r.Name), types.DText(r.Options["connector"]), types.DInt(bad[r.ID]),
			types.DText(status), types.DText(r.Schema)})
	}
	return rows, nil
}

func (e *Engine) sourcePartitionRows(cat *catalog.Catalog) ([][]types.Datum, error) {
	var rows [][]types.Datum
	e.kafkaReaders(func(v *view, src *catalog.Relation, r *kafkaReader) {
		if src.Database != cat.DatabaseName() {
			return
		}
		for _, p := range r.partitions() {
			high, lag := types.Null, types.Null
			if p.highKnown {
				high, lag = types.DInt(p.high), types.DInt(max(p.high-p.offset, 0))
			}
			rows = append(rows, []types.Datum{types.DText(src.Name), types.DText(v.rel.Name), types.DInt(int64(p.partition)),
				types.DInt(p.offset), high, lag})
		}
	})
	return rows, nil
}

func (e *Engine) sourceFileRows(cat *catalog.Catalog) ([][]types.Datum, error) {
	var rows [][]types.Datum
	e.viewReaders(func(v *view, src *catalog.Relation, vr viewSourceReader) {
		r, ok := vr.(*fsReader)
		if !ok || src.Database != cat.DatabaseName() {
			return
		}
		for _, f := range r.fileRows() {
			bytesRead := types.Null
			if r.opts.Encode != "parquet" {
				bytesRead = types.DInt(f.f.pos.Byte)
			}
			rows = append(rows, []types.Datum{types.DText(src.Name), types.DText(v.rel.Name), types.DText(f.name),
				types.DInt(f.f.size), bytesRead, types.DInt(f.f.pos.Row), types.DBool(f.f.done)})
		}
	})
	return rows, nil
}

// kafkaTableRow is the streamsql_sources row of the Kafka table rel; its
// status is "starting" until its reader runs.
func (e *Engine) kafkaTableRow(rel *catalog.Relation) []types.Datum {
	bad, status := int64(0), "starting"
	e.mu.Lock()
	w := e.tables[rel.ID]
	e.mu.Unlock()
	if r, ok := kafkaTables.Load(w); ok && w != nil {
		var failed string
		bad, failed = r.(*kafkaTableReader).status()
		status = "running"
		if failed != "" {
			status = "failed: " + failed
		}
	}
	return []types.Datum{types.DText(rel.Name), types.DText("kafka"), types.DInt(bad), types.DText(status), types.DText(rel.Schema)}
}
