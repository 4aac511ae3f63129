package sql

import (
	"fmt"
	"strings"
	"testing"

	"github.com/streamsql/streamsql/ir"
	"github.com/streamsql/streamsql/sqlerr"
	"github.com/streamsql/streamsql/types"
)

func parseOne(t *testing.T, text string) *Parsed {
	t.Helper()
	ps, err := Parse(text)
	if err != nil || len(ps) != 1 {
		t.Fatalf("parse %q: %d statements, %v", text, len(ps), err)
	}
	return ps[0]
}

func typeList(ts []types.T) string {
	var s []string
	for _, t := range ts {
		s = append(s, t.String())
	}
	return strings.Join(s, ", ")
}

// TestPrepareInfersParameterTypes checks the parameter types Prepare
// infers from context, as PostgreSQL does.
func TestPrepareInfersParameterTypes(t *testing.T) {
	cat := testCatalog()
	for _, tc := range []struct {
		sql      string
		declared []types.T
		want     string // the parameter types
		cols     string // the result columns' types, for SELECT
	}{
		{sql: "SELECT a FROM t WHERE a = $1", want: "integer", cols: "integer"},
		{sql: "SELECT a FROM t WHERE $1 = a", want: "integer", cols: "integer"},
		{sql: "SELECT $1 + 1", want: "integer", cols: "integer"},
		{sql: "SELECT $1 + 1.5", want: "numeric", cols: "numeric"},
		{sql: "SELECT $1", want: "text", cols: "text"},
		{sql: "SELECT $1 IS NULL", want: "text", cols: "boolean"},
		{sql: "SELECT $1 = $2", want: "text, text", cols: "boolean"},
		{sql: "SELECT $1::numeric(10,2), $2::varchar(2), $3::int8", want: "numeric, character varying, bigint",
			cols: "numeric(10,2), character varying(2), bigint"},
		{sql: "SELECT a FROM t WHERE a IN ($1, $2) AND s LIKE $3", want: "integer, integer, text", cols: "integer"},
		{sql: "SELECT a FROM t WHERE a BETWEEN $1 AND $2", want: "integer, integer", cols: "integer"},
		{sql: "SELECT coalesce(a, $1) FROM t", want: "integer", cols: "integer"},
		{sql: "SELECT CASE WHEN $1 THEN a ELSE $2 END FROM t", want: "boolean, integer", cols: "integer"},
		{sql: "SELECT a FROM t WHERE s = $1 ORDER BY a LIMIT $2 OFFSET $3", want: "text, bigint, bigint", cols: "integer"},
		{sql: "SELECT a FROM t LIMIT $1", declared: []types.T{types.Int32T}, want: "integer", cols: "integer"},
		{sql: "SELECT $1", declared: []types.T{types.Int64T}, want: "bigint", cols: "bigint"},
		{sql: "SELECT $1, $2", declared: []types.T{types.UnknownT, types.DateT}, want: "text, date", cols: "text, date"},
		{sql: "SELECT 1", declared: []types.T{types.Int32T}, want: "integer", cols: "integer"},
		{sql: "SELECT sum(a) + $1 FROM t GROUP BY s HAVING count(*) > $2", want: "bigint, bigint", cols: "bigint"},
		{sql: "SELECT (SELECT max(a) FROM t WHERE s = $1) + $2", want: "text, integer", cols: "integer"},
		{sql: "SELECT date '2024-01-01' + $1", want: "integer", cols: "date"},
		{sql: "INSERT INTO t VALUES ($1, $2, $3)", want: "integer, character varying, text"},
		{sql: "INSERT INTO t (s, a) VALUES ($1, $2), ($3, 7)", want: "text, integer, text"},
		{sql: "UPDATE t SET v = $1 WHERE a = $2", want: "character varying, integer"},
		{sql: "UPDATE t SET a = a + $1", want: "integer"},
		{sql: "DELETE FROM t WHERE a = $1 OR s = $2", want: "integer, text"},
		{sql: "EXPLAIN SELECT a FROM t WHERE a = $1", want: "integer"},
		{sql: "FLUSH", want: ""},
		{sql: "CREATE TABLE u (x int)", want: ""},
	} {
		t.Run(tc.sql, func(t *testing.T) {
			st, pts, err := Prepare(cat, parseOne(t, tc.sql), tc.declared)
			if err != nil {
				t.Fatal(err)
			}
			if got := typeList(pts); got != tc.want {
				t.Errorf("parameter types %q, want %q", got, tc.want)
			}
			if tc.cols != "" {
				rel := st.(*ir.Select).Query
				var cols []types.T
				for _, i := range ir.VisibleColumns(rel) {
					cols = append(cols, rel.Columns()[i].Type)
				}
				if got := typeList(cols); got != tc.cols {
					t.Errorf("result types %q, want %q", got, tc.cols)
				}
			}
		})
	}
}

func TestPrepareErrors(t *testing.T) {
	cat := testCatalog()
	for _, tc := range []struct {
		sql  string
		code string
		pos  int
	}{
		{"SELECT $2::int", "42P18", 0},
		// The second $1 is already an integer, as in PostgreSQL.
		{"SELECT a FROM t WHERE a = $1 AND s = $1", sqlerr.UndefinedFunction, 36},
		{"CREATE MATERIALIZED VIEW mv AS SELECT a FROM t WHERE a = $1", sqlerr.FeatureNotSupported, 0},
		{"SELECT $0", "42P02", 8},
		{"SELECT a FROM t LIMIT $1", sqlerr.DatatypeMismatch, 23}, // declared text below
		{"SELECT nope FROM t WHERE a = $1", sqlerr.UndefinedColumn, 8},
	} {
		var declared []types.T
		if strings.Contains(tc.sql, "LIMIT") {
			declared = []types.T{types.TextT}
		}
		_, _, err := Prepare(cat, parseOne(t, tc.sql), declared)
		var e *sqlerr.Error
		if err == nil || sqlerr.Code(err) != tc.code {
			t.Errorf("%s: got %v (%s), want %s", tc.sql, err, sqlerr.Code(err), tc.code)
		} else if e = sqlerr.Wrap(err); e.Position != tc.pos {
			t.Errorf("%s: position %d, want %d", tc.sql, e.Position, tc.pos)
		}
	}

	// Without parameters (the simple query protocol), $n is 42P02 with its
	// position, as in PostgreSQL.
	_, err := Bind(cat, parseOne(t, "SELECT a FROM t WHERE a = $1"))
	if e := sqlerr.Wrap(err); e.Code != "42P02" || e.Message != "there is no parameter $1" || e.Position != 27 {
		t.Errorf("simple protocol $1: %+v", e)
	}
}

// TestBindParams checks that BindParams binds parameters as constants of
// their types.
func TestBindParams(t *testing.T) {
	cat := testCatalog()
	bind := func(text string, values ...types.Datum) ir.Statement {
		t.Helper()
		p := parseOne(t, text)
		_, pts, err := Prepare(cat, p, nil)
		if err != nil {
			t.Fatal(err)
		}
		st, err := BindParams(cat, p, pts, values)
		if err != nil {
			t.Fatalf("%s: %v", text, err)
		}
		return st
	}
	sel := bind("SELECT a FROM t WHERE a = $1 AND s = $2 LIMIT $3 OFFSET $4",
		types.DInt(5), types.DText("x"), types.DInt(10), types.Null).(*ir.Select)
	lim, ok := sel.Query.(*ir.Limit)
	if !ok || lim.Count != 10 || lim.Offset != 0 {
		t.Fatalf("limit: %#v", sel.Query)
	}
	if got := fmt.Sprint(sel.Query); strings.Contains(got, "$") {
		t.Errorf("bound query still has parameters: %s", got)
	}
	hasParam := func(e ir.Expr) bool {
		found := false
		ir.Walk(e, func(x ir.Expr) bool {
			_, p := x.(*Param)
			found = found || p
			return true
		})
		return found
	}
	up := bind("UPDATE t SET v = $1 WHERE a = $2", types.DText("ab"), types.DInt(1)).(*ir.Update)
	if hasParam(updateWhere(up)) || hasParam(updateSet(up, 1)) {
		t.Errorf("UPDATE keeps parameters: %v %v", updateWhere(up), updateSet(up, 1))
	}
	if c := findCast(updateSet(up, 1)); c == nil || !c.Assignment {
		t.Errorf("UPDATE v = $1: cast %v, want an assignment cast to varchar(3)", c)
	}
	if w := updateWhere(up).String(); w != "(a#0 = 1)" {
		t.Errorf("UPDATE WHERE %s", w)
	}

	// Prepare's own statement casts a parameter stored into varchar(3) with
	// an assignment cast too.
	st, _, err := Prepare(cat, parseOne(t, "INSERT INTO t (v) VALUES ($1)"), nil)
	if err != nil {
		t.Fatal(err)
	}
	vals := st.(*ir.Insert).Source.(*ir.Project).Input.(*ir.Values)
	if c := findCast(vals.Rows[0][0]); c == nil || !c.Assignment {
		t.Errorf("INSERT v = $1 (prepared): cast %v, want an assignment cast", c)
	}

	// Wrong value counts are refused.
	p := parseOne(t, "SELECT $1::int")
	if _, err := BindParams(cat, p, []types.T{types.Int32T}, nil); sqlerr.Code(err) != sqlerr.InternalError {
		t.Errorf("BindParams with no values: %v", err)
	}
}
