package engine_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/streamsql/streamsql/internal/testserver"
)

// windowViews are event-time views that clean their state by watermark,
// each created at parallelism 1 (name1) and 4 (name4), with the batch query
// that recomputes what a view holds once its windows are final.
var windowViews = []parallelPair{
	{"wtumble", "SELECT window_start, k, count(*) AS n, sum(v) AS s, min(v) AS lo, max(v) AS hi " +
		"FROM TUMBLE(wa, ts, INTERVAL '5 seconds') GROUP BY window_start, k",
		"over HashAgg, exchanges in: HashShard(window_start, k) from fragment 0"},
	{"whop", "SELECT window_start, count(*) AS n, count(DISTINCT k) AS d " +
		"FROM HOP(wa, ts, INTERVAL '2 seconds', INTERVAL '6 seconds') GROUP BY window_start",
		"over HashAgg, exchanges in: HashShard(window_start) from fragment 0"},
	{"weowc", "SELECT window_start, k, count(*) AS n, sum(v) AS s " +
		"FROM TUMBLE(wa, ts, INTERVAL '5 seconds') GROUP BY window_start, k EMIT ON WINDOW CLOSE",
		"over HashAgg, exchanges in: HashShard(window_start, k) from fragment 0"},
	{"wijoin", "SELECT a.id AS aid, b.id AS bid, a.k, a.v + b.v AS v FROM wa a JOIN wb b " +
		"ON a.k = b.k AND b.ts BETWEEN a.ts AND a.ts + INTERVAL '3 seconds'",
		"over HashJoin, exchanges in: HashShard(k) from fragment 0, HashShard(k) from fragment 0"},
	{"wtopn", "SELECT window_start, k, id, v FROM (SELECT window_start, k, id, v, " +
		"row_number() OVER (PARTITION BY window_start, k ORDER BY v DESC, id) AS rn " +
		"FROM TUMBLE(wa, ts, INTERVAL '5 seconds')) s WHERE rn <= 2",
		"TopN, exchanges in: HashShard(window_start, k) from fragment 0"},
	{"wsess", "SELECT k, id, window_start, window_end FROM SESSION(wa, ts, INTERVAL '2 seconds', k)",
		"SessionWindow, exchanges in: HashShard(k) from fragment 0"},
}

// TestParallelWindowsAndIntervalJoin runs windowed aggregations (TUMBLE,
// HOP, EMIT ON WINDOW CLOSE), an interval join, a TopN per window and
// session windows on four actors, which
// clean their state by watermark per virtual node, next to the same views
// on one actor, under inserts whose time moves forwards, late rows
// included, across simulated kill -9s and a rescale: the two always hold
// the same rows, and once the watermark has passed every row, the rows of
// the query run as a batch SELECT over the tables.
func TestParallelWindowsAndIntervalJoin(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
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
	exec("CREATE TABLE wa (id bigint NOT NULL, k int NOT NULL, v bigint NOT NULL, ts timestamp NOT NULL, PRIMARY KEY (k, id), " +
		"WATERMARK FOR ts AS ts - INTERVAL '4 seconds')")
	exec("CREATE TABLE wb (id bigint NOT NULL, k int NOT NULL, v bigint NOT NULL, ts timestamp NOT NULL, PRIMARY KEY (k, id), " +
		"WATERMARK FOR ts AS ts - INTERVAL '4 seconds')")
	createAtParallelism1And4(ctx, t, conn, windowViews)
	base := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	r := rand.New(rand.NewPCG(3, 11))
	var id int64
	clock := 0 // milliseconds past base
	stamp := func(ms int) string {
		return base.Add(time.Duration(ms) * time.Millisecond).Format("2006-01-02 15:04:05.000")
	}
	// insert adds rows with times from back ms behind the clock to 1.5 s
	// ahead of it. The watermark is 4 s behind the newest row, at most
	// clock+1.5 s: with back <= 2500 no row is late.
	insert := func(table string, rows, back int) {
		var vals []string
		for i := 0; i < rows; i++ {
			id++
			ms := clock + r.IntN(1500) - r.IntN(back+1)
			vals = append(vals, fmt.Sprintf("(%d, %d, %d, '%s')", id, r.IntN(7), r.IntN(100), stamp(ms)))
		}
		exec("INSERT INTO " + table + " VALUES " + strings.Join(vals, ", "))
	}
	same := func(when string) {
		t.Helper()
		exec("FLUSH")
		for _, v := range windowViews {
			one := rowsOf(t, ctx, conn, "SELECT * FROM "+v.name+"1")
			four := rowsOf(t, ctx, conn, "SELECT * FROM "+v.name+"4")
			if !slices.Equal(one, four) {
				t.Fatalf("%s: %s on 4 actors has %d rows, on 1 actor %d:\n%s\nwant\n%s", when, v.name, len(four), len(one),
					strings.Join(four, "\n"), strings.Join(one, "\n"))
			}
		}
	}
	for round := 0; round < 12; round++ {
		for i := 0; i < 4; i++ {
			insert("wa", 20, 2500)
			insert("wb", 20, 2500)
			clock += 700
		}
		same(fmt.Sprint("round ", round))
		switch round {
		case 3, 8:
			conn.Close(ctx)
			if err := srv.Kill(); err != nil {
				t.Fatal(err)
			}
			if conn, err = srv.Conn(ctx); err != nil {
				t.Fatal(err)
			}
			same(fmt.Sprint("after the kill in round ", round))
		case 5:
			for _, v := range windowViews {
				exec(fmt.Sprintf("ALTER MATERIALIZED VIEW %s4 SET PARALLELISM 2", v.name))
			}
		case 6:
			for _, v := range windowViews {
				exec(fmt.Sprintf("ALTER MATERIALIZED VIEW %s4 SET PARALLELISM 4", v.name))
			}
		}
	}
	defer conn.Close(ctx)
	// A row far ahead on each table closes every window and cleans every
	// joined row. No row was late: each view equals its query as a batch
	// SELECT (the closed windows only, emitting on window close).
	clock += 60_000
	exec(fmt.Sprintf("INSERT INTO wa VALUES (0, 100, 0, '%s')", stamp(clock)))
	exec(fmt.Sprintf("INSERT INTO wb VALUES (0, 101, 0, '%s')", stamp(clock)))
	same("after the windows closed")
	// The final windows and sessions left the state on every actor, each
	// cleaning its own virtual nodes: what is left is the open window or
	// session of the last row and the watermark reached.
	keys := operatorKeys(ctx, t, conn)
	for _, name := range []string{"wtopn", "wsess"} {
		if keys[name+"4"] != keys[name+"1"] || keys[name+"4"] > 5 {
			t.Errorf("%s keeps %d operator state keys on 4 actors, %d on 1", name, keys[name+"4"], keys[name+"1"])
		}
	}
	for _, v := range windowViews {
		q := v.def
		if strings.Contains(q, "EMIT ON WINDOW CLOSE") {
			q = strings.Replace(strings.TrimSuffix(q, " EMIT ON WINDOW CLOSE"), " GROUP BY", " WHERE id > 0 GROUP BY", 1)
		}
		got, want := rowsOf(t, ctx, conn, "SELECT * FROM "+v.name+"4"), rowsOf(t, ctx, conn, q)
		if len(got) == 0 || !slices.Equal(got, want) {
			t.Fatalf("%s on 4 actors has %d rows, its query %d:\n%s\nwant\n%s", v.name, len(got), len(want),
				strings.Join(got, "\n"), strings.Join(want, "\n"))
		}
	}
	// Late rows (up to 20 s behind): dropped alike on 1 and 4 actors.
	for i := 0; i < 4; i++ {
		insert("wa", 20, 20_000)
		insert("wb", 20, 20_000)
		clock += 700
	}
	same("after late rows")
}

// TestRescaleMovesVirtualNodes rescales an idle aggregation view of 100,000
// groups from 1 to 4 to 2 actors: the new actors take over the state of
// their virtual nodes where it is, so the checkpoints of the rescales write
// (next to) no keys, and the view then goes on from the old state.
func TestRescaleMovesVirtualNodes(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	srv := testserver.Start(t, testserver.Options{BarrierInterval: 5 * time.Millisecond})
	conn, err := srv.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	exec := func(sql string) {
		t.Helper()
		if _, err := conn.Exec(ctx, sql); err != nil {
			t.Fatalf("%s: %v", sql, err)
		}
	}
	const groups = 100_000
	exec("CREATE TABLE rt (id int PRIMARY KEY, v int)")
	exec("SET streaming_parallelism = 1")
	exec("CREATE MATERIALIZED VIEW rv AS SELECT id, count(*) AS n, sum(v) AS s, max(v) AS hi FROM rt GROUP BY id")
	exec(fmt.Sprintf("INSERT INTO rt SELECT g, g %% 100 FROM generate_series(1, %d) AS g", groups))
	exec("FLUSH")
	const check = "SELECT count(*), sum(n)::bigint, sum(s)::bigint, sum(hi)::bigint FROM rv"
	const recompute = "SELECT count(*), count(*), sum(v)::bigint, sum(v)::bigint FROM rt"
	same := func(when string) {
		t.Helper()
		got, want := rowsOf(t, ctx, conn, check), rowsOf(t, ctx, conn, recompute)
		if !slices.Equal(got, want) {
			t.Fatalf("%s: view %v, recomputed %v", when, got, want)
		}
	}
	same("at parallelism 1")
	lastEpoch := func() (e int64) {
		t.Helper()
		if err := conn.QueryRow(ctx, "SELECT max(epoch) FROM streamsql_checkpoints").Scan(&e); err != nil {
			t.Fatal(err)
		}
		return e
	}
	for _, n := range []int{4, 2} {
		before := lastEpoch()
		exec(fmt.Sprintf("ALTER MATERIALIZED VIEW rv SET PARALLELISM %d", n))
		exec("FLUSH")
		var keys int64
		if err := conn.QueryRow(ctx, "SELECT coalesce(sum(keys_written), 0) FROM streamsql_checkpoints WHERE epoch > $1", before).Scan(&keys); err != nil {
			t.Fatal(err)
		}
		t.Logf("rescale to %d actors: %d keys written by its checkpoints (epochs after %d)", n, keys, before)
		if keys > 100 {
			t.Fatalf("rescale to %d actors: its checkpoints wrote %d keys for a view of %d groups", n, keys, groups)
		}
		same(fmt.Sprint("at parallelism ", n))
		// Every group changes: each actor reads its groups' old state.
		exec("UPDATE rt SET v = v + 1")
		exec("FLUSH")
		same(fmt.Sprint("after an update at parallelism ", n))
	}
}

// parallelPair is a view created twice, at parallelism 1 (name1) and 4
// (name4), whose EXPLAIN at 4, and only at 4, contains explain.
type parallelPair struct{ name, def, explain string }

// createAtParallelism1And4 creates each view at parallelism 1 and 4,
// checking first that EXPLAIN shows the view's exchange at 4 only.
func createAtParallelism1And4(ctx context.Context, t *testing.T, conn *pgx.Conn, views []parallelPair) {
	t.Helper()
	for _, p := range []int{1, 4} {
		mustExec(ctx, t, conn, fmt.Sprintf("SET streaming_parallelism = %d", p))
		for _, v := range views {
			plan := strings.Join(rowsOf(t, ctx, conn, fmt.Sprintf("EXPLAIN CREATE MATERIALIZED VIEW %s%d AS %s", v.name, p, v.def)), "\n")
			if shown := strings.Contains(plan, v.explain); shown != (p > 1) {
				t.Fatalf("EXPLAIN of %s at parallelism %d shows %q: %v\n%s", v.name, p, v.explain, shown, plan)
			}
			mustExec(ctx, t, conn, fmt.Sprintf("CREATE MATERIALIZED VIEW %s%d AS %s", v.name, p, v.def))
		}
	}
}
