package engine_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/streamsql/streamsql/internal/testserver"
)

// parallelViews are views whose partitioned fragment runs on several actors,
// each with the query that recomputes it.
var parallelViews = []struct{ name, def, check string }{
	{"pagg", "SELECT g, count(*) AS n, sum(v) AS s, min(v) AS lo, max(v) AS hi FROM pt GROUP BY g",
		"SELECT g, count(*) AS n, sum(v) AS s, min(v) AS lo, max(v) AS hi FROM pt GROUP BY g"},
	{"pdist", "SELECT g, count(DISTINCT v) AS d FROM pt WHERE v > 10 GROUP BY g",
		"SELECT g, count(DISTINCT v) AS d FROM pt WHERE v > 10 GROUP BY g"},
	{"pjoin", "SELECT pt.id, pt.v, pd.name FROM pt JOIN pd ON pt.id = pd.id",
		"SELECT pt.id, pt.v, pd.name FROM pt JOIN pd ON pt.id = pd.id"},
	{"pleft", "SELECT pt.id, pt.g, pd.name FROM pt LEFT JOIN pd ON pt.id = pd.id",
		"SELECT pt.id, pt.g, pd.name FROM pt LEFT JOIN pd ON pt.id = pd.id"},
	// Several exchanges: a join on g, then an aggregation on another key.
	{"pjoinagg", "SELECT pd.name, count(*) AS n, sum(pt.v) AS s, max(pt.id) AS hi FROM pt JOIN pd ON pt.g = pd.r GROUP BY pd.name",
		"SELECT pd.name, count(*) AS n, sum(pt.v) AS s, max(pt.id) AS hi FROM pt JOIN pd ON pt.g = pd.r GROUP BY pd.name"},
	// The same with sums only: exchanged without netting.
	{"pjoinsum", "SELECT pd.name, count(*) AS n, sum(pt.v) AS s FROM pt JOIN pd ON pt.g = pd.r GROUP BY pd.name",
		"SELECT pd.name, count(*) AS n, sum(pt.v) AS s FROM pt JOIN pd ON pt.g = pd.r GROUP BY pd.name"},
	// An aggregation feeding a join on another key.
	{"paggjoin", "SELECT a.g, a.n, pd.id, pd.name FROM (SELECT g, count(*) AS n FROM pt GROUP BY g) a JOIN pd ON a.n = pd.id",
		"SELECT a.g, a.n, pd.id, pd.name FROM (SELECT g, count(*) AS n FROM pt GROUP BY g) a JOIN pd ON a.n = pd.id"},
	// A view whose key (both sides' ids) does not hold the join key: the
	// join's rows are exchanged by the view's key before the Materialize.
	{"pnokey", "SELECT pt.id AS tid, pd.id AS did, pt.v, pd.name FROM pt JOIN pd ON pt.g = pd.r",
		"SELECT pt.id AS tid, pd.id AS did, pt.v, pd.name FROM pt JOIN pd ON pt.g = pd.r"},
	// Two aggregations on different keys.
	{"paggagg", "SELECT n, count(*) AS groups, sum(s) AS total FROM (SELECT g, count(*) AS n, sum(v) AS s FROM pt GROUP BY g) a GROUP BY n",
		"SELECT n, count(*) AS groups, sum(s) AS total FROM (SELECT g, count(*) AS n, sum(v) AS s FROM pt GROUP BY g) a GROUP BY n"},
}

// TestParallelViewsMatchRecomputation runs views at parallelism 4 under
// inserts, updates (moving rows between groups and join keys) and deletes,
// across a restart and a change of the session's parallelism, and compares
// each with its query recomputed over the tables.
func TestParallelViewsMatchRecomputation(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	srv := testserver.Start(t, testserver.Options{BarrierInterval: 5 * time.Millisecond})
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
	exec("CREATE TABLE pt (id int PRIMARY KEY, g int, v int)")
	exec("CREATE TABLE pd (id int PRIMARY KEY, name text, r int)")
	exec("SET streaming_parallelism = 4")
	for _, v := range parallelViews {
		exec(fmt.Sprintf("CREATE MATERIALIZED VIEW %s AS %s", v.name, v.def))
	}
	r := rand.New(rand.NewPCG(7, 9))
	step := func(round int) {
		for i := 0; i < 30; i++ {
			id := r.IntN(200)
			switch r.IntN(6) {
			case 0, 1:
				exec("DELETE FROM pt WHERE id = $1", id)
				exec("INSERT INTO pt VALUES ($1, $2, $3)", id, r.IntN(12), r.IntN(50))
			case 2:
				exec("UPDATE pt SET g = $1, v = v + 1 WHERE id BETWEEN $2 AND $2 + 20", r.IntN(12), id)
			case 3:
				exec("DELETE FROM pt WHERE id BETWEEN $1 AND $1 + 5", id)
			case 5:
				// Both sides of a join row move to another join key in one
				// epoch: the join's actors may emit its delete and insert in
				// either order.
				k := r.IntN(12)
				exec("BEGIN")
				exec("UPDATE pd SET r = $1 WHERE id BETWEEN $2 AND $2 + 10", k, id)
				exec("UPDATE pt SET g = $1 WHERE id BETWEEN $2 AND $2 + 10", k, id)
				exec("COMMIT")
			case 4:
				exec("DELETE FROM pd WHERE id = $1", id)
				exec("INSERT INTO pd VALUES ($1, $2, $3)", id, fmt.Sprint("n", round%3, i%4), r.IntN(12))
				exec("DELETE FROM pd WHERE id = $1", r.IntN(200))
			}
		}
	}
	check := func(when string, want int) {
		t.Helper()
		exec("FLUSH")
		for _, v := range parallelViews {
			got := rowsOf(t, ctx, conn, "SELECT * FROM "+v.name)
			exp := rowsOf(t, ctx, conn, v.check)
			if !slices.Equal(got, exp) {
				t.Fatalf("%s: view %s has %d rows, recomputed %d:\n%s\nwant\n%s", when, v.name, len(got), len(exp),
					strings.Join(got, "\n"), strings.Join(exp, "\n"))
			}
			var n int64
			if err := conn.QueryRow(ctx, "SELECT parallelism FROM streamsql_views WHERE name = $1", v.name).Scan(&n); err != nil {
				t.Fatal(err)
			}
			if n != int64(want) {
				t.Fatalf("%s: view %s runs on %d actors, want %d", when, v.name, n, want)
			}
			if diffs := rowsOf(t, ctx, conn, "VERIFY MATERIALIZED VIEW "+v.name); len(diffs) > 0 {
				t.Fatalf("%s: VERIFY MATERIALIZED VIEW %s: %s", when, v.name, strings.Join(diffs, "\n"))
			}
		}
	}
	for round := 0; round < 5; round++ {
		step(round)
		check(fmt.Sprint("round ", round), 4)
	}
	conn.Close(ctx)
	if err := srv.Restart(); err != nil {
		t.Fatal(err)
	}
	if conn, err = srv.Conn(ctx); err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	exec("SET streaming_parallelism = 1") // views keep their own
	check("after restart", 4)
	for round := 5; round < 10; round++ {
		step(round)
		check(fmt.Sprint("round ", round), 4)
	}
}

// rowsOf returns the rows of query as sorted text lines.
func rowsOf(t *testing.T, ctx context.Context, conn *pgx.Conn, query string) []string {
	t.Helper()
	rows, err := conn.Query(ctx, query)
	if err != nil {
		t.Fatalf("%s: %v", query, err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		vals, err := rows.Values()
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, fmt.Sprint(vals...))
	}
	if err := rows.Err(); err != nil {
		t.Fatalf("%s: %v", query, err)
	}
	slices.Sort(out)
	return out
}

// TestAlterParallelismUnderWrites rescales views several times while
// another connection keeps writing: no change is lost or applied twice.
func TestAlterParallelismUnderWrites(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	srv := testserver.Start(t, testserver.Options{BarrierInterval: 5 * time.Millisecond})
	conn, err := srv.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	exec := func(c *pgx.Conn, sql string, args ...any) error {
		_, err := c.Exec(ctx, sql, args...)
		if err != nil {
			err = fmt.Errorf("%s: %w", sql, err)
		}
		return err
	}
	for _, s := range []string{
		"CREATE TABLE pt (id int PRIMARY KEY, g int, v int)",
		"CREATE TABLE pd (id int PRIMARY KEY, name text, r int)",
		"SET streaming_parallelism = 1",
	} {
		if err := exec(conn, s); err != nil {
			t.Fatal(err)
		}
	}
	for _, v := range parallelViews {
		if err := exec(conn, fmt.Sprintf("CREATE MATERIALIZED VIEW %s AS %s", v.name, v.def)); err != nil {
			t.Fatal(err)
		}
	}
	writer, err := srv.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer writer.Close(ctx)
	stop := make(chan struct{})
	done := make(chan error, 1)
	go func() {
		r := rand.New(rand.NewPCG(3, 4))
		for i := 0; ; i++ {
			select {
			case <-stop:
				done <- nil
				return
			default:
			}
			id := r.IntN(300)
			var err error
			switch i % 4 {
			case 0:
				if err = exec(writer, "DELETE FROM pt WHERE id = $1", id); err == nil {
					err = exec(writer, "INSERT INTO pt VALUES ($1, $2, $3)", id, r.IntN(20), r.IntN(100))
				}
			case 1:
				err = exec(writer, "UPDATE pt SET g = $1 WHERE id BETWEEN $2 AND $2 + 10", r.IntN(20), id)
			case 2:
				if err = exec(writer, "DELETE FROM pd WHERE id = $1", id); err == nil {
					err = exec(writer, "INSERT INTO pd VALUES ($1, $2, $3)", id, fmt.Sprint(i%7), i%12)
				}
			case 3:
				err = exec(writer, "DELETE FROM pt WHERE id = $1", id)
			}
			if err != nil {
				done <- err
				return
			}
		}
	}()
	for _, n := range []int{4, 2, 3, 1, 2} {
		time.Sleep(30 * time.Millisecond)
		for _, v := range parallelViews {
			if err := exec(conn, fmt.Sprintf("ALTER MATERIALIZED VIEW %s SET PARALLELISM = %d", v.name, n)); err != nil {
				close(stop)
				t.Fatal(err)
			}
			var got int64
			if err := conn.QueryRow(ctx, "SELECT parallelism FROM streamsql_views WHERE name = $1", v.name).Scan(&got); err != nil || got != int64(n) {
				close(stop)
				t.Fatalf("%s after SET PARALLELISM %d: %d actors (%v)", v.name, n, got, err)
			}
		}
	}
	close(stop)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if err := exec(conn, "FLUSH"); err != nil {
		t.Fatal(err)
	}
	for _, v := range parallelViews {
		got := rowsOf(t, ctx, conn, "SELECT * FROM "+v.name)
		exp := rowsOf(t, ctx, conn, v.check)
		if !slices.Equal(got, exp) {
			t.Fatalf("view %s has %d rows, recomputed %d", v.name, len(got), len(exp))
		}
	}
	if err := exec(conn, "ALTER MATERIALIZED VIEW pagg SET PARALLELISM 0"); err == nil || !strings.Contains(err.Error(), "22023") {
		t.Fatalf("parallelism 0: %v", err)
	}
}

// TestBackfillFromParallelViewUnderWrites creates views over a parallel
// view while its table is written, with every other barrier not a
// checkpoint and small backfill chunks: each chunk must read every actor's
// rows of the epochs not yet committed. (A backfill from a parallel view
// once read only its first actor's, so the groups the other actors changed
// in those epochs kept their committed values in the new view for good:
// TestCrashRecovery seed 361360 at parallelism 2.)
func TestBackfillFromParallelViewUnderWrites(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	srv := testserver.Start(t, testserver.Options{BarrierInterval: 2 * time.Millisecond, CheckpointFrequency: 2, BackfillChunkRows: 4})
	conn, err := srv.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	exec := func(c *pgx.Conn, sql string, args ...any) error {
		_, err := c.Exec(ctx, sql, args...)
		if err != nil {
			err = fmt.Errorf("%s: %w", sql, err)
		}
		return err
	}
	for _, s := range []string{
		"CREATE TABLE bt (id int PRIMARY KEY, g int, v int)",
		"INSERT INTO bt SELECT i, i % 40, i FROM generate_series(1, 400) AS s(i)",
		"SET streaming_parallelism = 4",
		"CREATE MATERIALIZED VIEW bagg AS SELECT g, count(*) AS n, sum(v) AS s FROM bt GROUP BY g",
		"SET streaming_parallelism = 1",
	} {
		if err := exec(conn, s); err != nil {
			t.Fatal(err)
		}
	}
	writer, err := srv.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer writer.Close(ctx)
	stop := make(chan struct{})
	done := make(chan error, 1)
	go func() {
		r := rand.New(rand.NewPCG(5, 6))
		for {
			select {
			case <-stop:
				done <- nil
				return
			default:
			}
			if err := exec(writer, "UPDATE bt SET v = v + 1, g = $1 WHERE id BETWEEN $2 AND $2 + 30", r.IntN(40), 1+r.IntN(400)); err != nil {
				done <- err
				return
			}
		}
	}()
	const over = "SELECT g, n, s * 2 AS s2 FROM bagg"
	var views []string
	for i := range 6 {
		name := fmt.Sprint("bover", i)
		if err := exec(conn, "CREATE MATERIALIZED VIEW "+name+" AS "+over); err != nil {
			close(stop)
			t.Fatal(err)
		}
		views = append(views, name)
	}
	close(stop)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if err := exec(conn, "FLUSH"); err != nil {
		t.Fatal(err)
	}
	want := rowsOf(t, ctx, conn, over)
	for _, name := range views {
		if got := rowsOf(t, ctx, conn, "SELECT * FROM "+name); !slices.Equal(got, want) {
			t.Fatalf("view %s has %d rows, its query %d:\n%s\nwant\n%s", name, len(got), len(want),
				strings.Join(got, "\n"), strings.Join(want, "\n"))
		}
	}
}

// TestDefaultParallelism checks what streaming_parallelism = default gives:
// the server's StreamingParallelism if set, else one actor per core
// (GOMAXPROCS); a number set in the session, and ALTER ... SET PARALLELISM
// DEFAULT, likewise.
func TestDefaultParallelism(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	for _, tc := range []struct{ server, want int }{{0, runtime.GOMAXPROCS(0)}, {3, 3}} {
		srv := testserver.Start(t, testserver.Options{StreamingParallelism: tc.server})
		conn, err := srv.Conn(ctx)
		if err != nil {
			t.Fatal(err)
		}
		actors := func(view string) int {
			t.Helper()
			var n int
			if err := conn.QueryRow(ctx, "SELECT parallelism FROM streamsql_views WHERE name = $1", view).Scan(&n); err != nil {
				t.Fatal(err)
			}
			return n
		}
		for _, s := range []string{
			"CREATE TABLE dt (id int PRIMARY KEY, g int)",
			"CREATE MATERIALIZED VIEW d1 AS SELECT g, count(*) AS n FROM dt GROUP BY g",
			"SET streaming_parallelism = 2",
			"CREATE MATERIALIZED VIEW d2 AS SELECT g, count(*) AS n FROM dt GROUP BY g",
		} {
			if _, err := conn.Exec(ctx, s); err != nil {
				t.Fatalf("%s: %v", s, err)
			}
		}
		if got := actors("d1"); got != tc.want {
			t.Errorf("server parallelism %d: a view created at default runs on %d actors, want %d", tc.server, got, tc.want)
		}
		if got := actors("d2"); got != 2 {
			t.Errorf("server parallelism %d: a view created at 2 runs on %d actors", tc.server, got)
		}
		if _, err := conn.Exec(ctx, "ALTER MATERIALIZED VIEW d2 SET PARALLELISM DEFAULT"); err != nil {
			t.Fatal(err)
		}
		if got := actors("d2"); got != tc.want {
			t.Errorf("server parallelism %d: after SET PARALLELISM DEFAULT a view runs on %d actors, want %d", tc.server, got, tc.want)
		}
		conn.Close(ctx)
		srv.Stop()
	}
}
