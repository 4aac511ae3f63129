package engine_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/streamsql/streamsql/internal/testserver"
)

// TestDatabases checks that databases are namespaces of their own: the same
// names hold different relations in each, a database and what is in it
// survive a crash, and DROP DATABASE refuses what PostgreSQL refuses and
// removes everything else.
func TestDatabases(t *testing.T) {
	ctx := context.Background()
	srv := testserver.Start(t, testserver.Options{Crashable: true})
	connect := func(db string) *pgx.Conn {
		t.Helper()
		cfg, err := pgx.ParseConfig(strings.Replace(srv.URL, "/dev?", "/"+db+"?", 1))
		if err != nil {
			t.Fatal(err)
		}
		cfg.DefaultQueryExecMode = pgx.QueryExecModeSimpleProtocol
		c, err := pgx.ConnectConfig(ctx, cfg)
		if err != nil {
			t.Fatalf("connecting to %s: %v", db, err)
		}
		return c
	}
	exec := func(c *pgx.Conn, sql string) {
		t.Helper()
		if _, err := c.Exec(ctx, sql); err != nil {
			t.Fatalf("%s: %v", sql, err)
		}
	}
	wantCode := func(err error, code string) {
		t.Helper()
		var pe *pgconn.PgError
		if !errors.As(err, &pe) || pe.Code != code {
			t.Fatalf("got %v, want SQLSTATE %s", err, code)
		}
	}
	one := func(c *pgx.Conn, sql string) string {
		t.Helper()
		var s string
		if err := c.QueryRow(ctx, sql).Scan(&s); err != nil {
			t.Fatalf("%s: %v", sql, err)
		}
		return s
	}

	dev := connect("dev")
	exec(dev, "CREATE DATABASE other")
	_, err := dev.Exec(ctx, "CREATE DATABASE other")
	wantCode(err, "42P04")
	exec(dev, "CREATE TABLE t (a int)")
	exec(dev, "INSERT INTO t VALUES (1)")

	other := connect("other")
	if got := one(other, "SELECT current_database()"); got != "other" {
		t.Fatalf("current_database() = %q", got)
	}
	_, err = other.Exec(ctx, "SELECT * FROM t")
	wantCode(err, "42P01")
	exec(other, "CREATE TABLE t (a int, b text)")
	exec(other, "INSERT INTO t VALUES (2, 'x'), (3, 'y')")
	exec(other, "CREATE SCHEMA s")
	exec(other, "CREATE TABLE s.u (k int PRIMARY KEY)")
	exec(other, "CREATE MATERIALIZED VIEW v AS SELECT count(*) AS n, sum(a) AS s FROM t")
	exec(other, "CREATE INDEX t_a ON t (a)")
	exec(other, "CREATE FUNCTION twice(x int) RETURNS int LANGUAGE SQL RETURN 2 * x")
	if _, err := dev.Exec(ctx, "SELECT twice(1)"); err == nil {
		t.Fatal("a function of database other is callable in dev")
	}
	if got := one(other, "SELECT n || ',' || s FROM v"); got != "2,5" {
		t.Fatalf("view in other: %q", got)
	}
	if got := one(dev, "SELECT count(*)::text FROM streamsql_views"); got != "0" {
		t.Fatalf("dev sees %s views of other", got)
	}
	// An index name is taken per database.
	exec(dev, "CREATE INDEX t_a ON t (a)")

	other.Close(ctx)
	dev.Close(ctx)
	if err := srv.Kill(); err != nil {
		t.Fatal(err)
	}
	dev, other = connect("dev"), connect("other")
	exec(other, "INSERT INTO t VALUES (4, 'z')")
	if got := one(other, "SELECT n || ',' || s FROM v"); got != "3,9" {
		t.Fatalf("view in other after the crash: %q", got)
	}
	if got := one(dev, "SELECT sum(a)::text FROM t"); got != "1" {
		t.Fatalf("t in dev after the crash: %q", got)
	}

	_, err = other.Exec(ctx, "DROP DATABASE other")
	wantCode(err, "55006")
	_, err = dev.Exec(ctx, "DROP DATABASE nope")
	wantCode(err, "3D000")
	exec(dev, "DROP DATABASE IF EXISTS nope")
	if got := one(other, "SELECT twice(21)::text"); got != "42" {
		t.Fatalf("twice(21) after the crash: %q", got)
	}
	other.Close(ctx)
	exec(dev, "DROP DATABASE other")
	if _, err := pgx.Connect(ctx, strings.Replace(srv.URL, "/dev?", "/other?", 1)); err == nil {
		t.Fatal("connected to a dropped database")
	} else {
		wantCode(err, "3D000")
	}
	// The name is free again, and empty.
	exec(dev, "CREATE DATABASE other")
	other = connect("other")
	_, err = other.Exec(ctx, "SELECT * FROM t")
	wantCode(err, "42P01")
	if got := one(other, "SELECT count(*)::text FROM streamsql_views"); got != "0" {
		t.Fatalf("a new database of the old name has %s views", got)
	}
	exec(other, "CREATE TABLE t (a int)")
	exec(other, "CREATE INDEX t_a ON t (a)")
	exec(other, "CREATE FUNCTION twice(x int) RETURNS int LANGUAGE SQL RETURN 2 * x")
}
