package engine_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/streamsql/streamsql/internal/testserver"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
)

// kafkaCluster starts an in-process Kafka broker with topic t.
func kafkaCluster(t testing.TB, partitions int32) (*kfake.Cluster, string) {
	t.Helper()
	c, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(partitions, "t"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	return c, strings.Join(c.ListenAddrs(), ",")
}

func kafkaProducer(t testing.TB, addr string) *kgo.Client {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr), kgo.RecordPartitioner(kgo.ManualPartitioner()), kgo.DefaultProduceTopic("t"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cl.Close)
	return cl
}

// kafkaRows runs q and returns its rows as text, rows separated by ";".
func kafkaRows(ctx context.Context, t testing.TB, conn *pgx.Conn, q string) string {
	t.Helper()
	rows, err := conn.Query(ctx, q)
	if err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		vals, err := rows.Values()
		if err != nil {
			t.Fatal(err)
		}
		var fs []string
		for _, v := range vals {
			fs = append(fs, fmt.Sprint(v))
		}
		out = append(out, strings.Join(fs, " "))
	}
	if err := rows.Err(); err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	return strings.Join(out, ";")
}

// waitFor polls q until it returns want.
func waitFor(ctx context.Context, t *testing.T, conn *pgx.Conn, q, want string) {
	t.Helper()
	deadline := time.Now().Add(2 * time.Minute)
	var got string
	for time.Now().Before(deadline) {
		if got = kafkaRows(ctx, t, conn, q); got == want {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("%s: got %q, want %q", q, got, want)
}

const kafkaSourceSQL = `CREATE SOURCE s (id bigint, k int, v text)
	INCLUDE partition AS p INCLUDE offset AS o INCLUDE key AS kk
	WITH (connector = 'kafka', topic = 't', properties.bootstrap.server = '%s', partition.discovery.interval.ms = '100')
	FORMAT PLAIN ENCODE JSON`

// TestKafkaSourceExactlyOnce produces to a topic while the server is
// killed (as by kill -9) and restarted, and a partition is added, and
// checks that the views over the source count every message once.
func TestKafkaSourceExactlyOnce(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	_, addr := kafkaCluster(t, 3)
	prod := kafkaProducer(t, addr)
	srv := testserver.Start(t, testserver.Options{Crashable: true, BarrierInterval: 10 * time.Millisecond})
	conn, err := srv.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	mustExec(ctx, t, conn, fmt.Sprintf(kafkaSourceSQL, addr),
		"CREATE MATERIALIZED VIEW totals AS SELECT count(*) AS n, sum(id) AS s, count(DISTINCT id) AS d FROM s",
		"CREATE MATERIALIZED VIEW by_k AS SELECT k, count(*) AS n, sum(id) AS s FROM s GROUP BY k",
		"CREATE MATERIALIZED VIEW rows_of AS SELECT id, p::int AS p, o::bigint AS o, convert_from(kk, 'UTF8') AS kk FROM s WHERE v <> 'skip'")

	var mu sync.Mutex
	partitions := int32(3)
	produced := 0
	produceBatch := func(n int) {
		mu.Lock()
		defer mu.Unlock()
		var recs []*kgo.Record
		for i := 0; i < n; i++ {
			produced++
			id := produced
			recs = append(recs, &kgo.Record{Partition: int32(id) % partitions, Key: []byte(fmt.Sprint(id)),
				Value: []byte(fmt.Sprintf(`{"id": %d, "k": %d, "v": "x%d"}`, id, id%5, id))})
		}
		if err := prod.ProduceSync(ctx, recs...).FirstErr(); err != nil {
			t.Error(err)
		}
	}
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			select {
			case <-done:
				return
			case <-time.After(5 * time.Millisecond):
			}
			produceBatch(37)
		}
	}()
	for kill := 0; kill < 4; kill++ {
		time.Sleep(300 * time.Millisecond)
		if kill == 1 {
			// A partition added while the views read the topic.
			adm := kadm.NewClient(prod)
			mu.Lock()
			if _, err := adm.CreatePartitions(ctx, 1, "t"); err != nil {
				t.Fatal(err)
			}
			mu.Unlock()
			// Produce to it once the producer knows it.
			prod.ForceMetadataRefresh()
			time.Sleep(100 * time.Millisecond)
			mu.Lock()
			partitions++
			mu.Unlock()
		}
		conn.Close(ctx)
		if err := srv.Kill(); err != nil {
			t.Fatal(err)
		}
		if conn, err = srv.Conn(ctx); err != nil {
			t.Fatal(err)
		}
	}
	close(done)
	wg.Wait()
	n := produced
	sum := n * (n + 1) / 2
	waitFor(ctx, t, conn, "SELECT n, s::bigint, d FROM totals", fmt.Sprintf("%d %d %d", n, sum, n))
	var byK []string
	for k := 0; k < 5; k++ {
		cnt, s := 0, 0
		for id := 1; id <= n; id++ {
			if id%5 == k {
				cnt++
				s += id
			}
		}
		byK = append(byK, fmt.Sprintf("%d %d %d", k, cnt, s))
	}
	waitFor(ctx, t, conn, "SELECT k, n, s::bigint FROM by_k ORDER BY k", strings.Join(byK, ";"))
	// The INCLUDE columns: the message's partition, offset and key.
	waitFor(ctx, t, conn, "SELECT count(*), count(DISTINCT (p, o)), count(*) FILTER (WHERE kk = id::text), max(p) FROM rows_of",
		fmt.Sprintf("%d %d %d 3", n, n, n))
	waitFor(ctx, t, conn, "SELECT view, sum(lag)::bigint, count(*) FROM streamsql_source_partitions GROUP BY view ORDER BY view",
		"by_k 0 4;rows_of 0 4;totals 0 4")

	// A clean restart resumes too.
	conn.Close(ctx)
	if err := srv.Restart(); err != nil {
		t.Fatal(err)
	}
	if conn, err = srv.Conn(ctx); err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	produceBatch(10)
	n = produced
	waitFor(ctx, t, conn, "SELECT n, s::bigint, d FROM totals", fmt.Sprintf("%d %d %d", n, n*(n+1)/2, n))
}

// TestKafkaSourceBadMessages: bad messages are skipped and counted, or
// fail the source with error.policy = 'fail'.
func TestKafkaSourceBadMessages(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	_, addr := kafkaCluster(t, 1)
	prod := kafkaProducer(t, addr)
	srv := testserver.Start(t, testserver.Options{})
	conn, err := srv.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	opts := fmt.Sprintf("connector = 'kafka', topic = 't', properties.bootstrap.server = '%s'", addr)
	mustExec(ctx, t, conn,
		"CREATE SOURCE skipping (id int) WITH ("+opts+") FORMAT PLAIN ENCODE JSON",
		"CREATE SOURCE failing (id int) WITH ("+opts+", error.policy = 'fail') FORMAT PLAIN ENCODE JSON",
		"CREATE MATERIALIZED VIEW ok AS SELECT sum(id) AS s, count(*) AS n FROM skipping",
		"CREATE MATERIALIZED VIEW stops AS SELECT count(*) AS n FROM failing")
	// Produced once the views exist, so that CREATE does not see the failure.
	for _, v := range []string{`{"id": 1}`, `{"id": "one"}`, `{`, `{"id": 2}`} {
		if err := prod.ProduceSync(ctx, &kgo.Record{Value: []byte(v)}).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
	waitFor(ctx, t, conn, "SELECT s, n FROM ok", "3 2")
	waitFor(ctx, t, conn, "SELECT name, bad_records, status FROM streamsql_sources WHERE name = 'skipping'", "skipping 2 running")
	deadline := time.Now().Add(20 * time.Second)
	for {
		_, err := conn.Exec(ctx, "SELECT * FROM stops")
		if err != nil {
			if !strings.Contains(err.Error(), "partition 0 offset 1") || !strings.Contains(err.Error(), "error.policy") {
				t.Fatalf("got %v", err)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the view over the failing source did not fail")
		}
		time.Sleep(20 * time.Millisecond)
	}
	status := kafkaRows(ctx, t, conn, "SELECT status FROM streamsql_sources WHERE name = 'failing'")
	if !strings.HasPrefix(status, "failed: ") {
		t.Errorf("status %q", status)
	}
	// It stays at the bad message.
	waitFor(ctx, t, conn, "SELECT source, \"offset\" FROM streamsql_source_partitions WHERE view = 'stops'", "failing 1")
	// Checkpoints go on: the other view still follows its source.
	if err := prod.ProduceSync(ctx, &kgo.Record{Value: []byte(`{"id": 10}`)}).FirstErr(); err != nil {
		t.Fatal(err)
	}
	waitFor(ctx, t, conn, "SELECT s, n FROM ok", "13 3")
}

// TestKafkaSourceCreateErrors: an unreachable broker and a missing topic
// fail CREATE SOURCE, within the metadata check's bound.
func TestKafkaSourceCreateErrors(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	_, addr := kafkaCluster(t, 1)
	srv := testserver.Start(t, testserver.Options{})
	conn, err := srv.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	for _, c := range []struct{ sql, code, msg string }{
		{"CREATE SOURCE a (id int) WITH (connector = 'kafka', topic = 't', properties.bootstrap.server = '127.0.0.1:1') FORMAT PLAIN ENCODE JSON",
			"08001", "cannot reach the Kafka brokers at 127.0.0.1:1"},
		{"CREATE SOURCE a (id int) WITH (connector = 'kafka', topic = 'nope', properties.bootstrap.server = '" + addr + "') FORMAT PLAIN ENCODE JSON",
			"22023", `Kafka topic "nope" does not exist`},
		{"CREATE SOURCE a (id int) INCLUDE key AS id WITH (connector = 'kafka', topic = 't', properties.bootstrap.server = '" + addr + "') FORMAT PLAIN ENCODE JSON",
			"42701", `column "id" specified more than once`},
	} {
		start := time.Now()
		_, err := conn.Exec(ctx, c.sql)
		pe, ok := err.(*pgconn.PgError)
		if !ok || pe.Code != c.code || !strings.Contains(pe.Message, c.msg) || time.Since(start) > 10*time.Second {
			t.Errorf("%s: got %v after %v, want %s %q", c.sql, err, time.Since(start), c.code, c.msg)
		}
	}
	if got := kafkaRows(ctx, t, conn, "SELECT count(*) FROM streamsql_sources"); got != "0" {
		t.Errorf("%s sources after failed CREATEs", got)
	}
}

// TestKafkaSourceBrokerAway: with the broker gone, the views keep serving
// their committed state and checkpoints go on.
func TestKafkaSourceBrokerAway(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	c, addr := kafkaCluster(t, 2)
	prod := kafkaProducer(t, addr)
	for i := 1; i <= 10; i++ {
		if err := prod.ProduceSync(ctx, &kgo.Record{Partition: int32(i % 2), Value: []byte(fmt.Sprintf(`{"id": %d}`, i))}).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
	srv := testserver.Start(t, testserver.Options{})
	conn, err := srv.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	mustExec(ctx, t, conn,
		fmt.Sprintf("CREATE SOURCE s (id int) WITH (connector = 'kafka', topic = 't', properties.bootstrap.server = '%s') FORMAT PLAIN ENCODE JSON", addr),
		"CREATE MATERIALIZED VIEW v AS SELECT sum(id) AS s FROM s")
	waitFor(ctx, t, conn, "SELECT s FROM v", "55")
	waitFor(ctx, t, conn, "SELECT partition, \"offset\", high_watermark, lag FROM streamsql_source_partitions ORDER BY partition", "0 5 5 0;1 5 5 0")
	c.Close()
	var before int64
	if err := conn.QueryRow(ctx, "SELECT max(epoch) FROM streamsql_checkpoints WHERE status = 'completed'").Scan(&before); err != nil {
		t.Fatal(err)
	}
	time.Sleep(500 * time.Millisecond)
	waitFor(ctx, t, conn, "SELECT s FROM v", "55")
	var after int64
	if err := conn.QueryRow(ctx, "SELECT max(epoch) FROM streamsql_checkpoints WHERE status = 'completed'").Scan(&after); err != nil {
		t.Fatal(err)
	}
	if after <= before {
		t.Errorf("no checkpoint completed with the broker away (epoch %d, then %d)", before, after)
	}
	// A restart with the broker away comes up with the committed state.
	conn.Close(ctx)
	if err := srv.Restart(); err != nil {
		t.Fatal(err)
	}
	if conn, err = srv.Conn(ctx); err != nil {
		t.Fatal(err)
	}
	waitFor(ctx, t, conn, "SELECT s FROM v", "55")
}

// BenchmarkKafkaSourceIngest produces b.N JSON messages to an in-process
// broker (before the timer), then times a view over the source counting
// them all; datagen, the upper bound, generates the same columns in the
// same view.
func BenchmarkKafkaSourceIngest(b *testing.B) {
	for _, conn := range []string{"kafka", "datagen"} {
		b.Run(conn, func(b *testing.B) {
			ctx := context.Background()
			var with string
			if conn == "kafka" {
				_, addr := kafkaCluster(b, 1)
				prod := kafkaProducer(b, addr)
				recs := make([]*kgo.Record, 0, 10_000)
				for i := 0; i < b.N; i++ {
					recs = append(recs, &kgo.Record{Value: []byte(fmt.Sprintf(`{"id": %d, "k": %d, "v": "value %d", "price": %d.25}`, i, i%10, i, i))})
					if len(recs) == cap(recs) || i == b.N-1 {
						if err := prod.ProduceSync(ctx, recs...).FirstErr(); err != nil {
							b.Fatal(err)
						}
						recs = recs[:0]
					}
				}
				with = fmt.Sprintf("connector = 'kafka', topic = 't', properties.bootstrap.server = '%s') FORMAT PLAIN ENCODE JSON", addr)
			} else {
				with = fmt.Sprintf(`connector = 'datagen', fields.id.kind = 'sequence', fields.k.max = '9', datagen.rows.per.second = '0', datagen.total.rows = '%d')`, b.N)
			}
			srv := testserver.Start(b, testserver.Options{BarrierInterval: 100 * time.Millisecond})
			c, err := srv.Conn(ctx)
			if err != nil {
				b.Fatal(err)
			}
			defer c.Close(ctx)
			if _, err := c.Exec(ctx, "CREATE SOURCE s (id bigint, k int, v text, price float8) WITH ("+with); err != nil {
				b.Fatal(err)
			}
			b.ResetTimer()
			cpu0 := processCPU()
			if _, err := c.Exec(ctx, "CREATE MATERIALIZED VIEW v AS SELECT k, count(*) AS n, sum(price) AS p FROM s GROUP BY k"); err != nil {
				b.Fatal(err)
			}
			for {
				var n int64
				if err := c.QueryRow(ctx, "SELECT coalesce(sum(n), 0) FROM v").Scan(&n); err != nil {
					b.Fatal(err)
				}
				if n == int64(b.N) {
					break
				}
				time.Sleep(5 * time.Millisecond)
			}
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "rows/s")
			b.ReportMetric(float64(b.N)/(processCPU()-cpu0).Seconds(), "rows/cpu-s")
		})
	}
}

// processCPU is the CPU time (user and system) this process has used.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// TestKafkaSourceWatermark: the source's watermark is the least of its
// partitions', so a partition behind the others holds windows open; it is
// kept over a restart.
func TestKafkaSourceWatermark(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	_, addr := kafkaCluster(t, 2)
	prod := kafkaProducer(t, addr)
	events := func(p int32, from, to int) {
		var recs []*kgo.Record
		for s := from; s <= to; s++ {
			recs = append(recs, &kgo.Record{Partition: p, Value: []byte(fmt.Sprintf(`{"id": %d, "ts": "2024-01-01 00:00:%02d"}`, s, s))})
		}
		if err := prod.ProduceSync(ctx, recs...).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
	events(0, 1, 25)
	events(1, 1, 12)
	srv := testserver.Start(t, testserver.Options{BarrierInterval: 10 * time.Millisecond})
	conn, err := srv.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	mustExec(ctx, t, conn,
		fmt.Sprintf(`CREATE SOURCE s (id int, ts timestamp, WATERMARK FOR ts AS ts - INTERVAL '1 second')
			WITH (connector = 'kafka', topic = 't', properties.bootstrap.server = '%s') FORMAT PLAIN ENCODE JSON`, addr),
		`CREATE MATERIALIZED VIEW w AS SELECT window_start, count(*) AS n FROM TUMBLE(s, ts, INTERVAL '10 seconds')
			GROUP BY window_start EMIT ON WINDOW CLOSE`)
	// Partition 1's watermark (11s) holds the second window open.
	waitFor(ctx, t, conn, "SELECT window_start::text, n FROM w ORDER BY 1", "2024-01-01 00:00:00 18")
	time.Sleep(200 * time.Millisecond)
	waitFor(ctx, t, conn, "SELECT window_start::text, n FROM w ORDER BY 1", "2024-01-01 00:00:00 18")
	conn.Close(ctx)
	if err := srv.Restart(); err != nil {
		t.Fatal(err)
	}
	if conn, err = srv.Conn(ctx); err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	events(1, 13, 30)
	// Now the least is partition 0's, 24s.
	waitFor(ctx, t, conn, "SELECT window_start::text, n FROM w ORDER BY 1", "2024-01-01 00:00:00 18;2024-01-01 00:00:10 20")
}
