package engine_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/streamsql/streamsql/internal/testserver"
)

// TestInsertDuplicateKeys checks that an INSERT reports the first row, in
// statement order, whose key exists or repeats an earlier row's (as
// PostgreSQL, inserting row by row, does), writes nothing then, and that
// appends beyond the table's keys and inserts between them both work.
func TestInsertDuplicateKeys(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	srv := testserver.Start(t, testserver.Options{})
	conn := connectMode(t, ctx, srv.URL, pgx.QueryExecModeSimpleProtocol)
	exec := func(sql string) error {
		_, err := conn.Exec(ctx, sql)
		return err
	}
	if err := exec("CREATE TABLE k (a int, b text, v int, PRIMARY KEY (a, b))"); err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{
		"INSERT INTO k VALUES (10, 'x', 1), (20, 'x', 2), (30, 'x', 3)",
		"INSERT INTO k SELECT g, 'y', g FROM generate_series(31, 5000) AS g", // an append
		"INSERT INTO k VALUES (15, 'x', 0), (25, 'x', 0), (10, 'y', 0)",      // between keys
	} {
		if err := exec(q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	for _, c := range []struct{ sql, detail string }{
		{"INSERT INTO k VALUES (6000, 'z', 0), (20, 'x', 0), (6000, 'z', 0)", "Key (a, b)=(20, x) already exists."},
		{"INSERT INTO k VALUES (7000, 'z', 0), (7001, 'z', 0), (7000, 'z', 0), (30, 'x', 0)", "Key (a, b)=(7000, z) already exists."},
		{"INSERT INTO k VALUES (8000, 'z', 0), (8000, 'z', 0)", "Key (a, b)=(8000, z) already exists."},
	} {
		err := exec(c.sql)
		var pe *pgconn.PgError
		if !errors.As(err, &pe) || pe.Code != "23505" || pe.Detail != c.detail {
			t.Errorf("%s: %v (detail %q), want 23505 with %q", c.sql, err, detailOf(err), c.detail)
		}
	}
	var n int64
	if err := conn.QueryRow(ctx, "SELECT count(*) FROM k").Scan(&n); err != nil || n != 4976 {
		t.Fatalf("%d rows, %v; want 4976", n, err)
	}
}

func detailOf(err error) string {
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		return pe.Detail
	}
	return ""
}
