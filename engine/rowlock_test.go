package engine_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/streamsql/streamsql/internal/pgtest"
	"github.com/streamsql/streamsql/internal/testserver"
)

// lockScenario is a two-session interleaving: setup runs first; then
// session 1 runs first (in a transaction block), session 2 runs second
// (its last statement while session 1 still holds its locks), session 1
// ends with end1 and session 2 with COMMIT. Final lists every row after.
type lockScenario struct {
	name   string
	setup  []string
	iso2   string // session 2's isolation level ("": read committed)
	first  []string
	second []string
	end1   string // COMMIT or ROLLBACK
}

var lockScenarios = []lockScenario{
	{name: "increments stack", first: []string{"UPDATE t SET v = v + 1 WHERE k = 1"},
		second: []string{"UPDATE t SET v = v * 10 WHERE k = 1"}, end1: "COMMIT"},
	{name: "rollback keeps the row read", first: []string{"UPDATE t SET v = v + 1 WHERE k = 1"},
		second: []string{"UPDATE t SET v = v * 10 WHERE k = 1"}, end1: "ROLLBACK"},
	{name: "where rechecked on the new version", first: []string{"UPDATE t SET v = 50 WHERE k = 1"},
		second: []string{"UPDATE t SET v = v + 100 WHERE v < 10"}, end1: "COMMIT"},
	{name: "where still holds", first: []string{"UPDATE t SET v = 5 WHERE k = 1"},
		second: []string{"UPDATE t SET v = v + 100 WHERE v < 10"}, end1: "COMMIT"},
	{name: "deleted row skipped", first: []string{"DELETE FROM t WHERE k = 2"},
		second: []string{"UPDATE t SET v = v + 1 WHERE k >= 2"}, end1: "COMMIT"},
	{name: "delete sees the new version", first: []string{"UPDATE t SET v = 100 WHERE k = 3"},
		second: []string{"DELETE FROM t WHERE v < 10"}, end1: "COMMIT"},
	{name: "row newly matching is not seen", first: []string{"UPDATE t SET v = 1 WHERE k = 3"},
		second: []string{"UPDATE t SET v = 0 WHERE v = 1 OR k = 3"}, end1: "COMMIT"},
	{name: "insert of the same key after rollback", first: []string{"INSERT INTO t VALUES (9, 9)"},
		second: []string{"INSERT INTO t VALUES (9, 90)"}, end1: "ROLLBACK"},
	{name: "set reads another column", setup: []string{"CREATE TABLE u (k int PRIMARY KEY, a int, b int)", "INSERT INTO u VALUES (1, 1, 1)"},
		first:  []string{"UPDATE u SET a = a + 10 WHERE k = 1"},
		second: []string{"UPDATE u SET b = a + b WHERE k = 1"}, end1: "COMMIT"},
	{name: "index lookup rechecked", setup: []string{"CREATE TABLE u (k int PRIMARY KEY, a int, b int)", "CREATE INDEX u_a ON u (a)",
		"INSERT INTO u VALUES (1, 1, 1), (2, 1, 2), (3, 3, 3)"},
		first:  []string{"UPDATE u SET a = 5 WHERE k = 1", "UPDATE u SET b = 7 WHERE k = 2"},
		second: []string{"UPDATE u SET b = b + 100 WHERE a = 1"}, end1: "COMMIT"},
	{name: "two statements, first waits", first: []string{"UPDATE t SET v = v + 1 WHERE k = 1", "UPDATE t SET v = v + 1 WHERE k = 2"},
		second: []string{"UPDATE t SET v = v * 2 WHERE k = 2"}, end1: "COMMIT"},
}

// runLockScenario runs sc on the server at url (t and u as created there)
// and returns its final rows, and session 2's errors' SQLSTATEs.
func runLockScenario(t *testing.T, ctx context.Context, url string, sc lockScenario) string {
	t.Helper()
	c0 := connectURL(t, ctx, url)
	for _, q := range append([]string{"DROP TABLE IF EXISTS t", "DROP TABLE IF EXISTS u",
		"CREATE TABLE t (k int PRIMARY KEY, v int)", "INSERT INTO t VALUES (1, 1), (2, 2), (3, 3)"}, sc.setup...) {
		if _, err := c0.Exec(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	c1, c2 := connectURL(t, ctx, url), connectURL(t, ctx, url)
	exec := func(c *pgx.Conn, q string) string {
		tag, err := c.Exec(ctx, q)
		if err != nil {
			return q + ": " + pgCode(err)
		}
		return q + ": " + tag.String()
	}
	var log []string
	log = append(log, exec(c1, "BEGIN"))
	for _, q := range sc.first {
		log = append(log, exec(c1, q))
	}
	begin := "BEGIN"
	if sc.iso2 != "" {
		begin += " ISOLATION LEVEL " + sc.iso2
	}
	log = append(log, exec(c2, begin))
	// Session 2 takes its snapshot before session 1 ends.
	log = append(log, exec(c2, "SELECT 1"))
	for _, q := range sc.second[:len(sc.second)-1] {
		log = append(log, exec(c2, q))
	}
	done := make(chan string)
	go func() { done <- exec(c2, sc.second[len(sc.second)-1]) }()
	select {
	case r := <-done:
		t.Fatalf("session 2 did not wait: %s", r)
	case <-time.After(150 * time.Millisecond):
	}
	log = append(log, exec(c1, sc.end1))
	log = append(log, <-done, exec(c2, "COMMIT"))
	var rows []string
	table := "t"
	if sc.setup != nil {
		table = "u"
	}
	r, err := c0.Query(ctx, "SELECT * FROM "+table+" ORDER BY 1")
	if err != nil {
		t.Fatal(err)
	}
	for r.Next() {
		vals, err := r.Values()
		if err != nil {
			t.Fatal(err)
		}
		rows = append(rows, fmt.Sprint(vals...))
	}
	if err := r.Err(); err != nil {
		t.Fatal(err)
	}
	return strings.Join(log, "\n") + "\n----\n" + strings.Join(rows, "\n")
}

func connectURL(t *testing.T, ctx context.Context, url string) *pgx.Conn {
	t.Helper()
	c, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close(context.Background()) })
	return c
}

// TestRowLockScenariosPostgres runs two-session interleavings (a writer
// waiting for a transaction's row lock, which commits or rolls back) on
// streamsql and on PostgreSQL, and compares each statement's outcome and
// the final rows: READ COMMITTED re-applies the waiting statement to the
// newest version of each row it had selected (EvalPlanQual), REPEATABLE
// READ fails with 40001.
func TestRowLockScenariosPostgres(t *testing.T) {
	pg := pgtest.StartT(t, pgtest.Options{})
	srv := testserver.Start(t, testserver.Options{})
	ctx := context.Background()
	scenarios := append([]lockScenario(nil), lockScenarios...)
	for _, sc := range lockScenarios {
		if sc.first[0][:6] == "INSERT" {
			continue
		}
		rr := sc
		rr.name += " (repeatable read)"
		rr.iso2 = "REPEATABLE READ"
		scenarios = append(scenarios, rr)
	}
	for _, sc := range scenarios {
		t.Run(sc.name, func(t *testing.T) {
			want := runLockScenario(t, ctx, pg.URL, sc)
			got := runLockScenario(t, ctx, srv.URL, sc)
			if got != want {
				t.Fatalf("streamsql:\n%s\n\nPostgreSQL:\n%s", got, want)
			}
		})
	}
}

// TestRowLockInsertSameKey: a second transaction inserting a key the first
// inserted waits, then fails with 23505 if the first committed; outside a
// transaction block too.
func TestRowLockInsertSameKey(t *testing.T) {
	srv := testserver.Start(t, testserver.Options{})
	ctx := context.Background()
	c0 := connect(ctx, t, srv)
	if _, err := c0.Exec(ctx, "CREATE TABLE t (k int PRIMARY KEY, v int)"); err != nil {
		t.Fatal(err)
	}
	for i, inTx := range []bool{true, false} {
		c1, c2 := connect(ctx, t, srv), connect(ctx, t, srv)
		mustExec(ctx, t, c1, "BEGIN")
		mustExec(ctx, t, c1, fmt.Sprintf("INSERT INTO t VALUES (%d, 1)", i))
		done := make(chan error)
		go func() {
			q := fmt.Sprintf("INSERT INTO t VALUES (%d, 2)", i)
			if inTx {
				q = "BEGIN; " + q + "; COMMIT"
			}
			_, err := c2.Exec(ctx, q)
			done <- err
		}()
		select {
		case err := <-done:
			t.Fatalf("second insert did not wait: %v", err)
		case <-time.After(100 * time.Millisecond):
		}
		mustExec(ctx, t, c1, "COMMIT")
		if err := <-done; pgCode(err) != "23505" {
			t.Fatalf("in a block %v: second insert of the key: %v, want 23505", inTx, err)
		}
	}
}

// pgDetail returns the DETAIL of a server error ("" for another error).
func pgDetail(err error) string {
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		return pe.Detail
	}
	return ""
}

// TestRowLockDeadlock: two transactions each waiting for a row the other
// locked: one fails with 40P01 naming both processes, the other goes on.
func TestRowLockDeadlock(t *testing.T) {
	srv := testserver.Start(t, testserver.Options{})
	ctx := context.Background()
	c0 := connect(ctx, t, srv)
	mustExec(ctx, t, c0, "CREATE TABLE t (k int PRIMARY KEY, v int)")
	mustExec(ctx, t, c0, "INSERT INTO t VALUES (1, 0), (2, 0)")
	c1, c2 := connect(ctx, t, srv), connect(ctx, t, srv)
	mustExec(ctx, t, c1, "BEGIN")
	mustExec(ctx, t, c2, "BEGIN")
	mustExec(ctx, t, c1, "UPDATE t SET v = 1 WHERE k = 1")
	mustExec(ctx, t, c2, "UPDATE t SET v = 2 WHERE k = 2")
	done := make(chan error)
	go func() {
		_, err := c1.Exec(ctx, "UPDATE t SET v = 1 WHERE k = 2")
		done <- err
	}()
	time.Sleep(100 * time.Millisecond)
	_, err := c2.Exec(ctx, "UPDATE t SET v = 2 WHERE k = 1")
	if pgCode(err) != "40P01" {
		t.Fatalf("closing the cycle: %v, want 40P01", err)
	}
	if !strings.Contains(pgDetail(err), "Process") || !strings.Contains(pgDetail(err), `relation "t"`) {
		t.Fatalf("detail %q", pgDetail(err))
	}
	mustExec(ctx, t, c2, "ROLLBACK")
	if err := <-done; err != nil {
		t.Fatalf("the other waiter: %v", err)
	}
	mustExec(ctx, t, c1, "COMMIT")
	var a, b int
	if err := c0.QueryRow(ctx, "SELECT (SELECT v FROM t WHERE k = 1), (SELECT v FROM t WHERE k = 2)").Scan(&a, &b); err != nil || a != 1 || b != 1 {
		t.Fatalf("rows %d %d %v, want 1 1", a, b, err)
	}
}

// TestRowLockTimeouts: lock_timeout ends a wait with 55P03, statement_timeout
// and a cancel with 57014; the transaction holding the lock is unharmed.
func TestRowLockTimeouts(t *testing.T) {
	srv := testserver.Start(t, testserver.Options{})
	ctx := context.Background()
	c0 := connect(ctx, t, srv)
	mustExec(ctx, t, c0, "CREATE TABLE t (k int PRIMARY KEY, v int)")
	mustExec(ctx, t, c0, "INSERT INTO t VALUES (1, 0)")
	c1, c2 := connect(ctx, t, srv), connect(ctx, t, srv)
	mustExec(ctx, t, c1, "BEGIN")
	mustExec(ctx, t, c1, "UPDATE t SET v = 1 WHERE k = 1")
	for _, tc := range []struct{ set, code string }{
		{"SET lock_timeout = '50ms'", "55P03"},
		{"SET statement_timeout = '50ms'", "57014"},
	} {
		for _, q := range []string{"UPDATE t SET v = 2 WHERE k = 1", "BEGIN; UPDATE t SET v = 2 WHERE k = 1"} {
			mustExec(ctx, t, c2, tc.set)
			_, err := c2.Exec(ctx, q)
			if pgCode(err) != tc.code {
				t.Fatalf("%s; %s: %v, want %s", tc.set, q, err, tc.code)
			}
			mustExec(ctx, t, c2, "ROLLBACK")
			mustExec(ctx, t, c2, "RESET ALL")
		}
	}
	// A cancel from the client (a CancelRequest) while the UPDATE runs: it
	// fails with 57014 and never takes effect, even once the lock is free.
	for _, q := range []string{"UPDATE t SET v = 2 WHERE k = 1", "BEGIN; UPDATE t SET v = 2 WHERE k = 1"} {
		done := make(chan error, 1)
		go func() {
			_, err := c2.Exec(ctx, q)
			done <- err
		}()
		awaitActive(ctx, t, c0, "UPDATE t SET v = 2 WHERE k = 1")
		if err := c2.PgConn().CancelRequest(ctx); err != nil {
			t.Fatal(err)
		}
		if err := <-done; pgCode(err) != "57014" {
			t.Fatalf("cancelled %s: %v, want 57014", q, err)
		}
		mustExec(ctx, t, c2, "ROLLBACK")
	}
	// A cancel while no statement runs is ignored (CancelRequest returns
	// once the server has handled it).
	if err := c2.PgConn().CancelRequest(ctx); err != nil {
		t.Fatal(err)
	}
	mustExec(ctx, t, c1, "COMMIT")
	mustExec(ctx, t, c2, "UPDATE t SET v = v + 1 WHERE k = 1")
	var v int
	if err := c0.QueryRow(ctx, "SELECT v FROM t WHERE k = 1").Scan(&v); err != nil || v != 2 {
		t.Fatalf("v = %d %v, want 2", v, err)
	}
}

// awaitActive waits until some session runs a statement whose text ends
// with query, as pg_stat_activity shows it to conn.
func awaitActive(ctx context.Context, t *testing.T, conn *pgx.Conn, query string) {
	t.Helper()
	for {
		var n int
		err := conn.QueryRow(ctx, "SELECT count(*) FROM pg_stat_activity WHERE state = 'active' AND query LIKE $1", "%"+query).Scan(&n)
		if err != nil {
			t.Fatal(err)
		}
		if n > 0 {
			return
		}
		time.Sleep(time.Millisecond)
	}
}

// TestRowLockTransfers moves money between accounts from several sessions
// in READ COMMITTED transaction blocks (random pairs, so some deadlock;
// some roll back on purpose): no transfer fails with 40001, every
// committed transfer is applied once (the ledger of committed transfers
// matches the balances) and the total is preserved, in the table and in a
// view over it.
func TestRowLockTransfers(t *testing.T) {
	srv := testserver.Start(t, testserver.Options{BarrierInterval: 5 * time.Millisecond})
	ctx := context.Background()
	c0 := connect(ctx, t, srv)
	const accounts, start = 8, 1000
	mustExec(ctx, t, c0, "CREATE TABLE acct (id int PRIMARY KEY, bal bigint)")
	mustExec(ctx, t, c0, "CREATE TABLE ledger (src int, dst int, amount bigint)")
	mustExec(ctx, t, c0, fmt.Sprintf("INSERT INTO acct SELECT g, %d FROM generate_series(1, %d) g", start, accounts))
	mustExec(ctx, t, c0, "CREATE MATERIALIZED VIEW total AS SELECT sum(bal) AS s, count(*) AS n FROM acct")
	seed := time.Now().UnixNano()
	t.Logf("seed %d", seed)
	const workers, each = 6, 25
	var committed, deadlocks, rolledBack atomic.Int64
	var wg sync.WaitGroup
	errs := make(chan error, workers)
	for w := range workers {
		conn := connect(ctx, t, srv)
		rng := rand.New(rand.NewPCG(uint64(seed), uint64(w)))
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range each {
				src, dst := 1+rng.IntN(accounts), 1+rng.IntN(accounts)
				for dst == src {
					dst = 1 + rng.IntN(accounts)
				}
				amount := 1 + rng.IntN(50)
				rollback := rng.IntN(5) == 0
				err := transfer(ctx, conn, src, dst, amount, rollback)
				switch {
				case err == nil && rollback:
					rolledBack.Add(1)
				case err == nil:
					committed.Add(1)
				case pgCode(err) == "40P01":
					deadlocks.Add(1)
				default:
					errs <- fmt.Errorf("transfer %d -> %d: %w", src, dst, err)
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	t.Logf("%d committed, %d rolled back, %d deadlocks", committed.Load(), rolledBack.Load(), deadlocks.Load())
	var total, n, ledgered int64
	if err := c0.QueryRow(ctx, "SELECT sum(bal), count(*), (SELECT count(*) FROM ledger) FROM acct").Scan(&total, &n, &ledgered); err != nil {
		t.Fatal(err)
	}
	if total != accounts*start || n != accounts || ledgered != committed.Load() {
		t.Fatalf("total %d over %d accounts, %d ledger rows; want %d, %d, %d", total, n, ledgered, accounts*start, accounts, committed.Load())
	}
	var bad int64
	if err := c0.QueryRow(ctx, fmt.Sprintf(`SELECT count(*) FROM acct a WHERE a.bal <> %d
		- coalesce((SELECT sum(amount) FROM ledger WHERE src = a.id), 0)
		+ coalesce((SELECT sum(amount) FROM ledger WHERE dst = a.id), 0)`, start)).Scan(&bad); err != nil || bad != 0 {
		t.Fatalf("%d accounts disagree with the ledger (%v)", bad, err)
	}
	mustExec(ctx, t, c0, "FLUSH")
	var vs, vn int64
	if err := c0.QueryRow(ctx, "SELECT s, n FROM total").Scan(&vs, &vn); err != nil || vs != total || vn != n {
		t.Fatalf("view: %d over %d (%v), tables %d over %d", vs, vn, err, total, n)
	}
}

// transfer moves amount from src to dst in one transaction block, which it
// rolls back instead of committing if rollback is set.
func transfer(ctx context.Context, conn *pgx.Conn, src, dst, amount int, rollback bool) error {
	tx, err := conn.Begin(ctx)
	if err != nil {
		return err
	}
	defer tx.Rollback(ctx)
	for _, q := range []string{
		fmt.Sprintf("UPDATE acct SET bal = bal - %d WHERE id = %d", amount, src),
		fmt.Sprintf("UPDATE acct SET bal = bal + %d WHERE id = %d", amount, dst),
		fmt.Sprintf("INSERT INTO ledger VALUES (%d, %d, %d)", src, dst, amount),
	} {
		if _, err := tx.Exec(ctx, q); err != nil {
			return err
		}
	}
	if rollback {
		return tx.Rollback(ctx)
	}
	return tx.Commit(ctx)
}

// TestRowLockDeadlockOfThree: a cycle through three transactions is found
// by the one closing it, whose detail lists the three waits.
func TestRowLockDeadlockOfThree(t *testing.T) {
	srv := testserver.Start(t, testserver.Options{})
	ctx := context.Background()
	c0 := connect(ctx, t, srv)
	mustExec(ctx, t, c0, "CREATE TABLE t (k int PRIMARY KEY, v int)")
	mustExec(ctx, t, c0, "INSERT INTO t VALUES (1, 0), (2, 0), (3, 0)")
	var cs []*pgx.Conn
	for k := 1; k <= 3; k++ {
		c := connect(ctx, t, srv)
		mustExec(ctx, t, c, "BEGIN")
		mustExec(ctx, t, c, fmt.Sprintf("UPDATE t SET v = v + 1 WHERE k = %d", k))
		cs = append(cs, c)
	}
	done := make(chan error, 2)
	for i := range 2 {
		go func() {
			_, err := cs[i].Exec(ctx, fmt.Sprintf("UPDATE t SET v = v + 1 WHERE k = %d", i+2))
			done <- err
		}()
	}
	time.Sleep(150 * time.Millisecond)
	_, err := cs[2].Exec(ctx, "UPDATE t SET v = v + 1 WHERE k = 1")
	if pgCode(err) != "40P01" || strings.Count(pgDetail(err), "Process") != 3 {
		t.Fatalf("closing the cycle: %v (detail %q), want 40P01 with three waits", err, pgDetail(err))
	}
	mustExec(ctx, t, cs[2], "ROLLBACK")
	// c2 gets k3 and commits; then c1 gets k2.
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	mustExec(ctx, t, cs[1], "COMMIT")
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	mustExec(ctx, t, cs[0], "COMMIT")
	var sum int
	if err := c0.QueryRow(ctx, "SELECT sum(v) FROM t").Scan(&sum); err != nil || sum != 4 {
		t.Fatalf("sum %d %v, want 4", sum, err)
	}
}
