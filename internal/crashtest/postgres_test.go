package crashtest

import (
	"context"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/streamsql/streamsql/internal/pgtest"
)

// postgres is a throwaway PostgreSQL that TestCrashRecovery loads with the
// committed tables after every restart, to run the views' definitions
// (as plain views, so views over views work) and compare them with
// streamsql's materialized views. Its methods run on the test goroutine.
type postgres struct {
	conn *pgx.Conn
}

func startPostgres(t *testing.T) *postgres {
	srv := pgtest.StartT(t, pgtest.Options{Settings: map[string]string{"timezone": "UTC"}})
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	conn, err := pgx.Connect(ctx, srv.URL)
	if err != nil {
		t.Fatalf("connecting to PostgreSQL: %v", err)
	}
	t.Cleanup(func() { conn.Close(context.Background()) })
	return &postgres{conn: conn}
}

// load replaces PostgreSQL's tables and views with the committed rows of
// acct and events (as read from streamsql) and views (in creation order).
func (p *postgres) load(ctx context.Context, acct, events [][]string, views []*viewDef) error {
	stmts := []string{"DROP SCHEMA IF EXISTS crash CASCADE", "CREATE SCHEMA crash", "SET search_path = crash",
		createAcct, createEvents}
	for _, s := range stmts {
		if _, err := p.conn.Exec(ctx, s); err != nil {
			return err
		}
	}
	for _, t := range []struct {
		name string
		cols []string
		rows [][]string
	}{
		{"acct", []string{"id", "client", "grp", "amount", "note"}, acct},
		{"events", []string{"client", "seq", "grp", "val", "tag"}, events},
	} {
		src := make([][]any, len(t.rows))
		for i, r := range t.rows {
			src[i] = make([]any, len(r))
			for j, c := range r {
				src[i][j] = c
			}
		}
		// Text values: PostgreSQL converts them to the column types.
		if _, err := p.conn.CopyFrom(ctx, pgx.Identifier{"crash", t.name}, t.cols, pgx.CopyFromRows(src)); err != nil {
			return err
		}
	}
	for _, v := range views {
		if _, err := p.conn.Exec(ctx, "CREATE VIEW "+v.name+" AS "+v.query); err != nil {
			return err
		}
	}
	return nil
}

// query runs q and returns its rows as text. Numerics print as streamsql
// prints them: with PostgreSQL's display scale.
func (p *postgres) query(ctx context.Context, q string) ([][]string, error) {
	return queryRows(ctx, p.conn, q)
}
