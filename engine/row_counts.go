package engine

import (
	"github.com/streamsql/streamsql/catalog"
	"github.com/streamsql/streamsql/planner"
	"github.com/streamsql/streamsql/state"
)

// rowCountLimit is how many rows of a relation a batch query's planner
// counts before estimating the rest from its size on disk
// (state.Snapshot.EstimateRows).
const rowCountLimit = 4096

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
		n, err := snap.EstimateRows(state.TableID(rel.StateTable), rowCountLimit)
		seen[rel.ID] = count{n, err == nil}
		return n, err == nil
	}
}
