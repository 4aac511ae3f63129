package crashtest

import (
	"context"
	"flag"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// etView is a materialized view of the event-time test. Its expected
// content is its PostgreSQL query (pg, the query itself if empty) run over
// the tables as committed, or, if effective is set, over their effective
// rows (see etModel): the rows the watermark-dependent operators took.
type etView struct {
	name, query, pg string
	effective       bool
	// eowc is set for EMIT ON WINDOW CLOSE views: the table (tabA or tabB)
	// whose watermark closes their windows. pg then holds {wm}, the
	// committed watermark of that table: the view holds exactly the windows
	// ending at or before it, and its rows never change or go away.
	eowc bool
	wmOf int
}

func (v *etView) createSQL() string {
	return "CREATE MATERIALIZED VIEW " + v.name + " AS " + v.query
}

// PostgreSQL forms of the window functions.
const (
	pgTumbleB = `(SELECT *, date_bin('5 seconds', ts, '1970-01-01') AS window_start, ` +
		`date_bin('5 seconds', ts, '1970-01-01') + interval '5 seconds' AS window_end FROM et_b) w`
	pgTumbleA = `(SELECT *, date_bin('5 seconds', ts, '1970-01-01') AS window_start, ` +
		`date_bin('5 seconds', ts, '1970-01-01') + interval '5 seconds' AS window_end FROM et_a) w`
)

// etFixedViews exist from the start, in creation order: one of each kind
// of event-time operator, in time (effective) or over the whole tables.
var etFixedViews = []*etView{
	{
		// A plain aggregation: late rows count like any other.
		name:  "et_a_by_k",
		query: "SELECT k, count(*) AS n, sum(v) AS s, max(ts) AS last FROM et_a GROUP BY k",
	},
	{
		name: "et_tumble_b", effective: true,
		query: "SELECT window_start, window_end, count(*) AS n, sum(v) AS s, max(v) AS top " +
			"FROM TUMBLE(et_b, ts, INTERVAL '5 seconds') GROUP BY window_start, window_end",
		pg: "SELECT window_start, window_end, count(*) AS n, sum(v) AS s, max(v) AS top FROM " + pgTumbleB +
			" GROUP BY window_start, window_end",
	},
	{
		name: "et_hop_a", effective: true,
		query: "SELECT window_start, k, count(*) AS n, sum(v) AS s " +
			"FROM HOP(et_a, ts, INTERVAL '2 seconds', INTERVAL '6 seconds') GROUP BY window_start, k",
		pg: "SELECT ws AS window_start, k, count(*) AS n, sum(v) AS s FROM et_a, " +
			"generate_series(date_bin('2 seconds', ts, '1970-01-01') - interval '4 seconds', " +
			"date_bin('2 seconds', ts, '1970-01-01'), interval '2 seconds') AS ws GROUP BY ws, k",
	},
	{
		name: "et_eowc_a", effective: true, eowc: true, wmOf: tabA,
		query: "SELECT window_start, window_end, count(*) AS n, sum(v) AS s, min(v) AS lo " +
			"FROM TUMBLE(et_a, ts, INTERVAL '5 seconds') GROUP BY window_start, window_end EMIT ON WINDOW CLOSE",
		pg: "SELECT window_start, window_end, count(*) AS n, sum(v) AS s, min(v) AS lo FROM " + pgTumbleA +
			" WHERE window_end <= {wm} GROUP BY window_start, window_end",
	},
	{
		name: "et_eowc_b", effective: true, eowc: true, wmOf: tabB,
		query: "SELECT window_start, window_end, count(*) AS n, sum(v) AS s, min(v) AS lo " +
			"FROM TUMBLE(et_b, ts, INTERVAL '5 seconds') GROUP BY window_start, window_end EMIT ON WINDOW CLOSE",
		pg: "SELECT window_start, window_end, count(*) AS n, sum(v) AS s, min(v) AS lo FROM " + pgTumbleB +
			" WHERE window_end <= {wm} GROUP BY window_start, window_end",
	},
	{
		// A group TopN (not windowed: k carries no watermark).
		name:  "et_topn_b",
		query: "SELECT * FROM (SELECT k, id, v, row_number() OVER (PARTITION BY k ORDER BY v DESC, id) AS rn FROM et_b) t WHERE rn <= 3",
	},
	{
		// Deduplication: the latest row per k.
		name:  "et_dedup_b",
		query: "SELECT DISTINCT ON (k) k, id, v, ts FROM et_b ORDER BY k, ts DESC, id DESC",
	},
	{
		// An interval join: each side drops its late rows and cleans the
		// rows the other side's watermark leaves behind.
		name: "et_ijoin", effective: true,
		query: "SELECT a.id AS aid, b.id AS bid, a.k, a.v + b.v AS v FROM et_a a JOIN et_b b " +
			"ON a.k = b.k AND b.ts BETWEEN a.ts AND a.ts + INTERVAL '3 seconds' WHERE a.v > 700",
	},
	{
		name: "et_session_b", effective: true,
		query: "SELECT k, window_start, window_end, count(*) AS n, sum(v) AS s " +
			"FROM SESSION(et_b, ts, INTERVAL '3 seconds', k) GROUP BY k, window_start, window_end",
		// A session starts at a row 3 seconds or more after the previous
		// one of its k.
		pg: "SELECT k, min(ts) AS window_start, max(ts) + interval '3 seconds' AS window_end, count(*) AS n, sum(v) AS s " +
			"FROM (SELECT *, sum(brk) OVER (PARTITION BY k ORDER BY ts, id ROWS UNBOUNDED PRECEDING) AS sid " +
			"FROM (SELECT *, CASE WHEN ts - lag(ts) OVER (PARTITION BY k ORDER BY ts, id) < interval '3 seconds' " +
			"THEN 0 ELSE 1 END AS brk FROM et_b) x) y GROUP BY k, sid",
	},
	{
		// An OVER window: a running sum (not emitting on window close, so
		// late rows are rows like any other).
		name:  "et_running_b",
		query: "SELECT id, k, ts, v, sum(v) OVER (PARTITION BY k ORDER BY ts, id ROWS UNBOUNDED PRECEDING) AS run FROM et_b",
	},
}

// etExtraViews are created (with a numeric suffix) and dropped during the
// run, so that kills hit DDL too. They do not depend on lateness: a view
// created later starts from the tables as they are.
var etExtraViews = []*etView{
	{name: "x_et_b_by_client", query: "SELECT client, count(*) AS n, sum(v) AS s, min(ts) AS first FROM et_b GROUP BY client"},
	{name: "x_et_a_latest", query: "SELECT DISTINCT ON (client) client, id, ts FROM et_a ORDER BY client, ts DESC, id DESC"},
}

const etDefaultSeeds = 1

// etHarness runs one seed of TestEventTimeCrashRecovery.
type etHarness struct {
	*harness
	pg      *postgres
	clock   *etClock
	clients []*etClient
	views   []*etView // in creation order
	// pendingDDL is a CREATE (create set) or DROP of an extra view that
	// was in flight at the kill.
	pendingDDL *etView
	pendingNew bool
	// seen are, per EMIT ON WINDOW CLOSE view, the rows any read has
	// shown: they must stay, unchanged, for ever.
	seen map[string]map[string]bool

	etStats struct {
		polls, checks, eowcRows int
		cycleKinds              map[string]int
	}
}

// TestEventTimeCrashRecovery kills the server with SIGKILL at random
// moments while clients write two tables with watermarks (one APPEND ONLY)
// under windowed, emit-on-window-close, TopN, dedup, interval-join, session
// and OVER views, some of their rows late, and checks every view after
// every restart: against PostgreSQL running its query over the committed
// tables, or over the rows the watermark let in; emit-on-window-close views
// hold exactly the windows the committed watermark has closed, and never
// lose or change a row they have shown.
func TestEventTimeCrashRecovery(t *testing.T) {
	cycles := *flagCycles
	if testing.Short() {
		cycles = min(cycles, 3)
	}
	pg := startPostgres(t)
	for _, seed := range eventTimeSeeds() {
		t.Run(fmt.Sprintf("seed=%d", seed), func(t *testing.T) {
			h := newETHarness(t, seed)
			h.pg = pg
			h.start()
			h.setup()
			for range cycles {
				h.workload()
				h.restart()
				h.verify()
			}
			h.shutdown()
			h.start()
			h.verify()
			h.shutdown()
			h.logETStats()
		})
	}
}

// eventTimeSeeds returns the seeds of TestEventTimeCrashRecovery: -seed
// alone, -seeds random ones when given, else etDefaultSeeds.
func eventTimeSeeds() []uint64 {
	explicit := false
	flag.Visit(func(f *flag.Flag) { explicit = explicit || f.Name == "seeds" })
	s := seeds()
	if *flagSeed == 0 && !explicit {
		s = s[:min(len(s), etDefaultSeeds)]
	}
	return s
}

func newETHarness(t *testing.T, seed uint64) *etHarness {
	h := &etHarness{harness: newHarness(t, seed), clock: newETClock(*flagClients), seen: map[string]map[string]bool{}}
	h.etStats.cycleKinds = map[string]int{}
	for i := range *flagClients {
		c := newETClient(int64(i+1), seed, h.clock)
		h.clients = append(h.clients, c)
		h.writers = append(h.writers, &c.writerLog)
	}
	h.serverArgs = func() []string {
		inFlight, freq := 1, 1
		if h.rng.IntN(2) == 0 {
			inFlight = 2 + h.rng.IntN(2)
		}
		if h.rng.IntN(3) == 0 {
			freq = 2 + h.rng.IntN(2)
		}
		return []string{"--max-inflight-checkpoints", strconv.Itoa(inFlight), "--checkpoint-frequency", strconv.Itoa(freq)}
	}
	return h
}

func (h *etHarness) setup() {
	h.t.Helper()
	db := h.session()
	defer db.close()
	db.exec(createETA)
	db.exec(createETB)
	for _, v := range etFixedViews {
		db.exec(v.createSQL())
		h.views = append(h.views, v)
	}
}

// etKills are the kill plans of TestEventTimeCrashRecovery's cycles.
var etKills = killConfig{
	modes:       []killMode{killAfterDelay, killAfterAcks, killDuringCommit, killDuringDDL, killIdle, killDuringShutdown},
	maxDelay:    time.Second,
	maxAcks:     100,
	maxDDLDelay: 500 * time.Millisecond,
	targetWait:  3 * time.Second,
}

// chooseDDL picks an extra view to create or drop; create reports which.
func (h *etHarness) chooseDDL() (v *etView, create bool) {
	extras := h.views[len(etFixedViews):]
	if len(extras) >= 2 || (len(extras) > 0 && h.rng.IntN(3) == 0) {
		return extras[h.rng.IntN(len(extras))], false
	}
	def := *etExtraViews[h.rng.IntN(len(etExtraViews))]
	def.name = h.extraName(def.name)
	return &def, true
}

func (h *etHarness) applyDDL(v *etView, create bool) {
	if create {
		h.views = append(h.views, v)
		return
	}
	h.views = slices.DeleteFunc(h.views, func(x *etView) bool { return x == v })
}

// workload runs the clients, a monitor of the emit-on-window-close views
// and maybe one DDL statement, and kills the server at a moment chosen by
// a random kill mode.
func (h *etHarness) workload() {
	h.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), hangTimeout)
	defer cancel()
	t0 := time.Now()

	var ddl *etView
	var create bool
	plan := h.planKill(etKills, func() { ddl, create = h.chooseDDL() })
	acksBefore := h.counts().ackedStatements

	cy := h.newCycle(ctx, plan)
	for _, c := range h.clients {
		cy.goConn(func(conn *pgx.Conn) error { return c.run(cy, conn) })
	}
	var eowc []*etView // the DDL goroutine may change h.views meanwhile
	for _, v := range h.views {
		if v.eowc {
			eowc = append(eowc, v)
		}
	}
	cy.goConn(func(conn *pgx.Conn) error { return h.monitor(cy, conn, eowc) })
	if ddl != nil {
		sql := "DROP MATERIALIZED VIEW " + ddl.name
		if create {
			sql = ddl.createSQL()
		}
		cy.goDDL(sql, func() { h.pendingDDL, h.pendingNew = ddl, create }, func() {
			h.applyDDL(ddl, create)
			h.pendingDDL = nil
		})
	}
	cy.end(false)

	inFlight := 0
	for _, c := range h.clients {
		inFlight += len(c.pending)
	}
	h.stats.kills++
	h.etStats.cycleKinds[plan.mode.String()]++
	h.t.Logf("cycle %d (barrier interval %v, %s; started in %v, ran %v): SIGKILL %s: %d statements acknowledged, %d in flight%s",
		h.stats.cycles, h.interval, strings.Join(h.args, " "), h.startupTime.Round(time.Millisecond),
		time.Since(t0).Round(time.Millisecond), plan.mode, h.counts().ackedStatements-acksBefore, inFlight, cy.ddlNote())
	h.stats.cycles++
}

// monitor reads the emit-on-window-close views while the clients write:
// every row a read has shown must stay (see observeEOWC).
func (h *etHarness) monitor(cy *cycle, conn *pgx.Conn, views []*etView) error {
	for !cy.stop.Load() {
		for _, v := range views {
			rows, err := queryRows(cy.ctx, conn, "SELECT * FROM "+v.name)
			if err != nil {
				if cy.killed.Load() {
					return nil
				}
				return fmt.Errorf("monitor: %w", err)
			}
			if err := h.observeEOWC(v, rows); err != nil {
				return fmt.Errorf("monitor, while the server runs: %w", err)
			}
			h.etStats.polls++
		}
		time.Sleep(20 * time.Millisecond)
	}
	return nil
}

// observeEOWC checks rows read from an emit-on-window-close view against
// the rows read before: each window at most once, and every row seen
// before still there, unchanged. It adds rows to those seen. Only the
// monitor goroutine, or the controller between cycles, calls it.
func (h *etHarness) observeEOWC(v *etView, rows [][]string) error {
	seen := h.seen[v.name]
	if seen == nil {
		seen = map[string]bool{}
		h.seen[v.name] = seen
	}
	windows := map[string]bool{}
	have := map[string]bool{}
	for _, r := range rows {
		if windows[r[0]] {
			return fmt.Errorf("view %s holds window %s twice: %v", v.name, r[0], firstRows(rows))
		}
		windows[r[0]] = true
		have[strings.Join(r, "|")] = true
	}
	for r := range seen {
		if !have[r] {
			return fmt.Errorf("view %s emits on window close, but its row %s, read before, is gone or changed", v.name, r)
		}
	}
	for r := range have {
		seen[r] = true
	}
	return nil
}

// verify checks the restarted server: the tables hold every acknowledged
// write and a prefix of the statements in flight at the kill; the views
// are the known ones; each equals PostgreSQL's run of its query over the
// committed tables or their effective rows, and, if it does not depend on
// lateness, its query run by streamsql as a batch SELECT.
func (h *etHarness) verify() {
	h.t.Helper()
	db := h.session()
	defer db.close()
	query := db.query

	a, b := query(selectETA), query(selectETB)
	aOf, bOf := map[string][][]string{}, map[string][][]string{}
	for _, r := range a {
		aOf[r[1]] = append(aOf[r[1]], r)
	}
	for _, r := range b {
		bOf[r[1]] = append(bOf[r[1]], r)
	}
	all := newETModel()
	for _, c := range h.clients {
		id := itoa(c.id)
		if _, err := c.resolve(aOf[id], bOf[id]); err != nil {
			h.fatalf("after restart %d: %v%s", h.starts, err, c.recentHistory())
		}
		delete(aOf, id)
		delete(bOf, id)
		all.merge(c.acked)
	}
	if len(aOf)+len(bOf) > 0 {
		h.fatalf("after restart %d: the tables hold rows of unknown clients: %v %v", h.starts, aOf, bOf)
	}
	h.clock.release()
	h.clock.commit(all)

	var names []string
	for _, r := range query("SHOW MATERIALIZED VIEWS") {
		names = append(names, r[0])
	}
	if v := h.pendingDDL; v != nil {
		if slices.Contains(names, v.name) == h.pendingNew {
			h.applyDDL(v, h.pendingNew)
		}
		h.pendingDDL = nil
	}
	var want []string
	for _, v := range h.views {
		want = append(want, v.name)
	}
	h.checkViewNames(names, want)

	if err := h.pg.loadET(db.ctx, all); err != nil {
		h.fatalf("loading PostgreSQL: %v", err)
	}
	for _, v := range h.views {
		got := query("SELECT * FROM " + v.name)
		if !v.effective {
			if d := diffRows(query(v.query), got, false); d != "" {
				h.fatalf("after restart %d: view %s differs from its defining query run as a batch SELECT: %s", h.starts, v.name, d)
			}
			if d := query("VERIFY MATERIALIZED VIEW " + v.name); len(d) != 0 {
				h.fatalf("after restart %d: VERIFY MATERIALIZED VIEW %s reports differences: %v", h.starts, v.name, d)
			}
		}
		pgWant, err := h.pg.queryET(db.ctx, v, all)
		if err != nil {
			h.fatalf("PostgreSQL: %v", err)
		}
		if d := diffRows(pgWant, got, false); d != "" {
			over := "the committed tables"
			if v.effective {
				over = "the rows the watermarks let in"
			}
			h.fatalf("after restart %d: view %s differs from PostgreSQL running its query over %s: %s%s",
				h.starts, v.name, over, d, h.watermarkNote(all))
		}
		if v.eowc {
			if err := h.observeEOWC(v, got); err != nil {
				h.fatalf("after restart %d: %v", h.starts, err)
			}
			h.etStats.eowcRows = len(got)
		}
		h.etStats.checks++
	}
}

// watermarkNote describes the committed watermarks, for failure reports.
func (h *etHarness) watermarkNote(m *etModel) string {
	return fmt.Sprintf("\n--- committed watermarks: et_a %s, et_b %s", wmLiteral(m, tabA), wmLiteral(m, tabB))
}

// wmLiteral is the committed watermark of table t as a PostgreSQL
// literal: the largest ts inserted minus the delay, or -infinity.
func wmLiteral(m *etModel, t int) string {
	if m.maxTS[t] == 0 {
		return "'-infinity'::timestamp"
	}
	return "'" + fmtTS(m.maxTS[t]-etDelay) + "'::timestamp"
}

func (h *etHarness) logETStats() {
	n := h.counts()
	var lateIns, lateCh, inTimeCh int
	for _, c := range h.clients {
		lateIns += c.lateInserts
		lateCh += c.lateChanges
		inTimeCh += c.inTimeChanges
	}
	h.t.Logf("seed %d: %d cycles %v, %d during startup, %d starts; %d of %d statements acknowledged; %d late rows "+
		"inserted, %d late and %d in-time updates and deletes of et_b; times at the edges: %d late, %d in time; "+
		"%d read-your-writes checks; %d monitor reads, %d view checks; et_eowc_b has %d windows; event time reached %s (et_a) %s (et_b)",
		h.seed, h.stats.cycles, h.etStats.cycleKinds, h.stats.startupKills, h.starts, n.ackedStatements, n.statements,
		lateIns, lateCh, inTimeCh, h.clock.edgeLate, h.clock.edgeInTime, n.checks, h.etStats.polls, h.etStats.checks, h.etStats.eowcRows,
		fmtTS(h.clock.sent[tabA]), fmtTS(h.clock.sent[tabB]))
}

// loadET replaces PostgreSQL's event-time schemas: et holds the tables as
// committed (m.a, m.b), et_eff their effective rows (m.effA, m.effB).
func (p *postgres) loadET(ctx context.Context, m *etModel) error {
	for _, s := range []struct {
		schema string
		a, b   []etRow
	}{
		{"et", slices.Collect(maps.Values(m.a)), slices.Collect(maps.Values(m.b))},
		{"et_eff", slices.Collect(maps.Values(m.effA)), slices.Collect(maps.Values(m.effB))},
	} {
		for _, q := range []string{
			"DROP SCHEMA IF EXISTS " + s.schema + " CASCADE",
			"CREATE SCHEMA " + s.schema,
			"CREATE TABLE " + s.schema + ".et_a (id bigint, client int, k int, v bigint, ts timestamp)",
			"CREATE TABLE " + s.schema + ".et_b (id bigint, client int, k int, v bigint, ts timestamp)",
		} {
			if _, err := p.conn.Exec(ctx, q); err != nil {
				return fmt.Errorf("%s: %w", q, err)
			}
		}
		for name, rows := range map[string][]etRow{"et_a": s.a, "et_b": s.b} {
			src := make([][]any, len(rows))
			for i, r := range rows {
				src[i] = []any{r.id, r.client, r.k, r.v, time.UnixMicro(r.ts).UTC()}
			}
			cols := []string{"id", "client", "k", "v", "ts"}
			if _, err := p.conn.CopyFrom(ctx, pgx.Identifier{s.schema, name}, cols, pgx.CopyFromRows(src)); err != nil {
				return err
			}
		}
	}
	return nil
}

// queryET runs v's PostgreSQL query over the schema its content follows.
func (p *postgres) queryET(ctx context.Context, v *etView, m *etModel) ([][]string, error) {
	schema := "et"
	if v.effective {
		schema = "et_eff"
	}
	if _, err := p.conn.Exec(ctx, "SET search_path = "+schema); err != nil {
		return nil, err
	}
	q := v.pg
	if q == "" {
		q = v.query
	}
	q = strings.ReplaceAll(q, "{wm}", wmLiteral(m, v.wmOf))
	return p.query(ctx, q)
}
