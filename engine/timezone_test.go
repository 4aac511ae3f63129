package engine_test

import (
	"context"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"

	"github.com/streamsql/streamsql/internal/testserver"
)

// TestTimeZoneWire checks the TimeZone of a session over the wire: the
// startup parameter, the ParameterStatus reports, timestamptz text in the
// zone, zone-free binary values, and text parameters read in the zone.
func TestTimeZoneWire(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	srv := testserver.Start(t, testserver.Options{})

	cfg, err := pgx.ParseConfig(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	cfg.RuntimeParams["TimeZone"] = "asia/kolkata"
	conn, err := pgx.ConnectConfig(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	if got := conn.PgConn().ParameterStatus("TimeZone"); got != "Asia/Kolkata" {
		t.Fatalf("TimeZone at startup: %q", got)
	}
	instant := time.Date(2024, 7, 1, 12, 0, 0, 0, time.UTC)

	var text string
	if err := conn.QueryRow(ctx, "SELECT '2024-07-01 12:00+00'::timestamptz", pgx.QueryExecModeSimpleProtocol).Scan(&text); err != nil {
		t.Fatal(err)
	}
	if text != "2024-07-01 17:30:00+05:30" {
		t.Errorf("text output %q", text)
	}
	// Binary: the instant, whatever the zone.
	var bin pgtype.Timestamptz
	if err := conn.QueryRow(ctx, "SELECT '2024-07-01 12:00+00'::timestamptz").Scan(&bin); err != nil {
		t.Fatal(err)
	}
	if !bin.Time.Equal(instant) {
		t.Errorf("binary value %v, want %v", bin.Time, instant)
	}
	// A text parameter without offset is local time in the session's zone.
	var back string
	if err := conn.QueryRow(ctx, "SELECT $1::timestamptz::text", pgx.QueryExecModeExec, "2024-07-01 17:30").Scan(&back); err != nil {
		t.Fatal(err)
	}
	if back != "2024-07-01 17:30:00+05:30" {
		t.Errorf("text parameter read as %q", back)
	}

	if _, err := conn.Exec(ctx, "SET TIME ZONE -7"); err != nil {
		t.Fatal(err)
	}
	if got := conn.PgConn().ParameterStatus("TimeZone"); got != "<-07>+07" {
		t.Errorf("TimeZone after SET: %q", got)
	}
	if _, err := conn.Exec(ctx, "RESET TIME ZONE"); err != nil {
		t.Fatal(err)
	}
	if got := conn.PgConn().ParameterStatus("TimeZone"); got != "UTC" {
		t.Errorf("TimeZone after RESET: %q", got)
	}

	cfg.RuntimeParams["TimeZone"] = "Mars/Olympus_Mons"
	if c, err := pgx.ConnectConfig(ctx, cfg); err == nil {
		c.Close(ctx)
		t.Error("a startup TimeZone that is no zone was accepted")
	}
}
