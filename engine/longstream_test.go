package engine_test

import (
	"context"
	"flag"
	"fmt"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/streamsql/streamsql/internal/testserver"
)

var longStream = flag.Int("longstream", 100_000, "events of TestWatermarkKeepsStateFlat (tens of millions for the figures in docs/benchmarks.md)")

// TestWatermarkKeepsStateFlat streams events with a watermark through
// windowed aggregations and checks that their state stays bounded by the
// open windows, whatever the length of the stream, while the same view over
// a source without watermark keeps every window and every distinct value.
func TestWatermarkKeepsStateFlat(t *testing.T) {
	n := *longStream
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Minute)
	defer cancel()
	srv := testserver.Start(t, testserver.Options{BarrierInterval: 20 * time.Millisecond})
	conn, err := srv.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	// One event per millisecond of event time: a thousand per window.
	source := func(name, wm string) string {
		return fmt.Sprintf(`CREATE SOURCE %s (id bigint, ts timestamp%s) WITH (connector = 'datagen',
			fields.id.kind = 'sequence', fields.ts.kind = 'sequence', fields.ts.start = '2024-01-01 00:00:00',
			fields.ts.step = '1 millisecond', datagen.rows.per.second = '0', datagen.total.rows = '%d')`, name, wm, n)
	}
	for _, stmt := range []string{
		source("clicks", ", WATERMARK FOR ts AS ts - INTERVAL '1 second'"),
		source("clicks_nowm", ""),
		"CREATE MATERIALIZED VIEW windowed AS " + windowedQuery("clicks", ""),
		"CREATE MATERIALIZED VIEW closed AS " + windowedQuery("clicks", " EMIT ON WINDOW CLOSE"),
		"CREATE MATERIALIZED VIEW unbounded AS " + windowedQuery("clicks_nowm", ""),
	} {
		if _, err := conn.Exec(ctx, stmt); err != nil {
			t.Fatalf("%s: %v", stmt, err)
		}
	}
	start := time.Now()
	peak := map[string]int64{}
	var samples int
	for {
		keys := operatorKeys(ctx, t, conn)
		for v, k := range keys {
			peak[v] = max(peak[v], k)
		}
		samples++
		var done int64
		if err := conn.QueryRow(ctx, "SELECT coalesce(sum(n), 0) FROM windowed").Scan(&done); err != nil {
			t.Fatal(err)
		}
		var rest, closedSoFar int64
		if err := conn.QueryRow(ctx, "SELECT coalesce(sum(n), 0) FROM unbounded").Scan(&rest); err != nil {
			t.Fatal(err)
		}
		// Each view reads the source on its own: the window-close view may
		// still be behind when the others are done.
		if err := conn.QueryRow(ctx, "SELECT count(*) FROM closed").Scan(&closedSoFar); err != nil {
			t.Fatal(err)
		}
		if done == int64(n) && rest == int64(n) && closedSoFar >= int64((n+99)/100)-11 {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	final := operatorKeys(ctx, t, conn)
	t.Logf("%d events in %v; peak operator state keys over %d samples: windowed %d, closed %d; without watermark: %d at the end",
		n, time.Since(start).Round(time.Millisecond), samples, peak["windowed"], peak["closed"], final["unbounded"])
	// The open windows (the watermark lags by one second: ten windows, a
	// thousand events) hold their groups and the distinct values of those
	// events.
	const bound = 5_000
	for _, v := range []string{"windowed", "closed"} {
		if peak[v] > bound {
			t.Errorf("view %s peaked at %d operator state keys, want at most %d whatever the stream's length", v, peak[v], bound)
		}
	}
	if n >= 10*bound && final["unbounded"] < int64(n) {
		t.Errorf("without a watermark the view keeps %d keys, want every event's value (%d)", final["unbounded"], n)
	}
	var windows, closed int64
	if err := conn.QueryRow(ctx, "SELECT count(*) FROM windowed").Scan(&windows); err != nil {
		t.Fatal(err)
	}
	if err := conn.QueryRow(ctx, "SELECT count(*) FROM closed").Scan(&closed); err != nil {
		t.Fatal(err)
	}
	if want := int64((n + 99) / 100); windows != want || closed < want-11 || closed > want {
		t.Errorf("windowed has %d windows, closed %d; want %d and all but the last second's", windows, closed, want)
	}
}

// windowedQuery counts the events of 100 ms windows of src; count(DISTINCT)
// keeps every distinct value of a window in state.
func windowedQuery(src, emit string) string {
	return "SELECT window_start, count(*) AS n, max(id) AS top, count(DISTINCT id) AS ids FROM TUMBLE(" + src +
		", ts, INTERVAL '100 milliseconds') GROUP BY window_start" + emit
}

// operatorKeys returns the number of committed keys in the operator state
// tables of each view.
func operatorKeys(ctx context.Context, t *testing.T, conn *pgx.Conn) map[string]int64 {
	rows, err := conn.Query(ctx, "SELECT relation, sum(keys) FROM streamsql_state_tables WHERE role LIKE 'operator%' GROUP BY relation")
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]int64{}
	for rows.Next() {
		var name string
		var keys int64
		if err := rows.Scan(&name, &keys); err != nil {
			t.Fatal(err)
		}
		out[name] = keys
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}
