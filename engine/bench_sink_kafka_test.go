package engine_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/streamsql/streamsql/internal/kafkatest"
	"github.com/streamsql/streamsql/internal/testserver"
	"github.com/twmb/franz-go/pkg/kgo"
)

// BenchmarkKafkaSink measures an exactly-once Kafka sink (FORMAT UPSERT
// ENCODE JSON, kfake in this process) over a table: Throughput inserts
// rows in statements of 10,000 and counts until a read_committed consumer
// has them all; Latency inserts one row at a time and times each from the
// INSERT to the consumer receiving its record (the barrier interval, the
// commit and the Kafka transaction). Blackhole is Throughput with the
// blackhole connector instead: what the inserts and the dataflow cost
// without Kafka.
func BenchmarkKafkaSink(b *testing.B) {
	for _, interval := range []time.Duration{10 * time.Millisecond, 100 * time.Millisecond} {
		b.Run(fmt.Sprintf("Throughput/barrier=%v", interval), func(b *testing.B) { benchKafkaSink(b, interval, 10000, false) })
		b.Run(fmt.Sprintf("Blackhole/barrier=%v", interval), func(b *testing.B) { benchKafkaSink(b, interval, 10000, true) })
		b.Run(fmt.Sprintf("Latency/barrier=%v", interval), func(b *testing.B) { benchKafkaSink(b, interval, 1, false) })
	}
}

func benchKafkaSink(b *testing.B, interval time.Duration, rowsPerInsert int, blackhole bool) {
	ctx := context.Background()
	_, brokers := kafkatest.Cluster(b, 4, "out")
	srv := testserver.Start(b, testserver.Options{BarrierInterval: interval})
	conn, err := srv.Conn(ctx)
	if err != nil {
		b.Fatal(err)
	}
	defer conn.Close(ctx)
	sink := fmt.Sprintf("CREATE SINK s FROM t WITH (connector = 'kafka', properties.bootstrap.server = '%s', topic = 'out', primary_key = 'k') FORMAT UPSERT ENCODE JSON", brokers)
	if blackhole {
		sink = "CREATE SINK s FROM t WITH (connector = 'blackhole')"
	}
	for _, s := range []string{"CREATE TABLE t (k bigint PRIMARY KEY, name text, price numeric(10, 2), ts timestamp)", sink} {
		if _, err := conn.Exec(ctx, s); err != nil {
			b.Fatal(err)
		}
	}
	cons, err := kgo.NewClient(kgo.SeedBrokers(strings.Split(brokers, ",")...), kgo.ConsumeTopics("out"),
		kgo.FetchIsolationLevel(kgo.ReadCommitted()), kgo.FetchMaxWait(10*time.Millisecond))
	if err != nil {
		b.Fatal(err)
	}
	defer cons.Close()
	// wait consumes until n records have arrived in all.
	seen := 0
	wait := func(n int) {
		for !blackhole && seen < n {
			fs := cons.PollFetches(ctx)
			if err := fs.Err0(); err != nil {
				b.Fatal(err)
			}
			seen += fs.NumRecords()
		}
	}
	next := 0
	insert := func() {
		q := fmt.Sprintf("INSERT INTO t SELECT g, 'item ' || g, g %% 1000 + 0.5, TIMESTAMP '2024-01-01' + g * INTERVAL '1 second' FROM generate_series(%d, %d) g", next, next+rowsPerInsert-1)
		if _, err := conn.Exec(ctx, q); err != nil {
			b.Fatal(err)
		}
		next += rowsPerInsert
	}
	insert() // warm up: the producer's first transaction
	wait(next)
	var lat []time.Duration
	b.ResetTimer()
	start := time.Now()
	for b.Loop() {
		t0 := time.Now()
		insert()
		if rowsPerInsert == 1 {
			wait(next)
			lat = append(lat, time.Since(t0))
		}
	}
	wait(next)
	elapsed := time.Since(start)
	b.StopTimer()
	if rowsPerInsert > 1 {
		b.ReportMetric(float64(b.N*rowsPerInsert)/elapsed.Seconds(), "rows/s")
		return
	}
	slices.Sort(lat)
	b.ReportMetric(float64(lat[len(lat)/2].Microseconds())/1000, "p50-ms")
	b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds())/1000, "p99-ms")
}
