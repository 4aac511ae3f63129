package engine_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/streamsql/streamsql/internal/testserver"
	"github.com/streamsql/streamsql/state"
)

func obsExec(t *testing.T, ctx context.Context, c *pgx.Conn, sqls ...string) {
	t.Helper()
	for _, s := range sqls {
		if _, err := c.Exec(ctx, s); err != nil {
			t.Fatalf("%s: %v", s, err)
		}
	}
}

// queryLines runs a query returning one text column and returns its rows.
func queryLines(t *testing.T, ctx context.Context, c *pgx.Conn, q string) []string {
	t.Helper()
	rows, err := c.Query(ctx, q)
	if err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	lines, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	return lines
}

// scrape fetches and parses the Prometheus metrics of h.
func scrape(t *testing.T, h http.Handler) map[string]*dto.MetricFamily {
	t.Helper()
	srv := httptest.NewServer(h)
	defer srv.Close()
	resp, err := http.Get(srv.URL + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var p expfmt.TextParser
	fams, err := p.TextToMetricFamilies(resp.Body)
	if err != nil {
		t.Fatalf("parsing the metrics: %v", err)
	}
	return fams
}

// metricValue returns the value of the sample of family name whose labels
// include labels, or false.
func metricValue(fams map[string]*dto.MetricFamily, name string, labels map[string]string) (float64, bool) {
	f := fams[name]
	if f == nil {
		return 0, false
	}
next:
	for _, m := range f.Metric {
		have := map[string]string{}
		for _, l := range m.Label {
			have[l.GetName()] = l.GetValue()
		}
		for k, v := range labels {
			if have[k] != v {
				continue next
			}
		}
		switch {
		case m.Counter != nil:
			return m.Counter.GetValue(), true
		case m.Gauge != nil:
			return m.Gauge.GetValue(), true
		case m.Histogram != nil:
			return float64(m.Histogram.GetSampleCount()), true
		}
	}
	return 0, false
}

// TestMetricsScrape scrapes the metrics of a server with a table and a view
// fed by inserts, updates and deletes, and checks the operator counters,
// the checkpoint histograms and the connection count.
func TestMetricsScrape(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	srv := testserver.Start(t, testserver.Options{})
	conn, err := srv.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	obsExec(t, ctx, conn,
		"CREATE TABLE t (k int PRIMARY KEY, g int, v int)",
		"CREATE MATERIALIZED VIEW mv AS SELECT g, count(*) AS n, sum(v) AS s FROM t WHERE v > 0 GROUP BY g",
		"INSERT INTO t SELECT x, x % 4, x FROM generate_series(1, 100) AS x",
		"UPDATE t SET v = -1 WHERE k <= 10",
		"DELETE FROM t WHERE k > 90",
		"FLUSH")
	fams := scrape(t, srv.Engine.HTTPHandler())
	view := map[string]string{"view": "mv"}
	// The scan emits every change of t: 100 inserts, 10 updates (a delete
	// and an insert each), 10 deletes. The filter drops the 10 new
	// versions with v = -1.
	if v, ok := metricValue(fams, "streamsql_operator_rows_out_total", map[string]string{"view": "mv", "operator": "Scan"}); !ok || v != 130 {
		t.Errorf("scan rows out = %v (%v), want 130", v, ok)
	}
	filterIn, _ := metricValue(fams, "streamsql_operator_rows_in_total", map[string]string{"view": "mv", "operator": "Filter"})
	filterOut, _ := metricValue(fams, "streamsql_operator_rows_out_total", map[string]string{"view": "mv", "operator": "Filter"})
	if filterIn != 130 || filterOut != 120 {
		t.Errorf("filter rows in %v out %v, want 130 and 120", filterIn, filterOut)
	}
	if v, ok := metricValue(fams, "streamsql_operator_rows_in_total", map[string]string{"view": "mv", "operator": "Materialize"}); !ok || v == 0 {
		t.Errorf("materialize rows in = %v (%v)", v, ok)
	}
	if _, ok := metricValue(fams, "streamsql_operator_seconds_total", map[string]string{"view": "mv", "operator": "HashAgg"}); !ok {
		t.Error("no operator time for the aggregation")
	}
	for _, name := range []string{"streamsql_barrier_latency_seconds", "streamsql_checkpoint_duration_seconds", "streamsql_checkpoint_bytes_total"} {
		if v, ok := metricValue(fams, name, nil); !ok || v == 0 {
			t.Errorf("%s = %v (%v), want some", name, v, ok)
		}
	}
	for _, stage := range []string{"inject", "dataflow", "flush", "sync"} {
		if v, ok := metricValue(fams, "streamsql_checkpoint_stage_seconds", map[string]string{"stage": stage}); !ok || v == 0 {
			t.Errorf("checkpoint stage %s observed %v times (%v), want some", stage, v, ok)
		}
	}
	for _, name := range []string{"streamsql_checkpoint_commit_keys", "streamsql_checkpoint_commit_bytes"} {
		if v, ok := metricValue(fams, name, nil); !ok || v == 0 {
			t.Errorf("%s observed %v times (%v), want some", name, v, ok)
		}
	}
	for _, name := range []string{"streamsql_view_state_bytes", "streamsql_view_expression_errors_total", "streamsql_view_late_rows_total"} {
		if _, ok := metricValue(fams, name, view); !ok {
			t.Errorf("no %s for mv", name)
		}
	}
	if v, ok := metricValue(fams, "streamsql_connections", nil); !ok || v < 1 {
		t.Errorf("connections = %v (%v), want at least 1", v, ok)
	}
}

// TestExplainAnalyze checks the rows EXPLAIN ANALYZE reports for a batch
// query and for a running view, and the JSON format.
func TestExplainAnalyze(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	srv := testserver.Start(t, testserver.Options{})
	conn, err := srv.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	obsExec(t, ctx, conn,
		"CREATE TABLE t (k int PRIMARY KEY, g int, v int)",
		"INSERT INTO t SELECT x, x % 3, x FROM generate_series(1, 100) AS x",
		"CREATE MATERIALIZED VIEW mv AS SELECT g, count(*) AS n FROM t GROUP BY g",
		"DELETE FROM t WHERE k <= 5")

	lines := queryLines(t, ctx, conn, "EXPLAIN ANALYZE SELECT g, count(*) FROM t WHERE v > 10 GROUP BY g")
	plan := strings.Join(lines, "\n")
	for _, want := range []string{
		`BatchFilter { predicate: (v#2 > 10) } (actual rows=90, rows in=95,`,
		`BatchScan { table: t, columns: [k, g, v] } (actual rows=95, rows in=0,`,
		`BatchHashAgg { group_key: [g], aggs: [count(*)] } (actual rows=3, rows in=90,`,
	} {
		if !strings.Contains(plan, want) {
			t.Errorf("EXPLAIN ANALYZE lacks %q:\n%s", want, plan)
		}
	}
	if !regexp.MustCompile(`^Execution Time: [0-9.]+ ms \(3 rows\)$`).MatchString(lines[len(lines)-1]) {
		t.Errorf("last line %q", lines[len(lines)-1])
	}

	doc := queryLines(t, ctx, conn, "EXPLAIN (ANALYZE, FORMAT JSON) SELECT count(*) FROM t")
	var parsed []struct {
		Plan map[string]any
	}
	if err := json.Unmarshal([]byte(strings.Join(doc, "\n")), &parsed); err != nil || len(parsed) != 1 {
		t.Fatalf("EXPLAIN (FORMAT JSON) is not a plan document (%v):\n%s", err, doc)
	}
	leaf := parsed[0].Plan
	for leaf["Plans"] != nil {
		leaf = leaf["Plans"].([]any)[0].(map[string]any)
	}
	if leaf["Node Type"] != "BatchScan" || leaf["Actual Rows"] != 95.0 {
		t.Errorf("JSON leaf %v, want a BatchScan of 95 rows", leaf)
	}

	view := strings.Join(queryLines(t, ctx, conn, "EXPLAIN ANALYZE MATERIALIZED VIEW mv"), "\n")
	// Backfill: 100 rows; then 5 deletes. The aggregation emits 3 inserts
	// and, for the deletes, updates of 2 groups (2 rows each).
	for _, want := range []string{"StreamHashAgg", "(actual rows=105, rows in=0,", "Status: running, expression errors: 0, late rows: 0"} {
		if !strings.Contains(view, want) {
			t.Errorf("EXPLAIN ANALYZE MATERIALIZED VIEW lacks %q:\n%s", want, view)
		}
	}
	if _, err := conn.Exec(ctx, "EXPLAIN ANALYZE MATERIALIZED VIEW nosuch"); err == nil || !strings.Contains(err.Error(), "42P01") {
		t.Errorf("EXPLAIN ANALYZE of a missing view: %v, want 42P01", err)
	}
}

// TestVerify checks VERIFY MATERIALIZED VIEW on views that are right, then
// corrupts one view's stored rows behind the server's back and checks that
// VERIFY reports the row that went missing.
func TestVerify(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	srv := testserver.Start(t, testserver.Options{})
	conn, err := srv.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	obsExec(t, ctx, conn,
		"CREATE TABLE t (k int PRIMARY KEY, g int, v int)",
		"CREATE TABLE u (g int PRIMARY KEY, name text)",
		"CREATE MATERIALIZED VIEW agg AS SELECT g, count(*) AS n, sum(v) AS s FROM t GROUP BY g",
		"CREATE MATERIALIZED VIEW j AS SELECT t.k, u.name FROM t JOIN u ON t.g = u.g",
		"INSERT INTO u VALUES (0, 'zero'), (1, 'one'), (2, 'two')",
		"INSERT INTO t SELECT x, x % 3, x FROM generate_series(1, 30) AS x",
		"UPDATE t SET g = 1 WHERE k <= 3",
		"DELETE FROM t WHERE k > 25",
		"UPDATE u SET name = 'ONE' WHERE g = 1")
	verify := func(view string) [][2]string {
		rows, err := conn.Query(ctx, "VERIFY MATERIALIZED VIEW "+view)
		if err != nil {
			t.Fatal(err)
		}
		var out [][2]string
		for rows.Next() {
			var d [2]string
			if err := rows.Scan(&d[0], &d[1]); err != nil {
				t.Fatal(err)
			}
			out = append(out, d)
		}
		if err := rows.Err(); err != nil {
			t.Fatal(err)
		}
		return out
	}
	for _, v := range []string{"agg", "j"} {
		if d := verify(v); len(d) != 0 {
			t.Errorf("VERIFY %s: %v, want no differences", v, d)
		}
	}

	// The view's state table, from its plan.
	plan := strings.Join(queryLines(t, ctx, conn, "EXPLAIN MATERIALIZED VIEW agg"), "\n")
	m := regexp.MustCompile(`StreamMaterialize \{.*state_table: #(\d+)`).FindStringSubmatch(plan)
	if m == nil {
		t.Fatalf("no state table in\n%s", plan)
	}
	id, _ := strconv.Atoi(m[1])
	conn.Close(ctx)
	srv.Stop()
	deleteFirstKey(t, srv.DataDir, state.TableID(id))
	if err := srv.Restart(); err != nil {
		t.Fatal(err)
	}
	if conn, err = srv.Conn(ctx); err != nil {
		t.Fatal(err)
	}
	d := verify("agg")
	if len(d) != 1 || d[0][0] != "missing" || !strings.HasPrefix(d[0][1], "(") {
		t.Fatalf("VERIFY of the corrupted view: %v, want one missing row", d)
	}
	if d := verify("j"); len(d) != 0 {
		t.Errorf("VERIFY j after the restart: %v", d)
	}
	if _, err := conn.Exec(ctx, "VERIFY MATERIALIZED VIEW t"); err == nil || !strings.Contains(err.Error(), "42P01") {
		t.Errorf("VERIFY of a table: %v, want 42P01", err)
	}
}

// deleteFirstKey deletes the first committed key of table id in the store
// in dir, as a commit of the next epoch.
func deleteFirstKey(t *testing.T, dir string, id state.TableID) {
	t.Helper()
	st, err := state.Open(dir, state.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	tbl := st.Table(id)
	it, err := tbl.NewIter(nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !it.First() {
		t.Fatalf("table %d is empty", id)
	}
	key := append([]byte(nil), it.Key()...)
	it.Close()
	tbl.Delete(key)
	epoch := st.CommittedEpoch() + 1
	tbl.Seal(epoch)
	if _, err := st.Commit(epoch); err != nil {
		t.Fatal(err)
	}
}

// TestCheckpointHistoryPersists checks that streamsql_checkpoints keeps the
// checkpoints of before a restart.
func TestCheckpointHistoryPersists(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	srv := testserver.Start(t, testserver.Options{})
	conn, err := srv.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	obsExec(t, ctx, conn, "CREATE TABLE t (k int)")
	for i := 0; i < 5; i++ {
		obsExec(t, ctx, conn, fmt.Sprintf("INSERT INTO t VALUES (%d)", i))
	}
	obsExec(t, ctx, conn, "FLUSH", "FLUSH") // the second commits the history of the first
	var before, firstBefore int64
	q := "SELECT count(*), min(epoch) FROM streamsql_checkpoints WHERE status = 'completed'"
	if err := conn.QueryRow(ctx, q).Scan(&before, &firstBefore); err != nil {
		t.Fatal(err)
	}
	conn.Close(ctx)
	if err := srv.Restart(); err != nil {
		t.Fatal(err)
	}
	if conn, err = srv.Conn(ctx); err != nil {
		t.Fatal(err)
	}
	var after, firstAfter int64
	if err := conn.QueryRow(ctx, q).Scan(&after, &firstAfter); err != nil {
		t.Fatal(err)
	}
	if firstAfter != firstBefore || after < before-2 {
		t.Errorf("after a restart %d checkpoints from epoch %d; before it %d from epoch %d", after, firstAfter, before, firstBefore)
	}
	// The dashboard's endpoint reads the same history.
	h := httptest.NewServer(srv.Engine.HTTPHandler())
	defer h.Close()
	resp, err := http.Get(h.URL + "/api/checkpoints?limit=1000")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	var cps []struct {
		Epoch uint64 `json:"epoch"`
	}
	if err := json.Unmarshal(body, &cps); err != nil || len(cps) == 0 || int64(cps[0].Epoch) > firstBefore {
		t.Errorf("/api/checkpoints: %v, %s", err, body)
	}
}
