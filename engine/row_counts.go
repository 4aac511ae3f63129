package engine

import (
	"github.com/streamsql/streamsql/catalog"
	"github.com/streamsql/streamsql/planner"
	"github.com/streamsql/streamsql/state"
)

// A batch query's planner counts up to rowCountLimit rows of a relation
// before estimating the rest from its size on disk, and up to rowCountMax
// when that size shows fewer (the rows are still in the memtable); see
// state.Snapshot.EstimateRows.
const (
	rowCountLimit = 4096
	rowCountMax   = 65536
)

// rowCounts returns the row counts a batch query is planned with: each
// stored relation's rows in snap, estimated once per query. A relation
// whose rows cannot be read has no count.
func rowCounts(snap *state.Snapshot) planner.RowCounts {
	type count struct {
		rows float64
		ok   bool
	}
	seen := map[uint32]count{}
	return func(rel *catalog.Relation) (float64, bool) {
		if c, ok := seen[rel.ID]; ok {
			return c.rows, c.ok
		}
		n, err := snap.EstimateRows(state.TableID(rel.StateTable), rowCountLimit, rowCountMax)
		seen[rel.ID] = count{n, err == nil}
		return n, err == nil
	}
}
