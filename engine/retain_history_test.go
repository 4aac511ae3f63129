package engine_test

import (
	"context"
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/streamsql/streamsql/internal/testserver"
)

// bag is a multiset of rows, each rendered as its columns joined by "|".
type bag map[string]int

func (b bag) add(row string, n int) {
	if b[row] += n; b[row] == 0 {
		delete(b, row)
	}
}

func (b bag) String() string {
	var rows []string
	for r, n := range b {
		rows = append(rows, fmt.Sprintf("%s x%d", r, n))
	}
	slices.Sort(rows)
	return strings.Join(rows, ", ")
}

// historyModel is what tables t (k int PRIMARY KEY, v text) and d (a int,
// b text), and views mv and mvp (SELECT v, count(*) FROM t GROUP BY v),
// hold.
type historyModel struct {
	t map[int]string
	d bag
}

func (m historyModel) clone() historyModel {
	return historyModel{t: maps.Clone(m.t), d: maps.Clone(m.d)}
}

// rows returns relation rel's rows.
func (m historyModel) rows(rel string) bag {
	out := bag{}
	switch rel {
	case "t":
		for k, v := range m.t {
			out.add(fmt.Sprintf("%d|%s", k, v), 1)
		}
	case "d":
		maps.Copy(out, m.d)
	case "mv", "mvp":
		n := map[string]int{}
		for _, v := range m.t {
			n[v]++
		}
		for v, c := range n {
			out.add(fmt.Sprintf("%s|%d", v, c), 1)
		}
	}
	return out
}

// step runs one random change to t or d and applies it to m.
func (m historyModel) step(ctx context.Context, t *testing.T, conn *pgx.Conn, rng *rand.Rand) {
	t.Helper()
	k, v := rng.IntN(12), []string{"a", "b", "c"}[rng.IntN(3)]
	dRow := func(a int, b string) string {
		if a < 0 {
			return "NULL|NULL"
		}
		return fmt.Sprintf("%d|%s", a, b)
	}
	switch rng.IntN(7) {
	case 0, 1:
		if _, ok := m.t[k]; ok {
			mustExec(ctx, t, conn, fmt.Sprintf("DELETE FROM t WHERE k = %d", k))
			delete(m.t, k)
		} else {
			mustExec(ctx, t, conn, fmt.Sprintf("INSERT INTO t VALUES (%d, '%s')", k, v))
			m.t[k] = v
		}
	case 2:
		mustExec(ctx, t, conn, fmt.Sprintf("UPDATE t SET v = '%s' WHERE k <= %d", v, k))
		for kk := range m.t {
			if kk <= k {
				m.t[kk] = v
			}
		}
	case 3, 4:
		a := k % 4
		if rng.IntN(5) == 0 {
			mustExec(ctx, t, conn, "INSERT INTO d VALUES (NULL, NULL)")
			m.d.add(dRow(-1, ""), 1)
		} else {
			mustExec(ctx, t, conn, fmt.Sprintf("INSERT INTO d VALUES (%d, '%s'), (%d, '%s')", a, v, a, v))
			m.d.add(dRow(a, v), 2)
		}
	case 5:
		a := k % 4
		mustExec(ctx, t, conn, fmt.Sprintf("UPDATE d SET b = '%s' WHERE a = %d", v, a))
		for r, n := range maps.Clone(m.d) {
			if strings.HasPrefix(r, fmt.Sprintf("%d|", a)) {
				m.d.add(r, -n)
				m.d.add(dRow(a, v), n)
			}
		}
	case 6:
		a := k % 4
		mustExec(ctx, t, conn, fmt.Sprintf("DELETE FROM d WHERE a = %d", a))
		for r, n := range maps.Clone(m.d) {
			if strings.HasPrefix(r, fmt.Sprintf("%d|", a)) {
				m.d.add(r, -n)
			}
		}
	}
}

// newestEpoch returns the last committed epoch, as streamsql_history shows it
// for rel.
func newestEpoch(ctx context.Context, t *testing.T, conn *pgx.Conn, rel string) int64 {
	t.Helper()
	var e *int64
	if err := conn.QueryRow(ctx, "SELECT newest_epoch FROM streamsql_history WHERE name = $1", rel).Scan(&e); err != nil {
		t.Fatal(err)
	}
	if e == nil {
		t.Fatalf("%s retains no history", rel)
	}
	return *e
}

// historyChange is a row of SUBSCRIBE ... WITH (PROGRESS = true).
type historyChange struct {
	epoch    int64
	progress bool
	op, row  string
}

// subscribeUntil runs SUBSCRIBE sub (which has PROGRESS = true) through a
// cursor until it has reported epoch until as complete, and returns its
// changes (without progress rows).
func subscribeUntil(ctx context.Context, t *testing.T, conn *pgx.Conn, sub string, until int64) []historyChange {
	t.Helper()
	mustExec(ctx, t, conn, "BEGIN", "DECLARE hc CURSOR FOR "+sub)
	defer mustExec(ctx, t, conn, "COMMIT")
	var out []historyChange
	for {
		rows, err := conn.Query(ctx, "FETCH 1000 hc WITH (timeout = '5s')")
		if err != nil {
			t.Fatalf("%s: %v", sub, err)
		}
		n, done := 0, false
		for rows.Next() {
			n++
			vals := rows.RawValues()
			epoch, _ := strconv.ParseInt(string(vals[0]), 10, 64)
			if string(vals[1]) == "t" {
				done = done || epoch >= until
				continue
			}
			var cols []string
			for _, v := range vals[3:] {
				if v == nil {
					cols = append(cols, "NULL")
				} else {
					cols = append(cols, string(v))
				}
			}
			out = append(out, historyChange{epoch: epoch, op: string(vals[2]), row: strings.Join(cols, "|")})
		}
		if err := rows.Err(); err != nil {
			t.Fatalf("%s: %v", sub, err)
		}
		if done {
			return out
		}
		if n == 0 {
			t.Fatalf("%s: no progress to epoch %d", sub, until)
		}
	}
}

// applyChanges applies changes to b.
func applyChanges(b bag, cs []historyChange) {
	for _, c := range cs {
		switch c.op {
		case "Insert", "UpdateInsert":
			b.add(c.row, 1)
		default:
			b.add(c.row, -1)
		}
	}
}

// checkAsOf checks SUBSCRIBE TO rel AS OF epoch, with and without a
// snapshot: the snapshot is rel's rows as of epoch (at), and the changes
// after it lead to rel's rows now (now, as of epoch newest).
func checkAsOf(ctx context.Context, t *testing.T, conn *pgx.Conn, rel string, epoch int64, at, now bag, newest int64) {
	t.Helper()
	cs := subscribeUntil(ctx, t, conn, fmt.Sprintf("SUBSCRIBE TO %s WITH (PROGRESS = true) AS OF %d", rel, epoch), newest)
	snap := bag{}
	i := 0
	for ; i < len(cs) && cs[i].epoch == epoch; i++ {
		if cs[i].op != "Insert" {
			t.Fatalf("%s AS OF %d: snapshot row %v", rel, epoch, cs[i])
		}
		snap.add(cs[i].row, 1)
	}
	if snap.String() != at.String() {
		t.Fatalf("%s AS OF %d: snapshot\n  %s\nwant\n  %s", rel, epoch, snap, at)
	}
	applyChanges(snap, cs[i:])
	if snap.String() != now.String() {
		t.Fatalf("%s AS OF %d: snapshot and changes give\n  %s\nwant\n  %s", rel, epoch, snap, now)
	}
	cs = subscribeUntil(ctx, t, conn, fmt.Sprintf("SUBSCRIBE TO %s WITH (SNAPSHOT = false, PROGRESS = true) AS OF %d", rel, epoch), newest)
	b := maps.Clone(at)
	for _, c := range cs {
		if c.epoch <= epoch {
			t.Fatalf("%s AS OF %d without a snapshot: change of epoch %d", rel, epoch, c.epoch)
		}
	}
	applyChanges(b, cs)
	if b.String() != now.String() {
		t.Fatalf("%s AS OF %d without a snapshot: changes give\n  %s\nwant\n  %s", rel, epoch, b, now)
	}
}

// TestRetainHistoryAsOf runs random inserts, updates and deletes on a table
// with a key, one without (duplicate rows, NULLs) and a view over the
// first, and checks SUBSCRIBE ... AS OF each recorded epoch against a
// model, before and after a restart.
func TestRetainHistoryAsOf(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	seed := time.Now().UnixNano()
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewPCG(uint64(seed), 1))
	srv := testserver.Start(t, testserver.Options{RetainHistory: time.Hour})
	conn := connect(ctx, t, srv)
	mustExec(ctx, t, conn,
		"CREATE TABLE t (k int PRIMARY KEY, v text)",
		"CREATE TABLE d (a int, b text) WITH (retain_history = '2h')",
		"CREATE MATERIALIZED VIEW mv AS SELECT v, count(*) AS n FROM t GROUP BY v",
		// The same view as a parallel dataflow: its log is fed by the gather.
		"SET streaming_parallelism = 2",
		"CREATE MATERIALIZED VIEW mvp AS SELECT v, count(*) AS n FROM t GROUP BY v",
		"SET streaming_parallelism = 1")
	m := historyModel{t: map[int]string{}, d: bag{}}
	type point struct {
		epoch int64
		m     historyModel
	}
	var points []point
	record := func() {
		points = append(points, point{newestEpoch(ctx, t, conn, "t"), m.clone()})
	}
	record()
	for range 40 {
		m.step(ctx, t, conn, rng)
		record()
	}
	check := func() {
		newest := newestEpoch(ctx, t, conn, "t")
		for _, i := range []int{0, rng.IntN(len(points)), rng.IntN(len(points)), len(points) - 1} {
			for _, rel := range []string{"t", "d", "mv", "mvp"} {
				checkAsOf(ctx, t, conn, rel, points[i].epoch, points[i].m.rows(rel), m.rows(rel), newest)
			}
		}
	}
	check()
	conn.Close(ctx)
	if err := srv.Restart(); err != nil {
		t.Fatal(err)
	}
	conn = connect(ctx, t, srv)
	for range 5 {
		m.step(ctx, t, conn, rng)
		record()
	}
	check()
}

// TestRetainHistoryErrors: AS OF outside the retained range, over a query,
// on a relation that retains none; bad retain_history values.
func TestRetainHistoryErrors(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	srv := testserver.Start(t, testserver.Options{RetainHistory: time.Hour})
	conn := connect(ctx, t, srv)
	mustExec(ctx, t, conn, "CREATE TABLE t (k int PRIMARY KEY, v text)", "INSERT INTO t VALUES (1, 'a')")
	newest := newestEpoch(ctx, t, conn, "t")
	for _, c := range []struct{ sql, code string }{
		{"SUBSCRIBE TO t AS OF 1", "55000"},
		{fmt.Sprintf("SUBSCRIBE TO t AS OF %d", newest+1000), "22023"},
		{fmt.Sprintf("SUBSCRIBE (SELECT * FROM t) AS OF %d", newest), "0A000"},
		{"CREATE TABLE x (a int) WITH (retain_history = 'soon')", "22023"},
		{"CREATE MATERIALIZED VIEW x WITH (retain_history = '-1h') AS SELECT * FROM t", "22023"},
		{"ALTER TABLE t SET (fillfactor = 10)", "22023"},
		{"ALTER TABLE t SET (retain_history = 'x')", "22023"},
		{"ALTER MATERIALIZED VIEW t SET (retain_history = '1h')", "42809"},
	} {
		if _, err := conn.Exec(ctx, c.sql); sqlState(err) != c.code {
			t.Errorf("%s: %v, want %s", c.sql, err, c.code)
		}
	}
	// The AS OF snapshot is built before it is sent: query_memory_limit
	// bounds it.
	mustExec(ctx, t, conn, "INSERT INTO t SELECT g, repeat('x', 100) FROM generate_series(2, 20000) g")
	latest := newestEpoch(ctx, t, conn, "t")
	mustExec(ctx, t, conn, "SET query_memory_limit = '256kB'")
	if _, err := conn.Exec(ctx, fmt.Sprintf("SUBSCRIBE TO t AS OF %d", latest)); sqlState(err) != "53200" {
		t.Errorf("AS OF snapshot over query_memory_limit: %v, want 53200", err)
	}
	mustExec(ctx, t, conn, "RESET query_memory_limit")
	mustExec(ctx, t, conn, "ALTER TABLE t SET (retain_history = 0)")
	if _, err := conn.Exec(ctx, fmt.Sprintf("SUBSCRIBE TO t AS OF %d", newest)); sqlState(err) != "55000" {
		t.Errorf("AS OF without history: %v, want 55000", err)
	}
}

// historyRow returns rel's row of streamsql_history: retain_history,
// is_default, oldest_epoch ("NULL" for NULLs).
func historyRow(ctx context.Context, t *testing.T, conn *pgx.Conn, rel string) string {
	t.Helper()
	var r, o *string
	var def bool
	if err := conn.QueryRow(ctx, "SELECT retain_history::text, is_default, oldest_epoch::text FROM streamsql_history WHERE name = $1", rel).Scan(&r, &def, &o); err != nil {
		t.Fatal(err)
	}
	str := func(p *string) string {
		if p == nil {
			return "NULL"
		}
		return *p
	}
	return fmt.Sprintf("%s %v %s", str(r), def, str(o))
}

// TestRetainHistoryAlter turns a relation's history off and on, changes its
// retention, and restarts it with ALTER TABLE ... ADD COLUMN, on a server
// whose default is one hour; a server with the default default (none)
// keeps history only where retain_history is set.
func TestRetainHistoryAlter(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	srv := testserver.Start(t, testserver.Options{RetainHistory: time.Hour})
	conn := connect(ctx, t, srv)
	mustExec(ctx, t, conn, "CREATE TABLE t (k int PRIMARY KEY, v text)", "INSERT INTO t VALUES (1, 'a')",
		"CREATE MATERIALIZED VIEW mv WITH (retain_history = '10m') AS SELECT k FROM t")
	first := newestEpoch(ctx, t, conn, "t")
	if got := historyRow(ctx, t, conn, "t"); !strings.HasPrefix(got, "01:00:00 true ") || strings.HasSuffix(got, "NULL") {
		t.Errorf("t by default: %s", got)
	}
	if got := historyRow(ctx, t, conn, "mv"); !strings.HasPrefix(got, "00:10:00 false ") {
		t.Errorf("mv: %s", got)
	}
	mustExec(ctx, t, conn, "ALTER TABLE t SET (retain_history = '2h')")
	if got := historyRow(ctx, t, conn, "t"); !strings.HasPrefix(got, "02:00:00 false ") {
		t.Errorf("t after SET: %s", got)
	}
	checkAsOf(ctx, t, conn, "t", first, bag{"1|a": 1}, bag{"1|a": 1}, newestEpoch(ctx, t, conn, "t"))
	mustExec(ctx, t, conn, "ALTER TABLE t SET (retain_history = 0)", "INSERT INTO t VALUES (2, 'b')")
	if got := historyRow(ctx, t, conn, "t"); got != "NULL false NULL" {
		t.Errorf("t after SET 0: %s", got)
	}
	mustExec(ctx, t, conn, "ALTER TABLE t RESET (retain_history)")
	// A new history starts: the epochs before it are not retained.
	if _, err := conn.Exec(ctx, fmt.Sprintf("SUBSCRIBE TO t AS OF %d", first)); sqlState(err) != "55000" {
		t.Errorf("AS OF before the history restarted: %v, want 55000", err)
	}
	mustExec(ctx, t, conn, "FLUSH")
	restarted := newestEpoch(ctx, t, conn, "t")
	mustExec(ctx, t, conn, "INSERT INTO t VALUES (3, 'c')")
	checkAsOf(ctx, t, conn, "t", restarted, bag{"1|a": 1, "2|b": 1}, bag{"1|a": 1, "2|b": 1, "3|c": 1}, newestEpoch(ctx, t, conn, "t"))
	if got := historyRow(ctx, t, conn, "t"); !strings.HasPrefix(got, "01:00:00 true ") {
		t.Errorf("t after RESET: %s", got)
	}
	// A rewrite of the table starts its history again, with the new columns.
	mustExec(ctx, t, conn, "DROP MATERIALIZED VIEW mv", "ALTER TABLE t ADD COLUMN w int DEFAULT 7")
	if _, err := conn.Exec(ctx, fmt.Sprintf("SUBSCRIBE TO t AS OF %d", restarted)); sqlState(err) != "55000" {
		t.Errorf("AS OF before ADD COLUMN: %v, want 55000", err)
	}
	mustExec(ctx, t, conn, "FLUSH")
	rewritten := newestEpoch(ctx, t, conn, "t")
	mustExec(ctx, t, conn, "UPDATE t SET w = 8 WHERE k = 1")
	checkAsOf(ctx, t, conn, "t", rewritten, bag{"1|a|7": 1, "2|b|7": 1, "3|c|7": 1}, bag{"1|a|8": 1, "2|b|7": 1, "3|c|7": 1}, newestEpoch(ctx, t, conn, "t"))
	conn.Close(ctx)

	off := testserver.Start(t, testserver.Options{})
	conn = connect(ctx, t, off)
	mustExec(ctx, t, conn, "CREATE TABLE t (k int)", "CREATE TABLE kept (k int) WITH (retain_history = '1h')", "INSERT INTO kept VALUES (1)")
	if got := historyRow(ctx, t, conn, "t"); got != "NULL true NULL" {
		t.Errorf("t on a server without history: %s", got)
	}
	checkAsOf(ctx, t, conn, "kept", newestEpoch(ctx, t, conn, "kept"), bag{"1": 1}, bag{"1": 1}, newestEpoch(ctx, t, conn, "kept"))
}

// TestRetainHistoryTrim: epochs older than the retention are trimmed;
// AS OF before them fails with 55000, after them still gives the rows.
func TestRetainHistoryTrim(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	srv := testserver.Start(t, testserver.Options{})
	conn := connect(ctx, t, srv)
	mustExec(ctx, t, conn, "CREATE TABLE t (k int PRIMARY KEY) WITH (retain_history = '1s')", "INSERT INTO t VALUES (1)")
	old := newestEpoch(ctx, t, conn, "t")
	mustExec(ctx, t, conn, "INSERT INTO t VALUES (2)")
	var err error
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		mustExec(ctx, t, conn, "BEGIN")
		_, err = conn.Exec(ctx, fmt.Sprintf("DECLARE c CURSOR FOR SUBSCRIBE TO t WITH (SNAPSHOT = false) AS OF %d", old))
		mustExec(ctx, t, conn, "ROLLBACK")
		if err != nil {
			break
		}
	}
	if sqlState(err) != "55000" || !strings.Contains(err.Error(), "no longer retains") {
		t.Fatalf("AS OF after the retention: %v, want 55000", err)
	}
	var oldest int64
	if err := conn.QueryRow(ctx, "SELECT oldest_epoch FROM streamsql_history WHERE name = 't'").Scan(&oldest); err != nil || oldest <= old {
		t.Fatalf("oldest_epoch %d (%v) after trimming epoch %d", oldest, err, old)
	}
	mustExec(ctx, t, conn, "DELETE FROM t WHERE k = 1")
	newest := newestEpoch(ctx, t, conn, "t")
	checkAsOf(ctx, t, conn, "t", oldest, bag{"1": 1, "2": 1}, bag{"2": 1}, newest)
}

// TestRetainHistoryKill: a subscriber that resumes AS OF the last epoch it
// saw complete, after a kill -9 of the server, gets every acknowledged
// insert exactly once.
func TestRetainHistoryKill(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	srv := testserver.Start(t, testserver.Options{Crashable: true})
	conn := connect(ctx, t, srv)
	mustExec(ctx, t, conn, "CREATE TABLE t (k int PRIMARY KEY) WITH (retain_history = '1h')")
	seen := map[string]int{}
	var resume int64 = newestEpoch(ctx, t, conn, "t")
	next := 0
	// read subscribes AS OF resume and keeps the changes up to the last
	// epoch reported complete; it returns when that reaches until.
	read := func(conn *pgx.Conn, until int64) {
		cs := subscribeUntil(ctx, t, conn, fmt.Sprintf("SUBSCRIBE TO t WITH (SNAPSHOT = false, PROGRESS = true) AS OF %d", resume), until)
		for _, c := range cs {
			if c.epoch <= until {
				seen[c.row]++
			}
		}
		resume = until
	}
	for round := range 3 {
		for range 20 {
			next++
			mustExec(ctx, t, conn, fmt.Sprintf("INSERT INTO t VALUES (%d)", next))
		}
		read(conn, newestEpoch(ctx, t, conn, "t"))
		// Inserts after the last read; the kill comes while they commit.
		done := make(chan struct{})
		wc := connect(ctx, t, srv)
		var acked atomic.Int64
		acked.Store(int64(next))
		go func(from int) {
			defer close(done)
			defer wc.Close(context.Background())
			for k := from + 1; k <= from+20; k++ {
				if _, err := wc.Exec(ctx, fmt.Sprintf("INSERT INTO t VALUES (%d)", k)); err != nil {
					break
				}
				acked.Store(int64(k))
			}
		}(next)
		time.Sleep(time.Duration(round*20) * time.Millisecond)
		conn.Close(ctx)
		// What was acknowledged before the kill was synced before it.
		before := int(acked.Load())
		if err := srv.Kill(); err != nil {
			t.Fatal(err)
		}
		<-done
		conn = connect(ctx, t, srv)
		// The unacknowledged inserts may have committed: find out which.
		var n int
		if err := conn.QueryRow(ctx, "SELECT coalesce(max(k), 0) FROM t").Scan(&n); err != nil {
			t.Fatal(err)
		}
		if n < before {
			t.Fatalf("acknowledged insert %d lost (max k %d)", before, n)
		}
		next = n
	}
	read(conn, newestEpoch(ctx, t, conn, "t"))
	for k := 1; k <= next; k++ {
		if seen[strconv.Itoa(k)] != 1 {
			t.Errorf("insert %d seen %d times", k, seen[strconv.Itoa(k)])
		}
	}
	if len(seen) != next {
		t.Errorf("%d rows seen, %d inserted", len(seen), next)
	}
}
