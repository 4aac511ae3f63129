package crashtest

import (
	"context"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
)

// TestKafkaTableCrashRecovery kills the server with SIGKILL at random
// moments while a producer writes keyed messages and tombstones to a
// three-partition topic that two Kafka tables read: an UPSERT table keyed
// on the message key, with a view over it, and a PLAIN table that appends
// every message. At the end the upsert table and its view must be the
// model of the topic (the last value of each key, tombstones deleting),
// and the plain table must hold every message once.
func TestKafkaTableCrashRecovery(t *testing.T) {
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
	// Records of a key go to one partition (the key's hash), so the
	// topic's order of a key is its production order.
	prod, err := kgo.NewClient(kgo.SeedBrokers(addr), kgo.DefaultProduceTopic("t"))
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
	with := fmt.Sprintf("WITH (connector = 'kafka', topic = 't', properties.bootstrap.server = '%s', partition.discovery.interval.ms = '200')", addr)
	for _, s := range []string{
		"CREATE TABLE up (v bigint, PRIMARY KEY (k)) INCLUDE key AS k " + with + " FORMAT UPSERT ENCODE JSON",
		"CREATE TABLE log (v bigint) " + with + " FORMAT PLAIN ENCODE JSON",
		"CREATE MATERIALIZED VIEW up_totals AS SELECT count(*) AS n, sum(v)::bigint AS s FROM up",
		"CREATE MATERIALIZED VIEW log_totals AS SELECT count(*) AS n, sum(v)::bigint AS s, count(DISTINCT v) AS d FROM log",
	} {
		if _, err := conn.Exec(ctx, s); err != nil {
			t.Fatalf("%s: %v", s, err)
		}
	}
	conn.Close(ctx)

	model := map[string]int64{} // key -> last value
	var values, tombstones int64
	var logSum int64
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	prng := rand.New(rand.NewPCG(seed, 1))
	go func() {
		defer wg.Done()
		for seq := int64(1); ; {
			select {
			case <-done:
				return
			case <-time.After(2 * time.Millisecond):
			}
			var recs []*kgo.Record
			for i := 0; i < 20; i++ {
				key := fmt.Sprintf("k%d", prng.IntN(40))
				if prng.IntN(5) == 0 {
					recs = append(recs, &kgo.Record{Key: []byte(key)})
					delete(model, key)
					tombstones++
					continue
				}
				recs = append(recs, &kgo.Record{Key: []byte(key), Value: []byte(fmt.Sprintf(`{"v": %d}`, seq))})
				model[key] = seq
				values++
				logSum += seq
				seq++
			}
			if err := prod.ProduceSync(ctx, recs...).FirstErr(); err != nil {
				t.Error(err)
				return
			}
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
	var modelSum int64
	var keys, modelRows []string
	for k, v := range model {
		modelSum += v
		keys = append(keys, k)
	}
	slices.Sort(keys) // as bytea sorts
	for _, k := range keys {
		modelRows = append(modelRows, fmt.Sprintf("%s=%d", k, model[k]))
	}
	conn, err = pgx.Connect(ctx, srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	checks := []struct{ q, want string }{
		{"SELECT n || ' ' || s FROM up_totals", fmt.Sprintf("%d %d", len(model), modelSum)},
		{"SELECT n || ' ' || s || ' ' || d FROM log_totals", fmt.Sprintf("%d %d %d", values, logSum, values)},
		{"SELECT coalesce(string_agg(convert_from(k, 'UTF8') || '=' || v, ',' ORDER BY k), '') FROM up", strings.Join(modelRows, ",")},
		{"SELECT bad_records::text FROM streamsql_sources WHERE name = 'log'", fmt.Sprint(tombstones)},
	}
	for _, c := range checks {
		var got string
		for deadline := time.Now().Add(time.Minute); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
			if err := conn.QueryRow(ctx, c.q).Scan(&got); err != nil {
				t.Fatal(err)
			}
			if got == c.want {
				break
			}
		}
		if got != c.want {
			t.Fatalf("after %d kills: %s: got %s, want %s\n%s", *flagCycles, c.q, got, c.want, srv.LogTail(40))
		}
	}
	t.Logf("%d values and %d tombstones over %d keys, %d kills: each applied once", values, tombstones, len(model), *flagCycles)
}
