package engine_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/streamsql/streamsql/internal/testserver"
)

// change is a row of a SUBSCRIBE without PROGRESS: epoch, op, columns.
type change struct {
	epoch int64
	op    string
	cols  string
}

func parseChange(t *testing.T, vals []string) change {
	t.Helper()
	e, err := strconv.ParseInt(vals[0], 10, 64)
	if err != nil {
		t.Fatalf("epoch %q: %v", vals[0], err)
	}
	return change{epoch: e, op: vals[1], cols: strings.Join(vals[2:], " ")}
}

// streamChanges runs sql (a SUBSCRIBE) over the simple query protocol on
// conn and sends its rows to the returned channel until ctx is cancelled;
// the statement's error then arrives on errc.
func streamChanges(ctx context.Context, t *testing.T, conn *pgx.Conn, sql string) (<-chan []string, <-chan error) {
	rows := make(chan []string, 1024)
	errc := make(chan error, 1)
	go func() {
		mrr := conn.PgConn().Exec(ctx, sql)
		for mrr.NextResult() {
			rr := mrr.ResultReader()
			for rr.NextRow() {
				var vals []string
				for _, v := range rr.Values() {
					if v == nil {
						vals = append(vals, "NULL")
					} else {
						vals = append(vals, string(v))
					}
				}
				rows <- vals
			}
			if _, err := rr.Close(); err != nil {
				mrr.Close()
				errc <- err
				return
			}
		}
		errc <- mrr.Close()
	}()
	return rows, errc
}

// nextChanges reads n rows from rows, failing the test after a while.
func nextChanges(t *testing.T, rows <-chan []string, n int) [][]string {
	t.Helper()
	var out [][]string
	timeout := time.After(20 * time.Second)
	for len(out) < n {
		select {
		case r := <-rows:
			out = append(out, r)
		case <-timeout:
			t.Fatalf("got %d of %d changes: %v", len(out), n, out)
		}
	}
	return out
}

// epochChanges renders changes without their epoch, sorted within each
// run of one epoch (the order of a batch's rows is not part of the
// contract, the order of epochs is), and checks that epochs do not go back.
func epochChanges(t *testing.T, rows [][]string) []string {
	t.Helper()
	var out []string
	var last int64
	start := 0
	for i, r := range rows {
		c := parseChange(t, r)
		if c.epoch < last {
			t.Fatalf("epoch %d after %d: %v", c.epoch, last, rows)
		}
		if c.epoch != last {
			sort.Strings(out[start:])
			start = i
		}
		last = c.epoch
		out = append(out, c.op+" "+c.cols)
	}
	sort.Strings(out[start:])
	return out
}

func setupSubscribe(ctx context.Context, t *testing.T, conn *pgx.Conn) {
	mustExec(ctx, t, conn,
		"CREATE TABLE t (k int PRIMARY KEY, v text)",
		"INSERT INTO t VALUES (1, 'a'), (2, 'b')",
		"CREATE MATERIALIZED VIEW mv AS SELECT k, v FROM t WHERE k < 100",
	)
}

// TestSubscribeSimpleQuery streams a view's snapshot and then its changes
// (an insert, an update pair, a delete; a row the view filters out is not
// seen) over the simple query protocol, until the client cancels.
func TestSubscribeSimpleQuery(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	srv := testserver.Start(t, testserver.Options{})
	conn := connect(ctx, t, srv)
	setupSubscribe(ctx, t, conn)

	sc := connectMode(t, ctx, srv.URL, pgx.QueryExecModeSimpleProtocol)
	rows, errc := streamChanges(ctx, t, sc, "SUBSCRIBE TO mv")
	snap := nextChanges(t, rows, 2)
	if got, want := strings.Join(epochChanges(t, snap), "; "), "Insert 1 a; Insert 2 b"; got != want {
		t.Fatalf("snapshot: %s, want %s", got, want)
	}
	if snap[0][0] != snap[1][0] {
		t.Fatalf("snapshot rows have different epochs: %v", snap)
	}
	mustExec(ctx, t, conn,
		"INSERT INTO t VALUES (3, 'c'), (200, 'filtered')",
		"UPDATE t SET v = 'B' WHERE k = 2",
		"DELETE FROM t WHERE k = 1",
	)
	changes := nextChanges(t, rows, 4)
	for _, r := range changes {
		if c := parseChange(t, r); c.epoch <= parseChange(t, snap[0]).epoch {
			t.Fatalf("change %v is not after the snapshot's epoch %s", r, snap[0][0])
		}
	}
	got := strings.Join(epochChanges(t, changes), "; ")
	if want := "Insert 3 c; UpdateDelete 2 b; UpdateInsert 2 B; Delete 1 a"; got != want {
		t.Fatalf("changes: %s\nwant %s", got, want)
	}
	if err := sc.PgConn().CancelRequest(ctx); err != nil {
		t.Fatal(err)
	}
	if err := <-errc; sqlState(err) != "57014" {
		t.Fatalf("after cancel: %v, want 57014", err)
	}
	// The subscription's dataflow is gone; the view goes on.
	mustExec(ctx, t, conn, "INSERT INTO t VALUES (4, 'd')")
	if got := queryText(ctx, t, conn, "SELECT count(*) FROM mv"); got != "3\n" {
		t.Fatalf("mv has %q rows", got)
	}
}

// TestSubscribeCursor reads a SUBSCRIBE over a query through a cursor, with
// pgx's extended protocol and with the simple one: FETCH waits for a change
// (or its timeout), SNAPSHOT = false starts after the current rows, and
// PROGRESS rows say an epoch is complete.
func TestSubscribeCursor(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	srv := testserver.Start(t, testserver.Options{})
	conn := connect(ctx, t, srv)
	setupSubscribe(ctx, t, conn)
	for _, mode := range []pgx.QueryExecMode{pgx.QueryExecModeCacheStatement, pgx.QueryExecModeSimpleProtocol} {
		t.Run(mode.String(), func(t *testing.T) {
			sc := connectMode(t, ctx, srv.URL, mode)
			mustExec(ctx, t, sc, "BEGIN",
				"DECLARE c CURSOR FOR SUBSCRIBE (SELECT k, upper(v) AS v FROM t WHERE k > 1) WITH (SNAPSHOT = false, PROGRESS = true)")
			start := time.Now()
			if got := queryText(ctx, t, sc, "FETCH 10 c WITH (timeout = '50ms')"); strings.Contains(got, "Insert") {
				t.Fatalf("SNAPSHOT = false returned rows: %s", got)
			}
			if d := time.Since(start); d > 5*time.Second {
				t.Fatalf("FETCH with a timeout took %v", d)
			}
			mustExec(ctx, t, conn, "INSERT INTO t VALUES (10, 'x')", "DELETE FROM t WHERE k = 10")
			var seen []string
			for len(seen) < 2 {
				rows, err := sc.Query(ctx, "FETCH ALL c")
				if err != nil {
					t.Fatal(err)
				}
				for rows.Next() {
					var epoch int64
					var progressed bool
					var op, v *string
					var k *int32
					if err := rows.Scan(&epoch, &progressed, &op, &k, &v); err != nil {
						t.Fatal(err)
					}
					if progressed != (op == nil) {
						t.Fatalf("row with progressed %v and op %v", progressed, op)
					}
					if !progressed {
						seen = append(seen, fmt.Sprintf("%s %d %s", *op, *k, *v))
					}
				}
				if err := rows.Err(); err != nil {
					t.Fatal(err)
				}
			}
			if got := strings.Join(seen, "; "); got != "Insert 10 X; Delete 10 X" {
				t.Fatalf("changes %s", got)
			}
			if _, err := sc.Exec(ctx, "FETCH BACKWARD 1 c"); sqlState(err) != "55000" {
				t.Fatalf("FETCH BACKWARD: %v", err)
			}
			mustExec(ctx, t, sc, "ROLLBACK")
		})
	}
}

// syncBuffer is a bytes.Buffer safe for one writer and one reader.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// TestSubscribeCopy streams COPY (SUBSCRIBE ...) TO STDOUT, as psql's
// users run it, in text and CSV.
func TestSubscribeCopy(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	srv := testserver.Start(t, testserver.Options{})
	conn := connect(ctx, t, srv)
	setupSubscribe(ctx, t, conn)
	for _, c := range []struct{ stmt, want, change string }{
		{"COPY (SUBSCRIBE mv) TO STDOUT", "\tInsert\t1\ta\n", "\tInsert\t3\tc\n"},
		{"COPY (SUBSCRIBE TO mv WITH (snapshot = false)) TO STDOUT WITH (FORMAT csv, HEADER)", "epoch,op,k,v\n", ",Insert,"},
	} {
		var out syncBuffer
		done := make(chan error, 1)
		sc := connectMode(t, ctx, srv.URL, pgx.QueryExecModeSimpleProtocol)
		go func() {
			_, err := sc.PgConn().CopyTo(ctx, &out, c.stmt)
			done <- err
		}()
		deadline := time.Now().Add(20 * time.Second)
		for k := 3; !strings.Contains(out.String(), c.want) || !strings.Contains(out.String(), c.change); k++ {
			if time.Now().After(deadline) {
				t.Fatalf("%s: got %q", c.stmt, out.String())
			}
			mustExec(ctx, t, conn, fmt.Sprintf("INSERT INTO t VALUES (%d, 'c')", k))
			time.Sleep(20 * time.Millisecond)
		}
		if err := sc.PgConn().CancelRequest(ctx); err != nil {
			t.Fatal(err)
		}
		if err := <-done; sqlState(err) != "57014" {
			t.Fatalf("%s after cancel: %v", c.stmt, err)
		}
		mustExec(ctx, t, conn, "DELETE FROM t WHERE k > 2")
	}
}

// TestSubscribeSlowSubscriber: a subscriber that does not read does not
// slow the writers or the view; once its backlog is full it is told so
// (53400) and detached.
func TestSubscribeSlowSubscriber(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	srv := testserver.Start(t, testserver.Options{})
	conn := connect(ctx, t, srv)
	setupSubscribe(ctx, t, conn)
	slow := connectMode(t, ctx, srv.URL, pgx.QueryExecModeSimpleProtocol)
	mustExec(ctx, t, slow, "SET subscribe_backlog_rows = 50", "BEGIN", "DECLARE c CURSOR FOR SUBSCRIBE t")
	start := time.Now()
	for i := range 20 {
		mustExec(ctx, t, conn, fmt.Sprintf("INSERT INTO t SELECT g, 'x' FROM generate_series(%d, %d) AS g", 1000+10*i, 1009+10*i))
	}
	if d := time.Since(start); d > 10*time.Second {
		t.Fatalf("20 inserts took %v with a slow subscriber", d)
	}
	if got := queryText(ctx, t, conn, "SELECT count(*) FROM t"); got != "202\n" {
		t.Fatalf("t has %q rows", got)
	}
	_, err := slow.Exec(ctx, "FETCH ALL c")
	if sqlState(err) != "53400" || !strings.Contains(err.Error(), "fell behind") {
		t.Fatalf("FETCH of a full backlog: %v, want 53400", err)
	}
	mustExec(ctx, t, slow, "ROLLBACK")
	// A subscriber that reads gets every change.
	mustExec(ctx, t, slow, "BEGIN", "DECLARE d CURSOR FOR SUBSCRIBE (SELECT count(*) AS n FROM t)")
	if got := queryText(ctx, t, slow, "FETCH 1 d"); !strings.HasSuffix(got, "Insert 202\n") {
		t.Fatalf("count snapshot: %q", got)
	}
	mustExec(ctx, t, conn, "DELETE FROM t WHERE k >= 1000")
	if got := queryText(ctx, t, slow, "FETCH 2 d"); !strings.Contains(got, "UpdateDelete 202\n") || !strings.Contains(got, "UpdateInsert 2\n") {
		t.Fatalf("count change: %q", got)
	}
}

// TestSubscribeAfterRestart: after a restart a SUBSCRIBE starts from the
// view's restored rows; AS OF an earlier epoch is refused for a view
// without a subscription (its past changes are not retained).
func TestSubscribeAfterRestart(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	srv := testserver.Start(t, testserver.Options{})
	conn := connect(ctx, t, srv)
	setupSubscribe(ctx, t, conn)
	mustExec(ctx, t, conn, "UPDATE t SET v = 'bb' WHERE k = 2", "INSERT INTO t VALUES (5, 'e')", "DELETE FROM t WHERE k = 1")
	conn.Close(ctx)
	// A SUBSCRIBE streaming when the server shuts down ends at once.
	rows, errc := streamChanges(ctx, t, connectMode(t, ctx, srv.URL, pgx.QueryExecModeSimpleProtocol), "SUBSCRIBE mv")
	nextChanges(t, rows, 2)
	start := time.Now()
	if err := srv.Restart(); err != nil {
		t.Fatal(err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Fatalf("restart with a running SUBSCRIBE took %v", d)
	}
	if err := <-errc; sqlState(err) != "57P01" {
		t.Fatalf("SUBSCRIBE at shutdown: %v, want 57P01", err)
	}
	conn = connect(ctx, t, srv)
	mustExec(ctx, t, conn, "BEGIN", "DECLARE c CURSOR FOR SUBSCRIBE mv")
	fetched, err := conn.Query(ctx, "FETCH ALL c")
	if err != nil {
		t.Fatal(err)
	}
	var got [][]string
	for rows := fetched; rows.Next(); {
		var epoch int64
		var op, v string
		var k int32
		if err := fetched.Scan(&epoch, &op, &k, &v); err != nil {
			t.Fatal(err)
		}
		got = append(got, []string{fmt.Sprint(epoch), op, fmt.Sprint(k), v})
	}
	if err := fetched.Err(); err != nil {
		t.Fatal(err)
	}
	if s := strings.Join(epochChanges(t, got), "; "); s != "Insert 2 bb; Insert 5 e" {
		t.Fatalf("snapshot after restart: %s", s)
	}
	mustExec(ctx, t, conn, "ROLLBACK")
	if _, err := conn.Exec(ctx, "SUBSCRIBE mv WITH (SNAPSHOT = false) AS OF 1"); sqlState(err) != "55000" {
		t.Fatalf("AS OF: %v", err)
	}
}

// TestSubscribePsql streams COPY (SUBSCRIBE ...) TO STDOUT to the real
// psql until it is interrupted (Ctrl-C sends a cancel request).
func TestSubscribePsql(t *testing.T) {
	psql, err := exec.LookPath("psql")
	if err != nil {
		t.Skip("psql is not on PATH")
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	srv := testserver.Start(t, testserver.Options{})
	conn := connect(ctx, t, srv)
	setupSubscribe(ctx, t, conn)
	cmd := exec.CommandContext(ctx, psql, srv.URL, "-X", "-c", "COPY (SUBSCRIBE TO mv) TO STDOUT")
	cmd.Env = append(os.Environ(), "PSQLRC=/dev/null", "PGCONNECT_TIMEOUT=10")
	var stdout, stderr syncBuffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	time.Sleep(500 * time.Millisecond)
	mustExec(ctx, t, conn, "INSERT INTO t VALUES (3, 'c')", "DELETE FROM t WHERE k = 1")
	time.Sleep(500 * time.Millisecond)
	if err := cmd.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	if err := cmd.Wait(); err == nil {
		t.Fatalf("psql ended without an error after Ctrl-C:\n%s", stdout.String())
	}
	// Applied in order, the changes give the view's rows (which of them
	// are in the snapshot depends on when the subscription started).
	state := map[string]int{}
	for _, line := range strings.Split(strings.TrimSpace(stdout.String()), "\n") {
		f := strings.SplitN(line, "\t", 3)
		if len(f) != 3 {
			t.Fatalf("line %q", line)
		}
		switch f[1] {
		case "Insert":
			state[f[2]]++
		case "Delete":
			state[f[2]]--
		default:
			t.Fatalf("line %q", line)
		}
	}
	var rows []string
	for r, n := range state {
		if n != 0 {
			rows = append(rows, fmt.Sprintf("%s x%d", r, n))
		}
	}
	sort.Strings(rows)
	if s := strings.Join(rows, "; "); s != "2\tb x1; 3\tc x1" {
		t.Fatalf("psql printed %q: rows %q", stdout.String(), s)
	}
	if !strings.Contains(stderr.String(), "canceling statement due to user request") {
		t.Fatalf("psql's error: %q", stderr.String())
	}
}

// TestSubscribeSnapshotDuringWrites: the snapshot of a SUBSCRIBE over a
// table that is updated while its backfill reads it (in small chunks) is
// inserts only, and with the changes after it gives the table's rows.
func TestSubscribeSnapshotDuringWrites(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	srv := testserver.Start(t, testserver.Options{BackfillChunkRows: 50})
	conn := connect(ctx, t, srv)
	mustExec(ctx, t, conn, "CREATE TABLE big (k bigint PRIMARY KEY, v bigint)",
		"INSERT INTO big SELECT g, 0 FROM generate_series(1, 3000) AS g")
	sc := connectMode(t, ctx, srv.URL, pgx.QueryExecModeSimpleProtocol)
	mustExec(ctx, t, sc, "BEGIN", "DECLARE c CURSOR FOR SUBSCRIBE (SELECT k, v FROM big)")
	for i := range 10 {
		mustExec(ctx, t, conn,
			fmt.Sprintf("UPDATE big SET v = v + 1 WHERE k %% 7 = %d", i%7),
			fmt.Sprintf("DELETE FROM big WHERE k %% 100 = %d", i),
			fmt.Sprintf("INSERT INTO big VALUES (%d, 1)", 10000+i))
	}
	mustExec(ctx, t, conn, "INSERT INTO big VALUES (-1, -1)")
	rows := map[string]int{}
	var snapEpoch string
	for done := false; !done; {
		got := queryText(ctx, t, sc, "FETCH 1000 c")
		for _, line := range strings.Split(strings.TrimSpace(got), "\n") {
			f := strings.Fields(line) // epoch op k v
			if snapEpoch == "" {
				snapEpoch = f[0]
			}
			if f[0] == snapEpoch && f[1] != "Insert" {
				t.Fatalf("snapshot row %q", line)
			}
			if f[1] == "Insert" || f[1] == "UpdateInsert" {
				rows[f[2]+" "+f[3]]++
			} else {
				rows[f[2]+" "+f[3]]--
			}
			done = done || f[2] == "-1"
		}
	}
	var got []string
	for r, n := range rows {
		if n < 0 || n > 1 {
			t.Fatalf("row %s counted %d times", r, n)
		}
		if n == 1 {
			got = append(got, r)
		}
	}
	want := strings.Split(strings.TrimSpace(queryText(ctx, t, conn, "SELECT k, v FROM big")), "\n")
	sort.Strings(got)
	sort.Strings(want)
	if strings.Join(got, ",") != strings.Join(want, ",") {
		t.Fatalf("changes give %d rows, the table has %d", len(got), len(want))
	}
	mustExec(ctx, t, sc, "ROLLBACK")
}
