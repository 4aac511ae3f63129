package engine_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/streamsql/streamsql/internal/testserver"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/sasl/scram"
)

// kafkaTopics starts an in-process Kafka broker with the given topics (of
// partitions each).
func kafkaTopics(t testing.TB, partitions int32, topics ...string) string {
	t.Helper()
	c, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(partitions, topics...))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	return strings.Join(c.ListenAddrs(), ",")
}

// produce sends records to topic, a nil value being a tombstone; keys and
// values are given as strings ("" key: none; "<null>" value: tombstone).
func produce(ctx context.Context, t *testing.T, cl *kgo.Client, topic string, kvs ...string) {
	t.Helper()
	var recs []*kgo.Record
	for i := 0; i+1 < len(kvs); i += 2 {
		r := &kgo.Record{Topic: topic}
		if kvs[i] != "" {
			r.Key = []byte(kvs[i])
		}
		if kvs[i+1] != "<null>" {
			r.Value = []byte(kvs[i+1])
		}
		recs = append(recs, r)
	}
	if err := cl.ProduceSync(ctx, recs...).FirstErr(); err != nil {
		t.Fatal(err)
	}
}

// TestKafkaTableFormats feeds a table of each format from its topic:
// inserts, updates, deletes, tombstones and bad messages, with views over
// the tables, DML beside the topic's rows, a restart that resumes at the
// committed offsets (each message applied once) and DROP TABLE.
func TestKafkaTableFormats(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	addr := kafkaTopics(t, 2, "plain", "keyed", "up", "upjson", "dbz")
	prod := kafkaProducer(t, addr)
	srv := testserver.Start(t, testserver.Options{BarrierInterval: 10 * time.Millisecond})
	conn, err := srv.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	with := func(topic string) string {
		return fmt.Sprintf("WITH (connector = 'kafka', topic = '%s', properties.bootstrap.server = '%s', partition.discovery.interval.ms = '100')", topic, addr)
	}
	mustExec(ctx, t, conn,
		"CREATE TABLE plain (id int, v text) "+with("plain")+" FORMAT PLAIN ENCODE JSON",
		"CREATE TABLE keyed (id int PRIMARY KEY, v text) "+with("keyed")+" FORMAT PLAIN ENCODE JSON",
		"CREATE TABLE up (v int, PRIMARY KEY (k)) INCLUDE key AS k "+with("up")+" FORMAT UPSERT ENCODE JSON",
		"CREATE TABLE upjson (id int, v text, PRIMARY KEY (id)) "+with("upjson")+" FORMAT UPSERT ENCODE JSON",
		"CREATE TABLE dbz (id int PRIMARY KEY, v text) "+with("dbz")+" FORMAT DEBEZIUM ENCODE JSON",
		"CREATE MATERIALIZED VIEW up_total AS SELECT count(*) AS n, sum(v) AS s FROM up",
		"CREATE MATERIALIZED VIEW dbz_rows AS SELECT id, v FROM dbz WHERE id > 0")

	produce(ctx, t, prod, "plain", "", `{"id": 1, "v": "a"}`, "", `{"id": 1, "v": "a"}`, "", `{"id": "x"}`, "", `{"id": 2}`)
	produce(ctx, t, prod, "keyed", "", `{"id": 1, "v": "a"}`, "", `{"id": 1, "v": "b"}`, "", `{"v": "no key"}`, "", `{"id": 2, "v": "c"}`)
	produce(ctx, t, prod, "up", "a", `{"v": 1}`, "b", `{"v": 2}`, "c", `{"v": 3}`, "a", `{"v": 10}`, "b", "<null>", "", `{"v": 5}`, "d", "<null>")
	produce(ctx, t, prod, "upjson", `{"id": 1}`, `{"id": 1, "v": "a"}`, `2`, `{"v": "b"}`, `{"id": 1}`, `{"v": "a2"}`, `{"id": 2}`, "<null>", `{"id": 3}`, `[1]`)
	produce(ctx, t, prod, "dbz",
		"", `{"before": null, "after": {"id": 1, "v": "a"}, "op": "c"}`,
		"", `{"schema": {"type": "struct"}, "payload": {"before": null, "after": {"id": 2, "v": "b"}, "op": "r"}}`,
		"", `{"before": {"id": 1, "v": "a"}, "after": {"id": 1, "v": "a2"}, "op": "u"}`,
		"", `{"before": {"id": 2, "v": "b"}, "after": {"id": 3, "v": "b"}, "op": "u"}`,
		"", "<null>",
		"", `{"before": null, "after": {"id": 4, "v": "d"}, "op": "c"}`,
		"", `{"before": {"id": 4}, "after": null, "op": "d"}`,
		"", `{"before": null, "after": {"id": 5}, "op": "x"}`,
		"", `{"after": {"id": 6}}`)

	waitFor(ctx, t, conn, "SELECT id, v FROM plain ORDER BY id, v", "1 a;1 a;2 <nil>")
	waitFor(ctx, t, conn, "SELECT id, v FROM keyed ORDER BY id", "1 b;2 c")
	waitFor(ctx, t, conn, "SELECT convert_from(k, 'UTF8'), v FROM up ORDER BY k", "a 10;c 3")
	waitFor(ctx, t, conn, "SELECT n, s FROM up_total", "2 13")
	waitFor(ctx, t, conn, "SELECT id, v FROM upjson ORDER BY id", "1 a2")
	waitFor(ctx, t, conn, "SELECT id, v FROM dbz ORDER BY id", "1 a2;3 b")
	waitFor(ctx, t, conn, "SELECT id, v FROM dbz_rows ORDER BY id", "1 a2;3 b")
	waitFor(ctx, t, conn, "SELECT name, bad_records, status FROM streamsql_sources ORDER BY name",
		"dbz 2 running;keyed 1 running;plain 1 running;up 1 running;upjson 1 running")

	// DML goes beside the topic's rows (as in RisingWave).
	mustExec(ctx, t, conn, "INSERT INTO keyed VALUES (7, 'dml')", "DELETE FROM up WHERE k = 'c'")
	waitFor(ctx, t, conn, "SELECT n, s FROM up_total", "1 10")

	// Its reader decodes into the columns it started with.
	if _, err := conn.Exec(ctx, "ALTER TABLE keyed ADD COLUMN w int"); sqlState(err) != "0A000" {
		t.Errorf("ALTER TABLE of a Kafka table: got %v, want 0A000", err)
	}

	// After a restart each table goes on from its committed offsets.
	conn.Close(ctx)
	if err := srv.Restart(); err != nil {
		t.Fatal(err)
	}
	if conn, err = srv.Conn(ctx); err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	produce(ctx, t, prod, "plain", "", `{"id": 3, "v": "c"}`)
	produce(ctx, t, prod, "up", "a", "<null>", "e", `{"v": 100}`)
	produce(ctx, t, prod, "dbz", "", `{"before": {"id": 3}, "after": null, "op": "d"}`)
	waitFor(ctx, t, conn, "SELECT id, v FROM plain ORDER BY id, v", "1 a;1 a;2 <nil>;3 c")
	waitFor(ctx, t, conn, "SELECT n, s FROM up_total", "1 100")
	waitFor(ctx, t, conn, "SELECT id, v FROM dbz_rows ORDER BY id", "1 a2")
	waitFor(ctx, t, conn, "SELECT id, v FROM keyed ORDER BY id", "1 b;2 c;7 dml")
	waitFor(ctx, t, conn, "SELECT sum(bad_records)::bigint FROM streamsql_sources", "6")

	// DROP TABLE stops the reader; a new table of the name reads the topic
	// from its beginning.
	mustExec(ctx, t, conn, "DROP TABLE plain",
		"CREATE TABLE plain (id int PRIMARY KEY, v text) "+with("plain")+" FORMAT PLAIN ENCODE JSON")
	waitFor(ctx, t, conn, "SELECT id, v FROM plain ORDER BY id", "1 a;2 <nil>;3 c")
}

// TestKafkaTableCreateErrors: bad Kafka tables fail CREATE TABLE with a
// SQLSTATE, and UPSERT and DEBEZIUM stay refused on sources.
func TestKafkaTableCreateErrors(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	addr := kafkaTopics(t, 1, "t")
	srv := testserver.Start(t, testserver.Options{})
	conn, err := srv.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	with := "WITH (connector = 'kafka', topic = 't', properties.bootstrap.server = '" + addr + "')"
	mustExec(ctx, t, conn, "CREATE TABLE ct (x int)")
	for _, c := range []struct{ sql, code, msg string }{
		{"CREATE TABLE a (id int) " + with + " FORMAT UPSERT ENCODE JSON", "42P17", "FORMAT upsert needs a PRIMARY KEY"},
		{"CREATE TABLE a (id int) " + with + " FORMAT DEBEZIUM ENCODE JSON", "42P17", "FORMAT debezium needs a PRIMARY KEY"},
		{"CREATE TABLE a (id int PRIMARY KEY) " + with + " FORMAT UPSERT ENCODE CSV", "0A000", "FORMAT UPSERT ENCODE CSV"},
		{"CREATE TABLE a (id int PRIMARY KEY) " + with + " FORMAT MAXWELL ENCODE JSON", "0A000", "FORMAT MAXWELL"},
		{"CREATE TABLE a (id int PRIMARY KEY) WITH (connector = 'kafka', topic = 't', properties.bootstrap.server = '127.0.0.1:1') FORMAT PLAIN ENCODE JSON",
			"08001", "cannot reach the Kafka brokers at 127.0.0.1:1"},
		{"CREATE TABLE a (id int PRIMARY KEY) WITH (connector = 'kafka', topic = 'nope', properties.bootstrap.server = '" + addr + "') FORMAT PLAIN ENCODE JSON",
			"22023", `Kafka topic "nope" does not exist`},
		{"CREATE TABLE a (id int PRIMARY KEY) WITH (connector = 'datagen') FORMAT PLAIN ENCODE JSON", "0A000", `connector "datagen" on a table`},
		{"CREATE TABLE a (id int PRIMARY KEY, v int DEFAULT 1) " + with + " FORMAT PLAIN ENCODE JSON", "0A000", "DEFAULT"},
		{"CREATE TABLE a (id int, PRIMARY KEY (h)) INCLUDE header 'x' AS h " + with + " FORMAT UPSERT ENCODE JSON", "22023", "INCLUDE column other than the message key"},
		{"CREATE SINK a FROM ct WITH (connector = 'kafka', topic = 'out', properties.bootstrap.server = '127.0.0.1:1', force_append_only = 'true') FORMAT PLAIN ENCODE JSON",
			"08001", "cannot reach the Kafka brokers at 127.0.0.1:1"},
		{"CREATE SINK a FROM ct WITH (connector = 'kafka', topic = 'out', properties.bootstrap.server = '" + addr + "', properties.security.protocol = 'SASL_PLAINTEXT') FORMAT PLAIN ENCODE JSON",
			"22023", "properties.sasl.username"},
		{"CREATE SOURCE a (id int) " + with + " FORMAT UPSERT ENCODE JSON", "0A000", "CREATE TABLE"},
		{"CREATE SOURCE a (id int) " + with + " FORMAT DEBEZIUM ENCODE JSON", "0A000", "CREATE TABLE"},
	} {
		start := time.Now()
		_, err := conn.Exec(ctx, c.sql)
		pe, ok := err.(*pgconn.PgError)
		if !ok || pe.Code != c.code || !strings.Contains(pe.Message, c.msg) || time.Since(start) > 10*time.Second {
			t.Errorf("%s: got %v after %v, want %s %q", c.sql, err, time.Since(start), c.code, c.msg)
		}
	}
	if got := kafkaRows(ctx, t, conn, "SELECT count(*) FROM pg_class WHERE relname = 'a'"); got != "0" {
		t.Errorf("%s relations after failed CREATEs", got)
	}
	// PostgreSQL's WITH (storage parameters) is not a connector's.
	if _, err := conn.Exec(ctx, "CREATE TABLE b (id int) WITH (fillfactor = 70)"); err != nil && strings.Contains(err.Error(), "connector") {
		t.Errorf("WITH (fillfactor) read as a connector table: %v", err)
	}
}

// TestKafkaSASL: a table and a sink connect to a broker that requires
// SASL (SCRAM-SHA-256) with the security options: the table reads the
// topic and the sink delivers to another.
func TestKafkaSASL(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	c, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(1, "in", "out"),
		kfake.EnableSASL(), kfake.Superuser("SCRAM-SHA-256", "alice", "s3cret"))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	addr := strings.Join(c.ListenAddrs(), ",")
	auth := scram.Auth{User: "alice", Pass: "s3cret"}.AsSha256Mechanism()
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr), kgo.SASL(auth),
		kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{"out": {0: kgo.NewOffset().AtStart()}}))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	srv := testserver.Start(t, testserver.Options{BarrierInterval: 10 * time.Millisecond})
	conn, err := srv.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	sec := "properties.security.protocol = 'SASL_PLAINTEXT', properties.sasl.mechanism = 'SCRAM-SHA-256', properties.sasl.username = 'alice'"
	if _, err := conn.Exec(ctx, "CREATE TABLE bad (id int PRIMARY KEY) WITH (connector = 'kafka', topic = 'in', properties.bootstrap.server = '"+addr+"', "+sec+", properties.sasl.password = 'wrong') FORMAT PLAIN ENCODE JSON"); sqlState(err) != "08001" {
		t.Errorf("wrong password: got %v, want 08001", err)
	}
	mustExec(ctx, t, conn,
		"CREATE TABLE tin (id int PRIMARY KEY, v text) WITH (connector = 'kafka', topic = 'in', properties.bootstrap.server = '"+addr+"', "+sec+", properties.sasl.password = 's3cret') FORMAT PLAIN ENCODE JSON",
		"CREATE SINK sout FROM tin WITH (connector = 'kafka', topic = 'out', properties.bootstrap.server = '"+addr+"', "+sec+", properties.sasl.password = 's3cret', primary_key = 'id') FORMAT UPSERT ENCODE JSON")
	produce(ctx, t, cl, "in", "", `{"id": 1, "v": "a"}`, "", `{"id": 2, "v": "b"}`)
	waitFor(ctx, t, conn, "SELECT id, v FROM tin ORDER BY id", "1 a;2 b")
	var got []string
	for len(got) < 2 && ctx.Err() == nil {
		pctx, pcancel := context.WithTimeout(ctx, time.Second)
		cl.PollFetches(pctx).EachRecord(func(r *kgo.Record) { got = append(got, string(r.Key)) })
		pcancel()
	}
	if len(got) != 2 {
		t.Fatalf("the sink delivered %v", got)
	}
}
