package planner

import (
	"fmt"
	"strings"

	"github.com/streamsql/streamsql/ir"
	"github.com/streamsql/streamsql/sqlerr"
	"github.com/streamsql/streamsql/types"
)

// TopN keeps, per group of rows with equal GroupCols (none: one group), the
// rows in the window [Offset, Offset+Limit) of the group in Keys order, as
// Kind numbers them (see ir.RankKind). Its output is the input's columns,
// then, if RankCol, the row's number in its group (bigint). Its stream key is
// the input's: a row's number is a value, not part of its identity.
//
// In a streaming plan it keeps every input row in the state table Table,
// keyed by group, order key and input stream key, and emits the changes of
// its window at each barrier. In a batch plan (Sequence) the input is
// insert-only and has no stream key: rows are told apart by their arrival
// number, and the output comes at the final barrier.
//
// A group TopN written as WHERE rn <= N over row_number() OVER (PARTITION BY
// g ORDER BY k) is this node with GroupCols g, Keys k, Limit N and RankCol;
// build it with builder.topN.
type TopN struct {
	Input     Node
	GroupCols []int
	Keys      []ir.SortKey
	// Offset >= 0 and Limit >= 0: a streaming window is always bounded.
	Offset, Limit int64
	Kind          ir.RankKind
	RankCol       bool
	Table         int
	Sequence      bool
	Cols          []ir.Column
	Key           []int
	// WatermarkTable is set (>= 0) when the first group column carries a
	// watermark (the planner moves such a column first): the groups below it
	// are final, their state is dropped and later rows for them are late;
	// the table keeps the watermark reached. EmitOnWindowClose emits each
	// group's window once, when it becomes final.
	WatermarkTable    int
	EmitOnWindowClose bool
}

func (n *TopN) Columns() []ir.Column { return n.Cols }
func (n *TopN) StreamKey() []int     { return n.Key }
func (n *TopN) Inputs() []Node       { return []Node{n.Input} }

// GroupTypes returns the types of the group columns.
func (n *TopN) GroupTypes() []types.T { return colTypes(n.Input.Columns(), n.GroupCols) }

// InputKeyTypes returns the types of the input's stream key columns.
func (n *TopN) InputKeyTypes() []types.T { return colTypes(n.Input.Columns(), n.Input.StreamKey()) }

func colTypes(cols []ir.Column, idx []int) []types.T {
	ts := make([]types.T, len(idx))
	for i, c := range idx {
		ts[i] = cols[c].Type
	}
	return ts
}

// topN builds a TopN over in and allocates its state table. rankName names
// the rank column; "" outputs none. limit < 0 (no LIMIT) is refused in a
// streaming plan, whose window must be bounded.
func (b *builder) topN(in Node, group []int, keys []ir.SortKey, offset, limit int64, kind ir.RankKind, rankName string) (*TopN, error) {
	if limit < 0 {
		if b.stream {
			return nil, sqlerr.Unsupported("OFFSET without LIMIT in a materialized view")
		}
		limit = 1<<63 - 1 - offset
	}
	n := &TopN{
		Input: in, GroupCols: group, Keys: keys, Offset: offset, Limit: limit, Kind: kind,
		RankCol: rankName != "", Sequence: !b.stream, Cols: in.Columns(), Key: in.StreamKey(),
	}
	if n.RankCol {
		n.Cols = append(append([]ir.Column(nil), n.Cols...), ir.Column{Name: rankName, Type: types.Int64T})
	}
	n.Table = b.table()
	n.WatermarkTable = -1
	if b.stream {
		for i, c := range n.GroupCols {
			if hasWatermark(in, c) {
				n.GroupCols = append([]int(nil), n.GroupCols...)
				moveToFront(n.GroupCols, i)
				n.WatermarkTable = b.table()
				if !b.legacyKeys {
					// A row's versions in a final group (kept: its delete
					// is late) and in an open one are distinct rows.
					n.Key = withColumn(n.Key, n.GroupCols[0])
				}
				break
			}
		}
	}
	return n, nil
}

// limit plans LIMIT/OFFSET. In a streaming plan it is a TopN without groups
// over the Sort below it (no Sort: ordered by the stream key); LIMIT ALL
// without OFFSET keeps every row. In a batch plan it is a Limit after the
// Sort, except WITH TIES, which is a TopN ordered again by a Sort above it.
func (b *builder) limit(r *ir.Limit) (Node, error) {
	var keys []ir.SortKey
	input := r.Input
	if s, ok := input.(*ir.Sort); ok && (b.stream || r.WithTies) {
		keys, input = s.Keys, s.Input
	}
	in, err := b.build(input)
	if err != nil {
		return nil, err
	}
	kind := ir.RowNumber
	if r.WithTies {
		kind = ir.WithTies
	}
	switch {
	case b.stream && r.Count < 0 && r.Offset == 0:
		return in, nil
	case b.stream:
		return b.topN(in, nil, keys, r.Offset, r.Count, kind, "")
	case r.WithTies:
		t, err := b.topN(in, nil, keys, r.Offset, r.Count, kind, "")
		if err != nil {
			return nil, err
		}
		return &Sort{Input: t, Keys: keys}, nil
	}
	return &Limit{Input: in, Offset: r.Offset, Count: r.Count}, nil
}

// topNRel plans a bound ir.TopN (DISTINCT ON).
func (b *builder) topNRel(r *ir.TopN) (Node, error) {
	in, err := b.build(r.Input)
	if err != nil {
		return nil, err
	}
	return b.topN(in, r.Group, r.Keys, r.Offset, r.Limit, r.Kind, r.RankName)
}

func (e *explainer) topNDetail(n *TopN) string {
	in := n.Input.Columns()
	s := fmt.Sprintf("order: %s, offset: %d, limit: %d", sortKeyList(in, n.Keys), n.Offset, n.Limit)
	if len(n.GroupCols) > 0 {
		s = fmt.Sprintf("group_key: %s, %s", keyList(in, n.GroupCols), s)
	}
	if n.Kind != ir.RowNumber {
		s += ", " + n.Kind.String()
	}
	if n.RankCol {
		s += ", rank_column: " + n.Cols[len(n.Cols)-1].Name
	}
	if n.WatermarkTable >= 0 {
		s += fmt.Sprintf(", watermark: %s (final groups dropped)", in[n.GroupCols[0]].Name)
		if n.EmitOnWindowClose {
			s += ", emit: on window close"
		}
	}
	if e.stream {
		s += fmt.Sprintf(", stream_key: %s, state_table: %s", e.key(n), e.name(n.Table))
		if n.WatermarkTable >= 0 {
			s += ", watermark_table: " + e.name(n.WatermarkTable)
		}
	}
	return s
}

// sortKeyList renders ORDER BY keys over cols.
func sortKeyList(cols []ir.Column, keys []ir.SortKey) string {
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = cols[k.Column].Name + " " + ir.OrderWords(k.Desc, k.NullsFirst)
	}
	return "[" + strings.Join(parts, ", ") + "]"
}
