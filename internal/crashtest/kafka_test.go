package crashtest

import (
	"context"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
)

// TestKafkaSourceCrashRecovery kills the server with SIGKILL at random
// moments while a producer writes to a three-partition topic (an
// in-process broker in this test's process) that views read through a
// Kafka source, restarts it, and checks at the end that the views counted
// every message exactly once.
func TestKafkaSourceCrashRecovery(t *testing.T) {
	seed := seeds()[0]
	rng := rand.New(rand.NewPCG(seed, 0))
	t.Logf("seed %d", seed)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cluster, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(3, "t"))
	if err != nil {
		t.Fatal(err)
	}
	defer cluster.Close()
	addr := strings.Join(cluster.ListenAddrs(), ",")
	prod, err := kgo.NewClient(kgo.SeedBrokers(addr), kgo.DefaultProduceTopic("t"), kgo.RecordPartitioner(kgo.RoundRobinPartitioner()))
	if err != nil {
		t.Fatal(err)
	}
	defer prod.Close()

	dir := t.TempDir()
	opts := Options{Binary: binary(t), DataDir: filepath.Join(dir, "data"), LogPath: filepath.Join(dir, "server.log"),
		BarrierInterval: 20 * time.Millisecond}
	srv, err := Start(ctx, opts)
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Kill()
	conn, err := pgx.Connect(ctx, srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{
		fmt.Sprintf(`CREATE SOURCE s (id bigint, k int) WITH (connector = 'kafka', topic = 't',
			properties.bootstrap.server = '%s', partition.discovery.interval.ms = '200') FORMAT PLAIN ENCODE JSON`, addr),
		"CREATE MATERIALIZED VIEW totals AS SELECT count(*) AS n, sum(id)::bigint AS s, count(DISTINCT id) AS d FROM s",
		"CREATE MATERIALIZED VIEW by_k AS SELECT k, count(*) AS n FROM s GROUP BY k",
	} {
		if _, err := conn.Exec(ctx, s); err != nil {
			t.Fatalf("%s: %v", s, err)
		}
	}
	conn.Close(ctx)

	var produced int64
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			select {
			case <-done:
				return
			case <-time.After(2 * time.Millisecond):
			}
			var recs []*kgo.Record
			for i := 0; i < 20; i++ {
				id := produced + int64(i) + 1
				recs = append(recs, &kgo.Record{Value: []byte(fmt.Sprintf(`{"id": %d, "k": %d}`, id, id%7))})
			}
			if err := prod.ProduceSync(ctx, recs...).FirstErr(); err != nil {
				t.Error(err)
				return
			}
			produced += int64(len(recs))
		}
	}()
	for cycle := 0; cycle < *flagCycles; cycle++ {
		time.Sleep(time.Duration(100+rng.IntN(700)) * time.Millisecond)
		if err := srv.Kill(); err != nil {
			t.Fatal(err)
		}
		if srv, err = Start(ctx, opts); err != nil {
			t.Fatalf("restart %d: %v", cycle, err)
		}
	}
	close(done)
	wg.Wait()
	n := produced
	want := fmt.Sprintf("%d %d %d", n, n*(n+1)/2, n)
	conn, err = pgx.Connect(ctx, srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	var got string
	for deadline := time.Now().Add(time.Minute); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		var c, s, d int64
		if err := conn.QueryRow(ctx, "SELECT n, s, d FROM totals").Scan(&c, &s, &d); err != nil {
			t.Fatal(err)
		}
		if got = fmt.Sprintf("%d %d %d", c, s, d); got == want {
			break
		}
	}
	if got != want {
		t.Fatalf("after %d kills: totals (count, sum, distinct) %s, produced %s\n%s", *flagCycles, got, want, srv.LogTail(40))
	}
	var byK int64
	if err := conn.QueryRow(ctx, "SELECT sum(n)::bigint FROM by_k").Scan(&byK); err != nil || byK != n {
		t.Fatalf("by_k counts %d (%v), produced %d", byK, err, n)
	}
	t.Logf("%d messages, %d kills: each counted once", n, *flagCycles)
}
