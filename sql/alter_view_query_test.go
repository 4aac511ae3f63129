package sql

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/streamsql/streamsql/catalog"
	"github.com/streamsql/streamsql/sqlerr"
	"github.com/streamsql/streamsql/types"
)

// TestAlterViewQuery binds ALTER MATERIALIZED VIEW ... AS: the new query
// becomes the CREATE stored for the view, the view itself is not among its
// references, and errors in the query point where the ALTER has them.
func TestAlterViewQuery(t *testing.T) {
	cat := testCatalog()
	cat.Add(&catalog.Relation{ID: 2, Name: "mv", Kind: catalog.MaterializedView, Columns: []catalog.Column{
		{Name: "a", Type: types.Int32T},
	}, SQL: "CREATE MATERIALIZED VIEW mv AS SELECT a FROM t"})
	st, err := bindOne(t, cat, "ALTER MATERIALIZED VIEW mv AS SELECT a FROM t WHERE a > 1")
	if err != nil {
		t.Fatal(err)
	}
	a := st.(*AlterViewQuery)
	if a.Rel.ID != 2 || a.View.SQL != "CREATE MATERIALIZED VIEW mv AS SELECT a FROM t WHERE a > 1" {
		t.Fatalf("bound %d, %q", a.Rel.ID, a.View.SQL)
	}
	if len(a.View.Refs) != 1 || a.View.Refs[0].ID != 1 {
		t.Fatalf("references %v, want t only", a.View.Refs)
	}
	for _, text := range []string{
		"ALTER MATERIALIZED VIEW mv AS SELECT nosuch FROM t",
		"ALTER MATERIALIZED VIEW IF EXISTS public.mv AS SELECT nosuch FROM t",
		"SELECT 1; /* é */ ALTER MATERIALIZED VIEW mv AS SELECT nosuch FROM t",
	} {
		ps, err := Parse(text)
		if err != nil {
			t.Fatal(err)
		}
		_, err = Bind(cat, ps[len(ps)-1])
		se, ok := err.(*sqlerr.Error)
		want := utf8.RuneCountInString(text[:strings.Index(text, "nosuch")]) + 1
		if !ok || se.Code != sqlerr.UndefinedColumn || se.Position != want {
			t.Errorf("%s: %v at %d, want 42703 at %d", text, err, se.Position, want)
		}
	}
	if _, err := bindOne(t, cat, "ALTER MATERIALIZED VIEW t AS SELECT 1 AS a"); err == nil || err.(*sqlerr.Error).Code != sqlerr.WrongObjectType {
		t.Errorf("ALTER of a table: %v", err)
	}
	st, err = bindOne(t, cat, "ALTER MATERIALIZED VIEW IF EXISTS nosuch AS SELECT 1 AS a")
	if n, ok := st.(*AlterNoop); err != nil || !ok || n.Tag() != "ALTER MATERIALIZED VIEW" {
		t.Errorf("IF EXISTS of a missing view: %v, %v", st, err)
	}
}
