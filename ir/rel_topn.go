package ir

import "github.com/streamsql/streamsql/types"

// RankKind says how a TopN numbers the rows of a group and so which rows are
// in its window [Offset, Offset+Limit). Rows are in ORDER BY order; rows
// with equal ORDER BY values are peers.
type RankKind uint8

const (
	// RowNumber numbers the rows 1, 2, 3, ... (row_number()); peers are
	// ordered by the input's stream key. The window is the rows numbered
	// Offset+1 .. Offset+Limit: LIMIT/OFFSET and DISTINCT ON.
	RowNumber RankKind = iota
	// Rank numbers a row 1 + the number of rows before it that are not its
	// peers (rank()); the window is the rows ranked Offset+1 .. Offset+Limit.
	Rank
	// DenseRank numbers a row 1 + the number of distinct ORDER BY values
	// before it (dense_rank()); the window is as for Rank.
	DenseRank
	// WithTies is FETCH FIRST Limit ROWS WITH TIES after OFFSET: the rows
	// numbered Offset+1 .. Offset+Limit as for RowNumber, plus the peers of
	// the last of them. Its rank column is the row number.
	WithTies
)

func (k RankKind) String() string {
	switch k {
	case RowNumber:
		return "row_number"
	case Rank:
		return "rank"
	case DenseRank:
		return "dense_rank"
	case WithTies:
		return "with_ties"
	}
	return "rank_kind(?)"
}

// TopN keeps, of each group of input rows with equal values in the columns
// Group (none: one group), the rows in the window [Offset, Offset+Limit) of
// the group's rows in Keys order, as numbered by Kind. With RankName set, the
// output has one more column, a bigint named RankName: the row's number as
// Kind numbers it. The output is not ordered (a Sort above it orders it).
//
// The binder produces it for DISTINCT ON (Limit 1 per DISTINCT ON group);
// the planner also turns ORDER BY ... LIMIT of a materialized view into a
// planner.TopN without groups.
type TopN struct {
	Input         Rel
	Group         []int
	Keys          []SortKey
	Offset, Limit int64
	Kind          RankKind
	RankName      string
}

// Columns are the input's, then the rank column if any.
func (r *TopN) Columns() []Column {
	cols := r.Input.Columns()
	if r.RankName == "" {
		return cols
	}
	return append(append([]Column(nil), cols...), Column{Name: r.RankName, Type: types.Int64T})
}
