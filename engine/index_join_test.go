package engine_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/streamsql/streamsql/internal/testserver"
)

// TestLookupJoinRandom runs random joins of a small table with a larger one
// that the planner reads by key or index (a lookup join, which EXPLAIN must
// show) and compares each result with the same query whose join keys on the
// large table are wrapped in no-op expressions (k + 0, g concatenated with
// the empty string), which cannot be looked up and so run as hash joins.
func TestLookupJoinRandom(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	srv := testserver.Start(t, testserver.Options{})
	conn, err := srv.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	exec := func(sql string) {
		t.Helper()
		if _, err := conn.Exec(ctx, sql); err != nil {
			t.Fatalf("%s: %v", sql, err)
		}
	}
	exec("CREATE TABLE big (id int PRIMARY KEY, k int, g text, v int)")
	exec("INSERT INTO big SELECT i, CASE WHEN i % 37 = 0 THEN NULL ELSE i % 300 END, " +
		"CASE WHEN i % 53 = 0 THEN NULL ELSE 'g' || (i % 5) END, i % 1000 FROM generate_series(1, 2500) AS i")
	exec("CREATE INDEX big_k ON big (k)")
	exec("CREATE INDEX big_kg ON big (k, g) INCLUDE (v)")
	exec("CREATE INDEX big_g ON big (g)")
	exec("CREATE TABLE small (sid int PRIMARY KEY, sk int, sg text, sv int)")
	rng := rand.New(rand.NewPCG(3, 4))
	var rows []string
	for sid := 1; sid <= 40; sid++ {
		val := func(s string) string {
			if rng.IntN(6) == 0 {
				return "NULL"
			}
			return s
		}
		rows = append(rows, fmt.Sprintf("(%d, %s, %s, %s)", sid, val(fmt.Sprint(rng.IntN(2700))),
			val(fmt.Sprintf("'g%d'", rng.IntN(6))), val(fmt.Sprint(rng.IntN(1000)))))
	}
	exec("INSERT INTO small VALUES " + strings.Join(rows, ", "))
	// Join conditions: the looked-up form and its hash join twin.
	keys := [][2]string{
		{"sk = big.id", "sk = big.id + 0"},
		{"sk = big.k", "sk = big.k + 0"},
		{"sk = big.k AND sg = big.g", "sk = big.k + 0 AND sg = big.g || ''"},
		{"sg = big.g", "sg = big.g || ''"},
		{"sv = big.k", "sv = big.k + 0"},
	}
	conds := []string{"", " AND big.v > sv", " AND sv IS NOT NULL", " AND big.v % 3 = 0"}
	filters := []string{"", " WHERE sid % 2 = 0", " WHERE big.v < 500", " WHERE sid > 10 AND big.v > 100"}
	looked, nonEmpty := 0, 0
	for i := 0; i < 120; i++ {
		key := keys[rng.IntN(len(keys))]
		cond := conds[rng.IntN(len(conds))]
		typ, filter := rng.IntN(4), filters[rng.IntN(len(filters))]
		var q [2]string
		for v := range q {
			on := key[v] + cond
			switch typ {
			case 0:
				q[v] = "SELECT sid, big.id FROM small JOIN big ON " + on + filter
			case 1:
				q[v] = "SELECT sid, big.id, big.v FROM small LEFT JOIN big ON " + on
			case 2:
				q[v] = "SELECT sid FROM small WHERE EXISTS (SELECT 1 FROM big WHERE " + on + ")"
			default:
				q[v] = "SELECT sid FROM small WHERE NOT EXISTS (SELECT 1 FROM big WHERE " + on + ")"
			}
		}
		if !strings.Contains(strings.Join(queryRows(ctx, t, conn, "EXPLAIN "+q[0]), "\n"), "IndexLookupJoin") {
			continue
		}
		if strings.Contains(strings.Join(queryRows(ctx, t, conn, "EXPLAIN "+q[1]), "\n"), "IndexLookupJoin") {
			t.Fatalf("the twin %s is a lookup join too", q[1])
		}
		looked++
		got, want := queryRows(ctx, t, conn, q[0]), queryRows(ctx, t, conn, q[1])
		if !slices.Equal(got, want) {
			t.Fatalf("%s\nreturned %d rows:\n%v\nthe hash join\n%s\n%d rows:\n%v", q[0], len(got), got, q[1], len(want), want)
		}
		if len(got) > 0 {
			nonEmpty++
		}
	}
	if looked < 60 || nonEmpty < looked/2 {
		t.Fatalf("%d of 120 queries were planned as lookup joins, %d of them returned rows", looked, nonEmpty)
	}
	t.Logf("%d lookup joins, %d returned rows", looked, nonEmpty)
}
