package nexmark

import (
	"strings"
	"testing"
)

func TestQueriesAreViews(t *testing.T) {
	seen := map[string]bool{}
	for _, q := range Queries {
		if seen[q.Name] {
			t.Fatalf("%s twice", q.Name)
		}
		seen[q.Name] = true
		if !strings.HasPrefix(q.SQL, "CREATE MATERIALIZED VIEW "+q.View()+" AS\nSELECT") || !strings.HasPrefix(q.Select(), "SELECT") {
			t.Errorf("%s: %q", q.Name, q.SQL)
		}
	}
	for _, name := range []string{"q0", "q1", "q2", "q3", "q4", "q5", "q7", "q8", "q9", "q14", "q15", "q16", "q17", "q18", "q19", "q20", "q21", "q22", "q101", "q102", "q103", "q104", "q105"} {
		if !seen[name] {
			t.Errorf("no %s", name)
		}
	}
}
