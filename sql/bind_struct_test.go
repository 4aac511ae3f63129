package sql

import (
	"errors"
	"strings"
	"testing"

	"github.com/streamsql/streamsql/ir"
	"github.com/streamsql/streamsql/sqlerr"
	"github.com/streamsql/streamsql/types"
)

// TestDialectTypes checks that STRUCT<...> and MAP(...) types are cut out
// of the text with the positions of everything after them kept.
func TestDialectTypes(t *testing.T) {
	cat := testCatalog()
	st, err := bindOne(t, cat, "CREATE TABLE w (s STRUCT<a int, \"B\" varchar(3), c STRUCT<x numeric(5,2)[]>>[], m map(varchar, STRUCT<y int>), k int)")
	if err != nil {
		t.Fatal(err)
	}
	ct := st.(*ir.CreateTable)
	got := []string{}
	for _, c := range ct.Columns {
		got = append(got, c.Type.String())
	}
	want := "struct<a integer, B character varying(3), c struct<x numeric(5,2)[]>>[]|map(character varying,struct<y integer>)|integer"
	if strings.Join(got, "|") != want {
		t.Fatalf("types: %s", strings.Join(got, "|"))
	}
	if ct.Columns[0].Type.Kind != types.Array || ct.Columns[0].Type.Elem != types.Struct {
		t.Fatalf("array of structs: %+v", ct.Columns[0].Type)
	}
	for _, tc := range []struct {
		text string
		code string
		pos  int
	}{
		{"CREATE TABLE w (s STRUCT<a int, b varchar>, c nosuch)", sqlerr.UndefinedObject, 47},
		{"CREATE TABLE w (s STRUCT<a nosuch>)", sqlerr.UndefinedObject, 19},
		{"CREATE TABLE w (m MAP(numeric, int))", sqlerr.FeatureNotSupported, 19},
		{"SELECT MAP {'a': 1}, nope", sqlerr.UndefinedColumn, 22},
		{"SELECT ROW(1, 2)::STRUCT<a int>, nope", sqlerr.CannotCoerce, 0},
		{"SELECT '(1,2)'::STRUCT<a int, b int>, nope", sqlerr.UndefinedColumn, 39},
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
