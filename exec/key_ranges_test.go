//go:build cgo

package exec

import (
	"bytes"
	"testing"

	"github.com/streamsql/streamsql/catalog"
	"github.com/streamsql/streamsql/exec/eval"
	"github.com/streamsql/streamsql/ir"
	"github.com/streamsql/streamsql/planner"
	"github.com/streamsql/streamsql/sql"
	"github.com/streamsql/streamsql/state"
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
		ranges, ok := KeyRanges(planner.PinnedKey(st.(*ir.Delete).Rows.(*ir.Filter).Pred, rel.Key, rel.Types()), rel.Key, rel.Types())
		got := len(ranges)
		if !ok {
			got = -1
		}
		if got != c.ranges {
			t.Errorf("WHERE %s: %d ranges, want %d", c.where, got, c.ranges)
		}
	}
}

// TestKeyRangesOf checks the key ranges derived from comparisons on the key
// column after the pinned ones: how many, and which keys they hold.
func TestKeyRangesOf(t *testing.T) {
	cat := catalog.New()
	r := &catalog.Relation{ID: 1, Name: "r", Kind: catalog.Table, PrimaryKey: true, Columns: []catalog.Column{
		{Name: "id", Type: types.Int32T}, {Name: "v", Type: types.Int64T},
	}, Key: []int{0}}
	p := &catalog.Relation{ID: 2, Name: "p", Kind: catalog.Table, PrimaryKey: true, Columns: []catalog.Column{
		{Name: "a", Type: types.Int32T}, {Name: "b", Type: types.TextT}, {Name: "v", Type: types.Int64T},
	}, Key: []int{0, 1}}
	cat.Add(r)
	cat.Add(p)
	type row = []types.Datum
	i := types.DInt
	s := types.DText
	for _, c := range []struct {
		table   string
		where   string
		ranges  int // -1: nothing narrows the scan
		in, out []row
	}{
		{"r", "id > 5", 1, []row{{i(6)}, {i(1 << 30)}}, []row{{i(5)}, {i(-1)}}},
		{"r", "5 < id", 1, []row{{i(6)}}, []row{{i(5)}}},
		{"r", "id >= 5 AND id < 10", 1, []row{{i(5)}, {i(9)}}, []row{{i(4)}, {i(10)}}},
		{"r", "id > 5 AND v < 3 AND id > 7", 1, []row{{i(8)}}, []row{{i(6)}, {i(7)}}},
		{"r", "id BETWEEN 3 AND 7", 1, []row{{i(3)}, {i(7)}}, []row{{i(2)}, {i(8)}}},
		{"r", "id BETWEEN SYMMETRIC 7 AND 3", 1, []row{{i(3)}, {i(7)}}, []row{{i(2)}, {i(8)}}},
		{"r", "id > 5 AND id < 3", 0, nil, nil},
		{"r", "id > 5 AND id <= 5", 0, nil, nil},
		{"r", "id < 3 OR id > 10", 2, []row{{i(2)}, {i(11)}}, []row{{i(3)}, {i(10)}}},
		{"r", "id IN (1, 2) OR id > 100", 2, []row{{i(1)}, {i(2)}, {i(101)}}, []row{{i(3)}, {i(100)}}},
		{"r", "(id < 10 OR id > 20) AND id BETWEEN 5 AND 25", 2, []row{{i(5)}, {i(25)}}, []row{{i(15)}, {i(26)}}},
		{"r", "id > 2.5", 1, []row{{i(3)}}, []row{{i(1)}}},
		{"r", "id <= 2.5", 1, []row{{i(2)}}, []row{{i(5)}}},
		{"r", "id IN (1, 3) OR id > 100", 3, []row{{i(1)}, {i(3)}, {i(101)}}, []row{{i(2)}, {i(100)}}},
		{"r", "id > 5::bigint", 1, []row{{i(6)}}, []row{{i(5)}}},
		{"r", "id > 5000000000::bigint", -1, nil, nil},
		{"r", "id > NULL", 0, nil, nil},
		{"r", "id > 1e20", -1, nil, nil},
		{"r", "id > 5 OR v = 1", -1, nil, nil},
		{"r", "v > 5", -1, nil, nil},
		{"r", "id + 0 > 5", -1, nil, nil},
		{"r", "id > v", -1, nil, nil},
		{"p", "a = 1 AND b > 'k'", 1, []row{{i(1), s("l")}}, []row{{i(1), s("k")}, {i(2), s("z")}, {i(0), s("z")}}},
		{"p", "a IN (1, 2) AND b BETWEEN 'b' AND 'd'", 2, []row{{i(2), s("c")}, {i(1), s("d")}}, []row{{i(2), s("e")}, {i(3), s("c")}}},
		{"p", "a > 1", 1, []row{{i(2), s("a")}}, []row{{i(1), s("z")}}},
		{"p", "a = 1 AND b = 'x'", 1, []row{{i(1), s("x")}}, []row{{i(1), s("y")}}},
	} {
		ps, err := sql.Parse("DELETE FROM " + c.table + " WHERE " + c.where)
		if err != nil {
			t.Fatal(err)
		}
		st, err := sql.Bind(cat, ps[0])
		if err != nil {
			t.Fatalf("%s: %v", c.where, err)
		}
		rel := st.(*ir.Delete).Table
		pred := st.(*ir.Delete).Rows.(*ir.Filter).Pred
		ts := rel.Types()
		pinned := planner.PinnedKey(pred, rel.Key, ts)
		cond := planner.RangedKey(pred, rel.Key, ts, len(pinned))
		ranges, ok := KeyRangesOf(&eval.Context{Strict: true}, pinned, cond, rel.Key, ts)
		got := len(ranges)
		if !ok {
			got = -1
		}
		if got != c.ranges {
			t.Errorf("WHERE %s: %d ranges %q, want %d", c.where, got, ranges, c.ranges)
			continue
		}
		holds := func(k row) bool {
			var key []byte
			for j, d := range k {
				key = state.AppendKeyDatum(key, ts[rel.Key[j]], d)
			}
			for _, kr := range ranges {
				if bytes.Compare(key, kr.Lower) >= 0 && (kr.Upper == nil || bytes.Compare(key, kr.Upper) < 0) {
					return true
				}
			}
			return false
		}
		for _, k := range c.in {
			if !holds(k) {
				t.Errorf("WHERE %s: key %v outside the ranges", c.where, k)
			}
		}
		for _, k := range c.out {
			if holds(k) {
				t.Errorf("WHERE %s: key %v inside the ranges", c.where, k)
			}
		}
	}
}
