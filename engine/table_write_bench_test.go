package engine_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/streamsql/streamsql/internal/testserver"
	"github.com/twmb/franz-go/pkg/kgo"
)

// The benchmarks of the writers that apply resolved changes through the
// table's write operator: a Kafka table's fetches and a transaction's
// COMMIT. Both report CPU per row (the wall time waits for checkpoints).
//
//	go test ./engine -run '^$' -bench 'BenchmarkKafkaTableIngest|BenchmarkTxnCommit' -count 3

// BenchmarkKafkaTableIngest produces b.N JSON messages over b.N/2 keys to
// an in-process broker (before the timer), then times a keyed Kafka table
// applying them all (half are updates of a held key), with a view over it.
func BenchmarkKafkaTableIngest(b *testing.B) {
	ctx := context.Background()
	addr := kafkaTopics(b, 1, "t")
	prod := kafkaProducer(b, addr)
	keys := max(b.N/2, 1)
	last := map[int]int{}
	recs := make([]*kgo.Record, 0, 10_000)
	for i := 0; i < b.N; i++ {
		last[i%keys] = i
		recs = append(recs, &kgo.Record{Topic: "t", Value: []byte(fmt.Sprintf(`{"id": %d, "k": %d, "v": %d}`, i%keys, i%10, i))})
		if len(recs) == cap(recs) || i == b.N-1 {
			if err := prod.ProduceSync(ctx, recs...).FirstErr(); err != nil {
				b.Fatal(err)
			}
			recs = recs[:0]
		}
	}
	var want int64
	for _, v := range last {
		want += int64(v)
	}
	srv := testserver.Start(b, testserver.Options{BarrierInterval: 100 * time.Millisecond})
	c, err := srv.Conn(ctx)
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close(ctx)
	if _, err := c.Exec(ctx, "CREATE TABLE t (id bigint PRIMARY KEY, k int, v bigint) WITH (connector = 'kafka', topic = 't', properties.bootstrap.server = '"+addr+"') FORMAT PLAIN ENCODE JSON"); err != nil {
		b.Fatal(err)
	}
	if _, err := c.Exec(ctx, "CREATE MATERIALIZED VIEW mv AS SELECT k, count(*) AS n, sum(v) AS s FROM t GROUP BY k"); err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	cpu0 := processCPU()
	for {
		var s int64
		if err := c.QueryRow(ctx, "SELECT coalesce(sum(s), 0)::bigint FROM mv").Scan(&s); err != nil {
			b.Fatal(err)
		}
		if s == want {
			break
		}
		time.Sleep(5 * time.Millisecond)
	}
	b.ReportMetric(float64(b.N)/(processCPU()-cpu0).Seconds(), "rows/cpu-s")
}

// BenchmarkTxnCommit runs transactions of 1000 rows each into a table with
// a secondary index and a view: half the rows inserted, the other half
// updates of rows inserted by an earlier transaction, all applied at
// COMMIT. An op is a row.
func BenchmarkTxnCommit(b *testing.B) {
	ctx := context.Background()
	srv := testserver.Start(b, testserver.Options{BarrierInterval: 10 * time.Millisecond})
	c, err := srv.Conn(ctx)
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close(ctx)
	for _, q := range []string{
		"CREATE TABLE t (id bigint PRIMARY KEY, k int, v bigint)",
		"CREATE INDEX t_k ON t (k)",
		"CREATE MATERIALIZED VIEW mv AS SELECT k, count(*) AS n, sum(v) AS s FROM t GROUP BY k",
	} {
		if _, err := c.Exec(ctx, q); err != nil {
			b.Fatal(err)
		}
	}
	const half = 500
	b.ResetTimer()
	cpu0 := processCPU()
	rows := 0
	for lo := 0; lo < b.N; lo += 2 * half {
		rows += 2 * half
		tx, err := c.Begin(ctx)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := tx.Exec(ctx, "INSERT INTO t SELECT g, g % 10, g FROM generate_series($1::bigint, $2::bigint) AS g", lo, lo+half-1); err != nil {
			b.Fatal(err)
		}
		if _, err := tx.Exec(ctx, "UPDATE t SET v = v + 1 WHERE id >= $1 AND id < $2", lo-half, lo); err != nil {
			b.Fatal(err)
		}
		if err := tx.Commit(ctx); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(rows)/(processCPU()-cpu0).Seconds(), "rows/cpu-s")
}
