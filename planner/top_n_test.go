//go:build cgo

package planner

import (
	"fmt"
	"strings"
	"testing"

	"github.com/streamsql/streamsql/catalog"
	"github.com/streamsql/streamsql/ir"
	"github.com/streamsql/streamsql/types"
)

// TestTopNRankColumn plans the TopN a rewrite of WHERE r <= 2 over rank()
// OVER (PARTITION BY g ORDER BY v DESC) produces: a ir.TopN with a group,
// a rank kind and a rank column. The rank column is the output's last,
// a bigint; the stream key stays the input's.
func TestTopNRankColumn(t *testing.T) {
	cat := catalog.New()
	cat.Add(&catalog.Relation{ID: 1, Name: "t", Kind: catalog.Table, StateTable: 1, Key: []int{0}, PrimaryKey: true,
		Columns: []catalog.Column{{Name: "id", Type: types.Int32T}, {Name: "g", Type: types.TextT}, {Name: "v", Type: types.Int32T}}})
	st, err := bindText(cat, "SELECT g, v, id FROM t")
	if err != nil {
		t.Fatal(err)
	}
	rel := &ir.TopN{Input: st.(*ir.Select).Query, Group: []int{0}, Keys: []ir.SortKey{{Column: 1, Desc: true, NullsFirst: true}},
		Limit: 2, Kind: ir.Rank, RankName: "r"}
	p, err := PlanStream(rel)
	if err != nil {
		t.Fatal(err)
	}
	cols := p.Root.Cols
	if last := cols[len(cols)-1]; last.Name != "r" || last.Type != types.Int64T || last.Hidden {
		t.Errorf("last column %+v, want r bigint", last)
	}
	if got := fmt.Sprint(p.Root.Key); got != "[2]" {
		t.Errorf("stream key %s, want [2] (id)", got)
	}
	got := strings.Join(ExplainStream(p, "view", func(s int) string { return fmt.Sprint(s) }), "\n")
	want := "StreamTopN { group_key: [g], order: [v DESC NULLS FIRST], offset: 0, limit: 2, rank, rank_column: r, stream_key: [id], state_table: 0 }"
	if !strings.Contains(got, want) {
		t.Errorf("EXPLAIN:\n%s\nwant a line\n%s", got, want)
	}
}
