//go:build cgo

package eval

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	pg_query "github.com/pganalyze/pg_query_go/v6"
)

// parserReserved classifies word as the parser's scanner does.
func parserReserved(word string) bool {
	res, err := pg_query.Scan(word)
	if err != nil || len(res.Tokens) != 1 {
		return false
	}
	k := res.Tokens[0].KeywordKind
	return k != pg_query.KeywordKind_NO_KEYWORD && k != pg_query.KeywordKind_UNRESERVED_KEYWORD
}

// TestReservedKeywordsMatchParser checks the keyword table against the
// parser: every listed word is a keyword quote_ident must quote, and (when
// the parser's source is in the module cache) every such keyword of its
// kwlist.h is listed.
func TestReservedKeywordsMatchParser(t *testing.T) {
	for w := range reservedKeywords {
		if !parserReserved(w) {
			t.Errorf("%q is listed but the parser does not treat it as a keyword that needs quoting", w)
		}
	}
	for _, w := range []string{"abort", "name", "value", "foo", "x1", "text"} {
		if reservedKeywords[w] != parserReserved(w) {
			t.Errorf("%q: table says %v, parser says %v", w, reservedKeywords[w], parserReserved(w))
		}
	}
	out, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", "github.com/pganalyze/pg_query_go/v6").Output()
	if err != nil {
		t.Skipf("pg_query_go source not found: %v", err)
	}
	kw, err := os.ReadFile(filepath.Join(strings.TrimSpace(string(out)), "parser/include/postgres/parser/kwlist.h"))
	if err != nil {
		t.Skipf("kwlist.h not found: %v", err)
	}
	n := 0
	for _, m := range regexp.MustCompile(`PG_KEYWORD\("([^"]+)", \w+, (\w+)`).FindAllStringSubmatch(string(kw), -1) {
		n++
		if want := m[2] != "UNRESERVED_KEYWORD"; reservedKeywords[m[1]] != want {
			t.Errorf("%q (%s): listed %v", m[1], m[2], reservedKeywords[m[1]])
		}
	}
	if n < 400 {
		t.Errorf("read only %d keywords from kwlist.h", n)
	}
}
