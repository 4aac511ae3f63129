package crashtest

import (
	"context"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// seeds returns the seeds to run: -seed alone, or -seeds random ones (one
// in -short mode).
func seeds() []uint64 {
	if *flagSeed != 0 {
		return []uint64{*flagSeed}
	}
	n := *flagSeeds
	if testing.Short() {
		n = 1
	}
	out := make([]uint64, n)
	for i := range out {
		out[i] = rand.Uint64()%1_000_000 + 1
	}
	return out
}

// TestCrashRecovery kills the server with SIGKILL at random moments under
// concurrent writes and DDL, restarts it on the same data directory and
// verifies it after every restart (see harness.verify). Every few cycles it
// also kills the server while it starts up.
func TestCrashRecovery(t *testing.T) {
	cycles := *flagCycles
	if testing.Short() {
		cycles = min(cycles, 3)
	}
	pg := startPostgres(t)
	for _, seed := range seeds() {
		t.Run(fmt.Sprintf("seed=%d", seed), func(t *testing.T) {
			h := newCrashHarness(t, seed)
			h.pg = pg
			h.start()
			h.setup()
			for range cycles {
				h.workload(false)
				h.restart()
				h.verify()
			}
			h.shutdown()
			h.logStats()
		})
	}
}

// TestCleanShutdown stops the server with SIGTERM, first while clients
// write and then while idle: it must exit with status 0, and a restart must
// hold every acknowledged write (and, after the idle stop, nothing else).
func TestCleanShutdown(t *testing.T) {
	h := newCrashHarness(t, seeds()[0])
	h.start()
	h.setup()

	h.workload(true)
	h.start()
	h.verify()

	// Idle: run the clients, let them finish, then SIGTERM.
	h.writeFor(time.Duration(100+h.rng.IntN(400)) * time.Millisecond)
	h.shutdown()
	if !strings.Contains(h.srv.Log(), "database closed") {
		h.fatalf("the log of a clean shutdown does not say \"database closed\"")
	}
	h.start()
	h.verify() // no statement is pending: the tables must equal the model exactly
	h.logStats()
}

// TestDataDirInUse starts a second server on the data directory of a running
// one: it must refuse to start, saying the directory is in use, and leave
// the first server and its data alone.
func TestDataDirInUse(t *testing.T) {
	bin := binary(t)
	dir := t.TempDir()
	opts := Options{Binary: bin, DataDir: filepath.Join(dir, "data"), LogPath: filepath.Join(dir, "first.log")}
	ctx, cancel := context.WithTimeout(context.Background(), hangTimeout)
	defer cancel()
	first, err := Start(ctx, opts)
	if err != nil {
		t.Fatal(err)
	}
	defer first.Kill()
	conn, err := connect(ctx, first.URL)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{"CREATE TABLE t (k int PRIMARY KEY, v text)", "INSERT INTO t VALUES (1, 'one')"} {
		if _, err := conn.Exec(ctx, s); err != nil {
			t.Fatalf("%s: %v", s, err)
		}
	}

	second := opts
	second.LogPath = filepath.Join(dir, "second.log")
	s2, err := Launch(second)
	if err != nil {
		t.Fatal(err)
	}
	st, err := s2.Wait(ctx)
	if err != nil {
		t.Fatalf("the second server on the same data directory did not exit: %v", err)
	}
	out := s2.LogTail(4096)
	if st.ExitCode() == 0 {
		t.Fatalf("the second server on the same data directory exited with status 0; log:\n%s", out)
	}
	if !strings.Contains(out, "data directory") || !strings.Contains(out, "in use") {
		t.Fatalf("the second server's message does not say the data directory is in use:\n%s", out)
	}
	if !strings.Contains(out, opts.DataDir) {
		t.Errorf("the second server's message does not name the data directory %s:\n%s", opts.DataDir, out)
	}

	// The first server still works.
	if _, err := conn.Exec(ctx, "INSERT INTO t VALUES (2, 'two')"); err != nil {
		t.Fatalf("the first server failed after the second was refused: %v", err)
	}
	conn.Close(ctx)

	// After the first server dies, its lock goes with it.
	if err := first.Kill(); err != nil {
		t.Fatal(err)
	}
	opts.LogPath = filepath.Join(dir, "third.log")
	third, err := Start(ctx, opts)
	if err != nil {
		t.Fatalf("restarting after the first server was killed: %v", err)
	}
	defer third.Kill()
	conn, err = connect(ctx, third.URL)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	rows, err := queryRows(ctx, conn, "SELECT k, v FROM t")
	if err != nil {
		t.Fatal(err)
	}
	if d := diffRows([][]string{{"1", "one"}, {"2", "two"}}, rows, false); d != "" {
		t.Fatalf("after the restart: %s", d)
	}
}

// crashHarness runs one seed of TestCrashRecovery or TestCleanShutdown:
// the harness, the clients and the model of what the database must hold.
type crashHarness struct {
	*harness
	clients []*client

	// views are the materialized views known to exist, in creation order;
	// pendingDDL is a statement on them that was in flight at the kill.
	views      []*viewDef
	pendingDDL *ddlOp
	// pg, if set, runs the views' definitions over the committed tables
	// after every restart (TestCrashRecovery).
	pg *postgres

	crashStats struct {
		inFlight, inFlightApplied                 int
		ddlAcked, ddlInFlight, ddlInFlightApplied int
	}
}

type ddlOp struct {
	create bool
	view   *viewDef
}

func (d *ddlOp) sql() string {
	if d.create {
		return d.view.create()
	}
	return "DROP MATERIALIZED VIEW " + d.view.name
}

func newCrashHarness(t *testing.T, seed uint64) *crashHarness {
	h := &crashHarness{harness: newHarness(t, seed)}
	for i := range *flagClients {
		c := newClient(int64(i+1), seed)
		h.clients = append(h.clients, c)
		h.writers = append(h.writers, &c.writerLog)
	}
	return h
}

// setup creates the tables and the fixed views.
func (h *crashHarness) setup() {
	h.t.Helper()
	db := h.session()
	defer db.close()
	stmts := []string{createAcct, createEvents}
	for _, v := range fixedViews {
		stmts = append(stmts, v.create())
	}
	for _, s := range stmts {
		db.exec(s)
	}
	h.views = append(h.views, fixedViews...)
}

// crashKills are the kill plans of TestCrashRecovery's cycles.
var crashKills = killConfig{
	modes:       []killMode{killAfterDelay, killAfterAcks, killDuringDDL, killIdle, killDuringShutdown},
	maxDelay:    800 * time.Millisecond,
	maxAcks:     150,
	maxDDLDelay: 500 * time.Millisecond,
	targetWait:  5 * time.Second,
}

// workload runs the clients (and maybe one DDL statement) against the
// running server and ends it: with SIGKILL at a moment chosen by a random
// kill mode, or with SIGTERM when term is set.
func (h *crashHarness) workload(term bool) {
	h.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), hangTimeout)
	defer cancel()

	// Every random choice of the controller is made here, up front.
	var ddl *ddlOp
	plan := h.planKill(crashKills, func() { ddl = h.chooseDDL() })
	acksBefore := h.counts().ackedStatements

	cy := h.newCycle(ctx, plan)
	for _, c := range h.clients {
		cy.goConn(func(conn *pgx.Conn) error { return c.run(cy, conn) })
	}
	if ddl != nil {
		cy.goDDL(ddl.sql(), func() { h.pendingDDL = ddl }, func() {
			h.applyDDL(ddl)
			h.pendingDDL = nil
			h.crashStats.ddlAcked++
		})
	}
	cy.end(term)

	inFlight := 0
	for _, c := range h.clients {
		inFlight += len(c.pending)
	}
	how := "SIGTERM"
	if !term {
		how = "SIGKILL " + plan.mode.String()
		h.stats.kills++
	}
	h.t.Logf("cycle %d (barrier interval %v): %s: %d statements acknowledged, %d in flight%s",
		h.stats.cycles, h.interval, how, h.counts().ackedStatements-acksBefore, inFlight, cy.ddlNote())
	h.stats.cycles++
}

// writeFor runs the clients for d, then stops them and waits until they
// have returned; the server keeps running.
func (h *crashHarness) writeFor(d time.Duration) {
	h.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), hangTimeout)
	defer cancel()
	cy := h.newCycle(ctx, killPlan{})
	for _, c := range h.clients {
		cy.goConn(func(conn *pgx.Conn) error { return c.run(cy, conn) })
	}
	time.Sleep(d)
	cy.finish()
}

// chooseDDL picks a view to create or drop.
func (h *crashHarness) chooseDDL() *ddlOp {
	var extras []*viewDef
	for _, v := range h.views[len(fixedViews):] {
		extras = append(extras, v)
	}
	if len(extras) >= 3 || (len(extras) > 0 && h.rng.IntN(3) == 0) {
		return &ddlOp{view: extras[h.rng.IntN(len(extras))]}
	}
	def := *extraViews[h.rng.IntN(len(extraViews))]
	def.name = h.extraName(def.name)
	return &ddlOp{create: true, view: &def}
}

func (h *crashHarness) applyDDL(d *ddlOp) {
	if d.create {
		h.views = append(h.views, d.view)
		return
	}
	h.views = slices.DeleteFunc(h.views, func(v *viewDef) bool { return v == d.view })
}

// verify checks the restarted server against the model: the tables hold
// every acknowledged write and some prefix of the statements in flight at
// the kill (which then join the model), the views are exactly the known
// ones, and each view equals both its defining query run as a batch SELECT
// and the model's computation of it.
func (h *crashHarness) verify() {
	h.t.Helper()
	db := h.session()
	defer db.close()
	query := db.query

	// Tables, client by client.
	acct, events := query(selectAcct), query(selectEvents)
	acctOf, eventsOf := map[string][][]string{}, map[string][][]string{}
	for _, r := range acct {
		acctOf[r[1]] = append(acctOf[r[1]], r)
	}
	for _, r := range events {
		eventsOf[r[0]] = append(eventsOf[r[0]], r)
	}
	all := newTables()
	for _, c := range h.clients {
		id := itoa(c.id)
		h.crashStats.inFlight += len(c.pending)
		applied, err := c.resolve(acctOf[id], eventsOf[id])
		if err != nil {
			h.fatalf("after restart %d: %v%s", h.starts, err, c.recentHistory())
		}
		h.crashStats.inFlightApplied += applied
		delete(acctOf, id)
		delete(eventsOf, id)
		all.merge(c.acked)
	}
	for id, rows := range acctOf {
		h.fatalf("after restart %d: acct holds rows of unknown client %s: %v", h.starts, id, rows)
	}
	for id, rows := range eventsOf {
		h.fatalf("after restart %d: events holds rows of unknown client %s: %v", h.starts, id, rows)
	}

	// The set of views.
	var names []string
	for _, r := range query("SHOW MATERIALIZED VIEWS") {
		names = append(names, r[0])
	}
	if d := h.pendingDDL; d != nil {
		h.crashStats.ddlInFlight++
		if slices.Contains(names, d.view.name) == d.create {
			h.applyDDL(d)
			h.crashStats.ddlInFlightApplied++
		}
		h.pendingDDL = nil
	}
	var want []string
	for _, v := range h.views {
		want = append(want, v.name)
	}
	h.checkViewNames(names, want)

	// Each view's content.
	for _, v := range h.views {
		got := query("SELECT * FROM " + v.name)
		batch := query(v.query)
		if d := diffRows(batch, got, false); d != "" {
			h.fatalf("after restart %d: view %s differs from its defining query run as a batch SELECT: %s",
				h.starts, v.name, d)
		}
		if d := diffRows(v.model(all), got, true); d != "" {
			h.fatalf("after restart %d: view %s differs from the model: %s", h.starts, v.name, d)
		}
		if d := query("VERIFY MATERIALIZED VIEW " + v.name); len(d) != 0 {
			h.fatalf("after restart %d: VERIFY MATERIALIZED VIEW %s reports differences: %v", h.starts, v.name, d)
		}
	}

	// The same queries run by PostgreSQL over the same committed rows.
	if h.pg == nil {
		return
	}
	if err := h.pg.load(db.ctx, acct, events, h.views); err != nil {
		h.fatalf("loading PostgreSQL: %v", err)
	}
	for _, v := range h.views {
		want, err := h.pg.query(db.ctx, "SELECT * FROM "+v.name)
		if err != nil {
			h.fatalf("PostgreSQL: %v", err)
		}
		if d := diffRows(want, query("SELECT * FROM "+v.name), false); d != "" {
			h.fatalf("after restart %d: view %s differs from PostgreSQL running its query: %s", h.starts, v.name, d)
		}
	}
}

func (h *crashHarness) logStats() {
	s, n := h.crashStats, h.counts()
	h.t.Logf("seed %d: %d cycles, %d SIGKILLs under load, %d during startup, %d starts; %d of %d statements acknowledged, "+
		"%d in flight at kills of which %d applied; %d read-your-writes checks; DDL: %d acknowledged, %d in flight of which %d applied",
		h.seed, h.stats.cycles, h.stats.kills, h.stats.startupKills, h.starts, n.ackedStatements, n.statements, s.inFlight,
		s.inFlightApplied, n.checks, s.ddlAcked, s.ddlInFlight, s.ddlInFlightApplied)
}
