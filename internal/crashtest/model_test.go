package crashtest

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strconv"
	"strings"
)

// The schema: acct has a primary key, events a hidden row id. Every row
// belongs to one client (column client), and only that client writes it, so
// a client's rows follow its own statements exactly.
const (
	createAcct = `CREATE TABLE acct (id bigint PRIMARY KEY, client int NOT NULL, grp int NOT NULL, ` +
		`amount bigint NOT NULL, note varchar NOT NULL)`
	createEvents = `CREATE TABLE events (client int NOT NULL, seq bigint NOT NULL, grp int NOT NULL, ` +
		`val bigint NOT NULL, tag text NOT NULL)`
	selectAcct   = `SELECT id, client, grp, amount, note FROM acct`
	selectEvents = `SELECT client, seq, grp, val, tag FROM events`
)

type acctRow struct {
	id          int64
	client, grp int64
	amount      int64
	note        string
}

func (r acctRow) cells() []string {
	return []string{itoa(r.id), itoa(r.client), itoa(r.grp), itoa(r.amount), r.note}
}

type eventRow struct {
	client, seq int64
	grp         int64
	val         int64
	tag         string
}

func (r eventRow) cells() []string {
	return []string{itoa(r.client), itoa(r.seq), itoa(r.grp), itoa(r.val), r.tag}
}

// tables is the content of both tables: all of it, or one client's part.
// acct is keyed by id, events by seq (the workload never reuses a seq).
type tables struct {
	acct   map[int64]acctRow
	events map[int64]eventRow
}

func newTables() *tables {
	return &tables{acct: map[int64]acctRow{}, events: map[int64]eventRow{}}
}

func (t *tables) clone() *tables {
	return &tables{acct: maps.Clone(t.acct), events: maps.Clone(t.events)}
}

// merge adds u's rows to t.
func (t *tables) merge(u *tables) {
	maps.Copy(t.acct, u.acct)
	maps.Copy(t.events, u.events)
}

func (t *tables) acctRows() [][]string {
	var rows [][]string
	for _, r := range t.acct {
		rows = append(rows, r.cells())
	}
	return rows
}

func (t *tables) eventRows() [][]string {
	var rows [][]string
	for _, r := range t.events {
		rows = append(rows, r.cells())
	}
	return rows
}

// sortedAcct returns the acct rows in id order.
func (t *tables) sortedAcct() []acctRow {
	rows := slices.Collect(maps.Values(t.acct))
	slices.SortFunc(rows, func(a, b acctRow) int { return cmp.Compare(a.id, b.id) })
	return rows
}

// sortedEvents returns the events rows in seq order.
func (t *tables) sortedEvents() []eventRow {
	rows := slices.Collect(maps.Values(t.events))
	slices.SortFunc(rows, func(a, b eventRow) int { return cmp.Compare(a.seq, b.seq) })
	return rows
}

// viewDef is a materialized view the test creates, with a client-side
// computation of its content.
type viewDef struct {
	name  string
	query string // the defining SELECT
	// perClient views have client as their first column, and their rows for
	// client c depend only on client c's rows, so a client can check its
	// slice while others write.
	perClient bool
	// model computes the view's rows from table content; its rows hold the
	// first len(row) columns of the view (columns after those, such as
	// avg(), are checked only against the batch query).
	model func(t *tables) [][]string
}

func (v *viewDef) create() string {
	return "CREATE MATERIALIZED VIEW " + v.name + " AS " + v.query
}

// fixedViews exist from the start, in creation order (views over views come
// after their inputs).
var fixedViews = slices.Concat(aggViews, joinViews)

// aggViews are the fixed views over one relation.
var aggViews = []*viewDef{
	{
		name:      "acct_by_client",
		query:     "SELECT client, grp, count(*) AS n, sum(amount) AS total, min(amount) AS lo, max(amount) AS hi FROM acct GROUP BY client, grp",
		perClient: true,
		model: func(t *tables) [][]string {
			g := map[[2]int64]*agg{}
			for _, r := range t.acct {
				aggFor(g, [2]int64{r.client, r.grp}).add(r.amount, "")
			}
			return aggRows(g, func(a *agg) []string { return []string{itoa(a.n), itoa(a.sum), itoa(a.min), itoa(a.max)} })
		},
	},
	{
		name:      "acct_big",
		query:     "SELECT client, id, amount, note FROM acct WHERE amount >= 500",
		perClient: true,
		model: func(t *tables) [][]string {
			var rows [][]string
			for _, r := range t.acct {
				if r.amount >= 500 {
					rows = append(rows, []string{itoa(r.client), itoa(r.id), itoa(r.amount), r.note})
				}
			}
			return rows
		},
	},
	{
		name:      "big_by_client",
		query:     "SELECT client, count(*) AS n, sum(amount) AS total, max(amount) AS hi FROM acct_big GROUP BY client",
		perClient: true,
		model: func(t *tables) [][]string {
			g := map[[2]int64]*agg{}
			for _, r := range t.acct {
				if r.amount >= 500 {
					aggFor(g, [2]int64{r.client}).add(r.amount, "")
				}
			}
			return aggRows(g, func(a *agg) []string { return []string{itoa(a.n), itoa(a.sum), itoa(a.max)} }, 1)
		},
	},
	{
		name: "events_by_client",
		query: "SELECT client, grp, count(*) AS n, sum(val) AS total, min(val) AS lo, max(val) AS hi, " +
			"count(DISTINCT tag) AS tags FROM events GROUP BY client, grp",
		perClient: true,
		model: func(t *tables) [][]string {
			g := map[[2]int64]*agg{}
			for _, r := range t.events {
				aggFor(g, [2]int64{r.client, r.grp}).add(r.val, r.tag)
			}
			return aggRows(g, func(a *agg) []string {
				return []string{itoa(a.n), itoa(a.sum), itoa(a.min), itoa(a.max), itoa(int64(len(a.distinct)))}
			})
		},
	},
	{
		name:      "events_tags",
		query:     "SELECT DISTINCT client, tag FROM events",
		perClient: true,
		model: func(t *tables) [][]string {
			set := map[string][]string{}
			for _, r := range t.events {
				row := []string{itoa(r.client), r.tag}
				set[strings.Join(row, "|")] = row
			}
			return slices.Collect(maps.Values(set))
		},
	},
	{
		name: "events_client_totals",
		query: "SELECT client, sum(n) AS n, sum(total) AS total, min(lo) AS lo, max(hi) AS hi " +
			"FROM events_by_client GROUP BY client",
		perClient: true,
		model: func(t *tables) [][]string {
			g := map[[2]int64]*agg{}
			for _, r := range t.events {
				aggFor(g, [2]int64{r.client}).add(r.val, "")
			}
			return aggRows(g, func(a *agg) []string { return []string{itoa(a.n), itoa(a.sum), itoa(a.min), itoa(a.max)} }, 1)
		},
	},
	{
		name:  "events_busy_groups",
		query: "SELECT grp, count(*) AS n, sum(val) AS total, avg(val) AS mean FROM events GROUP BY grp HAVING count(*) > 20",
		model: func(t *tables) [][]string {
			g := map[[2]int64]*agg{}
			for _, r := range t.events {
				aggFor(g, [2]int64{r.grp}).add(r.val, "")
			}
			var rows [][]string
			for _, row := range aggRows(g, func(a *agg) []string { return []string{itoa(a.n), itoa(a.sum)} }, 1) {
				if n, _ := strconv.Atoi(row[1]); n > 20 {
					rows = append(rows, row)
				}
			}
			return rows
		},
	},
}

// extraViews are created and dropped while the workload runs (the name gets
// a numeric suffix), to crash in the middle of DDL and backfills.
var extraViews = slices.Concat(extraAggViews, extraJoinViews)

// extraAggViews are the extra views over one relation.
var extraAggViews = []*viewDef{
	{
		name:  "x_acct_grp",
		query: "SELECT grp, count(*) AS n, max(amount) AS hi, min(note) AS first_note FROM acct GROUP BY grp",
		model: func(t *tables) [][]string {
			g := map[[2]int64]*agg{}
			notes := map[int64]string{}
			for _, r := range t.acct {
				aggFor(g, [2]int64{r.grp}).add(r.amount, "")
				if n, ok := notes[r.grp]; !ok || r.note < n {
					notes[r.grp] = r.note
				}
			}
			rows := aggRows(g, func(a *agg) []string { return []string{itoa(a.n), itoa(a.max)} }, 1)
			for i, row := range rows {
				g, _ := strconv.ParseInt(row[0], 10, 64)
				rows[i] = append(row, notes[g])
			}
			return rows
		},
	},
	{
		name:  "x_negative",
		query: "SELECT client, seq, val FROM events WHERE val < 0",
		model: func(t *tables) [][]string {
			var rows [][]string
			for _, r := range t.events {
				if r.val < 0 {
					rows = append(rows, []string{itoa(r.client), itoa(r.seq), itoa(r.val)})
				}
			}
			return rows
		},
	},
	{
		name:  "x_grp_clients",
		query: "SELECT grp, count(DISTINCT client) AS clients, sum(val) AS total FROM events GROUP BY grp",
		model: func(t *tables) [][]string {
			g := map[[2]int64]*agg{}
			for _, r := range t.events {
				aggFor(g, [2]int64{r.grp}).add(r.val, itoa(r.client))
			}
			return aggRows(g, func(a *agg) []string { return []string{itoa(int64(len(a.distinct))), itoa(a.sum)} }, 1)
		},
	},
	{
		name:  "x_best_group",
		query: "SELECT client, max(total) AS best, count(*) AS groups FROM acct_by_client GROUP BY client",
		model: func(t *tables) [][]string {
			g := map[[2]int64]*agg{}
			for _, r := range t.acct {
				aggFor(g, [2]int64{r.client, r.grp}).add(r.amount, "")
			}
			best := map[[2]int64]*agg{}
			for k, a := range g {
				aggFor(best, [2]int64{k[0]}).add(a.sum, "")
			}
			return aggRows(best, func(a *agg) []string { return []string{itoa(a.max), itoa(a.n)} }, 1)
		},
	},
	{
		name:  "x_acct_grps",
		query: "SELECT DISTINCT grp FROM acct WHERE amount < 500",
		model: func(t *tables) [][]string {
			set := map[int64]bool{}
			for _, r := range t.acct {
				if r.amount < 500 {
					set[r.grp] = true
				}
			}
			var rows [][]string
			for g := range set {
				rows = append(rows, []string{itoa(g)})
			}
			return rows
		},
	},
}

// agg accumulates count, sum, min, max and distinct values of one group.
type agg struct {
	n, sum, min, max int64
	distinct         map[string]bool
}

func aggFor(g map[[2]int64]*agg, k [2]int64) *agg {
	a := g[k]
	if a == nil {
		a = &agg{distinct: map[string]bool{}}
		g[k] = a
	}
	return a
}

func (a *agg) add(v int64, distinct string) {
	if a.n == 0 || v < a.min {
		a.min = v
	}
	if a.n == 0 || v > a.max {
		a.max = v
	}
	a.n++
	a.sum += v
	if distinct != "" {
		a.distinct[distinct] = true
	}
}

// aggRows renders groups as rows: the first keyCols (default 2) key
// columns, then out(a).
func aggRows(g map[[2]int64]*agg, out func(*agg) []string, keyCols ...int) [][]string {
	nk := 2
	if len(keyCols) > 0 {
		nk = keyCols[0]
	}
	var rows [][]string
	for k, a := range g {
		row := []string{itoa(k[0]), itoa(k[1])}[:nk]
		rows = append(rows, append(row, out(a)...))
	}
	return rows
}

func itoa(v int64) string { return strconv.FormatInt(v, 10) }

// diffRows compares two multisets of rows, the rows of got cut to the width
// of want's rows when trim is set. It returns "" when they are equal, else a
// description of at most a few missing and unexpected rows.
func diffRows(want, got [][]string, trim bool) string {
	count := map[string]int{}
	for _, r := range want {
		count[strings.Join(r, "|")]++
	}
	width := -1
	if trim && len(want) > 0 {
		width = len(want[0])
	}
	for _, r := range got {
		if width >= 0 && len(r) > width {
			r = r[:width]
		}
		count[strings.Join(r, "|")]--
	}
	var missing, extra []string
	for k, n := range count {
		for ; n > 0; n-- {
			missing = append(missing, k)
		}
		for ; n < 0; n++ {
			extra = append(extra, k)
		}
	}
	if len(missing) == 0 && len(extra) == 0 {
		return ""
	}
	sort.Strings(missing)
	sort.Strings(extra)
	return fmt.Sprintf("%d rows expected, %d found; missing %d: %s; unexpected %d: %s",
		len(want), len(got), len(missing), firstFew(missing), len(extra), firstFew(extra))
}

func firstFew(rows []string) string {
	const n = 8
	if len(rows) > n {
		return "[" + strings.Join(rows[:n], "; ") + fmt.Sprintf("; ... %d more]", len(rows)-n)
	}
	return "[" + strings.Join(rows, "; ") + "]"
}
