package engine_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/streamsql/streamsql/internal/kafkatest"
	"github.com/streamsql/streamsql/internal/testserver"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// TestKafkaSink runs the three formats of a Kafka sink over a grouped
// query fed by inserts, updates and deletes, across a restart: a
// read_committed consumer folds the Debezium changes strictly (each change
// exactly once) and the upsert records by key, and both equal the query's
// rows; the append-only sink holds every insert once.
func TestKafkaSink(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	_, brokers := kafkatest.Cluster(t, 3, "dbz", "ups", "plain")
	srv := testserver.Start(t, testserver.Options{BarrierInterval: 10 * time.Millisecond})
	conn := connect(ctx, t, srv)
	with := fmt.Sprintf("connector = 'kafka', properties.bootstrap.server = '%s'", brokers)
	kexec(t, ctx, conn,
		"CREATE TABLE t (k int PRIMARY KEY, g int, n bigint, s text)",
		"INSERT INTO t VALUES (1, 1, 10, 'a'), (2, 1, 20, 'b \"q\"'), (3, 2, 30, NULL)",
		"CREATE SINK dbz AS SELECT g, count(*) AS c, sum(n) AS total, max(s) AS s FROM t GROUP BY g WITH ("+with+", topic = 'dbz', primary_key = 'g') FORMAT DEBEZIUM ENCODE JSON",
		"CREATE SINK ups AS SELECT k, g, n, s FROM t WITH ("+with+", topic = 'ups', primary_key = 'k') FORMAT UPSERT ENCODE JSON",
		"CREATE SINK plain FROM t WITH ("+with+", topic = 'plain') FORMAT PLAIN ENCODE JSON (force_append_only = 'true')",
	)
	inserts := 3
	step := func(i int) {
		kexec(t, ctx, conn,
			fmt.Sprintf("INSERT INTO t VALUES (%d, %d, %d, 'x%d')", 10+i, i%4, i, i),
			fmt.Sprintf("UPDATE t SET n = n + 1, g = (g + 1) %% 5 WHERE k %% 7 = %d", i%7),
			fmt.Sprintf("DELETE FROM t WHERE k = %d", 5+i),
		)
		inserts++
	}
	for i := 0; i < 20; i++ {
		step(i)
	}
	if err := srv.Restart(); err != nil {
		t.Fatal(err)
	}
	conn = connect(ctx, t, srv)
	for i := 20; i < 40; i++ {
		step(i)
	}
	want := func(q string) []string {
		return kqueryStrings(t, ctx, conn, q)
	}
	dbzWant := want("SELECT jsonb_build_object('g', g, 'c', count(*), 'total', sum(n), 's', max(s))::text FROM t GROUP BY g")
	upsWant := want("SELECT jsonb_build_object('k', k, 'g', g, 'n', n, 's', s)::text FROM t")
	kwaitFor(t, ctx, "debezium sink", func() (string, bool) {
		recs, err := kafkatest.ReadAll(ctx, brokers, "dbz")
		if err != nil {
			return err.Error(), false
		}
		t.Logf("dbz: %d records", len(recs))
		got, err := kafkatest.FoldDebezium(recs)
		if err != nil {
			t.Fatal(err)
		}
		return fmt.Sprintf("%v, want %v", got, dbzWant), slices.Equal(got, dbzWant)
	})
	kwaitFor(t, ctx, "upsert sink", func() (string, bool) {
		recs, err := kafkatest.ReadAll(ctx, brokers, "ups")
		if err != nil {
			return err.Error(), false
		}
		got := kafkatest.FoldUpsert(recs)
		return fmt.Sprintf("%v, want %v", got, upsWant), slices.Equal(got, upsWant)
	})
	kwaitFor(t, ctx, "plain sink", func() (string, bool) {
		recs, err := kafkatest.ReadAll(ctx, brokers, "plain")
		if err != nil {
			return err.Error(), false
		}
		// Inserts and updates (as inserts); deletes are dropped.
		return fmt.Sprintf("%d records", len(recs)), len(recs) >= inserts
	})
}

// TestKafkaSinkOptions checks the errors of bad sink options.
func TestKafkaSinkOptions(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	srv := testserver.Start(t, testserver.Options{})
	conn := connect(ctx, t, srv)
	kexec(t, ctx, conn, "CREATE TABLE t (k int PRIMARY KEY, v int)")
	with := "connector = 'kafka', properties.bootstrap.server = '127.0.0.1:1', topic = 'x'"
	for _, c := range []struct{ sql, err string }{
		{"CREATE SINK s FROM t WITH (" + with + ") FORMAT PLAIN ENCODE JSON", "cannot be append-only"},
		{"CREATE SINK s FROM t WITH (" + with + ") FORMAT UPSERT ENCODE JSON", "needs the option primary_key"},
		{"CREATE SINK s FROM t WITH (" + with + ", primary_key = 'nope') FORMAT UPSERT ENCODE JSON", `column "nope"`},
		{"CREATE SINK s FROM t WITH (" + with + ") FORMAT UPSERT ENCODE AVRO", "ENCODE AVRO is not supported"},
		{"CREATE SINK s FROM t WITH (connector = 'kafka', topic = 'x') FORMAT DEBEZIUM ENCODE JSON", "properties.bootstrap.server"},
		{"CREATE SINK s FROM t WITH (" + with + ", sink.delivery.guarantee = 'maybe') FORMAT DEBEZIUM ENCODE JSON", "sink.delivery.guarantee"},
		{"CREATE SINK s FROM t WITH (" + with + ", colour = 'red') FORMAT DEBEZIUM ENCODE JSON", `unknown option "colour"`},
		{"CREATE SINK s FROM t WITH (" + with + ")", "needs FORMAT"},
	} {
		_, err := conn.Exec(ctx, c.sql)
		if err == nil || !strings.Contains(err.Error(), c.err) {
			t.Errorf("%s: got %v, want an error with %q", c.sql, err, c.err)
		}
	}
}

func kexec(t *testing.T, ctx context.Context, conn *pgx.Conn, stmts ...string) {
	t.Helper()
	for _, s := range stmts {
		if _, err := conn.Exec(ctx, s); err != nil {
			t.Fatalf("%s: %v", s, err)
		}
	}
}

func kqueryStrings(t *testing.T, ctx context.Context, conn *pgx.Conn, q string) []string {
	t.Helper()
	rows, err := conn.Query(ctx, q)
	if err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	var out []string
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			t.Fatal(err)
		}
		out = append(out, kafkatest.Canonical(s))
	}
	if rows.Err() != nil {
		t.Fatal(rows.Err())
	}
	slices.Sort(out)
	return out
}

// waitFor polls check until it reports true, failing with its last report
// when ctx ends.
func kwaitFor(t *testing.T, ctx context.Context, what string, check func() (string, bool)) {
	t.Helper()
	var last string
	for {
		var ok bool
		if last, ok = check(); ok {
			return
		}
		select {
		case <-ctx.Done():
			t.Fatalf("%s: %s", what, last)
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// TestKafkaSinkBrokerOutage cuts every connection to the broker for a
// while during a run: the sinks retry with backoff while the view goes on
// and deliver everything once the broker is back, the exactly-once one
// with no change twice.
func TestKafkaSinkBrokerOutage(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cluster, brokers := kafkatest.Cluster(t, 2, "dbz", "alo")
	var down atomic.Bool
	cluster.Control(func(kmsg.Request) (kmsg.Response, error, bool) {
		cluster.KeepControl()
		if down.Load() {
			return nil, errors.New("broker down"), true
		}
		return nil, nil, false
	})
	srv := testserver.Start(t, testserver.Options{BarrierInterval: 10 * time.Millisecond})
	conn := connect(ctx, t, srv)
	with := fmt.Sprintf("connector = 'kafka', properties.bootstrap.server = '%s'", brokers)
	kexec(t, ctx, conn,
		"CREATE TABLE t (k int PRIMARY KEY, n int)",
		"CREATE SINK dbz FROM t WITH ("+with+", topic = 'dbz', primary_key = 'k') FORMAT DEBEZIUM ENCODE JSON",
		"CREATE SINK alo FROM t WITH ("+with+", topic = 'alo', primary_key = 'k', sink.delivery.guarantee = 'at_least_once') FORMAT UPSERT ENCODE JSON",
	)
	for i := 0; i < 60; i++ {
		if i == 20 {
			down.Store(true)
		}
		if i == 40 {
			time.Sleep(time.Second) // some retries
			down.Store(false)
		}
		kexec(t, ctx, conn,
			fmt.Sprintf("INSERT INTO t VALUES (%d, %d)", i, i),
			fmt.Sprintf("UPDATE t SET n = n + 1 WHERE k %% 5 = %d", i%5),
			fmt.Sprintf("DELETE FROM t WHERE k = %d", i/2),
		)
	}
	want := kqueryStrings(t, ctx, conn, "SELECT jsonb_build_object('k', k, 'n', n)::text FROM t")
	kwaitFor(t, ctx, "exactly-once sink", func() (string, bool) {
		recs, err := kafkatest.ReadAll(ctx, brokers, "dbz")
		if err != nil {
			return err.Error(), false
		}
		got, err := kafkatest.FoldDebezium(recs)
		if err != nil {
			t.Fatal(err)
		}
		return fmt.Sprintf("%v, want %v", got, want), slices.Equal(got, want)
	})
	kwaitFor(t, ctx, "at-least-once sink", func() (string, bool) {
		recs, err := kafkatest.ReadAll(ctx, brokers, "alo")
		if err != nil {
			return err.Error(), false
		}
		got := kafkatest.FoldUpsert(recs)
		return fmt.Sprintf("%v, want %v", got, want), slices.Equal(got, want)
	})
}

// TestKafkaSinkOutboxLimit runs a sink whose broker goes away after
// CREATE SINK checked it: the outbox grows to sink.outbox.max.bytes, then
// the sink fails and says why.
func TestKafkaSinkOutboxLimit(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cluster, addr := kafkatest.Cluster(t, 1, "x")
	srv := testserver.Start(t, testserver.Options{BarrierInterval: 10 * time.Millisecond})
	conn := connect(ctx, t, srv)
	kexec(t, ctx, conn,
		"CREATE TABLE t (k int, s text) APPEND ONLY",
		"CREATE SINK s FROM t WITH (connector = 'kafka', properties.bootstrap.server = '"+addr+"', topic = 'x', sink.outbox.max.bytes = '4000') FORMAT PLAIN ENCODE JSON",
	)
	cluster.Close()
	for i := 0; i < 100; i++ {
		kexec(t, ctx, conn, "INSERT INTO t SELECT g, repeat('x', 10) FROM generate_series(1, 10) g")
	}
	kwaitFor(t, ctx, "sink status", func() (string, bool) {
		var status string
		if err := conn.QueryRow(ctx, "SELECT status FROM streamsql_sinks WHERE name = 's'").Scan(&status); err != nil {
			return err.Error(), false
		}
		return status, strings.Contains(status, "over sink.outbox.max.bytes = 4000")
	})
}
