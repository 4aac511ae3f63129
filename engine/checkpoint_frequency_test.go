package engine_test

import (
	"context"
	"testing"
	"time"

	"github.com/streamsql/streamsql/internal/testserver"
)

// TestCheckpointFrequency runs a view over a generator source with every
// fourth barrier a checkpoint: idle checkpoints are four epochs apart, while
// a write is still acknowledged at once, durable and visible.
func TestCheckpointFrequency(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	srv := testserver.Start(t, testserver.Options{BarrierInterval: 5 * time.Millisecond, CheckpointFrequency: 4})
	conn, err := srv.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	for _, sql := range []string{
		"CREATE SOURCE gen (id bigint) WITH (connector = 'datagen', fields.id.kind = 'sequence', datagen.rows.per.second = '2000')",
		"CREATE MATERIALIZED VIEW g AS SELECT count(*) AS n FROM gen",
		"CREATE TABLE t (k int)",
	} {
		if _, err := conn.Exec(ctx, sql); err != nil {
			t.Fatalf("%s: %v", sql, err)
		}
	}
	from := srv.Engine.CommittedEpoch()
	for srv.Engine.CommittedEpoch() < from+40 {
		time.Sleep(10 * time.Millisecond)
	}
	rows, err := conn.Query(ctx, "SELECT epoch FROM streamsql_checkpoints WHERE status = 'completed' AND epoch > $1 ORDER BY epoch", from)
	if err != nil {
		t.Fatal(err)
	}
	var epochs []int64
	for rows.Next() {
		var e int64
		if err := rows.Scan(&e); err != nil {
			t.Fatal(err)
		}
		epochs = append(epochs, e)
	}
	if rows.Err() != nil {
		t.Fatal(rows.Err())
	}
	if len(epochs) < 5 {
		t.Fatalf("checkpoints %v", epochs)
	}
	for i := 1; i < len(epochs); i++ {
		if epochs[i]-epochs[i-1] != 4 {
			t.Fatalf("idle checkpoints %v are not four epochs apart", epochs)
		}
	}
	var n1, n2 int64
	if err := conn.QueryRow(ctx, "SELECT n FROM g").Scan(&n1); err != nil {
		t.Fatal(err)
	}
	if _, err := conn.Exec(ctx, "INSERT INTO t VALUES (1)"); err != nil {
		t.Fatal(err)
	}
	var k int
	if err := conn.QueryRow(ctx, "SELECT count(*) FROM t").Scan(&k); err != nil || k != 1 {
		t.Fatalf("a write is not visible at once: %d (%v)", k, err)
	}
	for n2 <= n1 {
		if err := conn.QueryRow(ctx, "SELECT n FROM g").Scan(&n2); err != nil {
			t.Fatalf("the view does not follow its source: %d then %d (%v)", n1, n2, err)
		}
	}
}
