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

// pgCode returns the SQLSTATE of err ("" if it is not a server error).
func pgCode(err error) string {
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		return pe.Code
	}
	return ""
}

// TestTxnPgx drives transactions through pgx in every query mode: the
// extended protocol's Parse/Bind/Execute inside BEGIN, tx.Rollback and
// tx.Commit, reads of the transaction's own writes, and the failed state.
func TestTxnPgx(t *testing.T) {
	srv := testserver.Start(t, testserver.Options{})
	ctx := context.Background()
	setup := connect(ctx, t, srv)
	if _, err := setup.Exec(ctx, "CREATE TABLE kv (k int PRIMARY KEY, v text)"); err != nil {
		t.Fatal(err)
	}
	for i, mode := range queryModes {
		t.Run(mode.String(), func(t *testing.T) {
			conn := connectMode(t, ctx, srv.URL, mode)
			base := 100 * (i + 1)
			// Rollback: nothing stays.
			tx, err := conn.Begin(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := tx.Exec(ctx, "INSERT INTO kv VALUES ($1, $2), ($3, $4)", base, "a", base+1, "b"); err != nil {
				t.Fatal(err)
			}
			if st := conn.PgConn().TxStatus(); st != 'T' {
				t.Fatalf("status in transaction: %c", st)
			}
			var n int
			if err := tx.QueryRow(ctx, "SELECT count(*) FROM kv WHERE k >= $1 AND k < $2", base, base+100).Scan(&n); err != nil || n != 2 {
				t.Fatalf("own writes: %d %v", n, err)
			}
			if err := setup.QueryRow(ctx, fmt.Sprintf("SELECT count(*) FROM kv WHERE k >= %d", base)).Scan(&n); err != nil || n != 0 {
				t.Fatalf("other session sees uncommitted rows: %d %v", n, err)
			}
			if err := tx.Rollback(ctx); err != nil {
				t.Fatal(err)
			}
			if st := conn.PgConn().TxStatus(); st != 'I' {
				t.Fatalf("status after rollback: %c", st)
			}
			if err := conn.QueryRow(ctx, "SELECT count(*) FROM kv WHERE k >= $1 AND k < $2", base, base+100).Scan(&n); err != nil || n != 0 {
				t.Fatalf("after rollback: %d %v", n, err)
			}

			// An error fails the transaction: 25P02 until it ends, and
			// Commit reports the rollback.
			tx, err = conn.Begin(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := tx.Exec(ctx, "INSERT INTO kv VALUES ($1, 'x')", base+2); err != nil {
				t.Fatal(err)
			}
			if _, err := tx.Exec(ctx, "INSERT INTO kv VALUES ($1, 'x')", base+2); pgCode(err) != "23505" {
				t.Fatalf("duplicate key: %v", err)
			}
			if st := conn.PgConn().TxStatus(); st != 'E' {
				t.Fatalf("status after an error: %c", st)
			}
			if err := tx.QueryRow(ctx, "SELECT $1::int", 1).Scan(&n); pgCode(err) != "25P02" {
				t.Fatalf("statement in failed transaction: %v", err)
			}
			if err := tx.Commit(ctx); !errors.Is(err, pgx.ErrTxCommitRollback) {
				t.Fatalf("commit of a failed transaction: %v", err)
			}

			// Commit: every row, visible to others.
			tx, err = conn.Begin(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := tx.Exec(ctx, "INSERT INTO kv VALUES ($1, 'c')", base+3); err != nil {
				t.Fatal(err)
			}
			if _, err := tx.Exec(ctx, "UPDATE kv SET v = $1 WHERE k = $2", "d", base+3); err != nil {
				t.Fatal(err)
			}
			if err := tx.Commit(ctx); err != nil {
				t.Fatal(err)
			}
			var v string
			if err := setup.QueryRow(ctx, fmt.Sprintf("SELECT v FROM kv WHERE k = %d", base+3)).Scan(&v); err != nil || v != "d" {
				t.Fatalf("after commit: %q %v", v, err)
			}
		})
	}
}

// TestStatementTimeout checks that statement_timeout cancels a statement
// with 57014 and that the session goes on.
func TestStatementTimeout(t *testing.T) {
	srv := testserver.Start(t, testserver.Options{})
	ctx := context.Background()
	conn := connect(ctx, t, srv)
	if _, err := conn.Exec(ctx, "SET statement_timeout = '100ms'"); err != nil {
		t.Fatal(err)
	}
	var shown string
	if err := conn.QueryRow(ctx, "SHOW statement_timeout").Scan(&shown); err != nil || shown != "100ms" {
		t.Fatalf("SHOW statement_timeout: %q %v", shown, err)
	}
	start := time.Now()
	var n int64
	err := conn.QueryRow(ctx, "SELECT count(*) FROM generate_series(1, 100000000000) a").Scan(&n)
	var pe *pgconn.PgError
	if !errors.As(err, &pe) || pe.Code != "57014" || !strings.Contains(pe.Message, "statement timeout") {
		t.Fatalf("long statement: %v", err)
	}
	if d := time.Since(start); d > 10*time.Second {
		t.Fatalf("the timeout took %v", d)
	}
	if err := conn.QueryRow(ctx, "SELECT 1").Scan(&n); err != nil || n != 1 {
		t.Fatalf("after the timeout: %v", err)
	}
	if _, err := conn.Exec(ctx, "SET statement_timeout = 'soon'"); pgCode(err) != "22023" {
		t.Fatalf("bad value: %v", err)
	}
}

// TestIdleInTransactionTimeout checks that a session idle in a transaction
// block longer than idle_in_transaction_session_timeout is ended with 25P03,
// and that one idle outside a block is not.
func TestIdleInTransactionTimeout(t *testing.T) {
	srv := testserver.Start(t, testserver.Options{})
	ctx := context.Background()
	conn := connect(ctx, t, srv)
	if _, err := conn.Exec(ctx, "SET idle_in_transaction_session_timeout = 100"); err != nil {
		t.Fatal(err)
	}
	time.Sleep(300 * time.Millisecond)
	if _, err := conn.Exec(ctx, "BEGIN"); err != nil {
		t.Fatalf("idle outside a transaction: %v", err)
	}
	time.Sleep(500 * time.Millisecond)
	_, err := conn.Exec(ctx, "SELECT 1")
	if err == nil {
		t.Fatal("the idle transaction's session was not ended")
	}
	if code := pgCode(err); code != "25P03" && !conn.IsClosed() {
		t.Fatalf("after the timeout: %v", err)
	}
}

// TestStartupOptions checks that options=-c name=value in the startup
// packet sets session parameters, and that a bad one refuses the session.
func TestStartupOptions(t *testing.T) {
	srv := testserver.Start(t, testserver.Options{})
	ctx := context.Background()
	cfg, err := pgx.ParseConfig(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	cfg.RuntimeParams["options"] = `-c statement_timeout=5s -cextra_float_digits=2 --application-name=to\ ol`
	conn, err := pgx.ConnectConfig(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	for name, want := range map[string]string{"statement_timeout": "5s", "extra_float_digits": "2", "application_name": "to ol"} {
		var got string
		if err := conn.QueryRow(ctx, "SHOW "+name).Scan(&got); err != nil || got != want {
			t.Errorf("SHOW %s = %q (%v), want %q", name, got, err, want)
		}
	}
	cfg, _ = pgx.ParseConfig(srv.URL)
	cfg.RuntimeParams["options"] = "-c no_such_setting=1"
	if _, err := pgx.ConnectConfig(ctx, cfg); pgCode(err) != "42704" {
		t.Fatalf("unknown setting at startup: %v", err)
	}
}

// TestTxnCrash runs transfers, each a transaction over two tables, from
// several sessions while the server is killed: after the restart every
// acknowledged transaction is there, and no transaction is there in part
// (the table and the view over both agree).
func TestTxnCrash(t *testing.T) {
	srv := testserver.Start(t, testserver.Options{Crashable: true, BarrierInterval: 10 * time.Millisecond})
	ctx := context.Background()
	setup := connect(ctx, t, srv)
	for _, q := range []string{
		"CREATE TABLE acct (id int PRIMARY KEY, bal int)",
		"CREATE TABLE moves (id int, amount int)",
		"INSERT INTO acct SELECT g, 1000 FROM generate_series(1, 4) g",
		"CREATE MATERIALIZED VIEW balance AS SELECT a.id, a.bal + coalesce(m.total, 0) AS total FROM acct a LEFT JOIN (SELECT id, sum(amount) AS total FROM moves GROUP BY id) m ON m.id = a.id",
	} {
		if _, err := setup.Exec(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	var acked atomic.Int64
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for w := 1; w <= 4; w++ {
		conn, err := srv.Conn(ctx)
		if err != nil {
			t.Fatal(err)
		}
		wg.Add(1)
		go func(id int, conn *pgx.Conn) {
			defer wg.Done()
			defer conn.Close(context.Background())
			for amount := 1; ; amount++ {
				select {
				case <-stop:
					return
				default:
				}
				err := pgx.BeginFunc(ctx, conn, func(tx pgx.Tx) error {
					if _, err := tx.Exec(ctx, fmt.Sprintf("UPDATE acct SET bal = bal - %d WHERE id = %d", amount, id)); err != nil {
						return err
					}
					_, err := tx.Exec(ctx, fmt.Sprintf("INSERT INTO moves VALUES (%d, %d)", id, amount))
					return err
				})
				if err != nil {
					return // the server went away
				}
				acked.Add(1)
			}
		}(w, conn)
	}
	time.Sleep(300 * time.Millisecond)
	before := acked.Load()
	if err := srv.Kill(); err != nil {
		t.Fatal(err)
	}
	close(stop)
	wg.Wait()
	if before == 0 {
		t.Fatal("no transaction committed before the kill")
	}
	conn := connect(ctx, t, srv)
	var moves int64
	if err := conn.QueryRow(ctx, "SELECT count(*) FROM moves").Scan(&moves); err != nil {
		t.Fatal(err)
	}
	t.Logf("%d transactions acknowledged before the kill, %d after the restart", before, moves)
	if moves < before {
		t.Fatalf("%d transactions acknowledged before the kill, %d after the restart", before, moves)
	}
	// Each account's balance plus its moves is what it started with.
	got := queryText(ctx, t, conn, "SELECT a.id, a.bal + coalesce(sum(m.amount), 0) FROM acct a LEFT JOIN moves m ON m.id = a.id GROUP BY a.id, a.bal ORDER BY a.id")
	want := "1 1000\n2 1000\n3 1000\n4 1000\n"
	if got != want {
		t.Fatalf("a transaction survived in part:\n%s", got)
	}
	if got := queryText(ctx, t, conn, "SELECT id, total FROM balance ORDER BY id"); got != want {
		t.Fatalf("the view saw a transaction in part:\n%s", got)
	}
}

// TestTxnCopy checks that COPY FROM in a transaction block is part of it:
// the block reads the copied rows, ROLLBACK drops them, COMMIT keeps them.
func TestTxnCopy(t *testing.T) {
	srv := testserver.Start(t, testserver.Options{})
	ctx := context.Background()
	conn := connectMode(t, ctx, srv.URL, pgx.QueryExecModeCacheStatement)
	if _, err := conn.Exec(ctx, "CREATE TABLE c (k int PRIMARY KEY, v text)"); err != nil {
		t.Fatal(err)
	}
	rows := [][]any{{int32(1), "a"}, {int32(2), "b"}, {int32(3), "c"}}
	for _, commit := range []bool{false, true} {
		tx, err := conn.Begin(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if n, err := tx.CopyFrom(ctx, pgx.Identifier{"c"}, []string{"k", "v"}, pgx.CopyFromRows(rows)); err != nil || n != 3 {
			t.Fatalf("copy: %d %v", n, err)
		}
		var n int
		if err := tx.QueryRow(ctx, "SELECT count(*) FROM c").Scan(&n); err != nil || n != 3 {
			t.Fatalf("copied rows in the block: %d %v", n, err)
		}
		if commit {
			err = tx.Commit(ctx)
		} else {
			err = tx.Rollback(ctx)
		}
		if err != nil {
			t.Fatal(err)
		}
		want := 0
		if commit {
			want = 3
		}
		if err := conn.QueryRow(ctx, "SELECT count(*) FROM c").Scan(&n); err != nil || n != want {
			t.Fatalf("after the block (commit %v): %d rows, %v", commit, n, err)
		}
	}
}

// TestTxnNoLostUpdates runs read-modify-write transactions on one counter
// from several sessions, retrying on 40001: the counter ends at the number
// of transactions that committed, so none overwrote another's update. Under
// REPEATABLE READ the read may be a statement of its own (SELECT, then
// UPDATE with the value read); under READ COMMITTED, as in PostgreSQL, only
// an UPDATE that reads the row itself is safe.
func TestTxnNoLostUpdates(t *testing.T) {
	t.Run("repeatable read", func(t *testing.T) {
		testNoLostUpdates(t, pgx.TxOptions{IsoLevel: pgx.RepeatableRead}, func(ctx context.Context, tx pgx.Tx) error {
			var n int
			if err := tx.QueryRow(ctx, "SELECT n FROM counter WHERE id = 1").Scan(&n); err != nil {
				return err
			}
			_, err := tx.Exec(ctx, "UPDATE counter SET n = $1 WHERE id = 1", n+1)
			return err
		})
	})
	t.Run("read committed", func(t *testing.T) {
		testNoLostUpdates(t, pgx.TxOptions{}, func(ctx context.Context, tx pgx.Tx) error {
			if _, err := tx.Exec(ctx, "UPDATE counter SET n = n + 1 WHERE id = 1"); err != nil {
				return err
			}
			_, err := tx.Exec(ctx, "INSERT INTO log VALUES (1)")
			return err
		})
	})
}

func testNoLostUpdates(t *testing.T, opts pgx.TxOptions, increment func(context.Context, pgx.Tx) error) {
	srv := testserver.Start(t, testserver.Options{BarrierInterval: 5 * time.Millisecond})
	ctx := context.Background()
	setup := connect(ctx, t, srv)
	for _, q := range []string{"CREATE TABLE counter (id int PRIMARY KEY, n int)", "INSERT INTO counter VALUES (1, 0)", "CREATE TABLE log (x int)"} {
		if _, err := setup.Exec(ctx, q); err != nil {
			t.Fatal(err)
		}
	}
	const workers, each = 4, 15
	var conflicts atomic.Int64
	var wg sync.WaitGroup
	errs := make(chan error, workers)
	for range workers {
		conn := connectMode(t, ctx, srv.URL, pgx.QueryExecModeCacheStatement)
		wg.Add(1)
		go func() {
			defer wg.Done()
			for done := 0; done < each; {
				err := pgx.BeginTxFunc(ctx, conn, opts, func(tx pgx.Tx) error { return increment(ctx, tx) })
				switch {
				case err == nil:
					done++
				case pgCode(err) == "40001":
					conflicts.Add(1)
				default:
					errs <- err
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
	var n int
	if err := setup.QueryRow(ctx, "SELECT n FROM counter WHERE id = 1").Scan(&n); err != nil {
		t.Fatal(err)
	}
	t.Logf("%d commits, %d conflicts retried", workers*each, conflicts.Load())
	if n != workers*each {
		t.Fatalf("counter is %d after %d committed increments", n, workers*each)
	}
}
