package sql

import (
	"strings"
	"testing"

	"github.com/streamsql/streamsql/ir"
	"github.com/streamsql/streamsql/sqlerr"
	"github.com/streamsql/streamsql/types"
)

// TestWindowErrors checks the errors of misplaced and malformed window
// function calls: SQLSTATE, message and position are PostgreSQL 15's.
func TestWindowErrors(t *testing.T) {
	cat := testCatalog()
	for _, tc := range []struct {
		sql, code string
		pos       int
		msg       string
	}{
		{"SELECT a FROM t WHERE row_number() OVER () > 1", "42P20", 23, "window functions are not allowed in WHERE"},
		{"SELECT sum(row_number() OVER ()) FROM t", "42803", 12, "aggregate function calls cannot contain window function calls"},
		{"SELECT row_number() OVER (ORDER BY rank() OVER ()) FROM t", "42P20", 36, "window functions are not allowed in window definitions"},
		{"SELECT sum(rank() OVER ()) OVER () FROM t", "42P20", 12, "window function calls cannot be nested"},
		{"SELECT row_number() OVER (w) FROM t WINDOW w AS (ORDER BY a ROWS 1 PRECEDING)", "42P20", 26, "cannot copy window \"w\" because it has a frame clause"},
		{"SELECT row_number() OVER (w ORDER BY a) FROM t WINDOW w AS (ORDER BY a)", "42P20", 26, "cannot override ORDER BY clause of window \"w\""},
		{"SELECT row_number() OVER (w PARTITION BY a) FROM t WINDOW w AS (ORDER BY a)", "42P20", 26, "cannot override PARTITION BY clause of window \"w\""},
		{"SELECT sum(a) OVER (ORDER BY a, s RANGE 1 PRECEDING) FROM t", "42P20", 20, "RANGE with offset PRECEDING/FOLLOWING requires exactly one ORDER BY column"},
		{"SELECT sum(a) OVER (GROUPS 1 PRECEDING) FROM t", "42P20", 20, "GROUPS mode requires an ORDER BY clause"},
		{"SELECT sum(a) OVER (ORDER BY s RANGE '1' PRECEDING) FROM t", "0A000", 38, "RANGE with offset PRECEDING/FOLLOWING is not supported for column type text"},
		{"SELECT sum(a) OVER (ORDER BY a ROWS a PRECEDING) FROM t", "42P10", 37, "argument of ROWS must not contain variables"},
		{"SELECT row_number() FROM t", "42809", 8, "window function row_number requires an OVER clause"},
		{"SELECT lower(s) OVER () FROM t", "42809", 8, "OVER specified, but lower is not a window function nor an aggregate function"},
		{"SELECT count(DISTINCT a) OVER () FROM t", "0A000", 8, "DISTINCT is not implemented for window functions"},
		{"SELECT bit_and(a) OVER () FROM t", "0A000", 8, "aggregate function bit_and is not supported"},
		{"SELECT string_agg(s, s) OVER () FROM t", "0A000", 8, "string_agg as a window function with a separator that is not a constant is not supported"},
		{"SELECT row_number() FILTER (WHERE true) OVER () FROM t", "0A000", 8, "FILTER is not implemented for non-aggregate window functions"},
		{"SELECT row_number() OVER w FROM t WINDOW w AS (), w AS ()", "42P20", 56, "window \"w\" is already defined"},
		{"SELECT row_number() OVER x FROM t WINDOW w AS ()", "42704", 26, "window \"x\" does not exist"},
		{"SELECT row_number() OVER w2 FROM t WINDOW w2 AS (w1), w1 AS ()", "42704", 49, "window \"w1\" does not exist"},
		{"SELECT a, sum(a) OVER (PARTITION BY s) FROM t GROUP BY a", "42803", 37, "must appear in the GROUP BY clause"},
		{"SELECT count(*) FROM t GROUP BY row_number() OVER ()", "42P20", 33, "window functions are not allowed in GROUP BY"},
		{"SELECT rank() OVER (ORDER BY a) FROM t GROUP BY 1", "42P20", 8, "window functions are not allowed in GROUP BY"},
		{"SELECT lag(a, 1.5) OVER () FROM t", "42883", 8, "function lag(integer, numeric) does not exist"},
		{"SELECT sum(a ORDER BY a) OVER () FROM t", "0A000", 8, "aggregate ORDER BY is not implemented for window functions"},
		{"SELECT sum(a) OVER (ORDER BY a RANGE 1.5 PRECEDING) FROM t", "0A000", 38, "RANGE with offset PRECEDING/FOLLOWING is not supported for column type integer and offset type numeric"},
		{"SELECT count(*) FILTER (WHERE row_number() OVER () > 1) FROM t", "42P20", 31, "window functions are not allowed in FILTER"},
		{"SELECT 1 FROM t x JOIN t y ON row_number() OVER () = 1", "42P20", 31, "window functions are not allowed in JOIN conditions"},
		{"SELECT lag(s, 1, 5) OVER () FROM t", "42883", 8, "function lag(text, integer, integer) does not exist"},
		{"SELECT rank(1) OVER () FROM t", "42809", 8, "WITHIN GROUP is required for ordered-set aggregate rank"},
	} {
		_, err := bindOne(t, cat, tc.sql)
		e, ok := err.(*sqlerr.Error)
		if !ok {
			t.Errorf("%s: error %v, want %s", tc.sql, err, tc.code)
			continue
		}
		if e.Code != tc.code || e.Position != tc.pos || !strings.Contains(e.Message, tc.msg) {
			t.Errorf("%s:\n got %s at %d: %s\nwant %s at %d: %s", tc.sql, e.Code, e.Position, e.Message, tc.code, tc.pos, tc.msg)
		}
	}
}

// TestWindowBinding checks the bound form: one Window per PARTITION BY and
// ORDER BY, stacked in order of appearance, frames and named windows
// resolved, aggregates placed under the windows.
func TestWindowBinding(t *testing.T) {
	cat := testCatalog()
	st, err := bindOne(t, cat, `SELECT a, row_number() OVER w, sum(a) OVER (w ROWS 2 PRECEDING), rank() OVER (ORDER BY s DESC),
		lag(s) OVER w FROM t WINDOW w AS (PARTITION BY v ORDER BY a)`)
	if err != nil {
		t.Fatal(err)
	}
	proj := st.(*ir.Select).Query.(*ir.Project)
	top, ok := proj.Input.(*ir.Window)
	if !ok {
		t.Fatalf("project over %T, want a Window", proj.Input)
	}
	bottom, ok := top.Input.(*ir.Window)
	if !ok {
		t.Fatalf("window over %T, want a Window", top.Input)
	}
	if len(bottom.Calls) != 3 || len(bottom.PartitionBy) != 1 || len(bottom.OrderBy) != 1 {
		t.Fatalf("first window: %d calls, %d partition keys, %d order keys; want 3, 1, 1", len(bottom.Calls), len(bottom.PartitionBy), len(bottom.OrderBy))
	}
	if c := bottom.Calls[1]; c.Func != ir.AggSum || c.Frame.Mode != ir.FrameRows || c.Frame.Start.Kind != ir.BoundPreceding || c.Frame.End.Kind != ir.BoundCurrentRow {
		t.Fatalf("sum call %+v, want ROWS 2 PRECEDING", c)
	}
	if c := bottom.Calls[2]; c.Func != ir.WinLag || len(c.Args) != 3 || c.T.Kind != types.Text {
		t.Fatalf("lag call %+v, want three arguments of text", c)
	}
	if len(top.Calls) != 1 || top.Calls[0].Func != ir.WinRank || !top.OrderBy[0].Desc || !top.OrderBy[0].NullsFirst {
		t.Fatalf("second window %+v, want rank() ORDER BY s DESC NULLS FIRST", top)
	}
	// The output: the table's four columns, then the calls in stacking
	// order; the projection picks them in select-list order.
	want := []int{0, 4, 5, 7, 6}
	for i, e := range proj.Exprs {
		if ref, ok := e.(*ir.InputRef); !ok || ref.Index != want[i] {
			t.Fatalf("select list item %d is %s, want column %d", i, e, want[i])
		}
	}

	st, err = bindOne(t, cat, "SELECT a, sum(a), rank() OVER (ORDER BY sum(a) DESC) FROM t GROUP BY a ORDER BY rank() OVER (ORDER BY sum(a) DESC)")
	if err != nil {
		t.Fatal(err)
	}
	var rel ir.Rel = st.(*ir.Select).Query.(*ir.Sort).Input.(*ir.Project).Input
	for {
		w, ok := rel.(*ir.Window)
		if !ok {
			break
		}
		rel = w.Input
	}
	if _, ok := rel.(*ir.Aggregate); !ok {
		t.Fatalf("windows over %T, want the aggregation", rel)
	}
}

// TestWindowFrameSyntaxErrors checks the frame errors PostgreSQL's grammar
// raises: 42P20, at the bound.
func TestWindowFrameSyntaxErrors(t *testing.T) {
	for _, tc := range []struct {
		sql string
		pos int
	}{
		{"SELECT count(*) OVER (ORDER BY a ROWS BETWEEN UNBOUNDED FOLLOWING AND CURRENT ROW) FROM t", 47},
		{"SELECT count(*) OVER (ORDER BY a ROWS BETWEEN CURRENT ROW AND 1 PRECEDING) FROM t", 63},
	} {
		_, err := Parse(tc.sql)
		e, ok := err.(*sqlerr.Error)
		if !ok {
			t.Errorf("%s: %v, want 42P20", tc.sql, err)
		} else if e.Code != windowingError || e.Position != tc.pos {
			t.Errorf("%s: %s at %d, want 42P20 at %d", tc.sql, e.Code, e.Position, tc.pos)
		}
	}
}
