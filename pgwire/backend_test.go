package pgwire

import (
	"context"
	"errors"
	"testing"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/streamsql/streamsql/sqlerr"
)

// TestBackendSignals: the Backend in a query's context has the process id
// BackendKeyData sent; its Cancel fails the query with 57014 as a
// CancelRequest does, and its Terminate ends the connection with 57P01.
func TestBackendSignals(t *testing.T) {
	ts, done := setup(t)
	defer done()
	conn := connectPgx(t, ts, "")
	ctx := context.Background()
	run := func() chan error {
		errc := make(chan error, 1)
		go func() {
			_, err := conn.Exec(ctx, "block")
			errc <- err
		}()
		return errc
	}
	wantCode := func(err error, code string) {
		t.Helper()
		var pe *pgconn.PgError
		if !errors.As(err, &pe) || pe.Code != code {
			t.Fatalf("signalled query returned %v, want %s", err, code)
		}
	}

	errc := run()
	b, ok := BackendOf(<-ts.e.blocked)
	if !ok || b.PID() != conn.PgConn().PID() {
		t.Fatalf("BackendOf: %v, pid %d; BackendKeyData sent %d", ok, b.PID(), conn.PgConn().PID())
	}
	b.Cancel()
	<-ts.e.unblocked
	wantCode(<-errc, sqlerr.QueryCanceled)

	errc = run()
	<-ts.e.blocked
	b.Terminate()
	<-ts.e.unblocked
	wantCode(<-errc, sqlerr.AdminShutdown)
	if _, ok := BackendOf(ctx); ok {
		t.Error("BackendOf a context of no connection")
	}
}
