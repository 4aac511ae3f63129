package difftest

import (
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/streamsql/streamsql/sql"
)

// genScript generates a schema, views and DML from seed without a database:
// no keys are taken at first, and views read tables or earlier views.
func genScript(seed int64) []string {
	g := newGen(seed)
	var out []string
	var rels []*relation
	for i := range 3 {
		r := g.table(fmt.Sprintf("t%d", i+1))
		rels = append(rels, r)
		out = append(out, r.createTable())
	}
	for i := range 10 {
		name := fmt.Sprintf("v%d", i+1)
		v := g.view(name, pick(g, rels), true)
		g.others = rels
		switch i % 5 {
		case 1:
			v = g.joinView(name, pick(g, rels), pick(g, rels), true)
		case 2:
			v = g.setView(name, pick(g, rels), pick(g, rels), true)
		case 3:
			if m, ok := g.multiJoinView(name, []*relation{pick(g, rels), pick(g, rels), pick(g, rels), pick(g, rels)}, true); ok {
				v = m
			}
		case 4:
			if u, ok := g.unnestView(name, pick(g, rels), true); ok {
				v = u
			}
		}
		rels = append(rels, v)
		out = append(out, "CREATE MATERIALIZED VIEW "+v.name+" AS "+v.def)
	}
	for _, r := range rels[:3] {
		taken := map[string]bool{}
		out = append(out, g.insert(r, taken, g.chance(0.2)), g.update(r), g.delete(r), g.insertSelect(r, pick(g, rels)))
		if q, ok := g.bulkInsert(r, 100); ok {
			out = append(out, q)
		}
		if q, ok := g.rekey(r, taken); ok {
			out = append(out, q)
		}
	}
	return out
}

func TestGenTableNames(t *testing.T) {
	for seed := range int64(500) {
		g := newGen(seed)
		r := g.table("t")
		seen := map[string]bool{}
		for _, c := range r.columns {
			if seen[c.name] {
				t.Fatalf("seed %d: column %s twice in %s", seed, c.name, r.createTable())
			}
			seen[c.name] = true
		}
	}
}

func TestGenDeterministic(t *testing.T) {
	a, b := strings.Join(genScript(7), ";\n"), strings.Join(genScript(7), ";\n")
	if a != b {
		t.Fatalf("seed 7 generated two different scripts:\n%s\n\n%s", a, b)
	}
	if c := strings.Join(genScript(8), ";\n"); c == a {
		t.Fatalf("seeds 7 and 8 generated the same script")
	}
}

// stringLiteral matches SQL string literals, for looking outside them.
var stringLiteral = regexp.MustCompile(`'(?:[^']|'')*'`)

// TestGenParses checks that generated statements are single statements of
// valid syntax (PostgreSQL's parser) with no accidental comment, such as
// the -- that a minus before a negative number would make.
func TestGenParses(t *testing.T) {
	for seed := range int64(200) {
		for _, q := range genScript(seed) {
			if strings.Contains(stringLiteral.ReplaceAllString(q, "''"), "--") {
				t.Fatalf("seed %d: comment in %s", seed, q)
			}
			parsed, err := sql.Parse(q)
			if err != nil {
				t.Fatalf("seed %d: %v\n%s", seed, err, q)
			}
			if len(parsed) != 1 {
				t.Fatalf("seed %d: %d statements in %s", seed, len(parsed), q)
			}
		}
	}
}

func TestQuote(t *testing.T) {
	if got := quote("o'k"); got != "'o''k'" {
		t.Fatalf("quote = %s", got)
	}
}

func TestIntConstant(t *testing.T) {
	for s, want := range map[string]bool{
		"10": true, "(-10)": true, "(-(10))": true, "-(10)": true,
		"CAST(10 AS bigint)": false, "(c1 - 10)": false, "(-c1)": false, "1.5": false,
	} {
		if got := intConstant.MatchString(s); got != want {
			t.Errorf("intConstant matches %q: %v, want %v", s, got, want)
		}
	}
}
