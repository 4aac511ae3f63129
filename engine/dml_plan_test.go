package engine_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/streamsql/streamsql/internal/testserver"
)

// TestPlannedDMLConcurrent runs range UPDATEs of the same rows from several
// clients at once, with parameters (extended protocol): every statement must
// start from the previous one's rows, committed or not, so that no increment
// is lost and the view over the table retracts exactly the versions it holds.
func TestPlannedDMLConcurrent(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	srv := testserver.Start(t, testserver.Options{})
	conn, err := srv.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{
		"CREATE TABLE t (id int PRIMARY KEY, v bigint)",
		"CREATE TABLE pick (id int)",
		"INSERT INTO t SELECT g, 0 FROM generate_series(1, 200) AS g",
		"INSERT INTO pick VALUES (150), (151), (152)",
		"CREATE MATERIALIZED VIEW s AS SELECT count(*) AS n, sum(v) AS total FROM t",
	} {
		if _, err := conn.Exec(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	const clients, rounds = 4, 15
	var wg sync.WaitGroup
	errs := make(chan error, clients)
	for c := 0; c < clients; c++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			cc, err := srv.Conn(ctx)
			if err != nil {
				errs <- err
				return
			}
			defer cc.Close(ctx)
			for r := 0; r < rounds; r++ {
				tag, err := cc.Exec(ctx, "UPDATE t SET v = v + $1 WHERE id > $2 AND id <= $3", 1, 50, 150)
				if err != nil {
					errs <- err
					return
				}
				if tag.RowsAffected() != 100 {
					t.Errorf("UPDATE changed %d rows, want 100", tag.RowsAffected())
				}
				// A subquery's join reads the target table too.
				tag, err = cc.Exec(ctx, "UPDATE t SET v = v + 1000 WHERE id IN (SELECT id FROM pick WHERE id > $1)", 150)
				if err != nil {
					errs <- err
					return
				}
				if tag.RowsAffected() != 2 {
					t.Errorf("UPDATE through a lookup join changed %d rows, want 2", tag.RowsAffected())
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	// The DELETE removes ids 151 and 152, with their +1000s.
	tag, err := conn.Exec(ctx, "DELETE FROM t WHERE id IN (SELECT id FROM pick WHERE id > $1)", 150)
	if err != nil || tag.RowsAffected() != 2 {
		t.Fatalf("DELETE with a subquery: %v, %d rows", err, tag.RowsAffected())
	}
	if _, err := conn.Exec(ctx, "FLUSH"); err != nil {
		t.Fatal(err)
	}
	want := int64(clients * rounds * 100) // ids 151 and 152 were not updated
	var sum, n, vn, vsum int64
	if err := conn.QueryRow(ctx, "SELECT count(*), sum(v) FROM t").Scan(&n, &sum); err != nil {
		t.Fatal(err)
	}
	if err := conn.QueryRow(ctx, "SELECT n, total FROM s").Scan(&vn, &vsum); err != nil {
		t.Fatal(err)
	}
	if n != 198 || sum != want || vn != n || vsum != sum {
		t.Fatalf("table %d rows, sum %d; view %d rows, sum %d; want 198 rows, sum %d", n, sum, vn, vsum, want)
	}
}
