package difftest

import (
	"context"
	"flag"
	"fmt"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/streamsql/streamsql/internal/pgtest"
	"github.com/streamsql/streamsql/internal/testserver"
)

var (
	evSeedsFlag = flag.Int("eventtime.seeds", 2, "eventtime: number of seeds to run when -seed is not given")
	evStepsFlag = flag.Int("eventtime.steps", 50, "eventtime: random steps (DML, clock moves, DDL, kills) per seed")
)

// TestEventTime runs random tables with watermarks, windowed aggregations,
// EMIT ON WINDOW CLOSE views, window joins and temporal filters against
// streamsql, with random DML (late rows included), moves of the barrier
// clock and in-process crashes, and checks after every step that each view
// equals PostgreSQL's model of it (see eventtime_gen.go) and that each
// windowed view over a table counted exactly the late rows the model
// predicts.
func TestEventTime(t *testing.T) {
	seeds := []int64{*seedFlag}
	if *seedFlag == 0 {
		base := time.Now().UnixNano() % 1_000_000_000
		seeds = seeds[:0]
		for i := range *evSeedsFlag {
			seeds = append(seeds, base+int64(i))
		}
	}
	t.Logf("seeds %v, %d steps each (reproduce one with: go test ./internal/difftest -run TestEventTime -seed=N -eventtime.steps=S)", seeds, *evStepsFlag)
	pg := pgtest.StartT(t, pgtest.Options{Settings: map[string]string{"timezone": "UTC"}})
	for _, seed := range seeds {
		t.Run(fmt.Sprintf("seed=%d", seed), func(t *testing.T) {
			t.Logf("views on %d actors", seedParallelism(seed, 0))
			h := newEvHarness(t, pg, seed)
			defer h.close()
			if f := h.run(*evStepsFlag); f != nil {
				h.report(f)
			}
		})
	}
}

// evHarness drives one crashable streamsql server, whose barrier clock it
// holds, and one PostgreSQL database computing the model. It is used from
// the test goroutine only (the clock is read by the server's coordinator).
type evHarness struct {
	t     *testing.T
	seed  int64
	g     *evGen
	pgc   *pgconn.PgConn
	ss    *testserver.Server
	ssc   *pgx.Conn
	clock atomic.Int64 // Unix microseconds
	// hist is the history of statements run on streamsql, with comments
	// for clock moves and crashes.
	hist    []string
	tables  []*evRel
	views   []*evRel // in creation order, so sources come first
	nviews  int
	dropped []string
	// paused are the views paused with ALTER MATERIALIZED VIEW.
	paused map[string]bool
	// For the summary: late rows, crashes, pauses, views created by kind.
	lateTotal, crashes, pauses int64
	created                    map[string]int
}

var evDBCounter int

func newEvHarness(t *testing.T, pg *pgtest.Server, seed int64) *evHarness {
	t.Helper()
	evDBCounter++
	h := &evHarness{t: t, seed: seed, g: newEvGen(seed), paused: map[string]bool{}, created: map[string]int{}}
	h.clock.Store(h.g.clock.UnixMicro())
	ctx, cancel := context.WithTimeout(context.Background(), stmtTimeout)
	defer cancel()
	admin, err := pgconn.Connect(ctx, pg.URL)
	if err != nil {
		t.Fatalf("connecting to PostgreSQL: %v", err)
	}
	defer admin.Close(ctx)
	db := fmt.Sprintf("eventtime%d", evDBCounter)
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
	interval := []time.Duration{20 * time.Millisecond, 100 * time.Millisecond}[uint64(seed)%2]
	h.ss = testserver.Start(t, testserver.Options{
		BarrierInterval:      interval,
		StreamingParallelism: seedParallelism(seed, 0),
		Crashable:            true,
		Clock:                func() time.Time { return time.UnixMicro(h.clock.Load()) },
	})
	if h.ssc, err = h.ss.Conn(ctx); err != nil {
		t.Fatalf("connecting to streamsql: %v", err)
	}
	return h
}

func (h *evHarness) close() {
	ctx := context.Background()
	if h.ssc != nil {
		h.ssc.Close(ctx)
	}
	if h.pgc != nil {
		h.pgc.Close(ctx)
	}
	h.ss.Stop()
}

func (h *evHarness) logf(format string, args ...any) {
	h.t.Helper()
	if *verboseFlag {
		h.t.Logf(format, args...)
	}
}

// pg runs statements on PostgreSQL that must succeed (the model's upkeep).
func (h *evHarness) pg(sql string) *result {
	h.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), stmtTimeout)
	defer cancel()
	r, err := query(ctx, h.pgc, sql)
	if err != nil {
		h.t.Fatalf("eventtime: PostgreSQL: %s: %v\nstatements so far:\n%s", sql, err, strings.Join(h.hist, "\n"))
	}
	return r
}

// both runs a statement on PostgreSQL, where it must succeed, and on
// streamsql, where failing is a failure.
func (h *evHarness) both(ss, pg string) *failure {
	h.hist = append(h.hist, ss+";")
	h.pg(pg)
	ctx, cancel := context.WithTimeout(context.Background(), stmtTimeout)
	defer cancel()
	start := time.Now()
	_, err := query(ctx, h.ssc.PgConn(), ss)
	h.logf("%s (%v)", ss, time.Since(start).Round(time.Millisecond))
	if err != nil {
		return &failure{msg: fmt.Sprintf("streamsql refused\n  %s\nwith %v\nbut PostgreSQL accepted\n  %s", ss, err, pg)}
	}
	return nil
}

func (h *evHarness) find(name string) *evRel {
	for _, r := range append(slices.Clone(h.tables), h.views...) {
		if r.name == name {
			return r
		}
	}
	return nil
}

// run creates the schema and runs steps random steps, checking everything
// after each. It returns the first failure.
func (h *evHarness) run(steps int) *failure {
	g := h.g
	h.pg("CREATE TABLE _clock (now timestamptz); INSERT INTO _clock VALUES (" + tsLit(g.clock, true) + ")")
	h.hist = append(h.hist, "-- now() is "+tsLit(g.clock, true))
	for i := range 2 + g.intn(2) {
		t := g.table(fmt.Sprintf("t%d", i+1), i == 0)
		if f := h.both(t.ssCreate(), t.pgCreate()); f != nil {
			return f
		}
		h.tables = append(h.tables, tableRel(t))
		for range g.intn(3) {
			if f := h.write(t, g.insert(t)); f != nil {
				return f
			}
		}
	}
	for range 3 + g.intn(3) {
		if f := h.createView(); f != nil {
			return f
		}
	}
	if f := h.checkAll(); f != nil {
		return f
	}
	for range steps {
		var f *failure
		t := pick(g.gen, h.tables).table
		switch n := g.intn(100); {
		case n < 40:
			f = h.insert(t)
		case n < 52:
			if t.appendOnly {
				f = h.insert(t)
			} else {
				f = h.write(t, g.update(t, h.ids(t)))
			}
		case n < 60:
			if t.appendOnly {
				f = h.insert(t)
			} else {
				f = h.write(t, g.delete(t, h.ids(t), false))
			}
		case n < 67:
			f = h.advanceClock()
		case n < 71:
			// Time and the watermark move in the same epoch.
			h.moveClock()
			f = h.insert(t)
		case n < 81:
			if len(h.views) < 9 {
				f = h.createView()
			}
		case n < 84:
			if len(h.views) > 0 {
				f = h.dropView(pick(g.gen, h.views))
			}
		case n < 87:
			f = h.pauseOrResume()
		case n < 91:
			f = h.crash(false)
		case n < 93:
			f = h.crash(true)
		default:
			f = h.both("FLUSH", "SELECT 1")
		}
		if f == nil {
			f = h.checkAll()
		}
		if f != nil {
			return f
		}
	}
	h.summary()
	return nil
}

// summary logs what the run exercised, to show it was not vacuous.
func (h *evHarness) summary() {
	var frozen []string
	for _, v := range h.views {
		for _, st := range v.stages {
			frozen = append(frozen, "(SELECT count(*) FROM "+st.name+"__frozen)")
		}
	}
	n := "0"
	if len(frozen) > 0 {
		n = string(h.pg("SELECT " + strings.Join(frozen, " + ")).rows[0][0])
	}
	h.t.Logf("views created: %v; rows held behind the watermarks at the end: %s; late rows: %d; crashes: %d; pauses: %d",
		h.created, n, h.lateTotal, h.crashes, h.pauses)
}

// ids returns t's ids in ascending order.
func (h *evHarness) ids(t *evTable) []int {
	var ids []int
	for _, row := range h.pg("SELECT id FROM " + t.name + " ORDER BY id").rows {
		id, _ := strconv.Atoi(string(row[0]))
		ids = append(ids, id)
	}
	return ids
}

// insert inserts into t, or deletes old rows of a table grown large.
func (h *evHarness) insert(t *evTable) *failure {
	if !t.appendOnly {
		res := h.pg("SELECT count(*) FROM " + t.name)
		if n, _ := strconv.Atoi(string(res.rows[0][0])); n > 150 {
			return h.write(t, h.g.delete(t, nil, true))
		}
	}
	return h.write(t, h.g.insert(t))
}

// write runs DML on both systems and brings the model up to date: the late
// rows it made, and the groups it made final.
func (h *evHarness) write(t *evTable, sql string) *failure {
	if f := h.both(sql, sql); f != nil {
		return f
	}
	h.countLate()
	var trunc []string
	for _, r := range h.tables {
		trunc = append(trunc, r.name+"__log")
	}
	h.pg("TRUNCATE " + strings.Join(trunc, ", "))
	h.freeze(h.views...)
	return nil
}

// countLate adds to each stage (see evStage) over a table or filter view
// the late rows of the statement just run: the changes logged in t__log
// below the stage's threshold (with EMIT ON WINDOW CLOSE, also those whose
// group column is NULL).
func (h *evHarness) countLate() {
	var counted []*evStage
	var paused []bool
	var qs []string
	for _, v := range h.views {
		for _, st := range v.stages {
			if st.in == nil {
				continue
			}
			src := h.find(st.src)
			in := st.in(src.rowsFrom(src.base.name + "__log"))
			cond := fmt.Sprintf("i.%s < (SELECT th FROM %s__th)", st.g, st.name)
			if st.nullLate {
				cond += fmt.Sprintf(" OR i.%s IS NULL", st.g)
			}
			qs = append(qs, fmt.Sprintf("(SELECT count(*) FROM (%s) AS i WHERE %s)", in, cond))
			counted, paused = append(counted, st), append(paused, h.stageHeld(v, st))
		}
	}
	if len(qs) == 0 {
		return
	}
	res := h.pg("SELECT " + strings.Join(qs, ", "))
	for i, st := range counted {
		n, _ := strconv.ParseInt(string(res.rows[0][i]), 10, 64)
		if paused[i] {
			st.pending += n
		} else {
			st.late += n
		}
		h.lateTotal += n
	}
}

// freeze moves the threshold of each stage of the views in vs (in creation
// order, and in each view in stage order) to its current watermark,
// copying the input rows it passes into the stage's __frozen table. Stages
// held by a pause keep theirs: they see no changes and no watermarks until
// it ends (see stageHeld).
func (h *evHarness) freeze(vs ...*evRel) {
	var sb strings.Builder
	for _, v := range vs {
		for _, st := range v.stages {
			if h.stageHeld(v, st) {
				continue
			}
			fmt.Fprintf(&sb, `INSERT INTO %[1]s__frozen SELECT i.* FROM %[1]s__in AS i WHERE i.%[2]s < (%[3]s) AND (i.%[2]s < (SELECT th FROM %[1]s__th)) IS NOT TRUE;
DELETE FROM %[1]s__th;
INSERT INTO %[1]s__th SELECT x FROM (SELECT (%[3]s) AS x) AS q WHERE x IS NOT NULL;
`, st.name, st.g, st.th)
		}
	}
	if sb.Len() > 0 {
		h.pg(sb.String())
	}
}

// createView creates a random view.
func (h *evHarness) createView() *failure {
	g := h.g
	name := ""
	if len(h.dropped) > 0 && g.chance(0.3) {
		i := g.intn(len(h.dropped))
		name = h.dropped[i]
		h.dropped = slices.Delete(h.dropped, i, i+1)
	} else {
		h.nviews++
		name = fmt.Sprintf("v%d", h.nviews)
	}
	// Views over a view held by a pause would start from rows and
	// watermarks it has not seen yet: not modelled.
	var rowLike, windowed, others []*evRel
	for _, v := range h.views {
		if h.held(v) {
			continue
		}
		switch {
		case v.rowLike:
			rowLike = append(rowLike, v)
		case v.win != nil && v.col("window_start") != nil:
			windowed = append(windowed, v)
		}
		others = append(others, v)
	}
	// rows are the relations with a table's columns; stored those of them
	// that late rows can be counted for (tables and filter views).
	rows := append(slices.Clone(h.tables), rowLike...)
	var stored []*evRel
	for _, r := range rows {
		if r.rowsFrom != nil {
			stored = append(stored, r)
		}
	}
	var v *evRel
	switch n := g.intn(100); {
	case n < 12 && len(rowLike) > 0:
		v = g.windowAgg(name, pick(g.gen, rowLike))
	case n < 22:
		v = g.filterView(name, pick(g.gen, h.tables))
	case n < 40 && len(others) > 0:
		src := pick(g.gen, others)
		if len(windowed) > 0 && g.chance(0.6) {
			src = pick(g.gen, windowed)
		}
		v = g.aggOverView(name, src)
	case n < 52 && len(windowed) > 0:
		// Two aggregations with window_start of the same type, now and
		// then the same one twice.
		a := pick(g.gen, windowed)
		bs := []*evRel{a}
		for _, b := range windowed {
			if b != a && tsKind(h, a) == tsKind(h, b) {
				bs = append(bs, b, b)
			}
		}
		v = g.windowJoin(name, a, pick(g.gen, bs))
	case n < 60:
		v = g.temporalView(name, pick(g.gen, h.tables))
	case n < 66:
		v = g.topN(name, pick(g.gen, rows))
	case n < 72:
		v = g.windowTopN(name, pick(g.gen, rows))
	case n < 79:
		a := pick(g.gen, stored)
		v = g.intervalJoin(name, a, pick(g.gen, sameKind(h, stored, a)))
	case n < 85:
		v = g.sessionAgg(name, pick(g.gen, rows))
	case n < 89:
		v = g.sessionOver(name, pick(g.gen, rows))
	case n < 95:
		a := pick(g.gen, rows)
		var keyed []*evRel
		for _, t := range sameKind(h, h.tables, a) {
			if t.table.pk {
				keyed = append(keyed, t)
			}
		}
		if len(keyed) > 0 {
			v = g.asofJoin(name, a, pick(g.gen, keyed))
		}
	}
	if v == nil {
		v = g.windowAgg(name, pick(g.gen, h.tables))
	}
	if f := h.both(v.ssCreate(), v.pgCreate); f != nil {
		return f
	}
	h.views = append(h.views, v)
	kind := v.kind
	if v.temporal && v.win != nil {
		kind += " over a temporal filter"
	}
	h.created[kind]++
	for _, st := range v.stages {
		if st.nullLate && st.in != nil {
			// The backfill's rows of no window are late at once.
			res := h.pg(fmt.Sprintf("SELECT count(*) FROM %[1]s__in WHERE %[2]s IS NULL", st.name, st.g))
			n, _ := strconv.ParseInt(string(res.rows[0][0]), 10, 64)
			st.late += n
			h.lateTotal += n
		}
	}
	h.freeze(v)
	return nil
}

// sameKind returns the relations of rs whose ts has the type of a's.
func sameKind(h *evHarness, rs []*evRel, a *evRel) []*evRel {
	var out []*evRel
	for _, r := range rs {
		if tsKind(h, r) == tsKind(h, a) {
			out = append(out, r)
		}
	}
	return out
}

// tsKind says whether the window columns of aggregation v are
// timestamptz, following its sources down to a table.
func tsKind(h *evHarness, v *evRel) bool {
	for r := v; ; {
		if r.base != nil {
			return r.base.tz
		}
		r = h.find(r.sources[0])
	}
}

// dropView drops v and the views over it.
func (h *evHarness) dropView(v *evRel) *failure {
	gone := map[string]bool{v.name: true}
	for _, w := range h.views {
		if slices.ContainsFunc(w.sources, func(s string) bool { return gone[s] }) {
			gone[w.name] = true
		}
	}
	var drops []string
	for i := len(h.views) - 1; i >= 0; i-- {
		if gone[h.views[i].name] {
			drops = append(drops, h.views[i].pgDrop)
		}
	}
	ss := "DROP MATERIALIZED VIEW " + v.name
	if len(gone) > 1 || h.g.chance(0.2) {
		ss += " CASCADE"
	}
	if f := h.both(ss, strings.Join(drops, "; ")); f != nil {
		return f
	}
	h.views = slices.DeleteFunc(h.views, func(w *evRel) bool {
		if gone[w.name] {
			h.dropped = append(h.dropped, w.name)
			delete(h.paused, w.name)
			return true
		}
		return false
	})
	return nil
}

// stageHeld reports whether stage st of view v is held by a pause: v is
// paused, or the relation the stage reads is a view held by one. The other
// stages of a view over a paused view go on: a view over a paused one keeps
// running, so an interval join over a paused view and a table still takes
// the table's changes and watermarks.
func (h *evHarness) stageHeld(v *evRel, st *evStage) bool {
	if h.paused[v.name] {
		return true
	}
	src := h.find(st.src)
	return src != nil && src.table == nil && h.held(src)
}

// held reports whether v, or a view it reads, is paused.
func (h *evHarness) held(v *evRel) bool {
	if h.paused[v.name] {
		return true
	}
	for _, s := range v.sources {
		if r := h.find(s); r != nil && r.table == nil && h.held(r) {
			return true
		}
	}
	return false
}

// pauseOrResume pauses a running view or resumes a paused one. A paused
// view keeps the changes of its inputs, and holds back their watermarks,
// until it resumes: then it applies them as if they came in one epoch, and
// the latest watermark after them. While a view is held (paused, or over a
// paused view), it is not compared and the model does not move the
// watermarks of its stages the pause holds (see stageHeld); once it
// resumes, they move and it is compared again.
func (h *evHarness) pauseOrResume() *failure {
	var running, paused []*evRel
	for _, v := range h.views {
		if h.paused[v.name] {
			paused = append(paused, v)
		} else {
			running = append(running, v)
		}
	}
	if len(paused) > 0 && (len(running) == 0 || h.g.chance(0.6)) {
		v := pick(h.g.gen, paused)
		was := map[*evStage]bool{}
		for _, w := range h.views {
			for _, st := range w.stages {
				was[st] = h.stageHeld(w, st)
			}
		}
		if f := h.both("ALTER MATERIALIZED VIEW "+v.name+" RESUME", "SELECT 1"); f != nil {
			return f
		}
		delete(h.paused, v.name)
		var freed []*evRel
		for _, w := range h.views {
			n := len(freed)
			for _, st := range w.stages {
				if was[st] && !h.stageHeld(w, st) {
					st.late += st.pending
					st.pending = 0
					if len(freed) == n {
						freed = append(freed, w)
					}
				}
			}
		}
		h.freeze(freed...)
		return nil
	}
	if len(running) == 0 {
		return nil
	}
	v := pick(h.g.gen, running)
	if f := h.both("ALTER MATERIALIZED VIEW "+v.name+" PAUSE", "SELECT 1"); f != nil {
		return f
	}
	h.paused[v.name] = true
	h.pauses++
	return nil
}

// advanceClock moves now() of the views forward and flushes: the next
// committed epoch carries the new time.
func (h *evHarness) advanceClock() *failure {
	h.moveClock()
	return h.both("FLUSH", "SELECT 1")
}

// moveClock moves now() of the views forward: the next barrier carries it.
func (h *evHarness) moveClock() {
	h.g.advanceClock()
	lit := tsLit(h.g.clock, true)
	h.clock.Store(h.g.clock.UnixMicro())
	h.hist = append(h.hist, "-- now() is "+lit)
	h.pg("UPDATE _clock SET now = " + lit)
}

// crash kills streamsql (or, clean, restarts it) and reconnects. The late
// row counts start again from 0.
func (h *evHarness) crash(clean bool) *failure {
	ctx, cancel := context.WithTimeout(context.Background(), stmtTimeout)
	defer cancel()
	h.ssc.Close(ctx)
	h.ssc = nil
	var err error
	if clean {
		h.hist = append(h.hist, "-- restart streamsql")
		err = h.ss.Restart()
	} else {
		h.hist = append(h.hist, "-- kill -9 streamsql (in-process crash)")
		err = h.ss.Kill()
	}
	h.logf("%s", h.hist[len(h.hist)-1])
	if err != nil {
		return &failure{msg: fmt.Sprintf("restarting streamsql: %v", err)}
	}
	if h.ssc, err = h.ss.Conn(ctx); err != nil {
		return &failure{msg: fmt.Sprintf("reconnecting to streamsql: %v", err)}
	}
	h.crashes++
	for _, v := range h.views {
		for _, st := range v.stages {
			st.late = 0
		}
	}
	return nil
}

// checkAll compares every table and view, and the late row counts.
func (h *evHarness) checkAll() *failure {
	ctx, cancel := context.WithTimeout(context.Background(), stmtTimeout)
	defer cancel()
	cmp := func(r *evRel, what, ssQuery, pgQuery string) *failure {
		want, err := query(ctx, h.pgc, pgQuery)
		if err != nil {
			h.t.Fatalf("eventtime: PostgreSQL cannot run %s: %v", pgQuery, err)
		}
		got, err := query(ctx, h.ssc.PgConn(), ssQuery)
		if err != nil {
			return &failure{msg: fmt.Sprintf("streamsql cannot run %s: %v", ssQuery, err)}
		}
		if d := diff(want, got); d != "" {
			msg := fmt.Sprintf("%s %s differs from the model\nstreamsql:  %s\nPostgreSQL: %s\n%s\n--- streamsql\n%s\n--- model\n%s",
				what, r.name, ssQuery, pgQuery, d, formatResult(got), formatResult(want))
			if r.table == nil {
				msg += "\n--- the view (" + r.kind + ")\n" + r.ssCreate() + "\n--- its model on PostgreSQL\n" + r.oracle
			}
			return &failure{msg: msg}
		}
		return nil
	}
	for _, r := range h.tables {
		if f := cmp(r, "table", "SELECT * FROM "+r.name, "SELECT * FROM "+r.name); f != nil {
			return f
		}
	}
	late := false
	for _, v := range h.views {
		if h.held(v) {
			continue
		}
		if f := cmp(v, "materialized view", "SELECT * FROM "+v.name, "SELECT * FROM "+v.name); f != nil {
			return f
		}
		if v.pgPlain != "" {
			if f := cmp(v, "batch query of view", v.ssDef, v.pgPlain); f != nil {
				return f
			}
		}
		late = late || v.counts()
	}
	if !late {
		return nil
	}
	got, err := query(ctx, h.ssc.PgConn(), "SELECT name, late_rows FROM streamsql_views")
	if err != nil {
		return &failure{msg: fmt.Sprintf("streamsql cannot read streamsql_views: %v", err)}
	}
	counts := map[string]string{}
	for _, row := range got.rows {
		counts[string(row[0])] = string(row[1])
	}
	for _, v := range h.views {
		if !v.counts() || h.held(v) {
			continue
		}
		if want := strconv.FormatInt(v.late(), 10); counts[v.name] != want {
			return &failure{msg: fmt.Sprintf("view %s (%s) counted %s late rows, the model %s\n%s",
				v.name, v.kind, counts[v.name], want, v.ssCreate())}
		}
	}
	return nil
}

// report fails the test with the failure, the seed and the statements
// that led to it.
func (h *evHarness) report(f *failure) {
	h.t.Helper()
	h.t.Fatalf("eventtime seed %d (views on %d actors): %s\n\nreproduce: go test ./internal/difftest -run TestEventTime -seed=%d -eventtime.steps=%d\n"+
		"statements (%d; on PostgreSQL the tables have no WATERMARK FOR and the views are models, see eventtime_gen.go):\n%s",
		h.seed, seedParallelism(h.seed, 0), f.msg, h.seed, *evStepsFlag, len(h.hist), strings.Join(h.hist, "\n"))
}
