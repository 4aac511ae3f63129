package engine_test

import (
	"context"
	"testing"
	"time"

	"github.com/streamsql/streamsql/internal/testserver"
)

// TestMemoryBudget starts a server with --memory-limit 512MB: SHOW shows the
// limit and the query_memory_limit derived from it, the metrics show every
// component with its share, and a grouped aggregation's groups are counted
// in the operator caches.
func TestMemoryBudget(t *testing.T) {
	srv := testserver.Start(t, testserver.Options{MemoryLimit: 512 << 20})
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	conn, err := srv.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	for name, want := range map[string]string{"memory_limit": "512MB", "query_memory_limit": "128MB"} {
		var got string
		if err := conn.QueryRow(ctx, "SHOW "+name).Scan(&got); err != nil || got != want {
			t.Errorf("SHOW %s: %q, %v; want %q", name, got, err, want)
		}
	}
	for _, s := range []string{
		"CREATE TABLE t (k int PRIMARY KEY, v int)",
		"CREATE MATERIALIZED VIEW g AS SELECT k % 1000 AS b, count(*) AS n FROM t GROUP BY k % 1000",
		"INSERT INTO t SELECT x, x FROM generate_series(1, 5000) g(x)",
		"FLUSH",
	} {
		if _, err := conn.Exec(ctx, s); err != nil {
			t.Fatalf("%s: %v", s, err)
		}
	}
	fams := scrape(t, srv.Engine.HTTPHandler())
	if got := fams["streamsql_memory_limit_bytes"].GetMetric()[0].GetGauge().GetValue(); got != 512<<20 {
		t.Errorf("streamsql_memory_limit_bytes = %v", got)
	}
	used, share := map[string]float64{}, map[string]float64{}
	for _, m := range fams["streamsql_memory_bytes"].GetMetric() {
		used[m.GetLabel()[0].GetValue()] = m.GetGauge().GetValue()
	}
	for _, m := range fams["streamsql_memory_share_bytes"].GetMetric() {
		share[m.GetLabel()[0].GetValue()] = m.GetGauge().GetValue()
	}
	wantShares := map[string]float64{"block_cache": 64 << 20, "uncommitted_state": 32 << 20, "operator_caches": 128 << 20, "query_default": 128 << 20, "memtables": 0}
	for c, w := range wantShares {
		if share[c] != w {
			t.Errorf("share of %s: %v, want %v", c, share[c], w)
		}
	}
	// 1000 groups of at least the fixed overhead each.
	if used["operator_caches"] < 1000*96 {
		t.Errorf("operator caches hold %v bytes for 1000 groups", used["operator_caches"])
	}
}
