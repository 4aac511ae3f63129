package engine_test

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/streamsql/streamsql/internal/testserver"
)

// The queries of materialized view base before and after ALTER ... AS; the
// new one also reads small (the semi-join keeps base's columns and key).
const (
	alterOldQuery = "SELECT k, v FROM big WHERE v < 50"
	alterNewQuery = "SELECT k, v FROM big WHERE v >= 30 AND v IN (SELECT id FROM small WHERE name <> 'n7')"
)

// alterViews creates base (alterOldQuery), a view and an aggregate over it,
// and an index on it.
func alterViews(ctx context.Context, t *testing.T, conn *pgx.Conn) {
	t.Helper()
	mustExec(ctx, t, conn,
		"CREATE MATERIALIZED VIEW base AS "+alterOldQuery,
		"CREATE MATERIALIZED VIEW evens AS SELECT k, v FROM base WHERE k % 2 = 0",
		"CREATE MATERIALIZED VIEW per_v AS SELECT v, count(*) AS n, sum(k) AS s FROM base GROUP BY v",
		"CREATE INDEX base_v ON base (v)",
	)
}

// checkAlterViews checks that base, evens and per_v equal their queries
// over base's definition now, and returns whether that is the new one.
func checkAlterViews(ctx context.Context, t *testing.T, conn *pgx.Conn) (isNew bool) {
	t.Helper()
	def := queryText(ctx, t, conn, "SELECT definition FROM pg_matviews WHERE matviewname = 'base'")
	isNew = strings.Contains(def, "small")
	q := alterOldQuery
	if isNew {
		q = alterNewQuery
	}
	for _, c := range []struct{ got, want string }{
		{"SELECT k, v FROM base ORDER BY k", q + " ORDER BY k"},
		{"SELECT k, v FROM evens ORDER BY k", "SELECT k, v FROM (" + q + ") b WHERE k % 2 = 0 ORDER BY k"},
		{"SELECT v, n, s FROM per_v ORDER BY v", "SELECT v, count(*), sum(k) FROM (" + q + ") b GROUP BY v ORDER BY v"},
		{"SELECT count(*) FROM base WHERE v = 40", "SELECT count(*) FROM (" + q + ") b WHERE v = 40"}, // the index
	} {
		got, want := queryText(ctx, t, conn, c.got), queryText(ctx, t, conn, c.want)
		if got != want {
			t.Fatalf("(new query: %v) %s differs from its query (%d and %d bytes)", isNew, c.got, len(got), len(want))
		}
	}
	return isNew
}

// alterWrites changes big and small until stop is closed, then reports
// the writes it made.
func alterWrites(ctx context.Context, t *testing.T, srv *testserver.Server, stop <-chan struct{}) (wait func() int) {
	var wg sync.WaitGroup
	n := 0
	wg.Add(1)
	go func() {
		defer wg.Done()
		c, err := srv.Conn(ctx)
		if err != nil {
			return
		}
		defer c.Close(context.Background())
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			k := (i*7919)%60000 + 1
			var stmt string
			switch i % 5 {
			case 0:
				stmt = fmt.Sprintf("UPDATE big SET v = (v + 17) %% 97 WHERE k = %d", k)
			case 1:
				stmt = fmt.Sprintf("DELETE FROM big WHERE k = %d", k+1)
			case 2:
				stmt = fmt.Sprintf("INSERT INTO big VALUES (%d, %d) ON CONFLICT (k) DO UPDATE SET v = excluded.v", 100000+i, i%97)
			case 3:
				stmt = fmt.Sprintf("UPDATE small SET name = 'n%d' WHERE id = %d", i%11, i%51)
			default:
				stmt = fmt.Sprintf("INSERT INTO big VALUES (%d, 40) ON CONFLICT (k) DO NOTHING", 200000+i)
			}
			if _, err := c.Exec(ctx, stmt); err != nil {
				return // the server was killed
			}
			n++
		}
	}()
	return func() int { wg.Wait(); return n }
}

// TestAlterViewQuery replaces the query of a view that a view and an
// aggregate are built on, while another session writes to its inputs:
// killed during the backfill, the server restarts with the old query and
// consistent views; the ALTER run again switches the view with writes
// going on, and every view equals its query over the new definition,
// also after further writes and a crash.
func TestAlterViewQuery(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	srv := testserver.Start(t, testserver.Options{Crashable: true, BarrierInterval: 10 * time.Millisecond, BackfillChunkRows: 500, StreamingParallelism: 2})
	conn := connect(ctx, t, srv)
	populate(ctx, t, conn, 60000)
	alterViews(ctx, t, conn)

	// A crash during the backfill: the old query stays.
	stop := make(chan struct{})
	wait := alterWrites(ctx, t, srv, stop)
	go func() {
		c, err := srv.Conn(ctx)
		if err != nil {
			return
		}
		defer c.Close(context.Background())
		_, _ = c.Exec(ctx, "ALTER MATERIALIZED VIEW base AS "+alterNewQuery)
	}()
	awaitJob(ctx, t, conn, "base", 5000)
	// The old dataflow serves reads meanwhile.
	if _, err := conn.Exec(ctx, "SELECT count(*) FROM base"); err != nil {
		t.Fatalf("reading base during the ALTER: %v", err)
	}
	if err := srv.Kill(); err != nil {
		t.Fatal(err)
	}
	close(stop)
	wait()
	conn = connect(ctx, t, srv)
	if jobRows(ctx, t, conn, "base") != -1 {
		t.Fatal("the interrupted ALTER's backfill is listed after the restart")
	}
	if checkAlterViews(ctx, t, conn) {
		t.Fatal("the ALTER interrupted by a crash took effect")
	}
	// small is no dependency of base yet.
	if _, err := conn.Exec(ctx, "ALTER TABLE small RENAME COLUMN name TO label"); err != nil {
		t.Fatalf("small is still a dependency after the interrupted ALTER: %v", err)
	}
	mustExec(ctx, t, conn, "ALTER TABLE small RENAME COLUMN label TO name")

	// The switch with writes going on.
	stop = make(chan struct{})
	wait = alterWrites(ctx, t, srv, stop)
	mustExec(ctx, t, conn, "ALTER MATERIALIZED VIEW base AS "+alterNewQuery)
	close(stop)
	if n := wait(); n < 10 {
		t.Fatalf("only %d writes during the ALTER", n)
	}
	if !checkAlterViews(ctx, t, conn) {
		t.Fatal("the ALTER did not take effect")
	}
	if _, err := conn.Exec(ctx, "DROP TABLE small"); sqlState(err) != "2BP01" {
		t.Fatalf("DROP TABLE small, now read by base: %v", err)
	}
	mustExec(ctx, t, conn,
		"UPDATE big SET v = 33 WHERE k % 10 = 3",
		"UPDATE small SET name = 'n7' WHERE id = 33",
		"DELETE FROM small WHERE id = 40",
		"FLUSH")
	checkAlterViews(ctx, t, conn)
	if err := srv.Kill(); err != nil {
		t.Fatal(err)
	}
	conn = connect(ctx, t, srv)
	if !checkAlterViews(ctx, t, conn) {
		t.Fatal("the new query is lost after a crash")
	}
	mustExec(ctx, t, conn, "INSERT INTO small VALUES (40, 'again')", "UPDATE big SET v = 40 WHERE k % 10 = 4", "FLUSH")
	checkAlterViews(ctx, t, conn)
}

// TestAlterViewQueryAroundSwitch kills the server at moments around the
// switch (as the backfill ends, and just after the ALTER returns), each
// round switching base to the query it does not have: each restart finds
// base with the old query or the new one, and the views built on it
// consistent with that one.
func TestAlterViewQueryAroundSwitch(t *testing.T) {
	alterAroundSwitch(t, "base", alterOldQuery, alterNewQuery, func(ctx context.Context, t *testing.T, conn *pgx.Conn) {
		populate(ctx, t, conn, 20000)
		alterViews(ctx, t, conn)
	}, checkAlterViews)
}

// TestAlterViewQueryParallelAroundSwitch is TestAlterViewQueryAroundSwitch
// for an aggregate on two actors with views built on it, its two queries
// both running on several actors.
func TestAlterViewQueryParallelAroundSwitch(t *testing.T) {
	alterAroundSwitch(t, "per_v", parOldQuery, parNewQuery, func(ctx context.Context, t *testing.T, conn *pgx.Conn) {
		populate(ctx, t, conn, 20000)
		alterParallelViews(ctx, t, conn)
	}, checkAlterParallelViews)
}

// alterAroundSwitch runs the rounds of TestAlterViewQueryAroundSwitch on
// view, which setup creates with oldQuery, on a server whose views run on
// two actors; check checks the views and reports whether view has newQuery.
func alterAroundSwitch(t *testing.T, view, oldQuery, newQuery string, setup func(context.Context, *testing.T, *pgx.Conn), check func(context.Context, *testing.T, *pgx.Conn) bool) {
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	srv := testserver.Start(t, testserver.Options{Crashable: true, BarrierInterval: 5 * time.Millisecond, BackfillChunkRows: 2000, StreamingParallelism: 2})
	conn := connect(ctx, t, srv)
	setup(ctx, t, conn)
	isNew := false
	switched := 0
	const rounds = 6
	for round := 0; round < rounds; round++ {
		query := newQuery
		if isNew {
			query = oldQuery
		}
		stop := make(chan struct{})
		wait := alterWrites(ctx, t, srv, stop)
		res := make(chan error, 1)
		go func() {
			c, err := srv.Conn(ctx)
			if err != nil {
				res <- err
				return
			}
			defer c.Close(context.Background())
			_, err = c.Exec(ctx, "ALTER MATERIALIZED VIEW "+view+" AS "+query)
			res <- err
		}()
		var err error
		if round%3 == 2 {
			err = <-res // kill right after the switch
		} else {
			// Kill once the backfill is listed and then gone (the switch
			// under way), or once the ALTER returned.
			listed, returned := false, false
			for !returned && (!listed || jobRows(ctx, t, conn, view) != -1) {
				listed = listed || jobRows(ctx, t, conn, view) != -1
				select {
				case err = <-res:
					returned = true
				case <-time.After(time.Millisecond):
				}
			}
		}
		if err != nil {
			t.Fatalf("round %d: %v", round, err)
		}
		if err := srv.Kill(); err != nil {
			t.Fatal(err)
		}
		close(stop)
		wait()
		conn = connect(ctx, t, srv)
		now := check(ctx, t, conn)
		if now != isNew {
			switched++
		} else if round%3 == 2 {
			t.Fatalf("round %d: the ALTER returned, and its query is lost after a crash", round)
		}
		isNew = now
	}
	t.Logf("%d of %d ALTERs killed around their switch took effect", switched, rounds)
}

// TestAlterViewQueryCancel cancels an ALTER ... AS during its backfill: the
// view keeps its old query, and the new query's inputs are no dependencies.
func TestAlterViewQueryCancel(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	srv := testserver.Start(t, testserver.Options{BarrierInterval: 10 * time.Millisecond, BackfillChunkRows: 200})
	conn := connect(ctx, t, srv)
	populate(ctx, t, conn, 50000)
	alterViews(ctx, t, conn)
	c := connect(ctx, t, srv)
	qctx, qcancel := context.WithCancel(ctx)
	res := make(chan error, 1)
	go func() {
		_, err := c.Exec(qctx, "ALTER MATERIALIZED VIEW base AS "+alterNewQuery)
		res <- err
	}()
	awaitJob(ctx, t, conn, "base", 1000)
	qcancel()
	if err := <-res; err == nil {
		t.Fatal("the canceled ALTER succeeded")
	}
	for jobRows(ctx, t, conn, "base") != -1 {
		if ctx.Err() != nil {
			t.Fatal("the canceled ALTER's job is still listed")
		}
		time.Sleep(5 * time.Millisecond)
	}
	mustExec(ctx, t, conn, "UPDATE big SET v = 1 WHERE k % 9 = 0", "FLUSH")
	if checkAlterViews(ctx, t, conn) {
		t.Fatal("the canceled ALTER took effect")
	}
	mustExec(ctx, t, conn, "DROP TABLE small")
}

// TestAlterViewQuerySubscription reads the change log of a subscription
// over a view whose query is replaced: the switch is one epoch holding
// exactly the difference, and the log from its start rebuilds the view.
func TestAlterViewQuerySubscription(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	srv := testserver.Start(t, testserver.Options{})
	conn := connect(ctx, t, srv)
	mustExec(ctx, t, conn,
		"CREATE TABLE t (k int PRIMARY KEY, v text)",
		"INSERT INTO t SELECT g, (g % 8)::text FROM generate_series(1, 10) AS g",
		"CREATE MATERIALIZED VIEW mv AS SELECT k, v FROM t WHERE v < '5'",
		"CREATE SUBSCRIPTION s FROM mv",
		"ALTER MATERIALIZED VIEW mv AS SELECT k, v FROM t WHERE v >= '3'",
		"INSERT INTO t VALUES (11, '9'), (12, '1')",
	)
	mustExec(ctx, t, conn, "DECLARE all_changes SUBSCRIPTION CURSOR FOR s SINCE 0")
	got, _ := fetchChanges(ctx, t, conn, "FETCH 100 FROM all_changes WITH (timeout = '100ms')")
	rows := map[string]string{}
	byEpoch := map[string][]string{}
	var epochs []string
	for _, c := range got {
		if len(byEpoch[c[0]]) == 0 {
			epochs = append(epochs, c[0])
		}
		byEpoch[c[0]] = append(byEpoch[c[0]], c[1]+" "+c[2]+" "+c[3])
		if strings.HasSuffix(c[1], "Delete") {
			delete(rows, c[2])
		} else {
			rows[c[2]] = c[3]
		}
	}
	if len(epochs) != 3 {
		t.Fatalf("the log has %d epochs, want the first rows, the switch, the insert: %v", len(epochs), got)
	}
	switched := byEpoch[epochs[1]]
	sort.Strings(switched)
	if s := strings.Join(switched, "; "); s != "Delete 1 1; Delete 10 2; Delete 2 2; Delete 8 0; Delete 9 1; Insert 5 5; Insert 6 6; Insert 7 7" {
		t.Fatalf("the switch's epoch: %s", s)
	}
	var b strings.Builder
	keys := make([]string, 0, len(rows))
	for k := range rows {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		return len(keys[i]) < len(keys[j]) || len(keys[i]) == len(keys[j]) && keys[i] < keys[j]
	})
	for _, k := range keys {
		fmt.Fprintln(&b, k, rows[k])
	}
	if want := queryText(ctx, t, conn, "SELECT k, v FROM mv ORDER BY k"); b.String() != want {
		t.Fatalf("the log rebuilds\n%s\nthe view is\n%s", b.String(), want)
	}
}

// TestAlterViewQueryPrivileges: only the view's owner may replace its
// query, and only with a query over what the owner may read.
func TestAlterViewQueryPrivileges(t *testing.T) {
	ctx := context.Background()
	srv := testserver.Start(t, testserver.Options{SuperuserPassword: "pw"})
	f := &authFixture{t: t, srv: srv}
	root := f.connect("root", "pw")
	execOK(t, root,
		"CREATE TABLE t (k int PRIMARY KEY, v int)",
		"INSERT INTO t VALUES (1, 10), (2, 20)",
		"CREATE MATERIALIZED VIEW mv AS SELECT k, v FROM t",
		"CREATE ROLE alice LOGIN PASSWORD 'a'",
		"GRANT CREATE ON SCHEMA public TO alice")
	alice := f.connect("alice", "a")
	execOK(t, alice,
		"CREATE TABLE mine (k int PRIMARY KEY, v int)",
		"INSERT INTO mine VALUES (3, 30)",
		"CREATE MATERIALIZED VIEW mine_v AS SELECT k, v FROM mine")
	_, err := alice.Exec(ctx, "ALTER MATERIALIZED VIEW mv AS SELECT k, v FROM mine")
	wantSQLState(t, err, "42501")
	_, err = alice.Exec(ctx, "ALTER MATERIALIZED VIEW mine_v AS SELECT k, v FROM t")
	wantSQLState(t, err, "42501")
	execOK(t, root, "GRANT SELECT ON t TO alice")
	execOK(t, alice, "ALTER MATERIALIZED VIEW mine_v AS SELECT k, v FROM t WHERE v > 10")
	if got := queryText(ctx, t, alice, "SELECT k, v FROM mine_v"); got != "2 20\n" {
		t.Fatalf("mine_v after the ALTER: %q", got)
	}
}

// The queries of the aggregate per_v before and after ALTER ... AS in
// TestAlterViewQueryParallel: both run their HashAgg on several actors.
const (
	parOldQuery = "SELECT v, count(*) AS n, sum(k) AS s FROM big WHERE v < 50 GROUP BY v"
	parNewQuery = "SELECT big.v, count(*) AS n, sum(big.k) AS s FROM big JOIN small ON big.v = small.id WHERE small.name <> 'n7' GROUP BY big.v"
)

// alterParallelViews creates per_v (parOldQuery) and views built on it: a
// filter, an aggregate that runs on several actors too and one that runs
// on one.
func alterParallelViews(ctx context.Context, t *testing.T, conn *pgx.Conn) {
	t.Helper()
	mustExec(ctx, t, conn,
		"CREATE MATERIALIZED VIEW per_v AS "+parOldQuery,
		"CREATE MATERIALIZED VIEW wide AS SELECT v, n FROM per_v WHERE n > 400",
		"CREATE MATERIALIZED VIEW by_n AS SELECT n % 5 AS b, count(*) AS c, sum(s) AS s FROM per_v GROUP BY n % 5",
		"CREATE MATERIALIZED VIEW totals AS SELECT count(*) AS g, sum(n) AS r FROM per_v",
	)
}

// checkAlterParallelViews checks that per_v and the views built on it equal
// their queries over per_v's definition now, and returns whether that is
// parNewQuery.
func checkAlterParallelViews(ctx context.Context, t *testing.T, conn *pgx.Conn) (isNew bool) {
	t.Helper()
	def := queryText(ctx, t, conn, "SELECT definition FROM pg_matviews WHERE matviewname = 'per_v'")
	isNew = strings.Contains(def, "small")
	q := parOldQuery
	if isNew {
		q = parNewQuery
	}
	for _, c := range []struct{ got, want string }{
		{"SELECT v, n, s FROM per_v ORDER BY v", q + " ORDER BY v"},
		{"SELECT v, n FROM wide ORDER BY v", "SELECT v, n FROM (" + q + ") p WHERE n > 400 ORDER BY v"},
		{"SELECT b, c, s FROM by_n ORDER BY b", "SELECT n % 5, count(*), sum(s) FROM (" + q + ") p GROUP BY n % 5 ORDER BY 1"},
		{"SELECT g, r FROM totals", "SELECT count(*), sum(n) FROM (" + q + ") p"},
	} {
		got, want := queryText(ctx, t, conn, c.got), queryText(ctx, t, conn, c.want)
		if got != want {
			t.Fatalf("(new query: %v) %s differs from its query:\n%s\nwant:\n%s", isNew, c.got, got, want)
		}
	}
	return isNew
}

// TestAlterViewQueryParallel replaces the query of an aggregate that runs
// on two actors, and that views (one of them on two actors too) are built
// on, with a join and aggregate that also runs on several actors, while
// another session writes to its inputs: killed during the backfill, the
// server restarts with the old query; the switch gives every view its
// query's rows over the new definition, also after a crash; rescaled to
// three actors, the view keeps that parallelism through a second ALTER.
func TestAlterViewQueryParallel(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	srv := testserver.Start(t, testserver.Options{Crashable: true, BarrierInterval: 10 * time.Millisecond, BackfillChunkRows: 500, StreamingParallelism: 2})
	conn := connect(ctx, t, srv)
	populate(ctx, t, conn, 40000)
	for _, q := range []string{parOldQuery, parNewQuery} {
		plan := queryText(ctx, t, conn, "EXPLAIN CREATE MATERIALIZED VIEW x AS "+q)
		if !strings.Contains(plan, "HashShard") {
			t.Fatalf("%s does not run on several actors:\n%s", q, plan)
		}
	}
	alterParallelViews(ctx, t, conn)
	parallelism := func() string {
		return strings.TrimSpace(queryText(ctx, t, conn, "SELECT parallelism FROM streamsql_views WHERE name = 'per_v'"))
	}
	if p := parallelism(); p != "2" {
		t.Fatalf("per_v runs on %s actors, want 2", p)
	}

	// A crash during the backfill: the old query stays.
	stop := make(chan struct{})
	wait := alterWrites(ctx, t, srv, stop)
	go func() {
		c, err := srv.Conn(ctx)
		if err != nil {
			return
		}
		defer c.Close(context.Background())
		_, _ = c.Exec(ctx, "ALTER MATERIALIZED VIEW per_v AS "+parNewQuery)
	}()
	awaitJob(ctx, t, conn, "per_v", 5000)
	if err := srv.Kill(); err != nil {
		t.Fatal(err)
	}
	close(stop)
	wait()
	conn = connect(ctx, t, srv)
	if checkAlterParallelViews(ctx, t, conn) {
		t.Fatal("the ALTER interrupted by a crash took effect")
	}

	// The switch with writes going on, then a crash.
	stop = make(chan struct{})
	wait = alterWrites(ctx, t, srv, stop)
	mustExec(ctx, t, conn, "ALTER MATERIALIZED VIEW per_v AS "+parNewQuery)
	close(stop)
	if n := wait(); n < 10 {
		t.Fatalf("only %d writes during the ALTER", n)
	}
	if !checkAlterParallelViews(ctx, t, conn) {
		t.Fatal("the ALTER did not take effect")
	}
	mustExec(ctx, t, conn, "UPDATE big SET v = 33 WHERE k % 10 = 3", "UPDATE small SET name = 'n7' WHERE id = 20", "FLUSH")
	checkAlterParallelViews(ctx, t, conn)
	if err := srv.Kill(); err != nil {
		t.Fatal(err)
	}
	conn = connect(ctx, t, srv)
	if !checkAlterParallelViews(ctx, t, conn) {
		t.Fatal("the new query is lost after a crash")
	}

	// Rescaled, the view keeps its parallelism through the next ALTER.
	mustExec(ctx, t, conn, "ALTER MATERIALIZED VIEW per_v SET PARALLELISM 3")
	stop = make(chan struct{})
	wait = alterWrites(ctx, t, srv, stop)
	mustExec(ctx, t, conn, "ALTER MATERIALIZED VIEW per_v AS "+parOldQuery)
	close(stop)
	wait()
	if checkAlterParallelViews(ctx, t, conn) {
		t.Fatal("the second ALTER did not take effect")
	}
	if p := parallelism(); p != "3" {
		t.Fatalf("per_v runs on %s actors after the ALTER, want 3", p)
	}
	mustExec(ctx, t, conn, "DELETE FROM big WHERE k % 7 = 0", "FLUSH")
	if err := srv.Kill(); err != nil {
		t.Fatal(err)
	}
	conn = connect(ctx, t, srv)
	if checkAlterParallelViews(ctx, t, conn) {
		t.Fatal("the second ALTER is lost after a crash")
	}
}
