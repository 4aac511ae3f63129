package sql

import (
	"errors"
	"testing"

	"github.com/streamsql/streamsql/catalog"
	"github.com/streamsql/streamsql/ir"
	"github.com/streamsql/streamsql/sqlerr"
)

func TestDialectClauses(t *testing.T) {
	cat := testCatalog()
	for _, tc := range []struct {
		text       string
		wmCol      int
		wmExpr     string
		appendOnly bool
	}{
		{text: "CREATE TABLE w (a int, ts timestamp, WATERMARK FOR ts AS ts - INTERVAL '5 seconds')", wmCol: 1, wmExpr: "ts - INTERVAL '5 seconds'"},
		{text: "CREATE TABLE w (WATERMARK FOR ts AS ts, a int, ts timestamptz) APPEND ONLY", wmCol: 1, wmExpr: "ts", appendOnly: true},
		{text: "create table w (a int, ts timestamp, watermark for ts as (ts - interval '1' minute), b text) append only", wmCol: 1, wmExpr: "(ts - interval '1' minute)", appendOnly: true},
		{text: "CREATE TABLE w (a int PRIMARY KEY, \"Ts\" timestamp, WATERMARK FOR \"Ts\" AS \"Ts\")", wmCol: 1, wmExpr: `"Ts"`},
		{text: "CREATE TABLE w (a int) APPEND ONLY", wmCol: -1, appendOnly: true},
	} {
		st, err := bindOne(t, cat, tc.text)
		if err != nil {
			t.Errorf("%s: %v", tc.text, err)
			continue
		}
		ct := st.(*ir.CreateTable)
		if ct.AppendOnly != tc.appendOnly {
			t.Errorf("%s: append only %v", tc.text, ct.AppendOnly)
		}
		switch {
		case tc.wmCol < 0 && ct.Watermark != nil:
			t.Errorf("%s: watermark %+v", tc.text, ct.Watermark)
		case tc.wmCol >= 0 && (ct.Watermark == nil || ct.Watermark.Column != tc.wmCol || ct.Watermark.Expr != tc.wmExpr):
			t.Errorf("%s: watermark %+v", tc.text, ct.Watermark)
		}
	}
}

func TestDialectClauseErrors(t *testing.T) {
	cat := testCatalog()
	for _, tc := range []struct {
		text string
		code string
		pos  int
	}{
		{"CREATE TABLE w (a int, WATERMARK FOR a AS a)", sqlerr.DatatypeMismatch, 24},
		{"CREATE TABLE w (a int, ts timestamp, WATERMARK FOR b AS ts)", sqlerr.UndefinedColumn, 38},
		{"CREATE TABLE w (a int, ts timestamp, WATERMARK FOR ts AS CASE WHEN a > 0 THEN ts ELSE ts END)", sqlerr.InvalidColumnReference, 58},
		{"CREATE TABLE w (a int, ts timestamp, WATERMARK FOR ts AS ts - INTERVAL '1' x)", sqlerr.SyntaxError, 76},
		{"CREATE TABLE w (a int, ts timestamp, WATERMARK FOR ts AS a + 1)", sqlerr.DatatypeMismatch, 58},
		{"CREATE TABLE w (a int, ts timestamp, WATERMARK FOR ts AS ts - INTERVAL '1 second' + nope)", sqlerr.UndefinedColumn, 85},
		{"SELECT a FROM t EMIT ON WINDOW CLOSE", sqlerr.SyntaxError, 17},
	} {
		ps, err := Parse(tc.text)
		if err == nil {
			_, err = Bind(cat, ps[0])
		}
		var se *sqlerr.Error
		if !errors.As(err, &se) || se.Code != tc.code || (tc.pos > 0 && se.Position != tc.pos) {
			t.Errorf("%s: got %v (%+v), want %s at %d", tc.text, err, se, tc.code, tc.pos)
		}
	}
}

// TestDialectClausesPerStatement checks that clauses go to the statement
// they are written in and that statement texts keep them (views are rebuilt
// from their text).
func TestDialectClausesPerStatement(t *testing.T) {
	cat := testCatalog()
	text := "CREATE TABLE x (b int) APPEND ONLY; CREATE MATERIALIZED VIEW m AS SELECT a, count(*) FROM t GROUP BY a EMIT ON WINDOW CLOSE; SELECT 1"
	ps, err := Parse(text)
	if err != nil {
		t.Fatal(err)
	}
	if len(ps) != 3 {
		t.Fatalf("%d statements", len(ps))
	}
	if len(ps[0].clauses) != 1 || len(ps[1].clauses) != 1 || len(ps[2].clauses) != 0 {
		t.Fatalf("clauses per statement: %d %d %d", len(ps[0].clauses), len(ps[1].clauses), len(ps[2].clauses))
	}
	if want := "CREATE MATERIALIZED VIEW m AS SELECT a, count(*) FROM t GROUP BY a EMIT ON WINDOW CLOSE"; ps[1].Text != want {
		t.Fatalf("text %q", ps[1].Text)
	}
	st, err := Bind(cat, ps[1])
	if err != nil {
		t.Fatal(err)
	}
	if !st.(*ir.CreateMaterializedView).EmitOnWindowClose {
		t.Fatal("EMIT ON WINDOW CLOSE lost")
	}
	// The same parse binds again (prepared statements).
	if _, err := Bind(cat, ps[1]); err != nil {
		t.Fatal(err)
	}
	src, err := Parse("CREATE SOURCE s (a int, ts timestamp, WATERMARK FOR ts AS ts - INTERVAL '1' SECOND) WITH (connector = 'datagen')")
	if err != nil {
		t.Fatal(err)
	}
	st, err = Bind(cat, src[0])
	if err != nil {
		t.Fatal(err)
	}
	if wm := st.(*CreateSource).Watermark; wm == nil || wm.Column != 1 {
		t.Fatalf("source watermark %+v", wm)
	}
	rel := &catalog.Relation{Name: "s", Columns: st.(*CreateSource).Columns, Watermark: st.(*CreateSource).Watermark}
	if _, err := BindWatermark(rel); err != nil {
		t.Fatal(err)
	}
}
