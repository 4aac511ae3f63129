package engine_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/streamsql/streamsql/internal/testserver"
)

// rekeyViews are the materialized views of TestAlterTableAddPrimaryKeyKill
// over table kv (and side), each with the query it must equal.
var rekeyViews = []struct{ name, query string }{
	{"low", "SELECT k, v FROM kv WHERE v < 50"},
	{"per_v", "SELECT v, count(*) AS n, sum(k) AS s FROM low GROUP BY v"},
	{"named", "SELECT kv.k, side.name FROM kv JOIN side ON side.id = kv.v"},
}

// checkRekey waits until no view of rekeyViews is being backfilled, checks
// that each equals its query, and reports whether kv has its primary key.
func checkRekey(ctx context.Context, t *testing.T, conn *pgx.Conn) (keyed bool) {
	t.Helper()
	for queryText(ctx, t, conn, "SELECT count(*) FROM streamsql_jobs") != "0\n" {
		if ctx.Err() != nil {
			t.Fatal("the backfills do not end")
		}
		time.Sleep(5 * time.Millisecond)
	}
	for _, v := range rekeyViews {
		got := queryText(ctx, t, conn, "SELECT * FROM "+v.name+" ORDER BY 1, 2")
		want := queryText(ctx, t, conn, "SELECT * FROM ("+v.query+") q ORDER BY 1, 2")
		if got != want {
			t.Fatalf("%s differs from its query (%d and %d bytes)", v.name, len(got), len(want))
		}
	}
	return queryText(ctx, t, conn, "SELECT count(*) FROM pg_constraint WHERE conname = 'kv_pkey'") == "1\n"
}

// rekeyWrites changes kv and side until stop is closed, and reports how
// many writes to side committed.
func rekeyWrites(ctx context.Context, srv *testserver.Server, stop <-chan struct{}) (wait func() int) {
	var wg sync.WaitGroup
	sideWrites := 0
	wg.Add(1)
	go func() {
		defer wg.Done()
		c, err := srv.Conn(ctx)
		if err != nil {
			return
		}
		defer c.Close(context.Background())
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			k := (i*7919)%20000 + 1
			var stmt string
			switch i % 4 {
			case 0:
				stmt = fmt.Sprintf("UPDATE kv SET v = (v + 17) %% 97 WHERE k = %d", k)
			case 1:
				stmt = fmt.Sprintf("DELETE FROM kv WHERE k = %d", k+1)
			case 2:
				stmt = fmt.Sprintf("INSERT INTO kv VALUES (%d, %d)", 100000+i+int(time.Now().UnixNano()%1000)*1000000, i%97)
			default:
				stmt = fmt.Sprintf("UPDATE side SET name = 'n%d' WHERE id = %d", i%11, i%51)
			}
			if _, err := c.Exec(ctx, stmt); err != nil {
				return // the server was killed
			}
			if i%4 == 3 {
				sideWrites++
			}
		}
	}()
	return func() int { wg.Wait(); return sideWrites }
}

// TestAlterTableAddPrimaryKeyKill adds a primary key to a table without one
// that materialized views (one over another, one joining a second table)
// are built on, while another session writes to both tables, and kills the
// server at moments around the change: after the restart the table has
// either no key or the new one, every view equals its query, and the
// writes go on; an ALTER that returned is never lost.
func TestAlterTableAddPrimaryKeyKill(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
	defer cancel()
	srv := testserver.Start(t, testserver.Options{Crashable: true, BarrierInterval: 5 * time.Millisecond, BackfillChunkRows: 2000, StreamingParallelism: 2})
	conn := connect(ctx, t, srv)
	// Every third round kills at the same point; under the race detector
	// one round of each kind.
	rounds := 9
	if raceEnabled {
		rounds = 3
	}
	keyedRounds := 0
	for round := 0; round < rounds; round++ {
		mustExec(ctx, t, conn,
			"DROP TABLE IF EXISTS kv CASCADE", "DROP TABLE IF EXISTS side CASCADE",
			"CREATE TABLE kv (k bigint, v bigint)",
			"CREATE TABLE side (id bigint PRIMARY KEY, name text)",
			"INSERT INTO kv SELECT g, g % 97 FROM generate_series(1, 20000) AS g",
			"INSERT INTO side SELECT g, 'n' || g FROM generate_series(0, 50) AS g",
		)
		for _, v := range rekeyViews {
			mustExec(ctx, t, conn, "CREATE MATERIALIZED VIEW "+v.name+" AS "+v.query)
		}
		stop := make(chan struct{})
		wait := rekeyWrites(ctx, srv, stop)
		res := make(chan error, 1)
		go func() {
			c, err := srv.Conn(ctx)
			if err != nil {
				res <- err
				return
			}
			defer c.Close(context.Background())
			_, err = c.Exec(ctx, "ALTER TABLE ONLY kv ADD CONSTRAINT kv_pkey PRIMARY KEY (k)")
			res <- err
		}()
		returned, listed := false, false
		switch {
		case round%3 == 1:
			// Kill while the views are rebuilt, once a backfill has read
			// several chunks (so several barriers after the change's
			// epoch were injected: it is committed), or once the ALTER
			// returned.
			for !returned && !listed {
				listed = jobRows(ctx, t, conn, "named") > 8000
				select {
				case err := <-res:
					if err != nil {
						t.Fatalf("round %d: %v", round, err)
					}
					returned = true
				case <-time.After(time.Millisecond):
				}
			}
		case round%3 == 2:
			if err := <-res; err != nil {
				t.Fatalf("round %d: %v", round, err)
			}
			returned = true
		default:
			select {
			case err := <-res:
				if err != nil {
					t.Fatalf("round %d: %v", round, err)
				}
				returned = true
			case <-time.After(time.Duration(round) * 10 * time.Millisecond):
			}
		}
		if err := srv.Kill(); err != nil {
			t.Fatal(err)
		}
		close(stop)
		if n := wait(); n == 0 && returned {
			t.Logf("round %d: no write to side committed during the ALTER", round)
		}
		conn = connect(ctx, t, srv)
		keyed := checkRekey(ctx, t, conn)
		if (returned || listed) && !keyed {
			t.Fatalf("round %d: the ALTER returned (%v) or was backfilling (%v), and the primary key is lost after a crash", round, returned, listed)
		}
		if keyed {
			keyedRounds++
			if _, err := conn.Exec(ctx, "INSERT INTO kv VALUES (20000, 1)"); err == nil || !strings.Contains(err.Error(), "23505") {
				t.Fatalf("round %d: a repeated key after the re-key: %v", round, err)
			}
		}
		mustExec(ctx, t, conn, "INSERT INTO kv VALUES (-1, 3), (-2, 60)", "UPDATE side SET name = 'x' WHERE id = 3", "FLUSH")
		checkRekey(ctx, t, conn)
	}
	t.Logf("%d of %d ALTERs killed around the change took effect", keyedRounds, rounds)
}

// TestAlterTableAddPrimaryKeyRefused checks what refuses the re-key, and
// that a refused one changes nothing.
func TestAlterTableAddPrimaryKeyRefused(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	srv := testserver.Start(t, testserver.Options{BarrierInterval: 5 * time.Millisecond})
	conn := connect(ctx, t, srv)
	mustExec(ctx, t, conn,
		"CREATE TABLE kv (k bigint, v bigint)",
		"INSERT INTO kv VALUES (1, 1), (2, 2)",
		"CREATE MATERIALIZED VIEW low AS SELECT k, v FROM kv WHERE v < 50",
	)
	sub, err := srv.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Close(context.Background())
	mustExec(ctx, t, sub, "BEGIN", "DECLARE c CURSOR FOR SUBSCRIBE low", "FETCH 2 c")
	_, err = conn.Exec(ctx, "ALTER TABLE kv ADD PRIMARY KEY (k)")
	if sqlState(err) != "0A000" || !strings.Contains(err.Error(), "SUBSCRIBE") {
		t.Fatalf("ALTER with a SUBSCRIBE: %v, want 0A000", err)
	}
	mustExec(ctx, t, sub, "CLOSE c", "COMMIT")
	mustExec(ctx, t, conn, "ALTER MATERIALIZED VIEW low PAUSE")
	if _, err = conn.Exec(ctx, "ALTER TABLE kv ADD PRIMARY KEY (k)"); sqlState(err) != "55000" {
		t.Fatalf("ALTER over a paused view: %v, want 55000", err)
	}
	mustExec(ctx, t, conn, "ALTER MATERIALIZED VIEW low RESUME", "INSERT INTO kv VALUES (3, 3)", "FLUSH")
	if got := queryText(ctx, t, conn, "SELECT k FROM low ORDER BY k"); got != "1\n2\n3\n" {
		t.Fatalf("low after the refused ALTERs: %q", got)
	}
	mustExec(ctx, t, conn, "ALTER TABLE kv ADD PRIMARY KEY (k)")
	if got := queryText(ctx, t, conn, "SELECT k FROM low ORDER BY k"); got != "1\n2\n3\n" {
		t.Fatalf("low after the ALTER: %q", got)
	}
}
