package engine_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/streamsql/streamsql/internal/testserver"
)

// TestStatActivity checks pg_stat_activity: a row per connected session
// with its state and last statement, what other roles may see of it, and
// that a closed session goes.
func TestStatActivity(t *testing.T) {
	ctx := context.Background()
	srv := testserver.Start(t, testserver.Options{SuperuserPassword: "pw"})
	f := &authFixture{t: t, srv: srv}
	root := f.connect("root", "pw")
	execOK(t, root, "CREATE ROLE alice LOGIN PASSWORD 'a'")
	other := f.connect("root", "pw")
	execOK(t, other, "BEGIN", "SELECT 1 AS held")
	alice := f.connect("alice", "a")

	read := func(sql string) string {
		t.Helper()
		rs, err := root.Query(ctx, sql)
		if err != nil {
			t.Fatal(err)
		}
		defer rs.Close()
		var out []string
		for rs.Next() {
			var line string
			if err := rs.Scan(&line); err != nil {
				t.Fatal(err)
			}
			out = append(out, line)
		}
		return strings.Join(out, "\n")
	}
	got := read(`SELECT usename || ' | ' || coalesce(state, 'NULL') || ' | ' || query FROM pg_stat_activity ORDER BY pid`)
	for _, want := range []string{"root | active | SELECT usename", "root | idle in transaction | SELECT 1 AS held", "alice | idle | "} {
		if !strings.Contains(got, want) {
			t.Errorf("pg_stat_activity lacks %q:\n%s", want, got)
		}
	}
	var hidden, own int
	if err := alice.QueryRow(ctx, `SELECT count(*) FILTER (WHERE query = '<insufficient privilege>' AND state IS NULL),
		count(*) FILTER (WHERE usename = 'alice' AND state = 'active') FROM pg_stat_activity`).Scan(&hidden, &own); err != nil {
		t.Fatal(err)
	}
	if hidden != 2 || own != 1 {
		t.Errorf("alice sees %d hidden sessions and %d of her own active, want 2 and 1", hidden, own)
	}
	if err := other.Close(ctx); err != nil {
		t.Fatal(err)
	}
	var n int
	for range 100 {
		if err := root.QueryRow(ctx, "SELECT count(*) FROM pg_stat_activity").Scan(&n); err != nil {
			t.Fatal(err)
		}
		if n == 2 {
			return
		}
		time.Sleep(10 * time.Millisecond) // the server notices the close asynchronously
	}
	t.Errorf("after a session closed pg_stat_activity has %d rows, want 2", n)
}
