package exec

import (
	"testing"

	"github.com/streamsql/streamsql/catalog"
	"github.com/streamsql/streamsql/planner"
	"github.com/streamsql/streamsql/sql"
	"github.com/streamsql/streamsql/types"
)

// TestKeyRanges checks which WHERE clauses of a DELETE pin a prefix of the
// primary key (a int, b varchar(5)) and into how many ranges.
func TestKeyRanges(t *testing.T) {
	cat := catalog.New()
	rel := &catalog.Relation{ID: 1, Name: "p", Kind: catalog.Table, PrimaryKey: true, Columns: []catalog.Column{
		{Name: "a", Type: types.Int32T}, {Name: "b", Type: types.T{Kind: types.Text, Width: 5}}, {Name: "v", Type: types.Int64T},
	}, Key: []int{0, 1}}
	cat.Add(rel)
	for _, c := range []struct {
		where  string
		ranges int // -1: not pinned
	}{
		{"a = 3 AND b = 'k4'", 1},
		{"a = 7 AND v > 50", 1},
		{"v > 50 AND a = 7", 1},
		{"a IN (1, 2, 2, NULL) AND b IN ('k0', 'k9')", 4},
		{"5::smallint = a AND b = 'k1'::text", 1},
		{"a = NULL", 0},
		{"b = 'k1'", -1},
		{"a > 3", -1},
		{"a = 3 OR a = 4", -1},
		{"a NOT IN (1, 2)", -1},
		{"a = v", -1},
		{"a = 1 / 0", -1},
		{"a + 0 = 3", -1},
	} {
		ps, err := sql.Parse("DELETE FROM p WHERE " + c.where)
		if err != nil {
			t.Fatal(err)
		}
		st, err := sql.Bind(cat, ps[0])
		if err != nil {
			t.Fatalf("%s: %v", c.where, err)
		}
		ranges, ok := KeyRanges(planner.PinnedKey(st.(*sql.Delete).Where, rel.Key, rel.Types()), rel.Key, rel.Types())
		got := len(ranges)
		if !ok {
			got = -1
		}
		if got != c.ranges {
			t.Errorf("WHERE %s: %d ranges, want %d", c.where, got, c.ranges)
		}
	}
}
