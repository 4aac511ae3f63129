package difftest

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"net/url"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/streamsql/streamsql/internal/pgtest"
	"github.com/streamsql/streamsql/internal/testserver"
)

var (
	seedFlag    = flag.Int64("seed", 0, "difftest: run only this seed (0: derive -difftest.seeds seeds from the time)")
	seedsFlag   = flag.Int("difftest.seeds", 3, "difftest: number of seeds to run when -seed is not given")
	stepsFlag   = flag.Int("difftest.steps", 100, "difftest: random steps (DML, DDL, restarts) per seed")
	reduceFlag  = flag.Bool("difftest.reduce", false, "difftest: on failure, shrink the statement history to a small reproducer (slow)")
	verboseFlag = flag.Bool("difftest.verbose", false, "difftest: log every statement as it runs")
)

// stmtTimeout bounds one statement; streamsql hanging is a failure.
const stmtTimeout = 60 * time.Second

// TestDifferential runs random schemas, views and DML against streamsql and
// PostgreSQL and checks, after every step, that each table and each
// materialized view (read as SELECT * and by running its defining query in
// batch) equals PostgreSQL's answer to the defining query.
func TestDifferential(t *testing.T) {
	seeds := []int64{*seedFlag}
	if *seedFlag == 0 {
		base := time.Now().UnixNano() % 1_000_000_000
		seeds = seeds[:0]
		for i := range *seedsFlag {
			seeds = append(seeds, base+int64(i))
		}
	}
	t.Logf("seeds %v, %d steps each (reproduce one with: go test ./internal/difftest -run TestDifferential -seed=N)", seeds, *stepsFlag)
	pg := pgtest.StartT(t, pgtest.Options{Settings: map[string]string{"timezone": "UTC"}})
	t.Run("harness", func(t *testing.T) { testHarness(t, pg) })
	for _, seed := range seeds {
		t.Run(fmt.Sprintf("seed=%d", seed), func(t *testing.T) {
			t.Logf("views on %d actors", seedParallelism(seed, 1))
			h := newHarness(t, pg, seed)
			defer h.close()
			if f := h.run(newGen(seed), *stepsFlag); f != nil {
				h.report(f)
			}
		})
	}
}

// testHarness checks that the harness sees differences: rows that only
// streamsql has, and a statement that only PostgreSQL accepts.
func testHarness(t *testing.T, pg *pgtest.Server) {
	h := newHarness(t, pg, 0)
	defer h.close()
	tbl := &relation{name: "t", cols: []expr{{sql: "a", t: tInt}}}
	if ok, f := h.exec(sameStmt("CREATE TABLE t (a int)")); !ok || f != nil {
		t.Fatalf("CREATE TABLE: %v, %v", ok, f)
	}
	if ok, f := h.exec(sameStmt("INSERT INTO t VALUES (1), (NULL)")); !ok || f != nil {
		t.Fatalf("INSERT: %v, %v", ok, f)
	}
	if f := h.check(tbl); f != nil {
		t.Fatalf("equal tables differ: %s", f.msg)
	}
	if _, err := query(context.Background(), h.ssc.PgConn(), "INSERT INTO t VALUES (1)"); err != nil {
		t.Fatal(err)
	}
	f := h.check(tbl)
	if f == nil || f.rel != tbl || !strings.Contains(f.msg, `unexpected: ("1")`) {
		t.Fatalf("a row only streamsql has: got %+v", f)
	}
	_, f = h.exec(stmt{ss: "CREATE SEQUENCE w", pg: "CREATE SEQUENCE w"})
	if f == nil || !strings.Contains(f.msg, "streamsql refused") {
		t.Fatalf("a statement only PostgreSQL accepts: got %+v", f)
	}
	if got := script(h.hist); !strings.HasPrefix(got, "CREATE TABLE t (a int);\nINSERT INTO t VALUES (1), (NULL);\n") {
		t.Fatalf("history:\n%s", got)
	}
}

// stmt is one step of the history: a statement for both systems, or a
// restart of streamsql.
type stmt struct {
	ss, pg  string
	restart bool
	// concurrent marks statements of a burst, run at the same time on
	// streamsql (one after another on PostgreSQL and when replayed).
	concurrent bool
}

func (s stmt) String() string {
	switch {
	case s.restart:
		return "-- restart streamsql"
	case s.concurrent:
		return s.ss + "; -- concurrently with its neighbours"
	}
	return s.ss + ";"
}

// failure describes a difference between the systems.
type failure struct {
	msg string
	// rel and read name the relation whose rows differed and the streamsql
	// query that read them; both are unset for other failures (a statement
	// one system refused, a query that failed, a restart that failed).
	rel  *relation
	read string
}

// same reports whether f and o are the same difference, for shrinking.
func (f *failure) same(o *failure) bool {
	if f.rel == nil {
		return o.rel == nil && f.msg == o.msg
	}
	return o.rel != nil && o.rel.name == f.rel.name && o.read == f.read
}

// harness drives one streamsql server and one PostgreSQL database with the
// same statements. It is used from the test goroutine only.
type harness struct {
	t     *testing.T
	seed  int64
	pgSrv *pgtest.Server
	dbNum int
	pgc   *pgconn.PgConn
	ss    *testserver.Server
	ssc   *pgx.Conn
	// extra are more connections to streamsql, for bursts.
	extra []*pgx.Conn
	hist  []stmt
	// replaying is set while shrinking a history.
	replaying bool
	// bothFailed counts statements both systems refused (the generator's
	// misses); logged, not failures.
	bothFailed int
}

var dbCounter int

func newHarness(t *testing.T, pg *pgtest.Server, seed int64) *harness {
	t.Helper()
	dbCounter++
	h := &harness{t: t, seed: seed, pgSrv: pg, dbNum: dbCounter}
	ctx, cancel := context.WithTimeout(context.Background(), stmtTimeout)
	defer cancel()
	admin, err := pgconn.Connect(ctx, pg.URL)
	if err != nil {
		t.Fatalf("connecting to PostgreSQL: %v", err)
	}
	defer admin.Close(ctx)
	db := fmt.Sprintf("difftest%d", h.dbNum)
	if _, err := query(ctx, admin, "CREATE DATABASE "+db); err != nil {
		t.Fatalf("creating database: %v", err)
	}
	u, err := url.Parse(pg.URL)
	if err != nil {
		t.Fatal(err)
	}
	u.Path = "/" + db
	if h.pgc, err = pgconn.Connect(ctx, u.String()); err != nil {
		t.Fatalf("connecting to PostgreSQL: %v", err)
	}
	if _, err := query(ctx, h.pgc, pgTypes); err != nil {
		t.Fatalf("creating types: %v", err)
	}
	// The barrier interval varies with the seed: writes ask for a barrier
	// at once, so it changes how epochs batch them, not the results. (DDL
	// waits for the next periodic barrier, so long intervals make the test
	// slow: a second costs a second per CREATE or DROP.)
	interval := []time.Duration{20 * time.Millisecond, 100 * time.Millisecond}[uint64(seed)%2]
	h.ss = testserver.Start(t, testserver.Options{BarrierInterval: interval, StreamingParallelism: seedParallelism(seed, 1)})
	if h.ssc, err = h.ss.Conn(ctx); err != nil {
		t.Fatalf("connecting to streamsql: %v", err)
	}
	return h
}

// close releases the connections and stops streamsql; the database stays
// until PostgreSQL stops.
func (h *harness) close() {
	ctx := context.Background()
	h.closeExtra()
	if h.ssc != nil {
		h.ssc.Close(ctx)
	}
	if h.pgc != nil {
		h.pgc.Close(ctx)
	}
	h.ss.Stop()
}

// query runs one statement and returns its last result.
func query(ctx context.Context, conn *pgconn.PgConn, sql string) (*result, error) {
	mrr := conn.Exec(ctx, sql)
	var res *result
	for mrr.NextResult() {
		rr := mrr.ResultReader()
		r := &result{}
		for _, fd := range rr.FieldDescriptions() {
			r.names = append(r.names, fd.Name)
			r.oids = append(r.oids, fd.DataTypeOID)
		}
		for rr.NextRow() {
			vals := rr.Values()
			row := make([][]byte, len(vals))
			for i, v := range vals {
				if v != nil {
					row[i] = append([]byte{}, v...)
				}
			}
			r.rows = append(r.rows, row)
		}
		if _, err := rr.Close(); err != nil {
			_ = mrr.Close()
			return nil, err
		}
		res = r
	}
	if err := mrr.Close(); err != nil {
		return nil, err
	}
	return res, nil
}

func errCode(err error) string {
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		return pe.Code
	}
	return "?"
}

// logf logs with -difftest.verbose, to stderr at once rather than through
// t.Logf, so that the statements up to a crash of the in-process server
// are there to see.
func (h *harness) logf(format string, args ...any) {
	if *verboseFlag {
		fmt.Fprintf(os.Stderr, "difftest seed %d: %s\n", h.seed, fmt.Sprintf(format, args...))
	}
}

// exec runs s on PostgreSQL, then on streamsql, and records it. ok says
// whether both succeeded; a failure is returned when only one did. (When
// both refuse it with different SQLSTATEs, that is logged.)
func (h *harness) exec(s stmt) (ok bool, f *failure) {
	h.hist = append(h.hist, s)
	if s.restart {
		h.logf("restart")
		return true, h.restart()
	}
	ctx, cancel := context.WithTimeout(context.Background(), stmtTimeout)
	defer cancel()
	_, pgErr := query(ctx, h.pgc, pgSpell(s.pg))
	start := time.Now()
	_, ssErr := query(ctx, h.ssc.PgConn(), s.ss)
	h.logf("%s (%v on streamsql)", s.ss, time.Since(start).Round(time.Millisecond))
	switch {
	case pgErr == nil && ssErr == nil:
		return true, nil
	case pgErr != nil && ssErr != nil:
		if strings.HasPrefix(errCode(pgErr), "42") && !h.replaying {
			// Syntax errors, unknown functions and type mismatches are
			// the generator's bugs, not streamsql's. (While shrinking, a
			// statement may lose the table it needs.)
			h.t.Fatalf("difftest: generated invalid SQL: %s: %v", s.pg, pgErr)
		}
		if errCode(pgErr) != errCode(ssErr) {
			h.t.Logf("both refused %q, with different SQLSTATEs: PostgreSQL %v; streamsql %v", s.ss, pgErr, ssErr)
		}
		h.bothFailed++
		h.logf("both refused: %v", pgErr)
		return false, nil
	case pgErr != nil:
		return false, &failure{msg: fmt.Sprintf("PostgreSQL refused\n  %s\nwith %v\nbut streamsql accepted it", s.pg, pgErr)}
	}
	return false, &failure{msg: fmt.Sprintf("streamsql refused\n  %s\nwith %v\nbut PostgreSQL accepted it", s.ss, ssErr)}
}

func (h *harness) closeExtra() {
	for _, c := range h.extra {
		c.Close(context.Background())
	}
	h.extra = nil
}

// restart restarts streamsql on its data directory and reconnects.
func (h *harness) restart() *failure {
	h.closeExtra()
	h.ssc.Close(context.Background())
	h.ssc = nil
	if err := h.ss.Restart(); err != nil {
		return &failure{msg: fmt.Sprintf("restarting streamsql: %v", err)}
	}
	ctx, cancel := context.WithTimeout(context.Background(), stmtTimeout)
	defer cancel()
	var err error
	if h.ssc, err = h.ss.Conn(ctx); err != nil {
		return &failure{msg: fmt.Sprintf("reconnecting to streamsql after a restart: %v", err)}
	}
	return nil
}

// pgQuery runs a query the generator needs answered on PostgreSQL.
func (h *harness) pgQuery(sql string) *result {
	ctx, cancel := context.WithTimeout(context.Background(), stmtTimeout)
	defer cancel()
	r, err := query(ctx, h.pgc, pgSpell(sql))
	if err != nil {
		h.t.Fatalf("difftest: PostgreSQL: %s: %v", sql, err)
	}
	return r
}

// check compares relation r on both systems: a table's rows; a view's rows
// read with SELECT * and computed by its defining query in batch, each with
// PostgreSQL's answer to the defining query.
func (h *harness) check(r *relation) *failure {
	ctx, cancel := context.WithTimeout(context.Background(), stmtTimeout)
	defer cancel()
	ref := "SELECT * FROM " + r.name
	if r.view {
		ref = r.def
	}
	want, err := query(ctx, h.pgc, pgSpell(ref))
	if err != nil {
		return &failure{msg: fmt.Sprintf("PostgreSQL cannot run %s: %v", ref, err)}
	}
	reads := []string{"SELECT * FROM " + r.name}
	if r.view {
		reads = append(reads, r.def)
	}
	for _, q := range reads {
		got, err := query(ctx, h.ssc.PgConn(), q)
		if err != nil {
			return &failure{msg: fmt.Sprintf("streamsql cannot run %s: %v", q, err)}
		}
		if d := diff(want, got); d != "" {
			what := "table " + r.name
			if r.view {
				what = "materialized view " + r.name
				if q != reads[0] {
					what = "batch query of view " + r.name
				}
			}
			return &failure{
				msg: fmt.Sprintf("%s differs from PostgreSQL\nstreamsql:  %s\nPostgreSQL: %s\n%s\n--- streamsql\n%s\n--- PostgreSQL\n%s",
					what, q, ref, d, formatResult(got), formatResult(want)),
				rel: r, read: q,
			}
		}
	}
	return nil
}

// world is the generator's model of the schema.
type world struct {
	tables []*relation
	views  []*relation
	nviews int
	// dropped are names of dropped views, for reuse: a new view under an
	// old name must not see the old one's state.
	dropped []string
}

func (w *world) relations() []*relation { return append(slices.Clone(w.tables), w.views...) }

// depth returns how many views are stacked under r, r included.
func (w *world) depth(r *relation) int {
	if r == nil || !r.view {
		return 0
	}
	d := 0
	for _, s := range r.sources {
		d = max(d, w.depth(w.find(s)))
	}
	return d + 1
}

func (w *world) find(name string) *relation {
	for _, r := range w.relations() {
		if r.name == name {
			return r
		}
	}
	return nil
}

// feedsJoin reports whether a view combines r, directly or not, with
// another relation (a join, a subquery, a set operation) or multiplies its
// rows (unnest).
func (w *world) feedsJoin(r *relation) bool {
	for name := range w.dependents(r) {
		if v := w.find(name); v != nil && (len(v.sources) > 1 || v.multiplies) {
			return true
		}
	}
	return false
}

// maxRows is the number of rows beyond which inserts into r turn into
// deletes: tables that feed joins stay small, as joins on small domains
// multiply rows.
func (w *world) maxRows(r *relation) int {
	switch {
	case w.feedsManyWayJoin(r):
		return 40
	case w.feedsJoin(r):
		return 80
	}
	return 300
}

// feedsManyWayJoin reports whether a view joins r, directly or not, with
// two or more other relations.
func (w *world) feedsManyWayJoin(r *relation) bool {
	for name := range w.dependents(r) {
		if v := w.find(name); v != nil && len(v.sources) > 2 {
			return true
		}
	}
	return false
}

// dependents returns r and every view built on it, directly or not.
func (w *world) dependents(r *relation) map[string]bool {
	out := map[string]bool{r.name: true}
	for changed := true; changed; {
		changed = false
		for _, v := range w.views {
			if !out[v.name] && slices.ContainsFunc(v.sources, func(s string) bool { return out[s] }) {
				out[v.name], changed = true, true
			}
		}
	}
	return out
}

// run generates and runs the schema and steps steps, comparing everything
// after each step. It returns the first failure.
func (h *harness) run(g *gen, steps int) *failure {
	w := &world{}
	nt := 2 + g.intn(2)
	for i := range nt {
		r := g.table(fmt.Sprintf("t%d", i+1))
		ok, f := h.exec(stmt{ss: r.createTable(), pg: r.createTable()})
		if f != nil {
			return f
		}
		if !ok {
			h.t.Fatalf("difftest: both systems refused %s", r.createTable())
		}
		w.tables = append(w.tables, r)
		for range g.intn(3) {
			if f := h.insert(g, w, r, false); f != nil {
				return f
			}
		}
	}
	for range 2 + g.intn(3) {
		if f := h.createView(g, w); f != nil {
			return f
		}
	}
	if f := h.checkAll(w); f != nil {
		return f
	}
	for range steps {
		var f *failure
		switch n := g.intn(100); {
		case n < 30:
			f = h.insert(g, w, pick(g, w.tables), g.chance(0.05))
		case n < 38:
			f = h.insertSelect(g, w)
		case n < 54:
			r := pick(g, w.tables)
			_, f = h.exec(sameStmt(g.update(r)))
		case n < 58:
			r := pick(g, w.tables)
			if q, ok := g.rekey(r, h.keys(r)); ok {
				_, f = h.exec(sameStmt(q))
			}
		case n < 73:
			r := pick(g, w.tables)
			if h.count(r) < 5 && g.chance(0.7) {
				f = h.insert(g, w, r, false)
			} else {
				_, f = h.exec(sameStmt(g.delete(r)))
			}
		case n < 85:
			if len(w.views) < 8 {
				f = h.createView(g, w)
			}
		case n < 92:
			if len(w.views) > 0 {
				f = h.dropView(g, w)
			}
		case n < 93:
			f = h.burst(g, w)
		case n < 95:
			f = h.combo(g, w)
		case n < 97:
			f = h.bulkInsert(g, w)
		case n < 98:
			f = h.replaceTable(g, w)
		default:
			_, f = h.exec(stmt{restart: true})
		}
		if f == nil {
			f = h.checkAll(w)
		}
		if f != nil {
			return f
		}
	}
	if h.bothFailed > 0 {
		h.t.Logf("%d statements were refused by both systems", h.bothFailed)
	}
	return nil
}

func sameStmt(sql string) stmt { return stmt{ss: sql, pg: sql} }

func (h *harness) checkAll(w *world) *failure {
	for _, r := range w.relations() {
		if f := h.check(r); f != nil {
			return f
		}
	}
	return nil
}

// count returns the number of rows of r.
func (h *harness) count(r *relation) int {
	res := h.pgQuery("SELECT count(*) FROM " + r.name)
	var n int
	fmt.Sscan(string(res.rows[0][0]), &n)
	return n
}

// insert inserts rows into r; dup makes the statement repeat a key.
func (h *harness) insert(g *gen, w *world, r *relation, dup bool) *failure {
	taken := h.keys(r)
	if len(r.key) == 0 {
		dup = false
	}
	if h.count(r) > w.maxRows(r) {
		_, f := h.exec(sameStmt(g.delete(r)))
		return f
	}
	_, f := h.exec(sameStmt(g.insert(r, taken, dup)))
	return f
}

// burst runs DML statements at the same time on several streamsql
// connections, so that several writes may share an epoch, and now and then
// creates a view at the same time, so that writes race with its backfill.
// The statements commute: inserts (keys kept distinct) and at most one
// UPDATE or DELETE per table, on tables no insert of the burst touches; a
// view's rows do not depend on when it was created. Running them one after
// another on PostgreSQL therefore gives the same rows whatever order
// streamsql picks.
func (h *harness) burst(g *gen, w *world) *failure {
	var stmts []stmt
	var view *relation
	if len(w.views) < 8 && g.chance(0.4) {
		var s stmt
		view, s = h.newView(g, w)
		stmts = append(stmts, s)
	}
	taken := map[string]map[string]bool{}
	exclusive, inserted := map[string]bool{}, map[string]bool{}
	for range 2 + g.intn(3) {
		r := pick(g, w.tables)
		switch {
		case exclusive[r.name]:
		case g.chance(0.35) && !inserted[r.name]:
			exclusive[r.name] = true
			if g.chance(0.5) {
				stmts = append(stmts, sameStmt(g.update(r)))
			} else {
				stmts = append(stmts, sameStmt(g.delete(r)))
			}
		case h.count(r) <= w.maxRows(r):
			inserted[r.name] = true
			if taken[r.name] == nil {
				taken[r.name] = h.keys(r)
			}
			stmts = append(stmts, sameStmt(g.insert(r, taken[r.name], false)))
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), stmtTimeout)
	defer cancel()
	for len(h.extra) < len(stmts) {
		c, err := h.ss.Conn(ctx)
		if err != nil {
			return &failure{msg: fmt.Sprintf("connecting to streamsql: %v", err)}
		}
		h.extra = append(h.extra, c)
	}
	pgErrs := make([]error, len(stmts))
	for i := range stmts {
		stmts[i].concurrent = true
		h.hist = append(h.hist, stmts[i])
		h.logf("concurrently: %s", stmts[i].ss)
		_, pgErrs[i] = query(ctx, h.pgc, pgSpell(stmts[i].pg))
		if pgErrs[i] != nil && strings.HasPrefix(errCode(pgErrs[i]), "42") {
			h.t.Fatalf("difftest: generated invalid SQL: %s: %v", stmts[i].pg, pgErrs[i])
		}
	}
	ssErrs := make([]error, len(stmts))
	var wg sync.WaitGroup
	for i, s := range stmts {
		wg.Go(func() {
			_, ssErrs[i] = query(ctx, h.extra[i].PgConn(), s.ss)
		})
	}
	wg.Wait()
	for i, s := range stmts {
		switch {
		case pgErrs[i] == nil && ssErrs[i] != nil:
			return &failure{msg: fmt.Sprintf("streamsql refused\n  %s\nwith %v\nbut PostgreSQL accepted it", s.ss, ssErrs[i])}
		case pgErrs[i] != nil && ssErrs[i] == nil:
			return &failure{msg: fmt.Sprintf("PostgreSQL refused\n  %s\nwith %v\nbut streamsql accepted it", s.pg, pgErrs[i])}
		}
	}
	if view != nil && pgErrs[0] == nil {
		w.views = append(w.views, view)
	}
	return nil
}

// combo runs two or three DML statements in one query string, as one
// implicit transaction on PostgreSQL; each is a transaction of its own on
// streamsql, which is the same as long as none fails.
func (h *harness) combo(g *gen, w *world) *failure {
	taken := map[string]map[string]bool{}
	var parts []string
	for range 2 + g.intn(2) {
		r := pick(g, w.tables)
		if taken[r.name] == nil {
			taken[r.name] = h.keys(r)
		}
		switch g.intn(3) {
		case 0:
			parts = append(parts, g.insert(r, taken[r.name], false))
		case 1:
			parts = append(parts, g.update(r))
		default:
			parts = append(parts, g.delete(r))
		}
	}
	_, f := h.exec(sameStmt(strings.Join(parts, "; ")))
	return f
}

// keys returns the primary keys present in r, each the key columns' text
// joined by "|".
func (h *harness) keys(r *relation) map[string]bool {
	taken := map[string]bool{}
	if len(r.key) == 0 {
		return taken
	}
	var ks []string
	for _, k := range r.key {
		ks = append(ks, r.columns[k].name)
	}
	for _, row := range h.pgQuery("SELECT " + strings.Join(ks, ", ") + " FROM " + r.name).rows {
		var parts []string
		for _, v := range row {
			parts = append(parts, string(v))
		}
		taken[strings.Join(parts, "|")] = true
	}
	return taken
}

// insertSelect copies rows from a relation into a table without a key.
func (h *harness) insertSelect(g *gen, w *world) *failure {
	var targets []*relation
	for _, r := range w.tables {
		if len(r.key) == 0 && h.count(r) < w.maxRows(r)/2 {
			targets = append(targets, r)
		}
	}
	if len(targets) == 0 {
		return nil
	}
	_, f := h.exec(sameStmt(g.insertSelect(pick(g, targets), pick(g, w.relations()))))
	return f
}

// createView creates a view over a table or, if not too deep, a view.
//
// Now and then the view is created in at-least-once checkpoint mode: its
// multi-input operators do not align barriers, which may double changes
// after a crash but must not change anything else (restarts here are clean).
func (h *harness) createView(g *gen, w *world) *failure {
	v, s := h.newView(g, w)
	atLeastOnce := g.chance(0.25)
	if atLeastOnce {
		if _, f := h.exec(stmt{ss: "SET checkpoint_mode = 'at_least_once'", pg: "SELECT 1"}); f != nil {
			return f
		}
	}
	ok, f := h.exec(s)
	if ok {
		w.views = append(w.views, v)
	}
	if f == nil && atLeastOnce {
		_, f = h.exec(stmt{ss: "SET checkpoint_mode = 'exactly_once'", pg: "SELECT 1"})
	}
	return f
}

// newView generates a view over a table or, if not too deep, a view, and
// the statement creating it.
func (h *harness) newView(g *gen, w *world) (*relation, stmt) {
	pickSource := func() *relation {
		src := pick(g, w.tables)
		if len(w.views) > 0 && g.chance(0.4) {
			if v := pick(g, w.views); w.depth(v) < 3 {
				src = v
			}
		}
		return src
	}
	src := pickSource()
	var other *relation
	if g.chance(0.2) {
		// A join, of inputs small enough not to multiply into many rows.
		if other = pickSource(); h.count(src) > 100 || h.count(other) > 100 {
			other = nil
		}
	}
	var name string
	if len(w.dropped) > 0 && g.chance(0.4) {
		i := g.intn(len(w.dropped))
		name = w.dropped[i]
		w.dropped = slices.Delete(w.dropped, i, i+1)
	} else {
		w.nviews++
		name = fmt.Sprintf("v%d", w.nviews)
	}
	setOp := other != nil && g.chance(0.4)
	// Subqueries may read any relation not stacked too deep.
	g.others = nil
	for _, r := range w.relations() {
		if w.depth(r) < 3 {
			g.others = append(g.others, r)
		}
	}
	// unnest multiplies rows: over inputs that are not too large (window
	// functions over its rows cost PostgreSQL quadratic time with EXCLUDE).
	unnest := other == nil && hasColumnOf(src, tIntArray, tTextArray, tJsonb) && h.count(src) <= 300 && g.chance(0.3)
	var multi []*relation
	if other == nil && !unnest && g.chance(0.08) {
		// A join of three to six small inputs (gen_join.go).
		n := pick(g, []int{3, 3, 3, 4, 4, 5, 6})
		limit := pick(g, []int{60, 25})
		if n > 4 {
			limit = 25
		}
		multi = []*relation{src}
		for len(multi) < n {
			if r := pickSource(); h.count(r) <= limit {
				multi = append(multi, r)
			} else {
				multi = nil
				break
			}
		}
		if multi != nil && h.count(src) > limit {
			multi = nil
		}
	}
	mk := func(named bool) *relation {
		switch {
		case multi != nil:
			if v, ok := g.multiJoinView(name, multi, named); ok {
				return v
			}
		case unnest:
			if !hasColumnOf(src, tIntArray, tTextArray) || g.chance(0.4) {
				if v, ok := g.jsonbElementsView(name, src, named); ok {
					return v
				}
			}
			if v, ok := g.unnestView(name, src, named); ok {
				return v
			}
		case setOp:
			return g.setView(name, src, other, named)
		case other != nil:
			return g.joinView(name, src, other, named)
		}
		return g.view(name, src, named)
	}
	v := mk(g.chance(0.6))
	if v.unnamed {
		// PostgreSQL names the columns without an alias; both systems
		// must agree, which the checks compare.
		if !v.nameColumns(h.pgQuery("SELECT * FROM (" + v.def + ") AS q LIMIT 0").names) {
			v = mk(true)
		}
	}
	return v, stmt{
		ss: "CREATE MATERIALIZED VIEW " + v.name + " AS " + v.def,
		pg: "CREATE VIEW " + v.name + " AS " + v.def,
	}
}

// dropView drops a view, with CASCADE when others depend on it.
func (h *harness) dropView(g *gen, w *world) *failure {
	v := pick(g, w.views)
	gone := w.dependents(v)
	cascade := ""
	if len(gone) > 1 || g.chance(0.2) {
		cascade = " CASCADE"
	}
	ok, f := h.exec(stmt{
		ss: "DROP MATERIALIZED VIEW " + v.name + cascade,
		pg: "DROP VIEW " + v.name + cascade,
	})
	if ok {
		w.drop(gone)
	}
	return f
}

// drop forgets the views named in gone.
func (w *world) drop(gone map[string]bool) {
	w.views = slices.DeleteFunc(w.views, func(r *relation) bool {
		if gone[r.name] {
			w.dropped = append(w.dropped, r.name)
			return true
		}
		return false
	})
}

// bulkInsert inserts many rows into a table at once.
func (h *harness) bulkInsert(g *gen, w *world) *failure {
	r := pick(g, w.tables)
	if w.feedsJoin(r) || h.count(r) > 2000 {
		return nil
	}
	q, ok := g.bulkInsert(r, pick(g, []int{100, 1100, 2500}))
	if !ok {
		return nil
	}
	_, f := h.exec(sameStmt(q))
	return f
}

// replaceTable drops a table with the views on it and creates another
// table, of new columns, under the same name.
func (h *harness) replaceTable(g *gen, w *world) *failure {
	i := g.intn(len(w.tables))
	old := w.tables[i]
	ok, f := h.exec(sameStmt("DROP TABLE " + old.name + " CASCADE"))
	if f != nil || !ok {
		return f
	}
	w.drop(w.dependents(old))
	r := g.table(old.name)
	w.tables[i] = r
	if ok, f = h.exec(sameStmt(r.createTable())); f != nil || !ok {
		if f == nil {
			h.t.Fatalf("difftest: both systems refused %s", r.createTable())
		}
		return f
	}
	for range g.intn(3) {
		if f := h.insert(g, w, r, false); f != nil {
			return f
		}
	}
	return nil
}

// script renders a history as a SQL script for streamsql.
func script(hist []stmt) string {
	var sb strings.Builder
	for _, s := range hist {
		sb.WriteString(s.String())
		sb.WriteByte('\n')
	}
	return sb.String()
}

// report fails the test with the failure, the seed and the history that
// reproduces it, first shrinking the history if -difftest.reduce is set.
func (h *harness) report(f *failure) {
	h.t.Helper()
	hist := h.hist
	if *reduceFlag {
		hist, f = h.reduce(hist, f)
	}
	what := "statements"
	if len(hist) < len(h.hist) {
		what = fmt.Sprintf("statements, shrunk from %d", len(h.hist))
	}
	h.t.Fatalf("difftest seed %d (views on %d actors): %s\n\nreproduce: go test ./internal/difftest -run TestDifferential -seed=%d -difftest.steps=%d\n"+
		"%s (%d; on PostgreSQL, views are plain CREATE VIEW / DROP VIEW):\n%s",
		h.seed, seedParallelism(h.seed, 1), f.msg, h.seed, *stepsFlag, what, len(hist), script(hist))
}

// reduce shrinks hist to a shorter history that still ends in the same
// failure, removing chunks of statements, halving the chunks down to single
// statements. Each attempt replays the history on a fresh streamsql server
// and a fresh PostgreSQL database. A failed statement is the last one of
// the history and is always kept.
func (h *harness) reduce(hist []stmt, f *failure) ([]stmt, *failure) {
	keep := 0
	if f.rel == nil {
		keep = 1
	}
	attempts := 0
	for chunk := len(hist) / 2; chunk >= 1; {
		removed := false
		for i := 0; i < len(hist)-keep; {
			end := min(i+chunk, len(hist)-keep)
			cand := append(slices.Clone(hist[:i]), hist[end:]...)
			attempts++
			if nf := h.replay(cand, f); nf != nil {
				hist, f, removed = cand, nf, true
				continue
			}
			i = end
		}
		if chunk > 1 {
			chunk /= 2
		} else if !removed {
			break
		}
	}
	h.t.Logf("shrunk the history to %d statements in %d replays", len(hist), attempts)
	return hist, f
}

// replay runs hist on a fresh server and database and returns the failure
// it ends in if that is the same as f, else nil.
func (h *harness) replay(hist []stmt, f *failure) *failure {
	r := newHarness(h.t, h.pgSrv, h.seed)
	r.replaying = true
	defer r.close()
	for i, s := range hist {
		_, nf := r.exec(s)
		if nf != nil {
			if i == len(hist)-1 && f.same(nf) {
				return nf
			}
			return nil
		}
	}
	if f.rel == nil {
		return nil
	}
	if nf := r.check(f.rel); nf != nil && f.same(nf) {
		return nf
	}
	return nil
}
