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

// partitionViews are views of operators partitioned by a PARTITION BY or
// ASOF join key, each created at parallelism 1 (name1) and 4 (name4), with
// the fragment EXPLAIN shows at 4.
var partitionViews = []parallelPair{
	{"ptop", "SELECT id, g, v, rn FROM (SELECT id, g, v, row_number() OVER (PARTITION BY g ORDER BY v DESC, id) AS rn FROM qt) s WHERE rn <= 3",
		"TopN, exchanges in: HashShard(g) from fragment 0"},
	{"prank", "SELECT id, g, v FROM (SELECT id, g, v, rank() OVER (PARTITION BY g ORDER BY v) AS r FROM qt) s WHERE r <= 2",
		"TopN, exchanges in: HashShard(g) from fragment 0"},
	{"pover", "SELECT id, g, v, sum(v) OVER (PARTITION BY g ORDER BY ts, id) AS run, lag(v) OVER (PARTITION BY g ORDER BY ts, id) AS prev FROM qt",
		"OverWindow, exchanges in: HashShard(g) from fragment 0"},
	{"psess", "SELECT id, g, window_start, window_end FROM SESSION(qt, ts, INTERVAL '10 seconds', g)",
		"SessionWindow, exchanges in: HashShard(g) from fragment 0"},
	{"pasof", "SELECT a.id, a.v, b.id AS bid, b.v AS bv FROM qt a ASOF LEFT JOIN qb b ON a.g = b.g AND a.ts >= b.ts",
		"AsofJoin, exchanges in: HashShard(g) from fragment 0, HashShard(g) from fragment 0"},
}

// TestParallelPartitionedOperators runs TopN per group, window functions
// with PARTITION BY, session windows and an ASOF join on four actors, each
// owning the state of its virtual nodes, next to the same views on one
// actor, under inserts, updates that move rows between partitions and
// deletes, across simulated kill -9s and rescales: every view always holds
// the rows of its query run as a batch SELECT over the tables.
func TestParallelPartitionedOperators(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	srv := testserver.Start(t, testserver.Options{BarrierInterval: 5 * time.Millisecond, Crashable: true})
	conn, err := srv.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	exec := func(sql string, args ...any) {
		t.Helper()
		if _, err := conn.Exec(ctx, sql, args...); err != nil {
			t.Fatalf("%s: %v", sql, err)
		}
	}
	exec("CREATE TABLE qt (id int PRIMARY KEY, g int NOT NULL, v int NOT NULL, ts timestamp NOT NULL)")
	exec("CREATE TABLE qb (id int PRIMARY KEY, g int NOT NULL, v int NOT NULL, ts timestamp NOT NULL)")
	createAtParallelism1And4(ctx, t, conn, partitionViews)
	defer func() { conn.Close(ctx) }()
	base := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	r := rand.New(rand.NewPCG(5, 17))
	stamp := func() string {
		return base.Add(time.Duration(r.IntN(600)) * time.Second).Format("2006-01-02 15:04:05")
	}
	var next [2]int
	change := func(s int) {
		table := [2]string{"qt", "qb"}[s]
		var vals []string
		for i := 0; i < 30; i++ {
			next[s]++
			vals = append(vals, fmt.Sprintf("(%d, %d, %d, '%s')", next[s], r.IntN(9), r.IntN(50), stamp()))
		}
		exec("INSERT INTO " + table + " VALUES " + strings.Join(vals, ", "))
		for i := 0; i < 8; i++ {
			id := 1 + r.IntN(next[s])
			switch r.IntN(3) {
			case 0:
				exec(fmt.Sprintf("UPDATE %s SET g = %d WHERE id = %d", table, r.IntN(9), id))
			case 1:
				exec(fmt.Sprintf("UPDATE %s SET v = %d, ts = '%s' WHERE id = %d", table, r.IntN(50), stamp(), id))
			default:
				exec(fmt.Sprintf("DELETE FROM %s WHERE id = %d", table, id))
			}
		}
	}
	same := func(when string) {
		t.Helper()
		exec("FLUSH")
		for _, v := range partitionViews {
			want := rowsOf(t, ctx, conn, v.def)
			for _, p := range []int{1, 4} {
				got := rowsOf(t, ctx, conn, fmt.Sprintf("SELECT * FROM %s%d", v.name, p))
				if len(want) == 0 || !slices.Equal(got, want) {
					t.Fatalf("%s: %s%d has %d rows, its query %d:\n%s\nwant\n%s", when, v.name, p, len(got), len(want),
						strings.Join(got, "\n"), strings.Join(want, "\n"))
				}
			}
		}
	}
	for round := 0; round < 10; round++ {
		change(0)
		change(1)
		same(fmt.Sprint("round ", round))
		switch round {
		case 2, 7:
			conn.Close(ctx)
			if err := srv.Kill(); err != nil {
				t.Fatal(err)
			}
			if conn, err = srv.Conn(ctx); err != nil {
				t.Fatal(err)
			}
			same(fmt.Sprint("after the kill in round ", round))
		case 4:
			for _, v := range partitionViews {
				exec(fmt.Sprintf("ALTER MATERIALIZED VIEW %s4 SET PARALLELISM 2", v.name))
			}
		case 5:
			for _, v := range partitionViews {
				exec(fmt.Sprintf("ALTER MATERIALIZED VIEW %s4 SET PARALLELISM 4", v.name))
				exec(fmt.Sprintf("ALTER MATERIALIZED VIEW %s1 SET PARALLELISM 3", v.name))
			}
		}
	}
}
