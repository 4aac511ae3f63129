package engine_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/streamsql/streamsql/internal/testserver"
)

// fetchChanges returns the rows of a FETCH of a subscription cursor (epoch,
// op, k, v) and the last epoch among them (0 without rows).
func fetchChanges(ctx context.Context, t *testing.T, conn *pgx.Conn, fetch string) ([][]string, int64) {
	t.Helper()
	rows, err := conn.Query(ctx, fetch)
	if err != nil {
		t.Fatalf("%s: %v", fetch, err)
	}
	defer rows.Close()
	var out [][]string
	var last int64
	for rows.Next() {
		var epoch int64
		var op, v string
		var k int32
		if err := rows.Scan(&epoch, &op, &k, &v); err != nil {
			t.Fatal(err)
		}
		out = append(out, []string{fmt.Sprint(epoch), op, fmt.Sprint(k), v})
		last = epoch
	}
	if err := rows.Err(); err != nil {
		t.Fatalf("%s: %v", fetch, err)
	}
	return out, last
}

// TestSubscription retains a view's changes in a subscription and reads
// them with subscription cursors and SUBSCRIBE ... AS OF, across a restart:
// SINCE an epoch resumes exactly after it.
func TestSubscription(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	srv := testserver.Start(t, testserver.Options{})
	conn := connect(ctx, t, srv)
	setupSubscribe(ctx, t, conn)
	// Without a retained history of its own, AS OF on mv reads the
	// subscription's log.
	mustExec(ctx, t, conn, "ALTER MATERIALIZED VIEW mv SET (retain_history = 0)")
	mustExec(ctx, t, conn, "CREATE SUBSCRIPTION s FROM mv WITH (retention = '1h')",
		"INSERT INTO t VALUES (3, 'c'), (300, 'filtered')",
		"UPDATE t SET v = 'B' WHERE k = 2",
		"DELETE FROM t WHERE k = 1",
	)
	mustExec(ctx, t, conn, "DECLARE all_changes SUBSCRIPTION CURSOR FOR s SINCE 0")
	got, last := fetchChanges(ctx, t, conn, "FETCH 100 FROM all_changes")
	if s := strings.Join(epochChanges(t, got), "; "); s != "Insert 1 a; Insert 2 b; Insert 3 c; UpdateDelete 2 b; UpdateInsert 2 B; Delete 1 a" {
		t.Fatalf("the log from its start: %s", s)
	}
	// A cursor without SINCE starts after the last committed epoch.
	mustExec(ctx, t, conn, "DECLARE now SUBSCRIPTION CURSOR FOR s")
	if got, _ := fetchChanges(ctx, t, conn, "FETCH 10 now WITH (timeout = '100ms')"); len(got) != 0 {
		t.Fatalf("a new cursor returned old changes: %v", got)
	}
	mustExec(ctx, t, conn, "INSERT INTO t VALUES (4, 'd')")
	if got, _ := fetchChanges(ctx, t, conn, "FETCH 10 now"); len(got) != 1 || got[0][1] != "Insert" || got[0][2] != "4" {
		t.Fatalf("a new cursor: %v", got)
	}
	conn.Close(ctx)
	if err := srv.Restart(); err != nil {
		t.Fatal(err)
	}
	conn = connect(ctx, t, srv)
	mustExec(ctx, t, conn, "UPDATE t SET v = 'cc' WHERE k = 3", "DELETE FROM t WHERE k = 4")
	mustExec(ctx, t, conn, fmt.Sprintf("DECLARE resume SUBSCRIPTION CURSOR FOR s SINCE %d", last))
	got, _ = fetchChanges(ctx, t, conn, "FETCH ALL resume")
	if s := strings.Join(epochChanges(t, got), "; "); s != "Insert 4 d; UpdateDelete 3 c; UpdateInsert 3 cc; Delete 4 d" {
		t.Fatalf("resumed after epoch %d: %s", last, s)
	}
	// SUBSCRIBE ... AS OF reads the same log and then follows it.
	sc := connectMode(t, ctx, srv.URL, pgx.QueryExecModeSimpleProtocol)
	rows, errc := streamChanges(ctx, t, sc, fmt.Sprintf("SUBSCRIBE TO mv WITH (SNAPSHOT = false) AS OF %d", last))
	if s := strings.Join(epochChanges(t, nextChanges(t, rows, 4)), "; "); s != "Insert 4 d; UpdateDelete 3 c; UpdateInsert 3 cc; Delete 4 d" {
		t.Fatalf("SUBSCRIBE AS OF %d: %s", last, s)
	}
	mustExec(ctx, t, conn, "INSERT INTO t VALUES (5, 'e')")
	if got := nextChanges(t, rows, 1)[0]; got[1] != "Insert" || got[2] != "5" {
		t.Fatalf("SUBSCRIBE AS OF, live: %v", got)
	}
	if err := sc.PgConn().CancelRequest(ctx); err != nil {
		t.Fatal(err)
	}
	if err := <-errc; sqlState(err) != "57014" {
		t.Fatalf("after cancel: %v", err)
	}
	if _, err := conn.Exec(ctx, "SUBSCRIBE mv AS OF 1"); sqlState(err) != "0A000" {
		t.Fatalf("AS OF with a snapshot: %v, want 0A000", err)
	}
	mustExec(ctx, t, conn, "DROP SUBSCRIPTION s")
	if _, err := conn.Exec(ctx, "DECLARE again SUBSCRIPTION CURSOR FOR s"); sqlState(err) != "42704" {
		t.Fatalf("cursor for a dropped subscription: %v, want 42704", err)
	}
	if _, err := conn.Exec(ctx, "DROP SUBSCRIPTION s"); sqlState(err) != "42704" {
		t.Fatalf("DROP of a dropped subscription: %v, want 42704", err)
	}
	mustExec(ctx, t, conn, "DROP SUBSCRIPTION IF EXISTS s")
}

// TestSubscriptionRetention: epochs older than the retention are trimmed;
// reading from before them fails with 55000, from after them works.
func TestSubscriptionRetention(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	srv := testserver.Start(t, testserver.Options{})
	conn := connect(ctx, t, srv)
	setupSubscribe(ctx, t, conn)
	mustExec(ctx, t, conn, "CREATE SUBSCRIPTION s FROM mv WITH (retention = '1s')")
	time.Sleep(1500 * time.Millisecond)
	mustExec(ctx, t, conn, "INSERT INTO t VALUES (3, 'c')")
	var err error
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		if _, err = conn.Exec(ctx, "DECLARE old SUBSCRIPTION CURSOR FOR s SINCE 0"); err != nil {
			break
		}
		mustExec(ctx, t, conn, "CLOSE old")
	}
	if sqlState(err) != "55000" || !strings.Contains(err.Error(), "no longer retains") {
		t.Fatalf("SINCE 0 after the retention: %v, want 55000", err)
	}
	mustExec(ctx, t, conn, "DECLARE recent SUBSCRIPTION CURSOR FOR s")
	mustExec(ctx, t, conn, "INSERT INTO t VALUES (4, 'd')")
	if got, _ := fetchChanges(ctx, t, conn, "FETCH 10 recent"); len(got) != 1 || got[0][2] != "4" {
		t.Fatalf("recent changes: %v", got)
	}
}

// TestSubscribeErrors: the SQLSTATEs of malformed or impossible SUBSCRIBE,
// FETCH and subscription statements.
func TestSubscribeErrors(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	srv := testserver.Start(t, testserver.Options{})
	conn := connectMode(t, ctx, srv.URL, pgx.QueryExecModeSimpleProtocol)
	setupSubscribe(ctx, t, conn)
	mustExec(ctx, t, conn, "CREATE SUBSCRIPTION s FROM mv")
	for _, c := range []struct{ stmt, code string }{
		{"SUBSCRIBE", "42601"},
		{"SUBSCRIBE TO nothing", "42P01"},
		{"SUBSCRIBE mv WITH (colour = 'red')", "22023"},
		{"SUBSCRIBE mv WITH (snapshot = 'maybe')", "22023"},
		{"SUBSCRIBE (SELECT random() FROM t)", "0A000"},
		{"SUBSCRIBE (SELECT * FROM t) WITH (snapshot = false) AS OF 3", "0A000"},
		{"SUBSCRIBE mv AS OF x", "42601"},
		{"SUBSCRIBE mv extra", "42601"},
		{"COPY (SUBSCRIBE mv) TO STDOUT (FORMAT binary)", "0A000"},
		{"DECLARE c CURSOR FOR SUBSCRIBE mv", "25P01"},
		{"FETCH 1 FROM nothing WITH (timeout = '1s')", "34000"},
		{"FETCH 1 FROM nothing WITH (timeout = 'soon')", "22023"},
		{"FETCH 1 FROM nothing WITH (wait = '1s')", "22023"},
		{"CREATE SUBSCRIPTION s2 FROM mv WITH (retention = 'forever')", "22023"},
		{"CREATE SUBSCRIPTION s2 FROM mv WITH (colour = 'red')", "22023"},
		{"CREATE SUBSCRIPTION s FROM mv", "42P07"},
		{"DECLARE c SUBSCRIPTION CURSOR FOR mv", "42704"},
		{"DECLARE c SUBSCRIPTION CURSOR FOR s SINCE later", "22023"},
		{"SELECT * FROM s", "42809"},
	} {
		if _, err := conn.Exec(ctx, c.stmt); sqlState(err) != c.code {
			t.Errorf("%s: %v, want %s", c.stmt, err, c.code)
		}
	}
	// Describe of a SUBSCRIBE over the extended protocol.
	ext := connectMode(t, ctx, srv.URL, pgx.QueryExecModeDescribeExec)
	mustExec(ctx, t, ext, "BEGIN")
	if _, err := ext.Exec(ctx, "DECLARE c CURSOR FOR SUBSCRIBE s"); err != nil {
		t.Fatal(err)
	}
	if _, err := ext.Exec(ctx, "FETCH 1 c WITH (timeout = '10ms')"); err != nil {
		t.Fatal(err)
	}
}
