package sql

import (
	"strings"
	"testing"

	"github.com/streamsql/streamsql/catalog"
	"github.com/streamsql/streamsql/ir"
	"github.com/streamsql/streamsql/sqlerr"
	"github.com/streamsql/streamsql/types"
)

// testCatalog holds t (a int, v varchar(3), s text).
func testCatalog() *catalog.Catalog {
	cat := catalog.New()
	cat.Add(&catalog.Relation{ID: 1, Name: "t", Kind: catalog.Table, Columns: []catalog.Column{
		{Name: "a", Type: types.Int32T},
		{Name: "v", Type: types.T{Kind: types.Text, Width: 3}},
		{Name: "s", Type: types.TextT},
		{Name: catalog.RowIDColumn, Type: types.Int64T, Hidden: true},
	}, Key: []int{3}})
	return cat
}

// bindOne parses and binds a single statement.
func bindOne(t *testing.T, cat *catalog.Catalog, text string) (ir.Statement, error) {
	t.Helper()
	ps, err := Parse(text)
	if err != nil {
		t.Fatalf("parse %q: %v", text, err)
	}
	if len(ps) != 1 {
		t.Fatalf("parse %q: %d statements", text, len(ps))
	}
	return Bind(cat, ps[0])
}

// findCast returns the first Cast to a varchar in e.
func findCast(e ir.Expr) *ir.Cast {
	var found *ir.Cast
	ir.Walk(e, func(x ir.Expr) bool {
		if c, ok := x.(*ir.Cast); ok && found == nil && c.T.Kind == types.Text && c.T.Width > 0 {
			found = c
		}
		return found == nil
	})
	return found
}

// TestAssignmentCast checks that values stored in a varchar(n) column get an
// assignment cast (an error when too long) and explicit casts do not.
func TestAssignmentCast(t *testing.T) {
	cat := testCatalog()

	st, err := bindOne(t, cat, "UPDATE t SET v = s || 'x'")
	if err != nil {
		t.Fatal(err)
	}
	c := findCast(updateSet(st.(*ir.Update), 1))
	if c == nil || !c.Assignment {
		t.Fatalf("UPDATE: cast %v, want an assignment cast", c)
	}

	st, err = bindOne(t, cat, "INSERT INTO t (v) SELECT s FROM t")
	if err != nil {
		t.Fatal(err)
	}
	c = findCast(st.(*ir.Insert).Source.(*ir.Project).Exprs[1])
	if c == nil || !c.Assignment {
		t.Fatalf("INSERT SELECT: cast %v, want an assignment cast", c)
	}

	st, err = bindOne(t, cat, "SELECT s::varchar(2) FROM t")
	if err != nil {
		t.Fatal(err)
	}
	c = findCast(st.(*ir.Select).Query.(*ir.Project).Exprs[0])
	if c == nil || c.Assignment {
		t.Fatalf("explicit cast: %v, want a non-assignment cast", c)
	}
}

// TestVarcharLiterals checks the two rules for a literal too long for a
// varchar(n): an explicit cast truncates, an assignment fails with 22001.
func TestVarcharLiterals(t *testing.T) {
	cat := testCatalog()
	st, err := bindOne(t, cat, "SELECT 'abcdef'::varchar(3)")
	if err != nil {
		t.Fatalf("explicit cast of a long literal: %v", err)
	}
	if c := findCast(st.(*ir.Select).Query.(*ir.Project).Exprs[0]); c == nil || c.Assignment {
		t.Fatalf("explicit cast of a literal: %v, want a truncating cast", c)
	}
	if _, err := bindOne(t, cat, "INSERT INTO t (v) VALUES ('abcdef')"); sqlerr.Code(err) != sqlerr.StringDataRightTruncation {
		t.Fatalf("INSERT of a long literal: %v, want 22001", err)
	}
	if _, err := bindOne(t, cat, "INSERT INTO t (v) VALUES ('abc   ')"); err != nil {
		t.Fatalf("INSERT of a literal with trailing spaces: %v", err)
	}
}

// TestDateTruncOfDate checks that date_trunc of a date is a timestamptz, as
// in PostgreSQL.
func TestDateTruncOfDate(t *testing.T) {
	st, err := bindOne(t, testCatalog(), "SELECT date_trunc('month', date '2024-05-05')")
	if err != nil {
		t.Fatal(err)
	}
	if got := st.(*ir.Select).Query.Columns()[0].Type; got.Kind != types.TimestampTZ {
		t.Fatalf("date_trunc(text, date) is %s, want timestamp with time zone", got)
	}
}

// TestLiteralErrorPosition checks that a literal that does not parse as the
// type it is converted to is reported at the literal.
func TestLiteralErrorPosition(t *testing.T) {
	for _, tc := range []struct {
		text string
		pos  int
	}{
		{"SELECT 'abc'::int", 8},
		{"SELECT 5 + 'x'", 12},
		{"SELECT a FROM t WHERE a = 'nope'", 27},
		{"SELECT 1e400::float8", 8},
	} {
		_, err := bindOne(t, testCatalog(), tc.text)
		e, ok := err.(*sqlerr.Error)
		if !ok {
			t.Errorf("%s: %v, want an error", tc.text, err)
			continue
		}
		if e.Position != tc.pos {
			t.Errorf("%s: %s at %d, want %d", tc.text, e.Message, e.Position, tc.pos)
		}
	}
}

// TestLimitValues checks LIMIT and OFFSET constants: integers, numbers
// rounded to bigint as PostgreSQL does, and the errors.
func TestLimitValues(t *testing.T) {
	for _, tc := range []struct {
		text          string
		count, offset int64
		code          string
	}{
		{text: "SELECT a FROM t LIMIT 2 OFFSET 1", count: 2, offset: 1},
		{text: "SELECT a FROM t LIMIT 1.5", count: 2, offset: 0},
		{text: "SELECT a FROM t LIMIT 2.5::float8", count: 2, offset: 0},
		{text: "SELECT a FROM t LIMIT ALL OFFSET '3'", count: -1, offset: 3},
		{text: "SELECT a FROM t LIMIT NULL", count: -1, offset: 0},
		{text: "SELECT a FROM t LIMIT -1", code: sqlerr.InvalidRowCountInLimit},
		{text: "SELECT a FROM t LIMIT 'x'", code: sqlerr.InvalidTextRepresentation},
		{text: "SELECT a FROM t LIMIT true", code: sqlerr.DatatypeMismatch},
		{text: "SELECT a FROM t LIMIT 1e30::float8", code: sqlerr.NumericValueOutOfRange},
	} {
		st, err := bindOne(t, testCatalog(), tc.text)
		if tc.code != "" {
			if sqlerr.Code(err) != tc.code {
				t.Errorf("%s: %v, want %s", tc.text, err, tc.code)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: %v", tc.text, err)
			continue
		}
		l, ok := st.(*ir.Select).Query.(*ir.Limit)
		if !ok || l.Count != tc.count || l.Offset != tc.offset {
			t.Errorf("%s: %#v, want count %d offset %d", tc.text, st.(*ir.Select).Query, tc.count, tc.offset)
		}
	}
}

// TestUntypedArguments checks how calls of untyped literals resolve: to the
// other operand's type, to the preferred type of a single category, or not
// at all (42725).
func TestUntypedArguments(t *testing.T) {
	for _, tc := range []struct {
		text string
		want string // the result type, or an SQLSTATE
	}{
		{"SELECT abs('-5')", "double precision"},
		{"SELECT round('2.5')", "double precision"},
		{"SELECT date '2024-03-01' - '2024-01-01'", "integer"},
		{"SELECT timestamp '2024-01-02' - '2024-01-01'", "interval"},
		{"SELECT timestamp '2024-01-02' + '1 day'", "timestamp without time zone"},
		{"SELECT 1 + '2'", "integer"},
		{"SELECT '1' + '2'", "42725"},
		{"SELECT date_trunc('day', '2024-01-01')", "42725"},
	} {
		st, err := bindOne(t, testCatalog(), tc.text)
		got := ""
		if err != nil {
			got = sqlerr.Code(err)
		} else {
			got = st.(*ir.Select).Query.Columns()[0].Type.String()
		}
		if got != tc.want {
			t.Errorf("%s: %s (%v), want %s", tc.text, got, err, tc.want)
		}
	}
}

// TestAggregateTypes checks the result types of sum and avg.
func TestAggregateTypes(t *testing.T) {
	cat := catalog.New()
	cat.Add(&catalog.Relation{ID: 1, Name: "n", Kind: catalog.Table, Columns: []catalog.Column{
		{Name: "p", Type: types.NumericOf(8, 2)},
		{Name: "w", Type: types.NumericOf(20, 15)},
		{Name: "i", Type: types.Int32T},
		{Name: "b", Type: types.Int64T},
		{Name: "iv", Type: types.IntervalT},
	}, Key: []int{0}})
	for _, tc := range []struct{ expr, want string }{
		{"sum(p)", "numeric(38,2)"},
		{"avg(p)", "numeric"},
		{"sum(w)", "numeric(38,15)"},
		{"sum(i)", "bigint"},
		{"sum(b)", "numeric"},
		{"avg(i)", "numeric"},
		{"sum(iv)", "interval"},
		{"avg(iv)", "interval"},
	} {
		st, err := bindOne(t, cat, "SELECT "+tc.expr+" FROM n")
		if err != nil {
			t.Errorf("%s: %v", tc.expr, err)
			continue
		}
		if got := st.(*ir.Select).Query.Columns()[0].Type.String(); got != tc.want {
			t.Errorf("%s: %s, want %s", tc.expr, got, tc.want)
		}
	}
}

// TestGroupByLiterals checks that a literal grouped by position is text (no
// operator ever sees an untyped column) and that non-integer constants are
// not positions.
func TestGroupByLiterals(t *testing.T) {
	st, err := bindOne(t, testCatalog(), "SELECT 'k' AS k, count(*) FROM t GROUP BY 1")
	if err != nil {
		t.Fatal(err)
	}
	var agg *ir.Aggregate
	for r := st.(*ir.Select).Query; agg == nil; {
		switch x := r.(type) {
		case *ir.Aggregate:
			agg = x
		case *ir.Project:
			r = x.Input
		default:
			t.Fatalf("no aggregation in %T", r)
		}
	}
	if k := agg.GroupBy[0].Type().Kind; k != types.Text {
		t.Fatalf("group key type %v, want text", agg.GroupBy[0].Type())
	}
	for _, text := range []string{"SELECT NULL FROM t GROUP BY 1", "SELECT 'k', NULL, count(*) FROM t GROUP BY 1, 2"} {
		st, err := bindOne(t, testCatalog(), text)
		if err != nil {
			t.Fatalf("%s: %v", text, err)
		}
		for _, c := range st.(*ir.Select).Query.Columns() {
			if c.Type.Kind == types.Unknown {
				t.Errorf("%s: column %s has no type", text, c.Name)
			}
		}
	}
	for _, text := range []string{
		"SELECT count(*) FROM t GROUP BY 'x'",
		"SELECT count(*) FROM t GROUP BY NULL",
		"SELECT a FROM t ORDER BY 'x'",
		"SELECT a FROM t ORDER BY 1.5",
	} {
		if _, err := bindOne(t, testCatalog(), text); sqlerr.Code(err) != sqlerr.SyntaxError {
			t.Errorf("%s: %v, want 42601", text, err)
		}
	}
}

// joinCatalog holds l (id int PRIMARY KEY, k int, v text) and
// r (id int PRIMARY KEY, k bigint, w text).
func joinCatalog() *catalog.Catalog {
	cat := catalog.New()
	cat.Add(&catalog.Relation{ID: 1, Name: "l", Kind: catalog.Table, Columns: []catalog.Column{
		{Name: "id", Type: types.Int32T}, {Name: "k", Type: types.Int32T}, {Name: "v", Type: types.TextT},
	}, Key: []int{0}, PrimaryKey: true})
	cat.Add(&catalog.Relation{ID: 2, Name: "r", Kind: catalog.Table, Columns: []catalog.Column{
		{Name: "id", Type: types.Int32T}, {Name: "k", Type: types.Int64T}, {Name: "w", Type: types.TextT},
	}, Key: []int{0}, PrimaryKey: true})
	return cat
}

// TestJoinUsingColumns checks the columns of JOIN USING and NATURAL JOIN as
// PostgreSQL shows them: the merged columns first, in the common type (the
// non-NULL side's value for FULL JOIN), then each side's other columns; the
// sides' own copies are reachable qualified only, and not at all under an
// alias of the join.
func TestJoinUsingColumns(t *testing.T) {
	cat := joinCatalog()
	cases := []struct {
		query string
		cols  string // visible output columns, name:type
		err   string // SQLSTATE
	}{
		{query: "SELECT * FROM l JOIN r USING (k)", cols: "k:bigint id:integer v:text id:integer w:text"},
		{query: "SELECT * FROM l NATURAL JOIN r", cols: "id:integer k:bigint v:text w:text"},
		{query: "SELECT k, l.k, r.k FROM l FULL JOIN r USING (k)", cols: "k:bigint k:integer k:bigint"},
		{query: "SELECT l.* FROM l JOIN r USING (k)", cols: "id:integer k:integer v:text"},
		{query: "SELECT j.* FROM (l JOIN r USING (id)) AS j", cols: "id:integer k:integer v:text k:bigint w:text"},
		{query: "SELECT l.k FROM (l JOIN r USING (id)) AS j", err: sqlerr.UndefinedTable},
		{query: "SELECT id FROM l JOIN r USING (k)", err: sqlerr.AmbiguousColumn},
		{query: "SELECT * FROM l JOIN r USING (nope)", err: sqlerr.UndefinedColumn},
		{query: "SELECT * FROM l JOIN (SELECT 1 AS k, 2 AS k) AS x USING (k)", err: sqlerr.AmbiguousColumn},
	}
	for _, c := range cases {
		st, err := bindOne(t, cat, c.query)
		if c.err != "" {
			if sqlerr.Code(err) != c.err {
				t.Errorf("%s: error %v, want SQLSTATE %s", c.query, err, c.err)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: %v", c.query, err)
			continue
		}
		rel := st.(*ir.Select).Query
		var got []string
		for _, i := range ir.VisibleColumns(rel) {
			col := rel.Columns()[i]
			got = append(got, col.Name+":"+col.Type.String())
		}
		if s := strings.Join(got, " "); s != c.cols {
			t.Errorf("%s: columns %s, want %s", c.query, s, c.cols)
		}
	}
}

// TestSubqueryJoins checks what subqueries bind to: the join type each
// becomes, and the errors of the forms that are not supported.
func TestSubqueryJoins(t *testing.T) {
	cat := joinCatalog()
	cases := []struct {
		query string
		joins string // the join types of the plan, outermost first
		err   string
	}{
		{query: "SELECT id FROM l WHERE k IN (SELECT id FROM r)", joins: "semi"},
		{query: "SELECT id FROM l WHERE k NOT IN (SELECT id FROM r)", joins: "null-aware anti"},
		{query: "SELECT id FROM l WHERE k NOT IN (SELECT id FROM r WHERE r.w = l.v)", joins: "anti"},
		{query: "SELECT id FROM l WHERE k > ANY (SELECT id FROM r)", joins: "semi"},
		{query: "SELECT id FROM l WHERE k > ALL (SELECT id FROM r)", joins: "anti"},
		{query: "SELECT id FROM l WHERE NOT (k > ALL (SELECT id FROM r))", joins: "semi"},
		{query: "SELECT id FROM l WHERE NOT NOT EXISTS (SELECT 1 FROM r WHERE r.id = l.id)", joins: "semi"},
		{query: "SELECT id, (SELECT max(w) FROM r WHERE r.k = l.k) FROM l", joins: "left"},
		{query: "SELECT id FROM l WHERE v = (SELECT w FROM r WHERE r.id = l.k) AND k IN (SELECT id FROM r)", joins: "left semi"},
		// General decorrelation: the outer query left-joined with the
		// subquery per value of its domain (the domain joined with r).
		{query: "SELECT id FROM l WHERE k = (SELECT count(*) FROM r WHERE r.w < l.v)", joins: "left left inner"},
		{query: "SELECT id FROM l WHERE k = (SELECT id FROM r WHERE r.k = l.k + r.id)", joins: "left inner"},
		{query: "SELECT id, EXISTS (SELECT 1 FROM r WHERE r.w < l.v) FROM l", joins: "left inner"},
		{query: "SELECT id FROM l WHERE k IN (SELECT id FROM r) OR k > 1", joins: "left inner"},
		{query: "SELECT id FROM l WHERE v > (SELECT max(w) FROM r WHERE r.k = l.k LIMIT 1)", joins: "left left inner"},
		{query: "SELECT id, (SELECT count(*) FROM r WHERE r.k = l.k AND EXISTS (SELECT 1 FROM r AS s WHERE s.w > l.v)) FROM l",
			joins: "left left left inner inner inner"},
		{query: "SELECT id, (SELECT count(*) FROM r FULL JOIN l AS m ON r.k = m.k AND r.w < l.v) FROM l", err: sqlerr.FeatureNotSupported},
		{query: "SELECT id, (SELECT sum(l.k) FROM r WHERE r.w < l.v) FROM l", err: sqlerr.FeatureNotSupported},
		{query: "SELECT id, (SELECT row_number() OVER () FROM r WHERE r.w < l.v LIMIT 1) FROM l", joins: "left inner"},
		// LATERAL: the outer query joined with the subquery per value of
		// its domain.
		{query: "SELECT l.id, s.w FROM l, LATERAL (SELECT r.w FROM r WHERE r.w < l.v) s", joins: "inner inner"},
		{query: "SELECT l.id, s.w FROM l LEFT JOIN LATERAL (SELECT r.w FROM r WHERE r.k = l.k) s ON s.w > l.v", joins: "left inner"},
		{query: "SELECT l.id, s.n FROM l, LATERAL (SELECT count(*) AS n FROM r WHERE r.w < l.v) s", joins: "inner left inner"},
		{query: "SELECT l.id, s.w FROM l CROSS JOIN LATERAL (SELECT max(r.w) AS w FROM r) s", joins: "inner"},
		{query: "SELECT l.id FROM l RIGHT JOIN LATERAL (SELECT r.w FROM r WHERE r.k = l.k) s ON true", err: sqlerr.InvalidColumnReference},
		{query: "SELECT l.id FROM LATERAL (SELECT r.w FROM r WHERE r.k = l.k) s, l", err: sqlerr.UndefinedTable},
		{query: "SELECT l.id FROM l JOIN LATERAL (SELECT r.k FROM r WHERE r.w < l.v) s USING (k)", err: sqlerr.FeatureNotSupported},
		{query: "SELECT sum((SELECT 1)) FROM l", err: sqlerr.FeatureNotSupported},
		{query: "SELECT id FROM l WHERE k = (SELECT id, k FROM r)", err: sqlerr.SyntaxError},
		{query: "SELECT id FROM l WHERE k = (SELECT nope FROM r WHERE r.id = l.id)", err: sqlerr.UndefinedColumn},
	}
	for _, c := range cases {
		st, err := bindOne(t, cat, c.query)
		if c.err != "" {
			if sqlerr.Code(err) != c.err {
				t.Errorf("%s: error %v, want SQLSTATE %s", c.query, err, c.err)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: %v", c.query, err)
			continue
		}
		var joins []string
		var walk func(ir.Rel)
		walk = func(r ir.Rel) {
			if j, ok := r.(*ir.Join); ok {
				joins = append(joins, j.Type.String())
			}
			for _, in := range ir.Inputs(r) {
				walk(in)
			}
		}
		walk(st.(*ir.Select).Query)
		if s := strings.Join(joins, " "); s != c.joins {
			t.Errorf("%s: joins %q, want %q", c.query, s, c.joins)
		}
	}
}

// TestResultColumnNames checks output column names against PostgreSQL's
// (FigureColname), as psql and drivers show them.
func TestResultColumnNames(t *testing.T) {
	st, err := bindOne(t, testCatalog(), "SELECT 1 + 1, length(s), CASE WHEN true THEN 1 END, a::bigint, 1::int, "+
		"coalesce(a, 2), ARRAY[a], (ARRAY[a])[1], EXISTS (SELECT 1), (SELECT a AS inner_a), greatest(a, 2), nullif(a, 2), "+
		"count(*), max(a), a IS NULL, 'x', CAST(CAST(1 AS int) AS bigint), CASE WHEN true THEN 1 ELSE a END, "+
		"CASE WHEN true THEN a ELSE 1 END, CAST(a AS int)::bigint, date '2024-01-01', ARRAY(SELECT 1) FROM t GROUP BY a, s")
	if err != nil {
		t.Fatal(err)
	}
	rel := st.(*ir.Select).Query
	var got []string
	for _, i := range ir.VisibleColumns(rel) {
		got = append(got, rel.Columns()[i].Name)
	}
	want := "?column? length case a int4 coalesce array array exists inner_a greatest nullif count max ?column? ?column? int8 a case a date array"
	if s := strings.Join(got, " "); s != want {
		t.Errorf("columns %s\n   want %s", s, want)
	}
}

// updateSet returns the new value an UPDATE gives column i.
func updateSet(u *ir.Update, i int) ir.Expr {
	return u.Rows.(*ir.Project).Exprs[len(u.Table.Columns)+i]
}

// updateWhere returns the WHERE predicate of an UPDATE without subqueries.
func updateWhere(u *ir.Update) ir.Expr {
	return u.Rows.(*ir.Project).Input.(*ir.Filter).Pred
}
