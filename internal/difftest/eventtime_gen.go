package difftest

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"
)

// The event-time generator (TestEventTime): tables with watermarks, views
// over event time (TUMBLE and HOP aggregations, with and without EMIT ON
// WINDOW CLOSE, aggregations over them, window joins, temporal filters),
// random DML moving event time forward with jitter, and for each view the
// PostgreSQL objects that compute what streamsql must show.
//
// The oracle models late rows exactly. A windowed aggregation's group is
// final once its first watermark-carrying GROUP BY column is below that
// column's watermark; streamsql then drops its state and every later change
// to it. So a final group holds exactly the input rows it had when it became
// final, and an open group holds the input's current rows. On PostgreSQL a
// windowed view v has:
//
//   - v__in, a view of the aggregation's input rows (the window columns
//     computed with date_bin and generate_series);
//   - v__th, one row: the watermark of the group column the aggregation has
//     reached (none yet: no row);
//   - v__frozen, the input rows of the final groups, copied from v__in when
//     each group became final (after the statement whose epoch moved the
//     watermark past it, or at the view's creation);
//   - v itself: the aggregation over v__frozen and the rows of v__in in open
//     groups; with EMIT ON WINDOW CLOSE, over v__frozen alone.
//
// A table's watermark (the largest ts - delay over the rows inserted and
// the new versions of updated rows) is kept in t__wm by a trigger, which
// also logs every changed row version in t__log, from which the harness
// counts the late rows of each statement (streamsql_views.late_rows).
// Temporal filters read now() from the one-row table _clock, the time the
// test holds streamsql's barrier clock at.
//
// Timing: the test runs one statement at a time and each DML statement
// commits in an epoch of its own; a watermark travels just before the
// barrier that ends its epoch, so the changes of a statement are judged by
// the watermark reached before it, and the groups it makes final are final
// with its changes. The model does the same: count the statement's late
// changes by v__th, then move v__th and copy the newly final groups. A view
// created now starts from a snapshot of its input with no watermark, gets
// the watermark at its first barrier, and holds its final groups' rows as
// of its creation. A paused view keeps its inputs' changes and holds back
// their watermarks until it resumes, then applies them by the watermark it
// had: while a view or one of its inputs is paused, the model does not
// compare it and leaves alone the watermarks of its stages held by the pause
// (those of the paused view, and those reading a paused view; a stage of a
// view over a paused one that reads a table goes on, as streamsql's does).

// evBase is the event time the test starts at.
var evBase = time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)

// evTable is a table with an event-time column ts. Every table has the
// columns id int, k int, s text, v int, f double precision, ts.
type evTable struct {
	name       string
	pk         bool // id is the primary key
	appendOnly bool
	tz         bool // ts is timestamptz, else timestamp
	watermark  bool // WATERMARK FOR ts AS ts - delay
	delay      time.Duration
	nullableTS bool
	nextID     int
}

func (t *evTable) tsType() string {
	if t.tz {
		return "timestamptz"
	}
	return "timestamp"
}

func (t *evTable) columnsDecl() string {
	id := "id int"
	if t.pk {
		id += " PRIMARY KEY"
	}
	ts := "ts " + t.tsType()
	if !t.nullableTS {
		ts += " NOT NULL"
	}
	return id + ", k int, s text, v int, f double precision, " + ts
}

// ssCreate is the CREATE TABLE for streamsql.
func (t *evTable) ssCreate() string {
	cols := t.columnsDecl()
	if t.watermark {
		wm := "ts"
		if t.delay > 0 {
			wm = "ts - " + ivl(t.delay)
		}
		cols += ", WATERMARK FOR ts AS " + wm
	}
	q := "CREATE TABLE " + t.name + " (" + cols + ")"
	if t.appendOnly {
		q += " APPEND ONLY"
	}
	return q
}

// pgCreate creates the table on PostgreSQL with its watermark and log
// tables and the trigger that maintains them.
func (t *evTable) pgCreate() string {
	n := t.name
	var wm string
	if t.watermark {
		wm = fmt.Sprintf("IF NEW.ts IS NOT NULL THEN UPDATE %[1]s__wm SET wm = greatest(wm, NEW.ts - %[2]s); END IF;", n, ivl(t.delay))
	}
	return fmt.Sprintf(`CREATE TABLE %[1]s (%[2]s);
CREATE TABLE %[1]s__wm (wm %[3]s);
INSERT INTO %[1]s__wm VALUES (NULL);
CREATE TABLE %[1]s__log AS SELECT * FROM %[1]s WITH NO DATA;
CREATE FUNCTION %[1]s__trg() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP IN ('UPDATE', 'DELETE') THEN INSERT INTO %[1]s__log SELECT OLD.*; END IF;
  IF TG_OP IN ('INSERT', 'UPDATE') THEN
    INSERT INTO %[1]s__log SELECT NEW.*;
    %[4]s
  END IF;
  RETURN NULL;
END $$;
CREATE TRIGGER %[1]s__trg AFTER INSERT OR UPDATE OR DELETE ON %[1]s FOR EACH ROW EXECUTE FUNCTION %[1]s__trg()`,
		n, t.columnsDecl(), t.tsType(), wm)
}

// evCol is an output column of a relation.
type evCol struct {
	name string
	kind colKind
	// wm is PostgreSQL's expression of the column's current watermark in
	// streamsql (NULL while there is none), "" if the column carries none.
	wm string
	// agg marks an aggregate's result.
	agg bool
}

type colKind uint8

const (
	kNum colKind = iota
	kText
	kTime
)

// evRel is a table or a view of the event-time test.
type evRel struct {
	name string
	cols []evCol
	// table is set for tables.
	table *evTable
	// base is the table under a row-like relation (see rowLike).
	base *evTable
	kind string

	// Views: ssDef is the defining query, without EMIT ON WINDOW CLOSE;
	// pgPlain the PostgreSQL query giving what ssDef gives in a streamsql
	// batch query ("" when it reads now(): batch now() is not the barrier
	// clock); pgCreate creates the view's oracle objects, pgDrop drops them.
	ssDef    string
	eowc     bool
	pgPlain  string
	pgCreate string
	pgDrop   string
	oracle   string // the oracle view's query, for failure messages
	sources  []string
	// temporal: the view or one of its sources has a temporal filter.
	temporal bool
	// rowLike: the relation has the columns of a table (a table, a filter
	// view, a temporal filter view of all columns): windows can be built
	// over it.
	rowLike bool
	// rowsFrom gives the rows of a table or filter view as a FROM item,
	// with the base table replaced by the named table of the same columns;
	// nil for other relations.
	rowsFrom func(table string) string

	// stages are the parts of the view that rely on a watermark, in the
	// order the model moves them (see evStage); win is the one whose
	// threshold is the view's group column (windowed aggregations and
	// TopNs), nil for views that have none.
	stages []*evStage
	win    *evStage
}

// evStage is the model of one operator of a view that relies on a
// watermark: it drops the changes to rows whose column g is below the
// watermark th it has reached, and holds the rows it had there. On
// PostgreSQL it has name__in, the operator's input rows (with g computed);
// name__th, one row: the threshold reached (none yet: no row); and
// name__frozen, the input rows below the threshold, copied from name__in
// when the threshold passed them. The rows the operator holds are then
// rows(): those of name__frozen and the rows of name__in that are not below
// the threshold.
type evStage struct {
	name string
	// g is the column, in name__in, the watermark is on; th is
	// PostgreSQL's expression of the operator's watermark now.
	g, th string
	// src is the relation the stage reads, in gives its input rows as a
	// query over a FROM item in place of src; in is nil when the stage
	// does not count late rows (its input is not a table or filter view, or
	// the operator does not drop them).
	src string
	in  func(from string) string
	// nullLate: rows whose g is NULL are late too (emitting on window
	// close: their window never closes).
	nullLate bool
	// late is the model's count of the rows streamsql has dropped as late
	// since it last started; pending counts those it will drop when the
	// paused view it depends on resumes.
	late, pending int64
}

// rows is the FROM item of the rows the stage's operator holds.
func (st *evStage) rows() string {
	return fmt.Sprintf("(SELECT * FROM %[1]s__in AS i WHERE (i.%[2]s < (SELECT th FROM %[1]s__th)) IS NOT TRUE UNION ALL SELECT * FROM %[1]s__frozen)", st.name, st.g)
}

// create creates the stage's objects on PostgreSQL; in is name__in's query.
func (st *evStage) create(in string) string {
	return fmt.Sprintf(`CREATE VIEW %[1]s__in AS %[2]s;
CREATE TABLE %[1]s__frozen AS SELECT * FROM %[1]s__in WITH NO DATA;
CREATE TABLE %[1]s__th AS SELECT %[3]s AS th FROM %[1]s__in WITH NO DATA`, st.name, in, st.g)
}

func (st *evStage) drop() string {
	return fmt.Sprintf("DROP TABLE %[1]s__frozen, %[1]s__th; DROP VIEW %[1]s__in", st.name)
}

// counts reports whether the model counts the view's late rows.
func (r *evRel) counts() bool {
	return slices.ContainsFunc(r.stages, func(st *evStage) bool { return st.in != nil })
}

// late is the model's count of the view's late rows.
func (r *evRel) late() int64 {
	var n int64
	for _, st := range r.stages {
		n += st.late
	}
	return n
}

func (r *evRel) ssCreate() string {
	q := "CREATE MATERIALIZED VIEW " + r.name + " AS " + r.ssDef
	if r.eowc {
		q += " EMIT ON WINDOW CLOSE"
	}
	return q
}

func (r *evRel) col(name string) *evCol {
	for i := range r.cols {
		if r.cols[i].name == name {
			return &r.cols[i]
		}
	}
	return nil
}

func (r *evRel) hasCols(names ...string) bool {
	for _, n := range names {
		if r.col(n) == nil {
			return false
		}
	}
	return true
}

// evGen generates the event-time test's statements.
type evGen struct {
	*gen
	// cursor is the event time inserts are around; clock is now() of the
	// views (the barrier clock).
	cursor, clock time.Time
}

func newEvGen(seed int64) *evGen {
	return &evGen{gen: newGen(seed), cursor: evBase, clock: evBase.Add(5 * time.Second)}
}

// ivl renders a duration as an interval literal.
func ivl(d time.Duration) string {
	return "INTERVAL '" + strconv.FormatFloat(d.Seconds(), 'f', -1, 64) + " seconds'"
}

// tsLit renders a time as a timestamp (or timestamptz) literal.
func tsLit(t time.Time, tz bool) string {
	s := t.UTC().Format("2006-01-02 15:04:05.999999")
	if tz {
		s += "+00"
	}
	return "'" + s + "'"
}

// ms returns a random multiple of step in [lo, hi].
func (g *evGen) ms(lo, hi, step time.Duration) time.Duration {
	return lo + time.Duration(g.intn(int((hi-lo)/step)+1))*step
}

func (g *evGen) table(name string, first bool) *evTable {
	t := &evTable{name: name, nextID: 1}
	t.pk = g.chance(0.5)
	t.appendOnly = g.chance(0.35)
	t.tz = g.chance(0.3)
	t.watermark = first || g.chance(0.85)
	t.delay = pick(g.gen, []time.Duration{0, 500 * time.Millisecond, time.Second, 2 * time.Second, 5 * time.Second})
	t.nullableTS = g.chance(0.25)
	return t
}

// tableRel is the relation of table t.
func tableRel(t *evTable) *evRel {
	r := &evRel{name: t.name, table: t, base: t, kind: "table", rowLike: true}
	wm := ""
	if t.watermark {
		wm = "(SELECT wm FROM " + t.name + "__wm)"
	}
	r.cols = []evCol{{name: "id"}, {name: "k"}, {name: "s", kind: kText}, {name: "v"}, {name: "f"}, {name: "ts", kind: kTime, wm: wm}}
	r.rowsFrom = func(table string) string { return table }
	return r
}

// Values.

func (g *evGen) kVal() string { return g.maybeNull(strconv.Itoa(g.intn(4))) }
func (g *evGen) sVal() string { return g.maybeNull(quote(pick(g.gen, []string{"a", "b", "c"}))) }
func (g *evGen) vVal() string { return g.maybeNull(strconv.Itoa(g.intn(121) - 20)) }

// fVal is a multiple of 1/4: sums of them are exact in floating point.
func (g *evGen) fVal() string {
	return g.maybeNull(strconv.FormatFloat(float64(g.intn(401)-200)/4, 'f', -1, 64))
}

func (g *evGen) maybeNull(v string) string {
	if g.chance(0.05) {
		return "NULL"
	}
	return v
}

// eventTime returns a row's event time: around the cursor, now and then
// far behind it (a late row for most windows).
func (g *evGen) eventTime() time.Time {
	switch n := g.intn(100); {
	case n < 8:
		return g.cursor.Add(-g.ms(2*time.Second, 20*time.Second, 250*time.Millisecond))
	case n < 12:
		return g.cursor // exactly on a window boundary, often
	default:
		return g.cursor.Add(g.ms(-1500*time.Millisecond, time.Second, 250*time.Millisecond))
	}
}

// insert returns an INSERT of 1 to 4 (now and then 8) rows; event time
// moves forward.
func (g *evGen) insert(t *evTable) string {
	g.cursor = g.cursor.Add(g.ms(0, 2*time.Second, 250*time.Millisecond))
	n := 1 + g.intn(4)
	if g.chance(0.1) {
		n = 8
	}
	rows := make([]string, n)
	for i := range rows {
		var id int
		if t.pk {
			id = t.nextID
			t.nextID++
		} else {
			id = 1 + g.intn(40)
		}
		ts := tsLit(g.eventTime(), t.tz)
		if t.nullableTS && g.chance(0.06) {
			ts = "NULL"
		}
		rows[i] = fmt.Sprintf("(%d, %s, %s, %s, %s, %s)", id, g.kVal(), g.sVal(), g.vVal(), g.fVal(), ts)
	}
	return "INSERT INTO " + t.name + " (id, k, s, v, f, ts) VALUES " + strings.Join(rows, ", ")
}

// pickID picks one of ids, mostly among the latest.
func (g *evGen) pickID(ids []int) int {
	if len(ids) == 0 {
		return 1 + g.intn(40)
	}
	if g.chance(0.7) {
		ids = ids[max(0, len(ids)-10):]
	}
	return pick(g.gen, ids)
}

// update returns an UPDATE of t; ids are t's ids, ascending.
func (g *evGen) update(t *evTable, ids []int) string {
	id := g.pickID(ids)
	recent := tsLit(g.cursor.Add(-g.ms(0, 5*time.Second, 250*time.Millisecond)), t.tz)
	var set, where string
	switch g.intn(7) {
	case 0:
		set, where = fmt.Sprintf("v = v + %d", 1+g.intn(9)), fmt.Sprintf("id = %d", id)
	case 1:
		d := g.ms(-3*time.Second, 3*time.Second, 250*time.Millisecond)
		set, where = "ts = ts + "+ivl(d), fmt.Sprintf("id = %d", id)
	case 2:
		set, where = "k = (k + 1) % 4, f = f + 0.5", "ts >= "+recent
	case 3:
		set, where = "s = "+quote(pick(g.gen, []string{"a", "b", "c"})), fmt.Sprintf("k = %d", g.intn(4))
	case 4:
		set, where = "ts = "+tsLit(g.eventTime(), t.tz), fmt.Sprintf("id = %d", id)
	case 5:
		if t.pk {
			set, where = "id = id + 100000", fmt.Sprintf("id = %d", id)
			break
		}
		fallthrough
	default:
		set, where = fmt.Sprintf("v = %s, f = %s", g.vVal(), g.fVal()), fmt.Sprintf("id IN (%d, %d)", id, g.pickID(ids))
	}
	return "UPDATE " + t.name + " SET " + set + " WHERE " + where
}

// delete returns a DELETE from t; big says the table is large, and then
// old rows go.
func (g *evGen) delete(t *evTable, ids []int, big bool) string {
	old := tsLit(g.cursor.Add(-g.ms(10*time.Second, 40*time.Second, time.Second)), t.tz)
	if big {
		return "DELETE FROM " + t.name + " WHERE ts < " + old + " OR ts IS NULL"
	}
	var where string
	switch g.intn(5) {
	case 0, 1:
		where = fmt.Sprintf("id = %d", g.pickID(ids))
	case 2:
		where = "ts < " + old
	case 3:
		where = fmt.Sprintf("k = %d AND ts >= %s", g.intn(4), tsLit(g.cursor.Add(-g.ms(0, 4*time.Second, 250*time.Millisecond)), t.tz))
	default:
		where = fmt.Sprintf("id IN (%d, %d)", g.pickID(ids), g.pickID(ids))
	}
	return "DELETE FROM " + t.name + " WHERE " + where
}

// advanceClock moves now() forward, keeping it within tens of seconds of
// event time so that temporal filters keep changing.
func (g *evGen) advanceClock() {
	next := g.clock.Add(g.ms(0, 3*time.Second, 250*time.Millisecond))
	if lag := g.cursor.Add(-20 * time.Second); next.Before(lag) {
		next = lag.Add(g.ms(0, 10*time.Second, 250*time.Millisecond))
	}
	if next.After(g.cursor.Add(30 * time.Second)) {
		next = g.clock
	}
	g.clock = next
}

// Views.

// plainCond is a condition on the non-time columns of a table's rows.
func (g *evGen) plainCond() string {
	return pick(g.gen, []string{
		fmt.Sprintf("v > %d", g.intn(60)-10),
		fmt.Sprintf("k <> %d", g.intn(4)),
		"s IN ('a', 'b')",
		"v IS NOT NULL",
		fmt.Sprintf("f < %d", g.intn(40)-10),
		fmt.Sprintf("(k = %d OR v < %d)", g.intn(4), g.intn(50)),
	})
}

// filterView is SELECT of every column of a table WHERE a plain condition:
// its ts keeps the table's watermark.
func (g *evGen) filterView(name string, src *evRel) *evRel {
	cond := g.plainCond()
	def := "SELECT id, k, s, v, f, ts FROM " + src.name + " WHERE " + cond
	r := &evRel{name: name, kind: "filter", base: src.base, ssDef: def, pgPlain: def, oracle: def, sources: []string{src.name}, rowLike: true}
	r.cols = slices.Clone(src.cols)
	r.rowsFrom = func(table string) string {
		return "(SELECT id, k, s, v, f, ts FROM " + src.rowsFrom(table) + " AS f0 WHERE " + cond + ")"
	}
	r.pgCreate = "CREATE VIEW " + name + " AS " + def
	r.pgDrop = "DROP VIEW " + name
	return r
}

// groupCol is a GROUP BY column of a generated aggregation.
type groupCol struct {
	name   string // its name in v__in and in the view
	ssItem string // its select item in streamsql ("" when it is the name)
	ssExpr string // its GROUP BY expression in streamsql
	kind   colKind
	wm     string // its watermark (see evCol.wm), "" if none
}

// aggItem is an aggregate call of a generated aggregation.
type aggItem struct {
	sql  string // the call, the same on both systems
	kind colKind
}

// windowAgg is an aggregation over TUMBLE or HOP of src (a table or a
// filter view), or over a time column of src directly, grouped by window
// columns and others in random order, with or without EMIT ON WINDOW
// CLOSE.
func (g *evGen) windowAgg(name string, src *evRel) *evRel {
	ts := src.col("ts")
	tz := src.base.tz
	tsType := "TIMESTAMP"
	if tz {
		tsType = "TIMESTAMPTZ"
	}
	wmOf := func(f string) string { // the watermark of a column that is f(ts)
		if ts.wm == "" {
			return ""
		}
		return fmt.Sprintf(f, ts.wm)
	}
	var from string            // streamsql's FROM item
	var in func(string) string // v__in over a FROM item
	var cands []groupCol
	var windowCols []groupCol
	switch n := g.intn(10); {
	case n < 6: // TUMBLE
		size := pick(g.gen, []time.Duration{time.Second, 2 * time.Second, 3 * time.Second, 5 * time.Second, 1500 * time.Millisecond, 10 * time.Second, 30 * time.Second})
		var offset time.Duration
		from = fmt.Sprintf("TUMBLE(%s, ts, %s)", src.name, ivl(size))
		if g.chance(0.3) {
			offset = g.ms(250*time.Millisecond, size-250*time.Millisecond, 250*time.Millisecond)
			from = fmt.Sprintf("TUMBLE(%s, ts, %s, %s)", src.name, ivl(size), ivl(offset))
		}
		origin := fmt.Sprintf("%s %s", tsType, tsLit(time.Unix(0, 0).Add(offset), tz))
		bin := "date_bin(" + ivl(size) + ", %s, " + origin + ")"
		in = func(f string) string {
			b := fmt.Sprintf(bin, "w0.ts")
			return fmt.Sprintf("SELECT w0.*, %s AS window_start, %s + %s AS window_end FROM %s AS w0", b, b, ivl(size), f)
		}
		windowCols = []groupCol{
			{name: "window_start", kind: kTime, wm: wmOf(bin)},
			{name: "window_end", kind: kTime, wm: wmOf("(" + bin + " + " + ivl(size) + ")")},
		}
	case n < 9: // HOP
		slide := pick(g.gen, []time.Duration{time.Second, 2 * time.Second, 3 * time.Second, 5 * time.Second, 500 * time.Millisecond})
		size := slide * time.Duration(1+g.intn(4))
		var offset time.Duration
		from = fmt.Sprintf("HOP(%s, ts, %s, %s)", src.name, ivl(slide), ivl(size))
		if g.chance(0.3) && slide > 250*time.Millisecond {
			offset = g.ms(250*time.Millisecond, slide-250*time.Millisecond, 250*time.Millisecond)
			from = fmt.Sprintf("HOP(%s, ts, %s, %s, %s)", src.name, ivl(slide), ivl(size), ivl(offset))
		}
		origin := fmt.Sprintf("%s %s", tsType, tsLit(time.Unix(0, 0).Add(offset), tz))
		bin := "date_bin(" + ivl(slide) + ", %s, " + origin + ")"
		in = func(f string) string {
			b := fmt.Sprintf(bin, "w0.ts")
			return fmt.Sprintf("SELECT w0.*, hop_ws AS window_start, hop_ws + %s AS window_end FROM %s AS w0, generate_series(%s - %s, %s, %s) AS hop_ws",
				ivl(size), f, b, ivl(size-slide), b, ivl(slide))
		}
		windowCols = []groupCol{
			{name: "window_start", kind: kTime, wm: wmOf("(" + bin + " - " + ivl(size-slide) + ")")},
			{name: "window_end", kind: kTime, wm: wmOf("(" + bin + " + " + ivl(slide) + ")")},
		}
	default: // the time column itself, or a date_trunc of it
		from = src.name
		unit := pick(g.gen, []string{"second", "minute", ""})
		if unit == "" {
			in = func(f string) string { return "SELECT w0.* FROM " + f + " AS w0" }
			windowCols = []groupCol{{name: "ts", kind: kTime, wm: ts.wm}}
		} else {
			in = func(f string) string {
				return fmt.Sprintf("SELECT w0.*, date_trunc('%s', w0.ts) AS tb FROM %s AS w0", unit, f)
			}
			e := fmt.Sprintf("date_trunc('%s', ts)", unit)
			windowCols = []groupCol{{name: "tb", ssItem: e + " AS tb", ssExpr: e, kind: kTime, wm: wmOf("date_trunc('" + unit + "', %s)")}}
		}
	}
	// The window columns grouped by: window_start mostly, window_end
	// sometimes, both now and then.
	switch n := g.intn(20); {
	case len(windowCols) == 1:
		cands = windowCols
	case n < 12:
		cands = windowCols[:1]
	case n < 15:
		cands = windowCols[1:]
	default:
		cands = windowCols
	}
	if windowCols[0].name == "window_start" && g.chance(0.08) {
		cands = append(cands, groupCol{name: "ts", kind: kTime, wm: ts.wm})
	}
	if g.chance(0.4) {
		cands = append(cands, groupCol{name: "k"})
	}
	if g.chance(0.25) {
		cands = append(cands, groupCol{name: "s", kind: kText})
	}
	where := ""
	if g.chance(0.3) {
		where = " WHERE " + g.plainCond()
	}
	pgIn := func(f string) string {
		q := in(f)
		if where != "" {
			q = "SELECT * FROM (" + q + ") AS w1" + where
		}
		return q
	}
	aggs := g.tableAggs()
	return g.aggregation(name, src, from+where, pgIn, nil, cands, aggs, "a")
}

// tableAggs returns 1 to 3 aggregate calls over a table's columns.
func (g *evGen) tableAggs() []aggItem {
	all := []aggItem{
		{sql: "count(*)"}, {sql: "count(v)"}, {sql: "sum(v)"}, {sql: "sum(f)"}, {sql: "min(v)"},
		{sql: "max(v)"}, {sql: "min(f)"}, {sql: "max(f)"}, {sql: "avg(v)"}, {sql: "avg(f)"},
		{sql: "min(s)", kind: kText}, {sql: "max(ts)", kind: kTime}, {sql: "count(DISTINCT k)"},
		{sql: "sum(v) FILTER (WHERE k > 0)"}, {sql: "min(id)"},
	}
	n := 1 + g.intn(3)
	var out []aggItem
	for _, i := range g.rng.Perm(len(all))[:n] {
		out = append(out, all[i])
	}
	return out
}

// aggregation builds an aggregation view: streamsql reads from (a FROM
// clause, with its WHERE), PostgreSQL reads the query in(src.name) in the
// model and plain(src.name) in the batch query (plain nil: in); cands
// are the group columns, in GROUP BY order after shuffling; the aggregates
// are named prefix1, prefix2, ...
func (g *evGen) aggregation(name string, src *evRel, from string, in, plain func(string) string, cands []groupCol, aggs []aggItem, prefix string) *evRel {
	if plain == nil {
		plain = in
	}
	groups := slices.Clone(cands)
	g.rng.Shuffle(len(groups), func(i, j int) { groups[i], groups[j] = groups[j], groups[i] })
	// The select list: the group columns and the aggregates, interleaved
	// in random order.
	type item struct {
		ss, pg string
		col    evCol
	}
	var items []item
	var gw *groupCol // the watermark group: the first in GROUP BY order
	for i := range groups {
		c := &groups[i]
		if gw == nil && c.wm != "" {
			gw = c
		}
		ss := c.name
		if c.ssItem != "" {
			ss = c.ssItem
		}
		items = append(items, item{ss: ss, pg: c.name, col: evCol{name: c.name, kind: c.kind}})
	}
	for i, a := range aggs {
		alias := fmt.Sprintf("%s%d", prefix, i+1)
		items = append(items, item{ss: a.sql + " AS " + alias, pg: a.sql + " AS " + alias, col: evCol{name: alias, kind: a.kind, agg: true}})
	}
	g.rng.Shuffle(len(items), func(i, j int) { items[i], items[j] = items[j], items[i] })
	var ssItems, pgItems, ssGroup, pgGroup []string
	for _, it := range items {
		ssItems, pgItems = append(ssItems, it.ss), append(pgItems, it.pg)
	}
	for _, c := range groups {
		e := c.name
		if c.ssExpr != "" && g.chance(0.5) {
			e = c.ssExpr
		}
		ssGroup, pgGroup = append(ssGroup, e), append(pgGroup, c.name)
	}
	having := ""
	if g.chance(0.12) {
		having = " HAVING " + pick(g.gen, []string{"count(*) > 1", "count(*) < 3"})
	}
	tail := func(group []string) string {
		if len(group) == 0 {
			return having
		}
		return " GROUP BY " + strings.Join(group, ", ") + having
	}
	r := &evRel{name: name, kind: "aggregation", sources: []string{src.name}, temporal: src.temporal}
	r.ssDef = "SELECT " + strings.Join(ssItems, ", ") + " FROM " + from + tail(ssGroup)
	agg := func(f string) string { return "SELECT " + strings.Join(pgItems, ", ") + " FROM " + f + tail(pgGroup) }
	r.pgPlain = agg("(" + plain(src.name) + ") AS w")
	for _, it := range items {
		r.cols = append(r.cols, it.col)
	}
	if gw == nil {
		r.oracle = agg("(" + in(src.name) + ") AS w")
		r.pgCreate = "CREATE VIEW " + name + " AS " + r.oracle
		r.pgDrop = "DROP VIEW " + name
		return r
	}
	w := &evStage{name: name, g: gw.name, th: gw.wm, src: src.name}
	if src.rowsFrom != nil {
		w.in = in
	}
	r.eowc = g.chance(0.4)
	w.nullLate = r.eowc
	r.win, r.stages = w, append(r.stages, w)
	r.col(gw.name).wm = "(SELECT th FROM " + name + "__th)"
	rows := w.rows() + " AS w"
	if r.eowc {
		rows = name + "__frozen AS w"
		r.kind = "aggregation emitting on window close"
	} else {
		r.kind = "windowed aggregation"
	}
	r.oracle = agg(rows)
	r.pgCreate = w.create(in(src.name)) + ";\nCREATE VIEW " + name + " AS " + r.oracle
	r.pgDrop = "DROP VIEW " + name + "; " + w.drop()
	return r
}

// aggOverView aggregates a view: grouped by a column that carries a
// watermark (a windowed aggregation over a windowed aggregation or a window
// join), by another column, or not at all.
func (g *evGen) aggOverView(name string, src *evRel) *evRel {
	var wmCols, others []evCol
	for _, c := range src.cols {
		if c.wm != "" && !src.temporal {
			wmCols = append(wmCols, c)
		} else if c.kind != kTime {
			others = append(others, c)
		}
	}
	var cands []groupCol
	if len(wmCols) > 0 && g.chance(0.7) {
		c := pick(g.gen, wmCols)
		cands = append(cands, groupCol{name: c.name, kind: c.kind, wm: c.wm})
	}
	if len(others) > 0 && (len(cands) == 0 || g.chance(0.3)) && g.chance(0.8) {
		c := pick(g.gen, others)
		cands = append(cands, groupCol{name: c.name, kind: c.kind})
	}
	aggs := []aggItem{{sql: "count(*)"}}
	for _, c := range src.cols {
		if slices.ContainsFunc(cands, func(gc groupCol) bool { return gc.name == c.name }) || !g.chance(0.5) {
			continue
		}
		switch c.kind {
		case kNum:
			aggs = append(aggs, aggItem{sql: pick(g.gen, []string{"sum", "min", "max"}) + "(" + c.name + ")"})
		case kText:
			aggs = append(aggs, aggItem{sql: "max(" + c.name + ")", kind: kText})
		case kTime:
			aggs = append(aggs, aggItem{sql: "min(" + c.name + ")", kind: kTime})
		}
	}
	if len(aggs) > 3 {
		aggs = aggs[:3]
	}
	in := func(f string) string { return "SELECT * FROM " + f }
	// Name the aggregates apart from the source's columns.
	prefix := "a"
	for slices.ContainsFunc(src.cols, func(c evCol) bool { return strings.HasPrefix(c.name, prefix) }) {
		prefix = string(rune(prefix[0] + 1))
	}
	r := g.aggregation(name, src, src.name, in, nil, cands, aggs, prefix)
	if r.win != nil {
		r.win.in = nil // late rows are counted only over tables
	}
	return r
}

// windowJoin joins two aggregations on window_start (and k when both
// group by it).
func (g *evGen) windowJoin(name string, a, b *evRel) *evRel {
	on := "a.window_start = b.window_start"
	items := []string{"a.window_start AS ws"}
	cols := []evCol{{name: "ws", kind: kTime}}
	if wa, wb := a.col("window_start").wm, b.col("window_start").wm; wa != "" && wb != "" {
		cols[0].wm = fmt.Sprintf("(CASE WHEN %[1]s IS NULL OR %[2]s IS NULL THEN NULL ELSE least(%[1]s, %[2]s) END)", wa, wb)
	}
	if a.hasCols("k") && b.hasCols("k") {
		on += " AND a.k = b.k"
		items = append(items, "a.k AS k")
		cols = append(cols, evCol{name: "k"})
	}
	side := func(alias string, r *evRel) {
		for _, c := range r.cols {
			if c.agg && len(items) < 5 && g.chance(0.6) {
				n := alias + "_" + c.name
				items = append(items, alias+"."+c.name+" AS "+n)
				cols = append(cols, evCol{name: n, kind: c.kind})
			}
		}
	}
	side("a", a)
	side("b", b)
	join := "JOIN"
	if g.chance(0.3) {
		join = "LEFT JOIN"
	}
	def := fmt.Sprintf("SELECT %s FROM %s AS a %s %s AS b ON %s", strings.Join(items, ", "), a.name, join, b.name, on)
	return &evRel{name: name, kind: "window join", cols: cols, ssDef: def, pgPlain: def, oracle: def,
		sources: []string{a.name, b.name}, temporal: a.temporal || b.temporal,
		pgCreate: "CREATE VIEW " + name + " AS " + def, pgDrop: "DROP VIEW " + name}
}

// temporalView filters a table by conditions on now(): its rows, or an
// aggregation of them.
func (g *evGen) temporalView(name string, src *evRel) *evRel {
	var conds []string
	bound := func() string {
		x := ivl(pick(g.gen, []time.Duration{time.Second, 3 * time.Second, 5 * time.Second, 10 * time.Second, 30 * time.Second}))
		y := pick(g.gen, []string{"", " + " + ivl(2*time.Second), " + " + ivl(10*time.Second), " - " + ivl(time.Second)})
		return pick(g.gen, []string{
			"ts > {now} - " + x,
			"ts >= {now} - " + x,
			"ts <= {now}" + y,
			"ts < {now}" + y,
			"ts BETWEEN {now} - " + x + " AND {now}" + y,
			"{now} - ts < " + x,
			"{now} - " + x + " <= ts",
			"ts + " + x + " > {now}",
		})
	}
	conds = append(conds, bound())
	if g.chance(0.3) {
		conds = append(conds, bound())
	}
	if g.chance(0.3) {
		conds = append(conds, g.plainCond())
	}
	g.rng.Shuffle(len(conds), func(i, j int) { conds[i], conds[j] = conds[j], conds[i] })
	where := strings.Join(conds, " AND ")
	var sel string
	var cols []evCol
	rows := false
	switch g.intn(3) {
	case 0:
		sel = "SELECT id, k, s, v, f, ts FROM " + src.name
		cols, rows = slices.Clone(src.cols), true
	case 1:
		sel = "SELECT k, count(*) AS n, sum(v) AS sv, max(ts) AS mx FROM " + src.name
		cols = []evCol{{name: "k"}, {name: "n"}, {name: "sv"}, {name: "mx", kind: kTime}}
		where += " GROUP BY k"
	default:
		sel = "SELECT count(*) AS n, min(f) AS mf, min(ts) AS mn FROM " + src.name
		cols = []evCol{{name: "n"}, {name: "mf"}, {name: "mn", kind: kTime}}
	}
	q := sel + " WHERE " + where
	ss := strings.ReplaceAll(q, "{now}", "now()")
	pg := strings.ReplaceAll(q, "{now}", "(SELECT now FROM _clock)")
	r := &evRel{name: name, kind: "temporal filter", cols: cols, ssDef: ss, oracle: pg, sources: []string{src.name}, temporal: true,
		pgCreate: "CREATE VIEW " + name + " AS " + pg, pgDrop: "DROP VIEW " + name}
	if rows {
		// Windows over its rows see rows enter and leave with time.
		r.rowLike, r.base = true, src.base
	}
	return r
}
