package engine_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/streamsql/streamsql/internal/pgtest"
	"github.com/streamsql/streamsql/internal/testserver"
)

// pgSinkTarget starts the PostgreSQL a sink writes to, with tables agg
// (keyed by g), ups (keyed by k) and app (no key).
func pgSinkTarget(t testing.TB) (*pgtest.Server, *pgx.Conn, string) {
	pg := pgtest.StartT(t, pgtest.Options{})
	conn := cdcConnect(t, pg.URL)
	cdcExec(t, conn,
		"CREATE TABLE agg (g int PRIMARY KEY, c bigint, total numeric, s text, note text DEFAULT 'kept')",
		"CREATE TABLE ups (k int PRIMARY KEY, g int, n bigint, s varchar)",
		"CREATE TABLE app (k int, v text)")
	with := fmt.Sprintf("connector = 'postgres', host = '127.0.0.1', port = '%d', user = 'postgres', database = 'postgres'", pg.Port)
	return pg, conn, with
}

// pgSinkQuery is a sink's query, as text, for streamsql, and the same
// rows read from its target table.
type pgSinkQuery struct{ view, target string }

// pgSinkQueries are the sinks' queries over the table t, as text, for
// streamsql, and the same rows read from the target tables.
var pgSinkQueries = []pgSinkQuery{
	{"SELECT g::text, count(*)::text, sum(n)::text, max(s) FROM t GROUP BY g ORDER BY g",
		"SELECT g::text, c::text, total::text, s FROM agg ORDER BY g"},
	{"SELECT k::text, g::text, n::text, s FROM t ORDER BY k", "SELECT k::text, g::text, n::text, s FROM ups ORDER BY k"},
	{"SELECT k::text, v FROM ev ORDER BY k, v", "SELECT k::text, v FROM app ORDER BY k, v"},
}

// pgSinkAwait waits until each target table of qs holds its sink's rows.
func pgSinkAwait(t *testing.T, ctx context.Context, conn *pgx.Conn, target *pgx.Conn, qs []pgSinkQuery) {
	t.Helper()
	for _, q := range qs {
		want := cdcRows(t, conn, q.view)
		kwaitFor(t, ctx, q.target, func() (string, bool) {
			got := cdcRows(t, target, q.target)
			return fmt.Sprintf("target has\n%s\nthe view\n%s", got, want), got == want
		})
	}
}

// TestPostgresSink runs an upsert sink of a grouped query (keyed by its
// group key), an upsert sink of a table (primary_key) and an append-only
// sink, fed by inserts, updates and deletes, across a restart of
// streamsql and one of PostgreSQL: each target table ends equal to its
// sink's query, the append-only one with each insert once.
func TestPostgresSink(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	pg, target, with := pgSinkTarget(t)
	srv := testserver.Start(t, testserver.Options{BarrierInterval: 10 * time.Millisecond})
	conn := connect(ctx, t, srv)
	kexec(t, ctx, conn,
		"CREATE TABLE t (k int PRIMARY KEY, g int, n bigint, s text)",
		"CREATE TABLE ev (k int, v text) APPEND ONLY",
		"INSERT INTO t VALUES (1, 1, 10, 'a'), (2, 1, 20, E'tab\\there \\\\ \"q\"'), (3, 2, 30, NULL)",
		"CREATE SINK agg AS SELECT g, count(*) AS c, sum(n) AS total, max(s) AS s FROM t GROUP BY g WITH ("+with+", table = 'agg', type = 'upsert')",
		"CREATE SINK ups FROM t WITH ("+with+", table = 'ups', type = 'upsert', primary_key = 'k')",
		"CREATE SINK app FROM ev WITH ("+with+", schema = 'public', table = 'app', type = 'append-only')",
	)
	step := func(i int) {
		kexec(t, ctx, conn,
			fmt.Sprintf("INSERT INTO t VALUES (%d, %d, %d, E'x%d\\n')", 10+i, i%4, i, i),
			fmt.Sprintf("UPDATE t SET n = n + 1, g = (g + 1) %% 5 WHERE k %% 7 = %d", i%7),
			fmt.Sprintf("UPDATE t SET k = k + 1000 WHERE k = %d", 10+i/2),
			fmt.Sprintf("DELETE FROM t WHERE k = %d", 5+i),
			fmt.Sprintf("INSERT INTO ev VALUES (%d, 'e'), (%d, NULL)", i, i),
		)
	}
	for i := 0; i < 15; i++ {
		step(i)
	}
	pgSinkAwait(t, ctx, conn, target, pgSinkQueries)
	if err := srv.Restart(); err != nil {
		t.Fatal(err)
	}
	conn = connect(ctx, t, srv)
	for i := 15; i < 30; i++ {
		step(i)
	}
	if err := pg.Restart(); err != nil {
		t.Fatal(err)
	}
	target = cdcConnect(t, pg.URL)
	for i := 30; i < 45; i++ {
		step(i)
	}
	pgSinkAwait(t, ctx, conn, target, pgSinkQueries)
	if got := cdcRows(t, target, "SELECT DISTINCT note FROM agg"); got != "kept\n" {
		t.Errorf("a target column the sink lacks: %q, want its default", got)
	}
	var sinks int
	if err := target.QueryRow(ctx, "SELECT count(*) FROM streamsql_sink_progress WHERE epoch > 0").Scan(&sinks); err != nil || sinks != 3 {
		t.Errorf("progress rows: %d, %v; want 3", sinks, err)
	}
}

// TestPostgresSinkOutage takes PostgreSQL down while changes go on: the
// sink says it is retrying, the view keeps running, and once PostgreSQL is
// back the sink catches up.
func TestPostgresSinkOutage(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	pg, _, with := pgSinkTarget(t)
	srv := testserver.Start(t, testserver.Options{BarrierInterval: 10 * time.Millisecond})
	conn := connect(ctx, t, srv)
	kexec(t, ctx, conn,
		"CREATE TABLE t (k int PRIMARY KEY, g int, n bigint, s text)",
		"CREATE TABLE ev (k int, v text) APPEND ONLY",
		"CREATE SINK ups FROM t WITH ("+with+", table = 'ups', type = 'upsert')",
		"CREATE SINK app FROM ev WITH ("+with+", table = 'app', type = 'append-only')",
		"CREATE MATERIALIZED VIEW n AS SELECT count(*) AS n FROM t",
		"INSERT INTO t VALUES (1, 1, 1, 'a')",
	)
	if err := pg.Down(); err != nil {
		t.Fatal(err)
	}
	for i := 2; i < 40; i++ {
		kexec(t, ctx, conn,
			fmt.Sprintf("INSERT INTO t VALUES (%d, 0, %d, 's')", i, i),
			fmt.Sprintf("UPDATE t SET n = n * 2 WHERE k = %d", i/2),
			fmt.Sprintf("DELETE FROM t WHERE k = %d", i/3),
			fmt.Sprintf("INSERT INTO ev VALUES (%d, 'v')", i),
		)
	}
	kwaitFor(t, ctx, "sink status", func() (string, bool) {
		var status string
		if err := conn.QueryRow(ctx, "SELECT status FROM streamsql_sinks WHERE name = 'ups'").Scan(&status); err != nil {
			return err.Error(), false
		}
		return status, strings.HasPrefix(status, "retrying: ") && strings.Contains(status, "could not connect to PostgreSQL")
	})
	if got := cdcRows(t, conn, "SELECT n FROM n"); got != cdcRows(t, conn, "SELECT count(*) FROM t") {
		t.Errorf("the view did not go on: %s", got)
	}
	if err := pg.Up(); err != nil {
		t.Fatal(err)
	}
	target := cdcConnect(t, pg.URL)
	pgSinkAwait(t, ctx, conn, target, pgSinkQueries[1:]) // ups and app
	kwaitFor(t, ctx, "sink status", func() (string, bool) {
		var status string
		if err := conn.QueryRow(ctx, "SELECT status FROM streamsql_sinks WHERE name = 'ups'").Scan(&status); err != nil {
			return err.Error(), false
		}
		return status, status == "running"
	})
}

// TestPostgresSinkErrors checks CREATE SINK's errors: bad options, an
// unreachable server, and target tables that do not fit the sink.
func TestPostgresSinkErrors(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	_, target, with := pgSinkTarget(t)
	cdcExec(t, target,
		"CREATE TABLE narrow (k int PRIMARY KEY, g smallint, n bigint, s text)",
		"CREATE TABLE short (k int PRIMARY KEY, g int, n bigint, s varchar(3))",
		"CREATE TABLE nokey (k int, g int, n bigint, s text)",
		"CREATE TABLE extra (k int PRIMARY KEY, g int, n bigint, s text, must int NOT NULL)",
		"CREATE TABLE nos (k int PRIMARY KEY, g int, n bigint)")
	srv := testserver.Start(t, testserver.Options{})
	conn := connect(ctx, t, srv)
	kexec(t, ctx, conn, "CREATE TABLE t (k int PRIMARY KEY, g int, n bigint, s text)")
	free, err := pgtest.FreePort()
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ sql, code, msg string }{
		{"FROM t WITH (" + with + ", table = 'ups')", "22023", "needs the option type"},
		{"FROM t WITH (" + with + ", table = 'ups', type = 'merge')", "22023", "type must be"},
		{"FROM t WITH (" + with + ", table = 'app', type = 'append-only')", "22023", "cannot be append-only"},
		{"FROM t WITH (" + with + ", table = 'ups', type = 'upsert', colour = 'red')", "22023", `unknown option "colour"`},
		{"FROM t WITH (" + with + ", type = 'upsert')", "22023", "needs the option table"},
		{"FROM t WITH (" + with + ", table = 'ups', type = 'upsert', primary_key = 'nope')", "42703", `"nope"`},
		{"AS SELECT g, n FROM t WITH (" + with + ", table = 'ups', type = 'upsert')", "22023", "needs a primary key"},
		{"FROM t WITH (" + with + ", table = 'ups', type = 'upsert') FORMAT UPSERT ENCODE JSON", "0A000", "FORMAT"},
		{fmt.Sprintf("FROM t WITH (connector = 'postgres', host = '127.0.0.1', port = '%d', user = 'postgres', table = 'ups', type = 'upsert')", free), "08001", "could not connect"},
		{"FROM t WITH (" + with + ", table = 'missing', type = 'upsert')", "42P01", "does not exist"},
		{"FROM t WITH (" + with + ", schema = 'nope', table = 'ups', type = 'upsert')", "42P01", "does not exist"},
		{"FROM t WITH (" + with + ", table = 'narrow', type = 'upsert')", "42804", `column "g" of sink s is integer, which does not fit column "g" of target table public.narrow: smallint`},
		{"FROM t WITH (" + with + ", table = 'short', type = 'upsert')", "42804", "character varying(3)"},
		{"FROM t WITH (" + with + ", table = 'nos', type = 'upsert')", "42703", `column "s" of sink s is not a column`},
		{"FROM t WITH (" + with + ", table = 'extra', type = 'upsert')", "23502", `"must"`},
		{"FROM t WITH (" + with + ", table = 'nokey', type = 'upsert')", "42P10", "no primary key or unique index on (k)"},
		{"FROM t WITH (" + with + ", table = 'ups', type = 'upsert', primary_key = 'g')", "42P10", "on (g)"},
	} {
		_, err := conn.Exec(ctx, "CREATE SINK s "+c.sql)
		var pe *pgconn.PgError
		if !errors.As(err, &pe) || pe.Code != c.code || !strings.Contains(pe.Message, c.msg) {
			t.Errorf("%s: got %v, want %s with %q", c.sql, err, c.code, c.msg)
		}
	}
	// A wider target type fits.
	cdcExec(t, target, "CREATE TABLE wide (k bigint PRIMARY KEY, g numeric, n numeric(30, 2), s text)")
	kexec(t, ctx, conn, "CREATE SINK s FROM t WITH ("+with+", table = 'wide', type = 'upsert')")
}

// TestPostgresSinkTypes writes a row of every sinkable type, and NULLs,
// through an upsert sink: the target reads back each value as streamsql
// shows it.
func TestPostgresSinkTypes(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	_, target, with := pgSinkTarget(t)
	cols := "k int PRIMARY KEY, b boolean, i2 smallint, r real, d double precision, n numeric(10,2), u numeric, " +
		"dt date, ts timestamp, tz timestamptz, iv interval, by bytea, id uuid, j jsonb, ia int[], ta text[], vc varchar(5)"
	cdcExec(t, target, "CREATE TABLE ty ("+cols+")", "SET TIME ZONE 'UTC'")
	srv := testserver.Start(t, testserver.Options{BarrierInterval: 10 * time.Millisecond})
	conn := connect(ctx, t, srv)
	kexec(t, ctx, conn,
		"SET TIME ZONE 'UTC'",
		"CREATE TABLE ty ("+cols+")",
		"CREATE SINK s FROM ty WITH ("+with+", table = 'ty', type = 'upsert')",
		`INSERT INTO ty VALUES (1, true, -3, 1.5, 0.1, 12345678.91, -0.000123, '2024-02-29', '2024-01-02 03:04:05.123456',
			'2024-01-02 03:04:05+02', '1 year 2 mons 3 days 04:05:06.5', '\x00ff5c0a', 'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11',
			'{"a": [1, "x\ty"], "b": null}', ARRAY[1, NULL, 3], ARRAY['a b', 'c"d', 'e\f', NULL], 'abc')`,
		"INSERT INTO ty (k) VALUES (2)",
	)
	var q strings.Builder
	q.WriteString("SELECT k::text")
	for _, c := range strings.Split(cols, ", ")[1:] {
		fmt.Fprintf(&q, ", %s::text", strings.Fields(c)[0])
	}
	q.WriteString(" FROM ty ORDER BY k")
	pgSinkAwait(t, ctx, conn, target, []pgSinkQuery{{q.String(), q.String()}})
}

// TestPostgresSinkTargetError drops the target table while the sink runs:
// an error that retrying cannot fix by itself (42P01) is retried, shown in
// streamsql_sinks with its reason while the changes wait in the outbox, and
// once the table is back the sink catches up. DROP SINK leaves the sink's
// progress row in the target database.
func TestPostgresSinkTargetError(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	_, target, with := pgSinkTarget(t)
	srv := testserver.Start(t, testserver.Options{BarrierInterval: 10 * time.Millisecond})
	conn := connect(ctx, t, srv)
	kexec(t, ctx, conn,
		"CREATE TABLE t (k int PRIMARY KEY, g int, n bigint, s text)",
		"CREATE SINK ups FROM t WITH ("+with+", table = 'ups', type = 'upsert')",
		"INSERT INTO t VALUES (1, 1, 1, 'a')",
	)
	pgSinkAwait(t, ctx, conn, target, pgSinkQueries[1:2])
	cdcExec(t, target, "DROP TABLE ups")
	kexec(t, ctx, conn, "INSERT INTO t VALUES (2, 2, 2, 'b')", "UPDATE t SET n = 10 WHERE k = 1")
	kwaitFor(t, ctx, "sink status", func() (string, bool) {
		var status string
		if err := conn.QueryRow(ctx, "SELECT status FROM streamsql_sinks WHERE name = 'ups'").Scan(&status); err != nil {
			return err.Error(), false
		}
		return status, strings.HasPrefix(status, "retrying: ") && strings.Contains(status, "does not exist")
	})
	cdcExec(t, target, "CREATE TABLE ups (k int PRIMARY KEY, g int, n bigint, s varchar)")
	pgSinkAwait(t, ctx, conn, target, pgSinkQueries[1:2])
	kexec(t, ctx, conn, "DROP SINK ups")
	var rows int
	if err := target.QueryRow(ctx, "SELECT count(*) FROM streamsql_sink_progress").Scan(&rows); err != nil || rows != 1 {
		t.Errorf("progress rows after DROP SINK: %d, %v; want 1 (kept)", rows, err)
	}
}
