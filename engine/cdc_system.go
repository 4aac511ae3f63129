package engine

import (
	"sort"

	"github.com/jackc/pglogrepl"
	"github.com/streamsql/streamsql/catalog"
	"github.com/streamsql/streamsql/types"
)

// cdcSystemTable is streamsql_cdc: one row per table fed by a CDC source,
// with its replication progress. confirmed_lsn is the LSN confirmed to the
// upstream (committed in streamsql), received_lsn the upstream's WAL end
// last seen, lag_bytes their distance.
func cdcSystemTable() systemTable {
	return systemTable{
		rel: &catalog.Relation{
			Name: "streamsql_cdc",
			Columns: []catalog.Column{
				{Name: "source", Type: types.TextT},
				{Name: "table", Type: types.TextT},
				{Name: "upstream_table", Type: types.TextT},
				{Name: "slot", Type: types.TextT},
				{Name: "confirmed_lsn", Type: types.TextT},
				{Name: "received_lsn", Type: types.TextT},
				{Name: "lag_bytes", Type: types.Int64T},
				{Name: "status", Type: types.TextT},
				{Name: "error", Type: types.TextT},
			},
		},
		rows: (*Engine).cdcRows,
	}
}

func (e *Engine) cdcRows(cat *catalog.Catalog) ([][]types.Datum, error) {
	var rows [][]types.Datum
	cdcReaders.Range(func(_, v any) bool {
		r := v.(*cdcReader)
		rel := r.w.rel
		if r.e != e || rel.Database != cat.DatabaseName() {
			return true
		}
		confirmed, received := r.confirmed.Load(), r.received.Load()
		status, errText := "streaming", types.Null
		if !r.connected.Load() {
			status = "reconnecting"
		}
		if p := r.lastErr.Load(); p != nil {
			errText = types.DText(*p)
		}
		lag := int64(0)
		if received > confirmed {
			lag = int64(received - confirmed)
		}
		rows = append(rows, []types.Datum{types.DText(rel.Options["cdc.source"]), types.DText(rel.Name), types.DText(rel.Options["cdc.table"]),
			types.DText(cdcSlotName(r.cfg, rel)), types.DText(pglogrepl.LSN(confirmed).String()), types.DText(pglogrepl.LSN(received).String()),
			types.DInt(lag), types.DText(status), errText})
		return true
	})
	sort.Slice(rows, func(i, j int) bool { return rows[i][1].S < rows[j][1].S })
	return rows, nil
}
