package engine_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/streamsql/streamsql/internal/testserver"
)

// queryText returns the rows of q, one line per row.
func queryText(ctx context.Context, t *testing.T, conn *pgx.Conn, q string) string {
	t.Helper()
	rows, err := conn.Query(ctx, q)
	if err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	defer rows.Close()
	var b strings.Builder
	for rows.Next() {
		vals, err := rows.Values()
		if err != nil {
			t.Fatal(err)
		}
		fmt.Fprintln(&b, vals...)
	}
	if err := rows.Err(); err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	return b.String()
}

func connect(ctx context.Context, t *testing.T, srv *testserver.Server) *pgx.Conn {
	t.Helper()
	conn, err := srv.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close(context.Background()) })
	return conn
}

// jobRows returns the rows done of the backfill of view, -1 if it is not
// listed.
func jobRows(ctx context.Context, t *testing.T, conn *pgx.Conn, view string) int64 {
	t.Helper()
	var n int64
	err := conn.QueryRow(ctx, "SELECT rows_done FROM streamsql_jobs WHERE view = $1", view).Scan(&n)
	if errors.Is(err, pgx.ErrNoRows) {
		return -1
	}
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// awaitJob waits until the backfill of view has done more than rows rows.
func awaitJob(ctx context.Context, t *testing.T, conn *pgx.Conn, view string, rows int64) {
	t.Helper()
	for jobRows(ctx, t, conn, view) <= rows {
		if ctx.Err() != nil {
			t.Fatalf("backfill of %s does not reach %d rows", view, rows)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func sqlState(err error) string {
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		return pe.Code
	}
	return ""
}

const backfillRows = 200000

func populate(ctx context.Context, t *testing.T, conn *pgx.Conn, rows int) {
	t.Helper()
	mustExec(ctx, t, conn,
		"CREATE TABLE big (k bigint PRIMARY KEY, v bigint)",
		"CREATE TABLE small (id bigint PRIMARY KEY, name text)",
		fmt.Sprintf("INSERT INTO big SELECT g, g %% 97 FROM generate_series(1, %d) AS g", rows),
		"INSERT INTO small SELECT g, 'n' || g FROM generate_series(0, 50) AS g",
	)
}

// TestBackfillDoesNotBlockWrites creates a view over a table of 200k rows
// while other sessions insert into an unrelated table and change the
// backfilled table itself: the unrelated inserts commit while the CREATE
// runs, and the view ends equal to its query.
func TestBackfillDoesNotBlockWrites(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	srv := testserver.Start(t, testserver.Options{BarrierInterval: 20 * time.Millisecond, BackfillChunkRows: 2000})
	conn := connect(ctx, t, srv)
	populate(ctx, t, conn, backfillRows)
	mustExec(ctx, t, conn, "CREATE TABLE other (i int)")

	var created atomic.Bool
	var during, jobSeen atomic.Int64
	var wg sync.WaitGroup
	stop := make(chan struct{})
	wg.Add(2)
	go func() { // unrelated inserts, and the job's progress
		defer wg.Done()
		c := connect(ctx, t, srv)
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			if _, err := c.Exec(ctx, fmt.Sprintf("INSERT INTO other VALUES (%d)", i)); err != nil {
				t.Error(err)
				return
			}
			if !created.Load() {
				during.Add(1)
				if jobRows(ctx, t, c, "agg") > 0 {
					jobSeen.Add(1)
				}
			}
		}
	}()
	go func() { // changes to the backfilled table, below and above any position
		defer wg.Done()
		c := connect(ctx, t, srv)
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			k := (i * 7919) % backfillRows
			var err error
			switch i % 4 {
			case 0:
				_, err = c.Exec(ctx, fmt.Sprintf("UPDATE big SET v = v + 1 WHERE k = %d", k))
			case 1:
				_, err = c.Exec(ctx, fmt.Sprintf("DELETE FROM big WHERE k = %d", k+1))
			case 2:
				_, err = c.Exec(ctx, fmt.Sprintf("INSERT INTO big VALUES (%d, %d)", backfillRows+i, i%97))
			default:
				_, err = c.Exec(ctx, fmt.Sprintf("UPDATE big SET v = 5 WHERE k = %d", backfillRows-k))
			}
			if err != nil && !strings.Contains(err.Error(), "duplicate") {
				t.Error(err)
				return
			}
		}
	}()
	_, err := conn.Exec(ctx, "CREATE MATERIALIZED VIEW agg AS SELECT v, count(*) AS n, sum(k) AS s FROM big GROUP BY v")
	created.Store(true)
	close(stop)
	wg.Wait()
	if err != nil {
		t.Fatal(err)
	}
	if during.Load() < 5 || jobSeen.Load() < 2 {
		t.Fatalf("during the backfill: %d inserts committed, the job seen by %d of them", during.Load(), jobSeen.Load())
	}
	t.Logf("%d unrelated inserts committed during the backfill", during.Load())
	if n := jobRows(ctx, t, conn, "agg"); n != -1 {
		t.Fatalf("finished job still listed (%d rows)", n)
	}
	want := queryText(ctx, t, conn, "SELECT v, count(*), sum(k) FROM big GROUP BY v ORDER BY v")
	if got := queryText(ctx, t, conn, "SELECT v, n, s FROM agg ORDER BY v"); got != want {
		t.Fatalf("view differs from its query:\n%s\nwant\n%s", got, want)
	}
}

// TestBackfillCrash kills the server in the middle of the backfill of a join
// view and of a view over a view: the restarted server finishes them in the
// background, refusing reads meanwhile, with exact results.
func TestBackfillCrash(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	srv := testserver.Start(t, testserver.Options{Crashable: true, BarrierInterval: 10 * time.Millisecond, BackfillChunkRows: 500})
	conn := connect(ctx, t, srv)
	populate(ctx, t, conn, 60000)
	mustExec(ctx, t, conn, "CREATE MATERIALIZED VIEW base AS SELECT k, v * 2 AS w FROM big WHERE k % 3 <> 0")
	// Changes while the view is being created: part of them before the
	// crash, and committed.
	go func() {
		c, err := srv.Conn(ctx)
		if err != nil {
			return
		}
		defer c.Close(context.Background())
		_, _ = c.Exec(ctx, "CREATE MATERIALIZED VIEW j AS SELECT s.name, count(*) AS n, sum(b.w) AS sw FROM base b JOIN small s ON b.w % 51 = s.id GROUP BY s.name")
	}()
	awaitJob(ctx, t, conn, "j", 8000)
	mustExec(ctx, t, conn,
		"UPDATE big SET v = v + 1 WHERE k % 1000 = 7",
		"DELETE FROM big WHERE k % 1000 = 8",
		"INSERT INTO small VALUES (51, 'n51')",
		"DELETE FROM small WHERE id = 3",
	)
	before := jobRows(ctx, t, conn, "j")
	if err := srv.Kill(); err != nil {
		t.Fatal(err)
	}
	conn = connect(ctx, t, srv)
	after := jobRows(ctx, t, conn, "j")
	if after < 0 {
		t.Fatal("the backfill of j is not resumed after the crash")
	}
	if after > before+50000 {
		t.Fatalf("rows done %d before the crash, %d after", before, after)
	}
	if _, err := conn.Exec(ctx, "SELECT * FROM j"); sqlState(err) != "55000" && jobRows(ctx, t, conn, "j") >= 0 {
		t.Fatalf("reading j during its backfill: %v", err)
	}
	for jobRows(ctx, t, conn, "j") >= 0 {
		if ctx.Err() != nil {
			t.Fatal("the resumed backfill does not end")
		}
		time.Sleep(10 * time.Millisecond)
	}
	check := func() {
		t.Helper()
		want := queryText(ctx, t, conn, "SELECT s.name, count(*), sum(b.w) FROM (SELECT k, v * 2 AS w FROM big WHERE k % 3 <> 0) b JOIN small s ON b.w % 51 = s.id GROUP BY s.name ORDER BY 1")
		if got := queryText(ctx, t, conn, "SELECT name, n, sw FROM j ORDER BY 1"); got != want {
			t.Fatalf("view differs from its query:\n%s\nwant\n%s", got, want)
		}
	}
	check()
	mustExec(ctx, t, conn, "UPDATE big SET v = v + 5 WHERE k % 100 = 1", "DELETE FROM small WHERE id = 10", "FLUSH")
	check()
}

// TestBackfillCancel cancels a CREATE MATERIALIZED VIEW during its backfill,
// and drops another from a second session: both views and their state are
// gone.
func TestBackfillCancel(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	srv := testserver.Start(t, testserver.Options{BarrierInterval: 10 * time.Millisecond, BackfillChunkRows: 200})
	conn := connect(ctx, t, srv)
	populate(ctx, t, conn, 50000)

	for _, how := range []string{"cancel", "drop"} {
		view := "v_" + how
		c := connect(ctx, t, srv)
		qctx, qcancel := context.WithCancel(ctx)
		res := make(chan error, 1)
		go func() {
			_, err := c.Exec(qctx, "CREATE MATERIALIZED VIEW "+view+" AS SELECT v, count(*) FROM big GROUP BY v")
			res <- err
		}()
		awaitJob(ctx, t, conn, view, 1000)
		var id, done int64
		var total *int64 // NULL until counted
		var name, schema string
		var started time.Time
		var elapsed float64
		if err := conn.QueryRow(ctx, "SHOW JOBS").Scan(&id, &name, &schema, &done, &total, &started, &elapsed); err != nil || name != view || done <= 0 || elapsed <= 0 {
			t.Fatalf("SHOW JOBS: %d %s %d/%v %v (%v)", id, name, done, total, elapsed, err)
		}
		if how == "cancel" {
			qcancel()
		} else {
			mustExec(ctx, t, conn, "DROP MATERIALIZED VIEW "+view)
		}
		err := <-res
		qcancel()
		if err == nil {
			t.Fatalf("%s: CREATE succeeded", how)
		}
		if how == "drop" && sqlState(err) != "57014" {
			t.Fatalf("drop: CREATE returned %v", err)
		}
		// The cancel's drop may still be under way when the CREATE returns.
		for {
			_, err := conn.Exec(ctx, "SELECT * FROM "+view)
			if sqlState(err) == "42P01" {
				break
			}
			if ctx.Err() != nil {
				t.Fatalf("%s: view still there: %v", how, err)
			}
			time.Sleep(10 * time.Millisecond)
		}
		if n := jobRows(ctx, t, conn, view); n != -1 {
			t.Fatalf("%s: job still listed", how)
		}
		if got := queryText(ctx, t, conn, "SELECT count(*) FROM streamsql_state_tables WHERE relation = '"+view+"'"); got != "0\n" {
			t.Fatalf("%s: state tables left: %s", how, got)
		}
	}
	// The same name can be used again and backfills fully.
	mustExec(ctx, t, conn, "CREATE MATERIALIZED VIEW v_cancel AS SELECT v, count(*) AS n FROM big GROUP BY v")
	if got, want := queryText(ctx, t, conn, "SELECT v, n FROM v_cancel ORDER BY v"), queryText(ctx, t, conn, "SELECT v, count(*) FROM big GROUP BY v ORDER BY v"); got != want {
		t.Fatalf("view differs from its query:\n%s\nwant\n%s", got, want)
	}
}
