package engine_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/streamsql/streamsql/internal/pgtest"
	"github.com/streamsql/streamsql/internal/testserver"
)

// cdcUpstream starts a PostgreSQL with logical replication and a table t
// in publication pub.
func cdcUpstream(t testing.TB) (*pgtest.Server, *pgx.Conn) {
	up := pgtest.StartT(t, pgtest.Options{Settings: map[string]string{"wal_level": "logical", "max_replication_slots": "10", "max_wal_senders": "10"}})
	conn := cdcConnect(t, up.URL)
	cdcExec(t, conn, `CREATE TABLE t (id int PRIMARY KEY, name text, v int)`,
		`INSERT INTO t SELECT i, 'n' || (i % 3), i * 10 FROM generate_series(1, 50) i`,
		`CREATE PUBLICATION pub FOR TABLE t`)
	return up, conn
}

func cdcConnect(t testing.TB, url string) *pgx.Conn {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	cfg, err := pgx.ParseConfig(url)
	if err != nil {
		t.Fatal(err)
	}
	cfg.DefaultQueryExecMode = pgx.QueryExecModeSimpleProtocol
	conn, err := pgx.ConnectConfig(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close(context.Background()) })
	return conn
}

func cdcExec(t testing.TB, conn *pgx.Conn, stmts ...string) {
	t.Helper()
	for _, s := range stmts {
		if _, err := conn.Exec(context.Background(), s); err != nil {
			t.Fatalf("%s: %v", s, err)
		}
	}
}

// cdcRows runs q and renders its rows, one a line.
func cdcRows(t testing.TB, conn *pgx.Conn, q string) string {
	t.Helper()
	rows, err := conn.Query(context.Background(), q)
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

const (
	cdcTableQuery = `SELECT id, name, v FROM t ORDER BY id`
	cdcViewQuery  = `SELECT name, count(*) AS n, sum(v) AS s FROM t GROUP BY name`
)

// cdcAwaitSame waits until streamsql's table and view hold the upstream
// table and the view's query run upstream.
func cdcAwaitSame(t *testing.T, up, ss *pgx.Conn) {
	t.Helper()
	wantT := cdcRows(t, up, cdcTableQuery)
	wantV := cdcRows(t, up, cdcViewQuery+` ORDER BY name`)
	var gotT, gotV string
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		gotT = cdcRows(t, ss, cdcTableQuery)
		gotV = cdcRows(t, ss, `SELECT * FROM mv ORDER BY name`)
		if gotT == wantT && gotV == wantV {
			return
		}
	}
	t.Fatalf("streamsql differs from upstream:\ntable:\n%s\nwant:\n%s\nview:\n%s\nwant:\n%s", gotT, wantT, gotV, wantV)
}

// TestCDCSource feeds a table and a view over it from a PostgreSQL table
// through its snapshot and its change stream, across a restart of the
// upstream and a kill -9 of streamsql.
func TestCDCSource(t *testing.T) {
	up, upc := cdcUpstream(t)
	ss := testserver.Start(t, testserver.Options{Crashable: true})
	ssc := cdcConnect(t, ss.URL)
	cdcExec(t, ssc, fmt.Sprintf(`CREATE SOURCE pg WITH (connector = 'postgres-cdc', hostname = '127.0.0.1', port = '%d',
		username = 'postgres', password = '', database.name = 'postgres', slot.name = 'ss', publication.name = 'pub')`, up.Port),
		`CREATE TABLE t (id int PRIMARY KEY, name text, v int) FROM pg TABLE 'public.t'`,
		`CREATE MATERIALIZED VIEW mv AS `+cdcViewQuery)
	// The snapshot is committed when CREATE TABLE returns.
	if got, want := cdcRows(t, ssc, cdcTableQuery), cdcRows(t, upc, cdcTableQuery); got != want {
		t.Fatalf("snapshot:\n%s\nwant:\n%s", got, want)
	}
	cdcAwaitSame(t, upc, ssc)
	if _, err := ssc.Exec(context.Background(), `INSERT INTO t VALUES (1000, 'x', 1)`); err == nil || !strings.Contains(err.Error(), "fed by source pg") {
		t.Fatalf("INSERT into a CDC table: %v", err)
	}

	changes := func(round int) {
		base := 100 * (round + 1)
		cdcExec(t, upc,
			fmt.Sprintf(`INSERT INTO t SELECT i, 'n' || (i %% 4), i FROM generate_series(%d, %d) i`, base, base+20),
			fmt.Sprintf(`UPDATE t SET v = v + 1, name = 'u%d' WHERE id %% 5 = %d`, round, round%5),
			fmt.Sprintf(`UPDATE t SET id = id + 10000 WHERE id = %d`, base+3), // a key change
			fmt.Sprintf(`DELETE FROM t WHERE id %% 7 = %d`, round%7),
			`BEGIN`, fmt.Sprintf(`INSERT INTO t VALUES (%d, NULL, NULL)`, base+50), fmt.Sprintf(`DELETE FROM t WHERE id = %d`, base+1), `COMMIT`)
	}
	changes(0)
	cdcAwaitSame(t, upc, ssc)
	cdcAwaitConfirmed(t, upc, ssc)

	// The upstream restarts: replication reconnects.
	if err := up.Restart(); err != nil {
		t.Fatal(err)
	}
	upc = cdcConnect(t, up.URL)
	changes(1)
	cdcAwaitSame(t, upc, ssc)

	// kill -9 of streamsql, with changes before and while it is down.
	changes(2)
	if err := ss.Kill(); err != nil {
		t.Fatal(err)
	}
	changes(3)
	ssc = cdcConnect(t, ss.URL)
	cdcAwaitSame(t, upc, ssc)

	cdcExec(t, upc, `TRUNCATE t`, `INSERT INTO t VALUES (1, 'a', 1), (2, 'b', 2)`)
	cdcAwaitSame(t, upc, ssc)

	// One upstream transaction is applied as one batch: its changes of the
	// same key see each other, and a truncate inside it comes in its place.
	cdcExec(t, upc, `BEGIN`, `INSERT INTO t VALUES (3, 'c', 3)`, `UPDATE t SET v = 30 WHERE id = 3`,
		`UPDATE t SET id = 4 WHERE id = 3`, `INSERT INTO t VALUES (3, 'd', 5)`, `UPDATE t SET id = 2 WHERE id = 2`,
		`DELETE FROM t WHERE id = 1`, `INSERT INTO t VALUES (1, 'e', 6)`, `UPDATE t SET id = 5 WHERE id = 4`, `COMMIT`)
	cdcAwaitSame(t, upc, ssc)
	cdcExec(t, upc, `BEGIN`, `INSERT INTO t VALUES (6, 'f', 6)`, `TRUNCATE t`, `INSERT INTO t VALUES (6, 'g', 7), (7, 'h', 8)`,
		`UPDATE t SET v = v + 1`, `DELETE FROM t WHERE id = 7`, `COMMIT`)
	cdcAwaitSame(t, upc, ssc)
}

// cdcAwaitConfirmed waits until the upstream slot's confirmed LSN is the one
// streamsql_cdc reports, with the reader streaming.
func cdcAwaitConfirmed(t *testing.T, up, ss *pgx.Conn) {
	t.Helper()
	var got, want string
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		got = cdcRows(t, ss, `SELECT source, "table", upstream_table, slot, confirmed_lsn, status FROM streamsql_cdc`)
		want = cdcRows(t, up, `SELECT 'pg', 't', 'public.t', slot_name, confirmed_flush_lsn::text, 'streaming' FROM pg_replication_slots`)
		if got == want {
			return
		}
	}
	t.Fatalf("streamsql_cdc:\n%s\nwant:\n%s", got, want)
}

// TestCDCCreateErrors checks CREATE SOURCE and CREATE TABLE ... FROM
// against upstreams that cannot serve them.
func TestCDCCreateErrors(t *testing.T) {
	up, upc := cdcUpstream(t)
	replica := pgtest.StartT(t, pgtest.Options{})
	ss := testserver.Start(t, testserver.Options{})
	ssc := cdcConnect(t, ss.URL)
	source := func(name string, port int, pub string, extra string) string {
		return fmt.Sprintf(`CREATE SOURCE %s WITH (connector = 'postgres-cdc', hostname = '127.0.0.1', port = '%d',
			username = 'postgres', slot.name = 'ss', publication.name = '%s'%s)`, name, port, pub, extra)
	}
	fails := func(stmt, code, msg string) {
		t.Helper()
		_, err := ssc.Exec(context.Background(), stmt)
		if err == nil || !strings.Contains(err.Error(), code) || !strings.Contains(err.Error(), msg) {
			t.Fatalf("%s: got %v, want %s %q", stmt, err, code, msg)
		}
	}
	fails(source("a", replica.Port, "pub", ""), "55000", "wal_level = replica")
	fails(source("a", up.Port, "nopub", ""), "42704", `publication "nopub" does not exist`)
	cdcExec(t, upc, `CREATE TABLE other (k int PRIMARY KEY, w text)`)
	cdcExec(t, ssc, source("pg", up.Port, "pub", ""), source("auto", up.Port, "newpub", ", publication.create.enable = 'true'"))
	fails(`CREATE TABLE t (id int PRIMARY KEY, nope int) FROM pg TABLE 'public.t'`, "42703", `column "nope" is not a column of upstream table public.t`)
	fails(`CREATE TABLE t (id smallint PRIMARY KEY, name text) FROM pg TABLE 'public.t'`, "42804", `column "id" is declared smallint, but upstream column public.t.id is integer`)
	fails(`CREATE TABLE t (id int PRIMARY KEY, name int) FROM pg TABLE 'public.t'`, "42804", `column "name" is declared integer, but upstream column public.t.name is text`)
	fails(`CREATE TABLE t (id int PRIMARY KEY, name varchar(2)) FROM pg TABLE 'public.t'`, "42804", `upstream column public.t.name is text`)
	fails(`CREATE TABLE t (id int, name text PRIMARY KEY) FROM pg TABLE 'public.t'`, "42P17", "is not the primary key of upstream table public.t (id)")
	fails(`CREATE TABLE t (id int PRIMARY KEY) FROM pg TABLE 'public.missing'`, "42P01", "upstream table public.missing does not exist")
	fails(`CREATE TABLE o (k int PRIMARY KEY, w text) FROM pg TABLE 'other'`, "42704", `not in publication "pub"`)
	// publication.create.enable: the publication was created, and the table
	// is added to it.
	cdcExec(t, ssc, `CREATE TABLE o (k int PRIMARY KEY, w text) FROM auto TABLE 'other'`)
	if got := cdcRows(t, upc, `SELECT tablename FROM pg_publication_tables WHERE pubname = 'newpub'`); got != "other\n" {
		t.Fatalf("newpub has %q", got)
	}
	cdcExec(t, upc, `INSERT INTO other VALUES (1, 'x')`)
	for deadline := time.Now().Add(10 * time.Second); cdcRows(t, ssc, `SELECT * FROM o`) != "1 x\n"; time.Sleep(50 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("o has %q", cdcRows(t, ssc, `SELECT * FROM o`))
		}
	}
	fails(`UPDATE o SET w = 'y'`, "42809", "fed by source auto")
	fails(`DELETE FROM o`, "42809", "fed by source auto")
	// Dropping the table drops its slot upstream.
	cdcExec(t, ssc, `DROP TABLE o`)
	for deadline := time.Now().Add(10 * time.Second); cdcRows(t, upc, `SELECT count(*) FROM pg_replication_slots`) != "0\n"; time.Sleep(50 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("slots left: %s", cdcRows(t, upc, `SELECT slot_name FROM pg_replication_slots`))
		}
	}
}
