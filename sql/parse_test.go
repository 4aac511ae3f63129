package sql

import (
	"testing"

	"github.com/streamsql/streamsql/sqlerr"
)

// TestParseCustom checks streamsql's own statements alone and mixed with
// PostgreSQL ones, and that semicolons inside literals do not split.
func TestParseCustom(t *testing.T) {
	for _, tc := range []struct {
		text string
		tags []string
	}{
		{"FLUSH", []string{"FLUSH"}},
		{"flush;", []string{"FLUSH"}},
		{"SHOW MATERIALIZED VIEWS", []string{"SHOW"}},
		{"INSERT INTO t VALUES (1); FLUSH; SELECT ';'", []string{"INSERT", "FLUSH", "SELECT"}},
		{"SELECT 'a;b' /* ; */; flush -- ;\n", []string{"SELECT", "FLUSH"}},
		{"  ;  ", nil},
	} {
		ps, err := Parse(tc.text)
		if err != nil {
			t.Errorf("%q: %v", tc.text, err)
			continue
		}
		var tags []string
		for _, p := range ps {
			st, err := Bind(testCatalog(), p)
			if err != nil {
				t.Errorf("%q: bind %q: %v", tc.text, p.Text, err)
				continue
			}
			tags = append(tags, st.Tag())
		}
		if len(tags) != len(tc.tags) {
			t.Errorf("%q: tags %v, want %v", tc.text, tags, tc.tags)
			continue
		}
		for i := range tags {
			if tags[i] != tc.tags[i] {
				t.Errorf("%q: tags %v, want %v", tc.text, tags, tc.tags)
			}
		}
	}
}

// TestParseSyntaxErrors checks that text that is neither PostgreSQL nor
// streamsql grammar fails with 42601 at the right position, also next to a
// streamsql statement.
func TestParseSyntaxErrors(t *testing.T) {
	for _, tc := range []struct {
		text string
		pos  int
	}{
		{"SELEKT 1", 1},
		{"SELECT (1", 10},
		{"FLUSH; SELEKT 1", 8},
		{"FLUSH; SELECT 'unterminated", 15},
		{"FLUSH FLUSH", 1},
	} {
		_, err := Parse(tc.text)
		if sqlerr.Code(err) != sqlerr.SyntaxError {
			t.Errorf("%q: %v, want a syntax error", tc.text, err)
			continue
		}
		if e := err.(*sqlerr.Error); e.Position != tc.pos {
			t.Errorf("%q: error %q at %d, want position %d", tc.text, e.Message, e.Position, tc.pos)
		}
	}
}
