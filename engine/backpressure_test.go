package engine_test

import (
	"context"
	"testing"
	"time"

	"github.com/streamsql/streamsql/internal/testserver"
)

// TestBackpressureHoldsSources runs an unpaced generator into a view with
// barriers far apart and a small bound on uncommitted state: the reader must
// wait for commits it asks for (rather than fill an epoch with all of its
// rows), and the view must still get every row exactly once.
func TestBackpressureHoldsSources(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	const rows = 200_000
	srv := testserver.Start(t, testserver.Options{BarrierInterval: time.Hour, MaxUncommittedState: 256 << 10})
	conn, err := srv.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	mustExec(ctx, t, conn,
		"CREATE SOURCE gen (id bigint, k int, v bigint) WITH (connector = 'datagen', datagen.rows.per.second = '0', "+
			"datagen.total.rows = '200000', fields.id.kind = 'sequence', fields.k.min = '0', fields.k.max = '99')",
		"CREATE MATERIALIZED VIEW copy AS SELECT id, k, v FROM gen")
	deadline := time.Now().Add(2 * time.Minute)
	for !srv.Engine.SourcesExhausted() {
		if time.Now().After(deadline) {
			t.Fatal("the source did not finish")
		}
		time.Sleep(20 * time.Millisecond)
	}
	// With an hour between barriers, rows are visible before FLUSH only
	// through the checkpoints the waiting reader asked for.
	var before int64
	if err := conn.QueryRow(ctx, "SELECT count(*) FROM copy").Scan(&before); err != nil {
		t.Fatal(err)
	}
	if before == 0 || srv.Engine.BackpressureWait() == 0 {
		t.Fatalf("the source never waited for a commit (%d rows visible, waited %v)", before, srv.Engine.BackpressureWait())
	}
	mustExec(ctx, t, conn, "FLUSH")
	var n, distinct int64
	if err := conn.QueryRow(ctx, "SELECT count(*), count(DISTINCT id) FROM copy").Scan(&n, &distinct); err != nil {
		t.Fatal(err)
	}
	if n != rows || distinct != rows {
		t.Fatalf("%d rows with %d ids, want %d", n, distinct, rows)
	}
}
