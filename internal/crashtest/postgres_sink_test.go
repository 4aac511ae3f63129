package crashtest

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/streamsql/streamsql/internal/pgtest"
)

// TestPostgresSinkCrashRecovery kills the server (SIGKILL) at random
// moments, also during startup, and restarts the target PostgreSQL in
// some cycles, while a client inserts, updates and deletes rows of a table
// that upsert sinks follow and inserts rows into an append-only table that
// an append-only sink follows. At the end each target table must equal its
// sink's query: the upsert ones row for row, the append-only one holding
// each inserted row exactly once (no row lost, none applied twice).
func TestPostgresSinkCrashRecovery(t *testing.T) {
	seed := *flagSeed
	if seed == 0 {
		seed = rand.Uint64()
	}
	cycles := *flagCycles + 3
	if testing.Short() {
		cycles = 3
	}
	t.Logf("seed %d, %d cycles", seed, cycles)
	rng := rand.New(rand.NewPCG(seed, 0))
	bin := binary(t)
	pg := pgtest.StartT(t, pgtest.Options{})
	dir := t.TempDir()
	logPath := filepath.Join(dir, "server.log")
	opts := func() Options {
		return Options{Binary: bin, DataDir: filepath.Join(dir, "data"), LogPath: logPath,
			BarrierInterval: time.Duration(10+rng.IntN(190)) * time.Millisecond}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	fail := func(format string, args ...any) {
		t.Helper()
		log, _ := os.ReadFile(logPath)
		if len(log) > 8000 {
			log = log[len(log)-8000:]
		}
		t.Fatalf("seed %d: %s\nserver log tail:\n%s", seed, fmt.Sprintf(format, args...), log)
	}
	target, err := pgx.Connect(ctx, pg.URL)
	if err != nil {
		fail("%v", err)
	}
	for _, s := range []string{
		"CREATE TABLE agg (g int PRIMARY KEY, c bigint, total numeric)",
		"CREATE TABLE ups (k int PRIMARY KEY, g int, n bigint)",
		"CREATE TABLE app (k int, g int)",
	} {
		if _, err := target.Exec(ctx, s); err != nil {
			fail("%s: %v", s, err)
		}
	}
	target.Close(ctx)
	start := func() *Server {
		t.Helper()
		srv, err := Start(ctx, opts())
		if err != nil {
			fail("start: %v", err)
		}
		return srv
	}
	srv := start()
	defer func() { _ = srv.Kill() }()
	conn, err := pgx.Connect(ctx, srv.URL)
	if err != nil {
		fail("%v", err)
	}
	with := fmt.Sprintf("connector = 'postgres', host = '127.0.0.1', port = '%d', user = 'postgres'", pg.Port)
	for _, s := range []string{
		"CREATE TABLE t (k int PRIMARY KEY, g int, n bigint)",
		"CREATE TABLE ev (k int, g int) APPEND ONLY",
		"CREATE SINK agg AS SELECT g, count(*) AS c, sum(n) AS total FROM t GROUP BY g WITH (" + with + ", table = 'agg', type = 'upsert')",
		"CREATE SINK ups FROM t WITH (" + with + ", table = 'ups', type = 'upsert')",
		"CREATE SINK app FROM ev WITH (" + with + ", table = 'app', type = 'append-only')",
	} {
		if _, err := conn.Exec(ctx, s); err != nil {
			fail("%s: %v", s, err)
		}
	}
	conn.Close(ctx)

	next := 0 // the next key to insert
	for c := 0; c < cycles; c++ {
		wctx, stop := context.WithCancel(ctx)
		var wg sync.WaitGroup
		wg.Add(1)
		wrng := rand.New(rand.NewPCG(seed, uint64(c+1)))
		go func() {
			defer wg.Done()
			next = writeWithEvents(wctx, srv.URL, wrng, next)
		}()
		time.Sleep(time.Duration(50+rng.IntN(1500)) * time.Millisecond)
		if rng.IntN(3) == 0 {
			// The target goes away and comes back while the server runs.
			if err := pg.Restart(); err != nil {
				fail("restarting PostgreSQL: %v", err)
			}
			time.Sleep(time.Duration(rng.IntN(300)) * time.Millisecond)
		}
		if err := srv.Kill(); err != nil {
			fail("%v", err)
		}
		stop()
		wg.Wait()
		if rng.IntN(3) == 0 {
			// A kill during startup, before, during or after recovery.
			s, err := Launch(opts())
			if err != nil {
				fail("%v", err)
			}
			time.Sleep(time.Duration(rng.IntN(400)) * time.Millisecond)
			_ = s.Kill()
		}
		srv = start()
	}

	conn, err = pgx.Connect(ctx, srv.URL)
	if err != nil {
		fail("%v", err)
	}
	defer conn.Close(ctx)
	target, err = pgx.Connect(ctx, pg.URL)
	if err != nil {
		fail("%v", err)
	}
	defer target.Close(ctx)
	for _, ch := range []struct{ view, target string }{
		{"SELECT g, count(*), sum(n) FROM t GROUP BY g ORDER BY g", "SELECT g, c, total FROM agg ORDER BY g"},
		{"SELECT k, g, n FROM t ORDER BY k", "SELECT k, g, n FROM ups ORDER BY k"},
		{"SELECT k, g FROM ev ORDER BY k, g", "SELECT k, g FROM app ORDER BY k, g"},
	} {
		want, err := queryRows(ctx, conn, ch.view)
		if err != nil {
			fail("%s: %v", ch.view, err)
		}
		deadline := time.Now().Add(time.Minute)
		for {
			got, err := queryRows(ctx, target, ch.target)
			if err != nil {
				fail("%s: %v", ch.target, err)
			}
			if fmt.Sprint(got) == fmt.Sprint(want) {
				t.Logf("%s: %d rows, equal to the sink's query", ch.target, len(got))
				break
			}
			if time.Now().After(deadline) {
				fail("%s has\n%v\nthe sink's query\n%v", ch.target, got, want)
			}
			time.Sleep(200 * time.Millisecond)
		}
	}
}

// writeWithEvents is write, with each statement also inserting the row
// (its number, a random group) into the append-only table ev. It returns
// the next key to insert.
func writeWithEvents(ctx context.Context, url string, rng *rand.Rand, next int) int {
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		return next
	}
	defer conn.Close(context.Background())
	for ctx.Err() == nil {
		var sql string
		switch r := rng.IntN(10); {
		case r < 5 || next < 10:
			sql = fmt.Sprintf("INSERT INTO t VALUES (%d, %d, %d), (%d, %d, %d)", next, rng.IntN(8), rng.IntN(100), next+1, rng.IntN(8), rng.IntN(100))
		case r < 8:
			sql = fmt.Sprintf("UPDATE t SET n = n + %d, g = (g + 1) %% 8 WHERE k %% 17 = %d", 1+rng.IntN(5), rng.IntN(17))
		default:
			sql = fmt.Sprintf("DELETE FROM t WHERE k = %d OR k = %d", rng.IntN(next), rng.IntN(next))
		}
		if _, err := conn.Exec(ctx, sql); err != nil {
			return next
		}
		if _, err := conn.Exec(ctx, fmt.Sprintf("INSERT INTO ev VALUES (%d, %d)", next, rng.IntN(8))); err != nil {
			return next
		}
		next += 2
	}
	return next
}
