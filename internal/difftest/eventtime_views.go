package difftest

import (
	"fmt"
	"slices"
	"strings"
	"time"
)

// More views of the event-time test: TopN (global, per group, DISTINCT ON,
// and per window), interval joins, SESSION windows (in FROM and in OVER) and
// ASOF joins, each with its model on PostgreSQL (see eventtime_gen.go for
// the model of late rows, evStage).
//
// Orders. A TopN's order is made total by following its key with every
// column of the row, so that the rows it keeps are determined in both
// systems (rows equal in every column are interchangeable), except with
// WITH TIES, rank() and dense_rank(), which keep every peer.

// rowCols are the columns of a row-like relation (see evRel.rowLike).
var rowCols = []string{"id", "k", "s", "v", "f", "ts"}

// sortKey returns a random sort key over a row's columns, and the order
// that follows it with every other column, making it total. The key is not
// a column of part (a DISTINCT ON or PARTITION BY list), which would order
// nothing; the total order repeats part's columns, as a DISTINCT ON's ORDER
// BY does after its initial part (redundant keys, dropped).
func (g *evGen) sortKey(part string) (key, total string) {
	cands := slices.DeleteFunc([]string{"v", "v", "f", "ts", "s", "k", "id"}, func(c string) bool {
		return slices.Contains(strings.Split(part, ", "), c)
	})
	col := pick(g.gen, cands)
	key = col + pick(g.gen, []string{"", "", " DESC", " NULLS FIRST", " DESC NULLS LAST"})
	rest := []string{key}
	for _, c := range rowCols {
		if c != col {
			rest = append(rest, c)
		}
	}
	return key, strings.Join(rest, ", ")
}

// topN is a TopN over row-like src (a table, filter view or temporal
// filter of all columns), not by window: ORDER BY LIMIT (with OFFSET, or
// WITH TIES), a group TopN over row_number, rank or dense_rank, or
// DISTINCT ON. Its model is its own query.
func (g *evGen) topN(name string, src *evRel) *evRel {
	part := pick(g.gen, []string{"k", "s", "k, s", "k"})
	key, total := g.sortKey(part)
	cols := strings.Join(rowCols, ", ")
	var def, kind string
	switch g.intn(4) {
	case 0:
		_, total := g.sortKey("")
		def = fmt.Sprintf("SELECT %s FROM %s ORDER BY %s LIMIT %d", cols, src.name, total, 1+g.intn(5))
		if g.chance(0.4) {
			def += fmt.Sprintf(" OFFSET %d", 1+g.intn(3))
		}
		kind = "TopN"
	case 1:
		def = fmt.Sprintf("SELECT %s FROM %s ORDER BY %s FETCH FIRST %d ROWS WITH TIES", cols, src.name, key, 1+g.intn(3))
		kind = "TopN with ties"
	case 2:
		over, cond := g.rankCall(key, total, part)
		def = fmt.Sprintf("SELECT * FROM (SELECT %s, %s AS rn FROM %s) AS q WHERE %s", cols, over, src.name, cond)
		kind = "group TopN"
	default:
		def = fmt.Sprintf("SELECT DISTINCT ON (%[1]s) %[2]s FROM %[3]s ORDER BY %[1]s, %[4]s", part, cols, src.name, total)
		kind = "DISTINCT ON"
	}
	r := &evRel{name: name, kind: kind, ssDef: def, oracle: def, sources: []string{src.name}, temporal: src.temporal,
		pgCreate: "CREATE VIEW " + name + " AS " + def, pgDrop: "DROP VIEW " + name}
	if !src.temporal {
		r.pgPlain = def
	}
	for _, c := range src.cols {
		r.cols = append(r.cols, evCol{name: c.name, kind: c.kind})
	}
	if kind == "group TopN" {
		r.cols = append(r.cols, evCol{name: "rn"})
	}
	return r
}

// rankCall returns a ranking call over a window partitioned by part (none
// when part is ""), and a condition on its result rn that bounds it.
// row_number() is ordered totally; rank() and dense_rank() by key alone.
func (g *evGen) rankCall(key, total, part string) (call, cond string) {
	fn, order := "row_number()", total
	switch g.intn(4) {
	case 0:
		fn, order = "rank()", key
	case 1:
		fn, order = "dense_rank()", key
	}
	w := "ORDER BY " + order
	if part != "" {
		w = "PARTITION BY " + part + " " + w
	}
	n := 1 + g.intn(3)
	cond = pick(g.gen, []string{
		fmt.Sprintf("rn <= %d", n),
		"rn = 1",
		fmt.Sprintf("rn < %d", n+1),
		fmt.Sprintf("rn BETWEEN 2 AND %d", n+1),
	})
	return fn + " OVER (" + w + ")", cond
}

// windowTopN is a TopN per window: per window_start of a TUMBLE of
// row-like src (with k now and then), or per ts, as a group TopN or
// DISTINCT ON, with or without EMIT ON WINDOW CLOSE. When ts carries a
// watermark its groups become final as a windowed aggregation's do (one
// evStage, over the window's first group column).
func (g *evGen) windowTopN(name string, src *evRel) *evRel {
	ts := src.col("ts")
	tsType := "TIMESTAMP"
	if src.base.tz {
		tsType = "TIMESTAMPTZ"
	}
	var from, gcol, wm string
	var in func(string) string
	if g.chance(0.8) {
		size := pick(g.gen, []time.Duration{time.Second, 2 * time.Second, 3 * time.Second, 5 * time.Second})
		from = fmt.Sprintf("TUMBLE(%s, ts, %s)", src.name, ivl(size))
		bin := "date_bin(" + ivl(size) + ", %s, " + tsType + " " + tsLit(time.Unix(0, 0), src.base.tz) + ")"
		in = func(f string) string {
			return fmt.Sprintf("SELECT w0.*, %s AS window_start FROM %s AS w0", fmt.Sprintf(bin, "w0.ts"), f)
		}
		gcol = "window_start"
		if ts.wm != "" {
			wm = fmt.Sprintf(bin, ts.wm)
		}
	} else {
		from = src.name
		in = func(f string) string { return "SELECT w0.* FROM " + f + " AS w0" }
		gcol, wm = "ts", ts.wm
	}
	part := gcol
	if g.chance(0.4) {
		part += ", k"
	}
	key, total := g.sortKey(part)
	cols := strings.Join(rowCols, ", ")
	if gcol == "window_start" {
		cols += ", window_start"
	}
	var q, kind string
	if g.chance(0.5) {
		over, cond := g.rankCall(key, total, part)
		q = fmt.Sprintf("SELECT * FROM (SELECT %s, %s AS rn FROM {from}) AS q WHERE %s", cols, over, cond)
		kind = "group TopN"
	} else {
		q = fmt.Sprintf("SELECT DISTINCT ON (%[1]s) %[2]s FROM {from} ORDER BY %[1]s, %[3]s", part, cols, total)
		kind = "DISTINCT ON"
	}
	over := func(f string) string { return strings.ReplaceAll(q, "{from}", f) }
	r := &evRel{name: name, ssDef: over(from), sources: []string{src.name}, temporal: src.temporal}
	for _, c := range src.cols {
		r.cols = append(r.cols, evCol{name: c.name, kind: c.kind})
	}
	if gcol == "window_start" {
		r.cols = append(r.cols, evCol{name: "window_start", kind: kTime})
	}
	if strings.Contains(q, " AS rn ") {
		r.cols = append(r.cols, evCol{name: "rn"})
	}
	plain := over("(" + in(src.name) + ") AS w")
	if !src.temporal {
		r.pgPlain = plain
	}
	if wm == "" {
		r.kind = kind + " over windows without a watermark"
		r.oracle, r.pgCreate, r.pgDrop = plain, "CREATE VIEW "+name+" AS "+plain, "DROP VIEW "+name
		return r
	}
	st := &evStage{name: name, g: gcol, th: wm, src: src.name}
	if src.rowsFrom != nil {
		st.in = in
	}
	r.eowc = g.chance(0.4)
	st.nullLate = r.eowc
	r.win, r.stages = st, []*evStage{st}
	r.col(gcol).wm = "(SELECT th FROM " + name + "__th)"
	r.kind = "windowed " + kind
	r.oracle = over(st.rows() + " AS w")
	if r.eowc {
		r.kind += " emitting on window close"
		r.oracle = over(name + "__frozen AS w")
	}
	r.pgCreate = st.create(in(src.name)) + ";\nCREATE VIEW " + name + " AS " + r.oracle
	r.pgDrop = "DROP VIEW " + name + "; " + st.drop()
	return r
}

// rowStage is the stage of an operator that drops the changes to rows of
// src (a table or filter view) whose ts is below ts's watermark, holding
// the rows it had there (interval joins, SESSION windows).
func rowStage(name string, src *evRel) *evStage {
	st := &evStage{name: name, g: "ts", th: src.col("ts").wm, src: src.name}
	st.in = func(f string) string { return "SELECT w0.* FROM " + f + " AS w0" }
	return st
}

// intervalJoin joins a and b (tables or filter views whose ts have the
// same type) on a condition bounding b.ts by a.ts (or the reverse), and k
// mostly. An inner or LEFT join over two inputs with watermarks is an
// interval join: each input drops the changes behind its own watermark (a
// row kept there stays, its deletes are dropped), so its model joins the
// rows each input's stage holds; the rows its state cleaning drops can
// match no row still to come. A join over an input without a watermark is
// a plain join.
func (g *evGen) intervalJoin(name string, a, b *evRel) *evRel {
	x := ivl(pick(g.gen, []time.Duration{time.Second, 2 * time.Second, 3 * time.Second, 5 * time.Second}))
	y := ivl(pick(g.gen, []time.Duration{0, 500 * time.Millisecond, time.Second, 4 * time.Second}))
	conds := []string{pick(g.gen, []string{
		"b.ts BETWEEN a.ts AND a.ts + " + x,
		"b.ts BETWEEN a.ts - " + y + " AND a.ts + " + x,
		"a.ts >= b.ts - " + x,
		"b.ts < a.ts + " + x + " AND b.ts > a.ts - " + y,
		"a.ts BETWEEN b.ts - " + x + " AND b.ts",
	})}
	if g.chance(0.8) {
		conds = append([]string{"a.k = b.k"}, conds...)
	}
	if g.chance(0.2) {
		conds = append(conds, "a.s = b.s")
	}
	g.rng.Shuffle(len(conds), func(i, j int) { conds[i], conds[j] = conds[j], conds[i] })
	items := "a.id AS aid, a.k AS ak, a.v AS av, a.ts AS ats, b.id AS bid, b.s AS bs, b.f AS bf, b.ts AS bts"
	cols := []evCol{{name: "aid"}, {name: "ak"}, {name: "av"}, {name: "ats", kind: kTime},
		{name: "bid"}, {name: "bs", kind: kText}, {name: "bf"}, {name: "bts", kind: kTime}}
	join := "JOIN"
	if g.chance(0.2) {
		join = "LEFT JOIN"
	}
	q := "SELECT " + items + " FROM {a} AS a " + join + " {b} AS b ON " + strings.Join(conds, " AND ")
	over := func(fa, fb string) string {
		return strings.NewReplacer("{a}", fa, "{b}", fb).Replace(q)
	}
	def := over(a.name, b.name)
	r := &evRel{name: name, kind: "plain join on time", cols: cols, ssDef: def, pgPlain: def, sources: []string{a.name, b.name}}
	if a.col("ts").wm == "" || b.col("ts").wm == "" {
		r.oracle, r.pgCreate, r.pgDrop = def, "CREATE VIEW "+name+" AS "+def, "DROP VIEW "+name
		return r
	}
	r.kind = "interval join"
	sa, sb := rowStage(name+"_l", a), rowStage(name+"_r", b)
	r.stages = []*evStage{sa, sb}
	r.oracle = over(sa.rows(), sb.rows())
	r.pgCreate = sa.create(sa.in(a.name)) + ";\n" + sb.create(sb.in(b.name)) + ";\nCREATE VIEW " + name + " AS " + r.oracle
	r.pgDrop = "DROP VIEW " + name + "; " + sa.drop() + "; " + sb.drop()
	return r
}

// sessionRows is PostgreSQL's SESSION(rows, ts, gap, part...): the rows
// with a ts, with window_start and window_end of their session, numbered
// by a running count of the gaps (a row gap or more after the previous
// one of its partition starts a session).
func sessionRows(rows, gap string, part []string) string {
	by, bySid := "", "PARTITION BY sid"
	if len(part) > 0 {
		by = "PARTITION BY " + strings.Join(part, ", ")
		bySid = by + ", sid"
	}
	return fmt.Sprintf(`SELECT id, k, s, v, f, ts, min(ts) OVER (%[4]s) AS window_start, max(ts) OVER (%[4]s) + %[2]s AS window_end
FROM (SELECT x.*, sum(CASE WHEN prev IS NOT NULL AND ts - prev < %[2]s THEN 0 ELSE 1 END) OVER (%[3]s ORDER BY ts ROWS UNBOUNDED PRECEDING) AS sid
  FROM (SELECT r.*, lag(ts) OVER (%[3]s ORDER BY ts) AS prev FROM %[1]s AS r WHERE r.ts IS NOT NULL) AS x) AS y`, rows, gap, by, bySid)
}

// sessionAgg aggregates SESSION(src, ts, gap [, partition columns]) by
// window_end (which carries a watermark when ts does), window_start and the
// partition columns. With a watermark the session operator drops the
// changes behind it (one stage, by ts) and its output's window_end carries
// the watermark plus a microsecond: the aggregation's groups become final
// as the sessions do (a second stage, by window_end).
func (g *evGen) sessionAgg(name string, src *evRel) *evRel {
	gap := ivl(pick(g.gen, []time.Duration{time.Second, 2 * time.Second, 3 * time.Second, 5 * time.Second}))
	part := pick(g.gen, [][]string{nil, {"k"}, {"k"}, {"s"}, {"k", "s"}})
	from := "SESSION(" + src.name + ", ts, " + gap
	for _, p := range part {
		from += ", " + p
	}
	from += ")"
	ts := src.col("ts")
	var ss *evStage
	rows := func(f string) string { return f }
	if ts.wm != "" {
		ss = rowStage(name+"_s", src)
		if src.rowsFrom == nil {
			ss.in = nil
		}
		rows = func(string) string { return ss.rows() }
	}
	in := func(f string) string { return sessionRows(rows(f), gap, part) }
	plain := func(f string) string { return sessionRows(f, gap, part) }
	end := groupCol{name: "window_end", kind: kTime}
	if ts.wm != "" {
		end.wm = "(" + ts.wm + " + INTERVAL '1 microsecond')"
	}
	var cands []groupCol
	switch n := g.intn(20); {
	case n < 12:
		cands = []groupCol{{name: "window_start", kind: kTime}, end}
	case n < 17:
		cands = []groupCol{end}
	default:
		cands = []groupCol{{name: "window_start", kind: kTime}}
	}
	for _, p := range part {
		if g.chance(0.85) {
			kind := kNum
			if p == "s" {
				kind = kText
			}
			cands = append(cands, groupCol{name: p, kind: kind})
		}
	}
	r := g.aggregation(name, src, from, in, plain, cands, g.tableAggs(), "a")
	r.kind = "session " + r.kind
	if r.win != nil {
		r.win.in = nil // the aggregation drops no rows: the sessions' are late before it
	}
	if ss != nil {
		r.stages = append([]*evStage{ss}, r.stages...)
		r.pgCreate = ss.create(ss.in0(src.name)) + ";\n" + r.pgCreate
		r.pgDrop += "; " + ss.drop()
	}
	return r
}

// in0 is the stage's input query over f, also for a stage that does not
// count late rows.
func (st *evStage) in0(f string) string {
	if st.in == nil {
		return "SELECT w0.* FROM " + f + " AS w0"
	}
	return st.in(f)
}

// sessionOver computes window aggregates over the sessions of OVER
// (PARTITION BY ... ORDER BY ts SESSION WITH GAP g): rows whose ts is NULL
// are one session per partition. The operator relies on no watermark: its
// model is the same with lag() and a running sum of the gaps.
func (g *evGen) sessionOver(name string, src *evRel) *evRel {
	gap := ivl(pick(g.gen, []time.Duration{time.Second, 2 * time.Second, 3 * time.Second, 5 * time.Second}))
	part := pick(g.gen, []string{"k", "k", "s", "k, s", ""})
	calls := []string{"count(*)", "sum(v)", "min(ts)", "max(ts)", "max(v)", "min(f)", "count(v)", "avg(v)"}
	g.rng.Shuffle(len(calls), func(i, j int) { calls[i], calls[j] = calls[j], calls[i] })
	calls = calls[:1+g.intn(3)]
	items := []string{"id", "k", "v", "ts"}
	cols := []evCol{{name: "id"}, {name: "k"}, {name: "v"}, {name: "ts", kind: kTime}}
	for i, c := range calls {
		n := fmt.Sprintf("w%d", i+1)
		items = append(items, c+" OVER w AS "+n)
		kind := kNum
		if strings.Contains(c, "ts") {
			kind = kTime
		}
		cols = append(cols, evCol{name: n, kind: kind})
	}
	by, bySid := "", "PARTITION BY sid"
	if part != "" {
		by = "PARTITION BY " + part + " "
		bySid = "PARTITION BY " + part + ", sid"
	}
	sel := strings.Join(items, ", ")
	def := fmt.Sprintf("SELECT %s FROM %s WINDOW w AS (%sORDER BY ts SESSION WITH GAP %s)", sel, src.name, by, gap)
	pg := fmt.Sprintf(`SELECT %[1]s FROM (
  SELECT x.*, CASE WHEN ts IS NULL THEN -1 ELSE sum(CASE WHEN prev IS NOT NULL AND ts - prev < %[3]s THEN 0 ELSE 1 END) OVER (%[4]sORDER BY ts ROWS UNBOUNDED PRECEDING) END AS sid
  FROM (SELECT r.*, lag(ts) OVER (%[4]sORDER BY ts) AS prev FROM %[2]s AS r) AS x) AS y
WINDOW w AS (%[5]s)`, sel, src.name, gap, by, bySid)
	r := &evRel{name: name, kind: "session window functions", cols: cols, ssDef: def, oracle: pg, sources: []string{src.name},
		temporal: src.temporal, pgCreate: "CREATE VIEW " + name + " AS " + pg, pgDrop: "DROP VIEW " + name}
	if !src.temporal {
		r.pgPlain = pg
	}
	return r
}

// asofJoin is a ASOF [LEFT] JOIN of a (a table or view of rows) with table
// b, which has a primary key: ties in time go to the largest id for >= and
// >, the smallest for <= and <, as streamsql documents for the stream key.
// Its model is a LATERAL subquery taking the one row in that order.
func (g *evGen) asofJoin(name string, a, b *evRel) *evRel {
	op := pick(g.gen, []string{">=", ">", "<=", "<"})
	order := "b.ts DESC, b.id DESC"
	if op[0] == '<' {
		order = "b.ts, b.id"
	}
	keys := []string{}
	if g.chance(0.85) {
		keys = append(keys, "a.k = b.k")
	}
	if g.chance(0.2) {
		keys = append(keys, "a.s = b.s")
	}
	cmp := "a.ts " + op + " b.ts"
	if g.chance(0.3) {
		cmp = "b.ts " + map[string]string{">=": "<=", ">": "<", "<=": ">=", "<": ">"}[op] + " a.ts"
	}
	on := slices.Clone(keys)
	on = append(on, cmp)
	g.rng.Shuffle(len(on), func(i, j int) { on[i], on[j] = on[j], on[i] })
	items := "a.id AS aid, a.k AS ak, a.ts AS ats, b.id AS bid, b.v AS bv, b.ts AS bts"
	cols := []evCol{{name: "aid"}, {name: "ak"}, {name: "ats", kind: kTime}, {name: "bid"}, {name: "bv"}, {name: "bts", kind: kTime}}
	join, pgJoin := "ASOF JOIN", "JOIN"
	if g.chance(0.4) {
		join, pgJoin = "ASOF LEFT JOIN", "LEFT JOIN"
	}
	def := fmt.Sprintf("SELECT %s FROM %s AS a %s %s AS b ON %s", items, a.name, join, b.name, strings.Join(on, " AND "))
	pg := fmt.Sprintf("SELECT %s FROM %s AS a %s LATERAL (SELECT * FROM %s AS b WHERE %s ORDER BY %s LIMIT 1) AS b ON true",
		items, a.name, pgJoin, b.name, strings.Join(on, " AND "), order)
	r := &evRel{name: name, kind: "ASOF join", cols: cols, ssDef: def, oracle: pg, sources: []string{a.name, b.name},
		temporal: a.temporal, pgCreate: "CREATE VIEW " + name + " AS " + pg, pgDrop: "DROP VIEW " + name}
	if strings.Contains(join, "LEFT") {
		r.kind = "ASOF LEFT join"
	}
	if !a.temporal {
		r.pgPlain = pg
	}
	return r
}
