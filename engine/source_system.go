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

// kafkaReaders calls fn for every view's reader of a Kafka source.
func (e *Engine) kafkaReaders(fn func(view *view, source *catalog.Relation, r *kafkaReader)) {
	e.mu.Lock()
	views := make([]*view, 0, len(e.views))
	for _, v := range e.views {
		views = append(views, v)
	}
	e.mu.Unlock()
	for _, v := range views {
		for i, r := range v.readers {
			if kr, ok := r.(*kafkaReader); ok {
				fn(v, v.plan.Upstreams[i], kr)
			}
		}
	}
}

func (e *Engine) sourceRows(cat *catalog.Catalog) ([][]types.Datum, error) {
	bad := map[uint32]int64{}
	failed := map[uint32]string{}
	e.kafkaReaders(func(_ *view, src *catalog.Relation, r *kafkaReader) {
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
