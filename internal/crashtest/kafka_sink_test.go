package crashtest

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/streamsql/streamsql/internal/kafkatest"
)

// TestKafkaSinkCrashRecovery kills the server (SIGKILL) at random moments,
// also during startup, while a client inserts, updates and deletes rows
// of a table that exactly-once Kafka sinks follow (kfake, in this process,
// with transactions). At the end a read_committed consumer folds each
// Debezium topic strictly, failing on a change seen twice or a change of
// a row it never saw created, and the folded rows, and the upsert topic
// folded by key, must equal the sinks' queries over the table.
func TestKafkaSinkCrashRecovery(t *testing.T) {
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
	_, brokers := kafkatest.Cluster(t, 3, "agg", "rows", "ups")
	dir := t.TempDir()
	logPath := filepath.Join(dir, "server.log")
	opts := func() Options {
		return Options{Binary: bin, DataDir: filepath.Join(dir, "data"), LogPath: logPath,
			BarrierInterval: time.Duration(10+rng.IntN(190)) * time.Millisecond}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	fail := func(srv *Server, format string, args ...any) {
		t.Helper()
		log, _ := os.ReadFile(logPath)
		if len(log) > 8000 {
			log = log[len(log)-8000:]
		}
		t.Fatalf("seed %d: %s\nserver log tail:\n%s", seed, fmt.Sprintf(format, args...), log)
	}
	start := func() *Server {
		t.Helper()
		srv, err := Start(ctx, opts())
		if err != nil {
			fail(nil, "start: %v", err)
		}
		return srv
	}
	srv := start()
	defer func() { _ = srv.Kill() }()
	conn, err := pgx.Connect(ctx, srv.URL)
	if err != nil {
		fail(srv, "%v", err)
	}
	with := fmt.Sprintf("connector = 'kafka', properties.bootstrap.server = '%s'", brokers)
	for _, s := range []string{
		"CREATE TABLE t (k int PRIMARY KEY, g int, n bigint)",
		"CREATE SINK agg AS SELECT g, count(*) AS c, sum(n) AS total FROM t GROUP BY g WITH (" + with + ", topic = 'agg', primary_key = 'g') FORMAT DEBEZIUM ENCODE JSON",
		"CREATE SINK rows AS SELECT k, g, n FROM t WHERE n % 3 <> 0 WITH (" + with + ", topic = 'rows', primary_key = 'k') FORMAT DEBEZIUM ENCODE JSON",
		"CREATE SINK ups FROM t WITH (" + with + ", topic = 'ups', primary_key = 'k') FORMAT UPSERT ENCODE JSON",
	} {
		if _, err := conn.Exec(ctx, s); err != nil {
			fail(srv, "%s: %v", s, err)
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
			next = write(wctx, srv.URL, wrng, next)
		}()
		time.Sleep(time.Duration(50+rng.IntN(1500)) * time.Millisecond)
		if err := srv.Kill(); err != nil {
			fail(srv, "%v", err)
		}
		stop()
		wg.Wait()
		if rng.IntN(3) == 0 {
			// A kill during startup, before, during or after recovery.
			s, err := Launch(opts())
			if err != nil {
				fail(nil, "%v", err)
			}
			time.Sleep(time.Duration(rng.IntN(400)) * time.Millisecond)
			_ = s.Kill()
		}
		srv = start()
	}

	conn, err = pgx.Connect(ctx, srv.URL)
	if err != nil {
		fail(srv, "%v", err)
	}
	defer conn.Close(ctx)
	query := func(q string) []string {
		rows, err := conn.Query(ctx, q)
		if err != nil {
			fail(srv, "%s: %v", q, err)
		}
		out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (string, error) {
			var s string
			err := r.Scan(&s)
			return kafkatest.Canonical(s), err
		})
		if err != nil {
			fail(srv, "%s: %v", q, err)
		}
		slices.Sort(out)
		return out
	}
	checks := []struct {
		topic, query string
		upsert       bool
	}{
		{"agg", "SELECT jsonb_build_object('g', g, 'c', count(*), 'total', sum(n))::text FROM t GROUP BY g", false},
		{"rows", "SELECT jsonb_build_object('k', k, 'g', g, 'n', n)::text FROM t WHERE n % 3 <> 0", false},
		{"ups", "SELECT jsonb_build_object('k', k, 'g', g, 'n', n)::text FROM t", true},
	}
	for _, ch := range checks {
		want := query(ch.query)
		var got []string
		var recs []kafkatest.Record
		deadline := time.Now().Add(time.Minute)
		for {
			recs, err = kafkatest.ReadAll(ctx, brokers, ch.topic)
			if err != nil {
				fail(srv, "reading %s: %v", ch.topic, err)
			}
			if ch.upsert {
				got = kafkatest.FoldUpsert(recs)
			} else if got, err = kafkatest.FoldDebezium(recs); err != nil {
				fail(srv, "topic %s (%d records): %v", ch.topic, len(recs), err)
			}
			if slices.Equal(got, want) {
				break
			}
			if time.Now().After(deadline) {
				fail(srv, "topic %s (%d records) folds to\n%v\nthe query has\n%v", ch.topic, len(recs), got, want)
			}
			time.Sleep(200 * time.Millisecond)
		}
		t.Logf("topic %s: %d records fold to the query's %d rows", ch.topic, len(recs), len(want))
	}
}

// write inserts keys from next on, and updates and deletes random keys
// below them, until ctx ends or the server goes away; it returns the next
// key to insert.
func write(ctx context.Context, url string, rng *rand.Rand, next int) int {
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
			next += 2
		case r < 8:
			sql = fmt.Sprintf("UPDATE t SET n = n + %d, g = (g + 1) %% 8 WHERE k %% 17 = %d", 1+rng.IntN(5), rng.IntN(17))
		default:
			sql = fmt.Sprintf("DELETE FROM t WHERE k = %d OR k = %d", rng.IntN(next), rng.IntN(next))
		}
		if _, err := conn.Exec(ctx, sql); err != nil {
			return next
		}
	}
	return next
}
