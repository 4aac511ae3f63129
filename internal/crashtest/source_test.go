package crashtest

import (
	"context"
	"flag"
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/jackc/pgx/v5"
	"github.com/streamsql/streamsql/connector/datagen"
	"github.com/streamsql/streamsql/types"
)

// The source test: a datagen source whose id column is the sequence 1, 2,
// 3, ... feeds aggregate views, a view over one of them and join views with
// a dimension table that concurrent clients modify. Every view runs its own
// reader of the source, which must deliver each generated row exactly once
// across any number of crashes: at every committed epoch a view equals the
// same query over the first P generated rows, for some P of its own (its
// reader's position), P never goes back, and once the source has produced
// its total and the system is quiet, P is the total for every view.
const (
	// srcKeys is the number of values of the source's k column (0 ..
	// srcKeys-1); the dimension table's keys range over 0 .. dimKeys-1, so
	// some of its rows match no source row.
	srcKeys = 12
	dimKeys = 16
	// dimClients write the dimension table; client c owns the keys k with
	// k % dimClients == c-1.
	dimClients = 2
	// pairsMinV is the filter of the row-level join view (about 5% of the
	// rows pass it).
	pairsMinV = 900
	// srcDefaultSeeds is the number of random seeds when neither -seed nor
	// -seeds is given.
	srcDefaultSeeds = 1
)

// createDim is the dimension table.
const createDim = `CREATE TABLE dim (k int PRIMARY KEY, w bigint NOT NULL, name text NOT NULL)`

// srcViewKind is how a view over the source is checked.
type srcViewKind int

const (
	kindTotals srcViewKind = iota // count(*), sum(id), min(id), max(id), sum(v)
	kindByK                       // the same per k
	kindRollup                    // an aggregate of the kindByK view
	kindJoin                      // LEFT JOIN with dim, grouped by k
	kindPairs                     // row-level inner join with dim, filtered
)

type srcView struct {
	name, query string
	kind        srcViewKind
	// paused is set while the view is paused (ALTER MATERIALIZED VIEW ...
	// PAUSE): its reader stands still, so its P must not change, and a
	// paused join keeps dim's changes for later, so only its columns that
	// do not depend on dim are checked. pausedAt is the P it was seen at
	// while paused, or -1.
	paused   bool
	pausedAt int64
}

func (v *srcView) create() string { return "CREATE MATERIALIZED VIEW " + v.name + " AS " + v.query }

const (
	totalsQuery = "SELECT count(*) AS n, sum(id) AS s, min(id) AS lo, max(id) AS hi, sum(v) AS sv FROM gen"
	joinQuery   = "SELECT g.k, count(*) AS n, sum(g.id) AS s, count(d.k) AS matched, sum(g.v * d.w) AS weighted, " +
		"min(d.name) AS name FROM gen g LEFT JOIN dim d ON g.k = d.k GROUP BY g.k"
)

// srcFixedViews exist from the start, in creation order.
var srcFixedViews = []*srcView{
	{name: "src_totals", kind: kindTotals, query: totalsQuery},
	{name: "src_by_k", kind: kindByK,
		query: "SELECT k, count(*) AS n, sum(id) AS s, sum(v) AS sv, min(v) AS lo, max(v) AS hi FROM gen GROUP BY k"},
	{name: "src_rollup", kind: kindRollup,
		query: "SELECT count(*) AS groups, sum(n) AS n, sum(s) AS s, sum(sv) AS sv FROM src_by_k"},
	{name: "src_join", kind: kindJoin, query: joinQuery},
	{name: "src_pairs", kind: kindPairs,
		query: "SELECT g.id, g.k, g.v, d.w, d.name FROM gen g JOIN dim d ON g.k = d.k WHERE g.v >= " + strconv.Itoa(pairsMinV)},
}

// srcExtraViews are created (with a numeric suffix), paused, resumed and
// dropped during the run: their readers start at the source's first row
// while the others are far ahead, and kills hit the DDL.
var srcExtraViews = []*srcView{
	{name: "x_src_totals", kind: kindTotals, query: totalsQuery},
	{name: "x_src_join", kind: kindJoin, query: joinQuery},
}

// genData is the source's rows as the test's own generator computes them:
// row i (0-based) is (id[i], k[i], v[i]).
type genData struct {
	id, k, v []int64
	// sumV[p] is the sum of v over the first p rows.
	sumV []int64
}

// srcConfig is the source of one seed.
type srcConfig struct {
	rate, total, seed int64
}

func (c srcConfig) options() map[string]string {
	return map[string]string{
		"connector":               "datagen",
		"fields.id.kind":          "sequence",
		"fields.id.start":         "1",
		"fields.k.min":            "0",
		"fields.k.max":            strconv.Itoa(srcKeys - 1),
		"fields.v.min":            "-1000",
		"fields.v.max":            "1000",
		"datagen.rows.per.second": itoa(c.rate),
		"datagen.total.rows":      itoa(c.total),
		"datagen.seed":            itoa(c.seed),
	}
}

func (c srcConfig) createSource() string {
	opts := c.options()
	keys := slices.Sorted(maps.Keys(opts))
	var parts []string
	for _, k := range keys {
		parts = append(parts, fmt.Sprintf("%s = '%s'", k, opts[k]))
	}
	return "CREATE SOURCE gen (id bigint, k int, v bigint) WITH (" + strings.Join(parts, ", ") + ")"
}

// generate runs the connector's generator for the source's rows.
func (c srcConfig) generate() (*genData, error) {
	cols := []datagen.Column{{Name: "id", Type: types.Int64T}, {Name: "k", Type: types.Int32T}, {Name: "v", Type: types.Int64T}}
	g, err := datagen.New(cols, c.options())
	if err != nil {
		return nil, err
	}
	if g.Total != c.total {
		return nil, fmt.Errorf("the generator has %d rows, want %d", g.Total, c.total)
	}
	rec := g.Batch(memory.NewGoAllocator(), 0, c.total)
	defer rec.Release()
	if rec.NumRows() != c.total {
		return nil, fmt.Errorf("the generator made %d rows, want %d", rec.NumRows(), c.total)
	}
	d := &genData{sumV: make([]int64, c.total+1)}
	ids, ks, vs := rec.Column(0).(*array.Int64), rec.Column(1).(*array.Int32), rec.Column(2).(*array.Int64)
	for i := range int(c.total) {
		d.id = append(d.id, ids.Value(i))
		d.k = append(d.k, int64(ks.Value(i)))
		d.v = append(d.v, vs.Value(i))
		d.sumV[i+1] = d.sumV[i] + vs.Value(i)
		if d.id[i] != int64(i+1) || d.k[i] < 0 || d.k[i] >= srcKeys || d.v[i] < -1000 || d.v[i] > 1000 {
			return nil, fmt.Errorf("generated row %d is (%d, %d, %d), outside the declared fields", i, d.id[i], d.k[i], d.v[i])
		}
	}
	return d, nil
}

// kAgg is the aggregate of one k over a prefix of the rows.
type kAgg struct{ n, sumID, sumV, minV, maxV int64 }

// byK aggregates the first p rows per k.
func (d *genData) byK(p int64) map[int64]*kAgg {
	g := map[int64]*kAgg{}
	for i := range p {
		a := g[d.k[i]]
		if a == nil {
			a = &kAgg{minV: d.v[i], maxV: d.v[i]}
			g[d.k[i]] = a
		}
		a.n++
		a.sumID += d.id[i]
		a.sumV += d.v[i]
		a.minV = min(a.minV, d.v[i])
		a.maxV = max(a.maxV, d.v[i])
	}
	return g
}

// nullOr renders v, or NULL when there are no rows to aggregate.
func nullOr(p, v int64) string {
	if p == 0 {
		return "NULL"
	}
	return itoa(v)
}

// totalsRows is the kindTotals view over the first p rows.
func (d *genData) totalsRows(p int64) [][]string {
	return [][]string{{itoa(p), nullOr(p, p*(p+1)/2), nullOr(p, 1), nullOr(p, p), nullOr(p, d.sumV[p])}}
}

func (d *genData) byKRows(p int64) [][]string {
	var rows [][]string
	for k, a := range d.byK(p) {
		rows = append(rows, []string{itoa(k), itoa(a.n), itoa(a.sumID), itoa(a.sumV), itoa(a.minV), itoa(a.maxV)})
	}
	return rows
}

func (d *genData) rollupRows(p int64) [][]string {
	return [][]string{{itoa(int64(len(d.byK(p)))), nullOr(p, p), nullOr(p, p*(p+1)/2), nullOr(p, d.sumV[p])}}
}

// joinRows is the kindJoin view over the first p rows and the dimension
// table dim, restricted to the keys for which keep returns true; with dim
// nil, only its first three columns (which do not depend on dim).
func (d *genData) joinRows(p int64, dim dimModel, keep func(k int64) bool) [][]string {
	var rows [][]string
	for k, a := range d.byK(p) {
		if keep != nil && !keep(k) {
			continue
		}
		row := []string{itoa(k), itoa(a.n), itoa(a.sumID)}
		if dim != nil {
			if r, ok := dim[k]; ok {
				row = append(row, itoa(a.n), itoa(a.sumV*r.w), r.name)
			} else {
				row = append(row, "0", "NULL", "NULL")
			}
		}
		rows = append(rows, row)
	}
	return rows
}

// pairs reports whether row i passes the kindPairs view's filter and join
// (with dim).
func (d *genData) pairs(i int64, dim dimModel) bool {
	_, ok := dim[d.k[i]]
	return d.v[i] >= pairsMinV && ok
}

func parseCount(s string) (int64, error) {
	if s == "NULL" {
		return 0, nil
	}
	return strconv.ParseInt(s, 10, 64)
}

// sumColumn returns the sum of column c over rows (NULL counts as 0).
func sumColumn(rows [][]string, c int) (int64, error) {
	var n int64
	for _, r := range rows {
		if c >= len(r) {
			return 0, fmt.Errorf("row %v has no column %d", r, c+1)
		}
		x, err := parseCount(r[c])
		if err != nil {
			return 0, fmt.Errorf("row %v: %v", r, err)
		}
		n += x
	}
	return n, nil
}

// checkView checks the rows of view v, read from one committed epoch: they
// must equal the view's query over the first P generated rows for some P
// (and over the dimension table dim, unless dim is nil because clients may
// be changing it). It returns the range of such P: one value for the
// aggregates, possibly more for the row-level join, whose content changes
// only with rows that pass its filter.
func (d *genData) checkView(v *srcView, rows [][]string, dim dimModel) (lo, hi int64, err error) {
	total := int64(len(d.id))
	// p is the number of source rows the view's rows count.
	var p int64
	switch v.kind {
	case kindTotals, kindRollup:
		cols, col := 5, 0 // n is the first of 5 columns
		if v.kind == kindRollup {
			cols, col = 4, 1 // n is the second of 4
		}
		if len(rows) != 1 || len(rows[0]) != cols {
			return 0, 0, fmt.Errorf("want one row of %d columns, got %v", cols, firstRows(rows))
		}
		p, err = parseCount(rows[0][col])
	case kindByK, kindJoin:
		p, err = sumColumn(rows, 1)
	case kindPairs:
		return d.checkPairs(rows, dim)
	}
	if err != nil {
		return 0, 0, err
	}
	if p < 0 || p > total {
		return 0, 0, fmt.Errorf("its rows add up to %d source rows, but the source has %d: %v", p, total, firstRows(rows))
	}
	var want [][]string
	trim := false
	switch v.kind {
	case kindTotals:
		want = d.totalsRows(p)
	case kindByK:
		want = d.byKRows(p)
	case kindRollup:
		want = d.rollupRows(p)
	case kindJoin:
		want = d.joinRows(p, dim, nil)
		trim = dim == nil
		for _, r := range rows {
			// Without dim, matched is still all or none of the key's rows.
			if len(r) == 6 && r[3] != "0" && r[3] != r[1] {
				return 0, 0, fmt.Errorf("row %v: matched is neither 0 nor n (a key has one row in dim or none)", r)
			}
		}
	}
	if diff := diffRows(want, rows, trim); diff != "" {
		return 0, 0, fmt.Errorf("it equals the query over no prefix of the generated rows: the row counts say P = %d, "+
			"and against the first %d rows: %s", p, p, diff)
	}
	return p, p, nil
}

// checkPairs checks the row-level join view: every row is a generated row
// that passes the filter, joined with its dim row (when dim is known), no
// generated row appears twice, and (with dim) the rows are exactly those of
// the first P rows for P from the largest id up to the next row that
// would join.
func (d *genData) checkPairs(rows [][]string, dim dimModel) (lo, hi int64, err error) {
	total := int64(len(d.id))
	seen := map[int64]bool{}
	var maxID int64
	for _, r := range rows {
		if len(r) != 5 {
			return 0, 0, fmt.Errorf("row %v: want 5 columns", r)
		}
		id, err := strconv.ParseInt(r[0], 10, 64)
		if err != nil || id < 1 || id > total {
			return 0, 0, fmt.Errorf("row %v: id is not one of the %d generated rows", r, total)
		}
		if seen[id] {
			return 0, 0, fmt.Errorf("generated row %d appears twice: %v", id, r)
		}
		seen[id] = true
		maxID = max(maxID, id)
		i := id - 1
		if r[1] != itoa(d.k[i]) || r[2] != itoa(d.v[i]) || d.v[i] < pairsMinV {
			return 0, 0, fmt.Errorf("row %v: generated row %d is (k %d, v %d)", r, id, d.k[i], d.v[i])
		}
		if dim != nil {
			dr, ok := dim[d.k[i]]
			if !ok {
				return 0, 0, fmt.Errorf("row %v: dim has no row for k %d", r, d.k[i])
			}
			if r[3] != itoa(dr.w) || r[4] != dr.name {
				return 0, 0, fmt.Errorf("row %v: dim's row for k %d is (w %d, name %s)", r, d.k[i], dr.w, dr.name)
			}
		}
	}
	if dim == nil {
		return maxID, total, nil
	}
	var missing []int64
	for i := range maxID {
		if d.pairs(i, dim) && !seen[i+1] {
			missing = append(missing, i+1)
		}
	}
	if len(missing) > 0 {
		return 0, 0, fmt.Errorf("it lacks %d rows that pass its filter and join among the first %d generated rows "+
			"(%d of which it holds), ids %v", len(missing), maxID, len(rows), missing[:min(len(missing), 8)])
	}
	hi = total
	for i := maxID; i < total; i++ {
		if d.pairs(i, dim) {
			hi = i // rows 0..i-1: P = i
			break
		}
	}
	return maxID, hi, nil
}

func firstRows(rows [][]string) string {
	var s []string
	for _, r := range rows[:min(len(rows), 8)] {
		s = append(s, strings.Join(r, "|"))
	}
	if len(rows) > 8 {
		s = append(s, fmt.Sprintf("... %d more", len(rows)-8))
	}
	return "[" + strings.Join(s, "; ") + "]"
}

// dimRow is a row of the dimension table; dimModel maps k to it.
type dimRow struct {
	k, w int64
	name string
}

type dimModel map[int64]dimRow

func (m dimModel) rows() [][]string {
	var rows [][]string
	for _, r := range m {
		rows = append(rows, []string{itoa(r.k), itoa(r.w), r.name})
	}
	return rows
}

// owner returns the client (1-based) that owns key k.
func owner(k int64) int64 { return k%dimClients + 1 }

// dimStmt is a write to the dimension table.
type dimStmt = modelStmt[dimModel]

// dimClient writes the rows of dim it owns, and checks read-your-writes on
// them and on its keys of the join view.
type dimClient struct {
	writer[dimModel]
	id       int64
	rng      *rand.Rand
	nextStmt int64
}

func newDimClient(id int64, seed uint64) *dimClient {
	return &dimClient{
		writer: writer[dimModel]{
			writerLog: writerLog{name: fmt.Sprintf("dim client %d", id)},
			acked:     dimModel{},
			clone:     maps.Clone[dimModel],
		},
		id:  id,
		rng: rand.New(rand.NewPCG(seed, 1000+uint64(id))),
	}
}

// keys returns the client's keys that are (present) or are not (absent)
// in model m, in order.
func (c *dimClient) keys(m dimModel, present bool) []int64 {
	var out []int64
	for k := int64(c.id - 1); k < dimKeys; k += dimClients {
		if _, ok := m[k]; ok == present {
			out = append(out, k)
		}
	}
	return out
}

func (c *dimClient) pick(keys []int64) int64 { return keys[c.rng.IntN(len(keys))] }

// ownKeys is the SQL condition selecting the client's keys.
func (c *dimClient) ownKeys() string { return fmt.Sprintf("k %% %d = %d", dimClients, c.id-1) }

// next returns the client's next unit: one statement, or a few sent as one
// query. It depends only on the client's random stream and model.
func (c *dimClient) next() []dimStmt {
	n := 1
	if c.rng.IntN(8) == 0 {
		n = 2 + c.rng.IntN(2)
	}
	return c.unit(n, c.nextStmt1)
}

func (c *dimClient) nextStmt1() dimStmt {
	c.nextStmt++
	note := fmt.Sprintf("c%ds%d", c.id, c.nextStmt)
	present, absent := c.keys(c.acked, true), c.keys(c.acked, false)
	r := c.rng.IntN(10)
	switch {
	case len(present) == 0 || (r < 3 && len(absent) > 0):
		k, w := c.pick(absent), int64(c.rng.IntN(2001)-1000)
		return dimStmt{
			sql: fmt.Sprintf("INSERT INTO dim VALUES (%d, %d, '%s')", k, w, note),
			apply: func(m dimModel) string {
				m[k] = dimRow{k: k, w: w, name: note}
				return "INSERT 0 1"
			},
		}
	case r < 6:
		k, w := c.pick(present), int64(c.rng.IntN(2001)-1000)
		return dimStmt{
			sql: fmt.Sprintf("UPDATE dim SET w = %d, name = '%s' WHERE k = %d", w, note, k),
			apply: func(m dimModel) string {
				if _, ok := m[k]; !ok {
					return "UPDATE 0"
				}
				m[k] = dimRow{k: k, w: w, name: note}
				return "UPDATE 1"
			},
		}
	case r < 7:
		d := int64(c.rng.IntN(201) - 100)
		return dimStmt{
			sql: fmt.Sprintf("UPDATE dim SET w = w + %d, name = '%s' WHERE %s", d, note, c.ownKeys()),
			apply: func(m dimModel) string {
				for k, r := range m {
					m[k] = dimRow{k: k, w: r.w + d, name: note}
				}
				return fmt.Sprintf("UPDATE %d", len(m))
			},
		}
	case r < 8 && len(absent) > 0:
		// Move a row to another key: a primary key change.
		from, to := c.pick(present), c.pick(absent)
		return dimStmt{
			sql: fmt.Sprintf("UPDATE dim SET k = %d, name = '%s' WHERE k = %d", to, note, from),
			apply: func(m dimModel) string {
				r, ok := m[from]
				if !ok {
					return "UPDATE 0"
				}
				delete(m, from)
				m[to] = dimRow{k: to, w: r.w, name: note}
				return "UPDATE 1"
			},
		}
	case r < 9:
		k := c.pick(present)
		return dimStmt{
			sql: fmt.Sprintf("DELETE FROM dim WHERE k = %d", k),
			apply: func(m dimModel) string {
				if _, ok := m[k]; !ok {
					return "DELETE 0"
				}
				delete(m, k)
				return "DELETE 1"
			},
		}
	default:
		below := int64(c.rng.IntN(1001) - 1000)
		return dimStmt{
			sql: fmt.Sprintf("DELETE FROM dim WHERE %s AND w < %d", c.ownKeys(), below),
			apply: func(m dimModel) string {
				n := 0
				for k, r := range m {
					if r.w < below {
						delete(m, k)
						n++
					}
				}
				return fmt.Sprintf("DELETE %d", n)
			},
		}
	}
}

// run sends units until the cycle stops or the connection breaks (see
// writer.run); one step in eight is a read-your-writes check. Before each
// step it waits a little, so that most barriers are triggered by writes
// but the join views are not flooded with changes.
func (c *dimClient) run(cy *cycle, conn *pgx.Conn, gen *genData) error {
	return c.writer.run(cy, conn, func() ([]dimStmt, error) {
		time.Sleep(time.Duration(c.rng.IntN(8000)) * time.Microsecond)
		if c.rng.IntN(8) == 0 {
			return nil, c.check(cy.ctx, conn, gen)
		}
		return c.next(), nil
	})
}

// check reads the client's dim rows and its keys of the join view: both
// must reflect every acknowledged write (the view at the same prefix of the
// source as the rest of its rows).
func (c *dimClient) check(ctx context.Context, conn *pgx.Conn, gen *genData) error {
	got, err := queryRows(ctx, conn, "SELECT k, w, name FROM dim WHERE "+c.ownKeys())
	if err != nil {
		return err
	}
	if d := diffRows(c.acked.rows(), got, false); d != "" {
		return fmt.Errorf("dim client %d: read-your-writes: dim differs from the acknowledged writes: %s", c.id, d)
	}
	if got, err = queryRows(ctx, conn, "SELECT * FROM src_join"); err != nil {
		return err
	}
	p, err := sumColumn(got, 1)
	if err != nil {
		return err
	}
	if p > int64(len(gen.id)) {
		return fmt.Errorf("dim client %d: src_join counts %d rows, the source has %d", c.id, p, len(gen.id))
	}
	mine := func(k int64) bool { return owner(k) == c.id }
	var own [][]string
	for _, r := range got {
		if k, _ := strconv.ParseInt(r[0], 10, 64); mine(k) {
			own = append(own, r)
		}
	}
	if d := diffRows(gen.joinRows(p, c.acked, mine), own, false); d != "" {
		return fmt.Errorf("dim client %d: read-your-writes: src_join (P = %d) differs on the client's keys from the "+
			"acknowledged dim rows: %s", c.id, p, d)
	}
	return nil
}

// resolve finds which prefix of the pending statements dim's rows of the
// client reflect (see writer.resolvePending).
func (c *dimClient) resolve(rows [][]string) (int, error) {
	p, err := c.resolvePending(func(m dimModel) bool {
		return diffRows(m.rows(), rows, false) == ""
	})
	if err != errNoPrefix {
		return p, err
	}
	return 0, fmt.Errorf("dim client %d: dim matches no state allowed by the history (%d statements in flight): %s",
		c.id, len(c.pending), diffRows(c.acked.rows(), rows, false))
}

// srcHarness runs one seed of the source test on top of the harness's
// server management.
type srcHarness struct {
	*harness
	cfg     srcConfig
	gen     *genData
	dcs     []*dimClient
	views   []*srcView // in creation order
	pending *srcDDL    // DDL in flight at the last kill
	// floor is, per view, the smallest P the view may have from now on:
	// the largest P it was seen at (every read sees a committed epoch).
	floor map[string]int64

	srcStats struct {
		polls, checks          int
		cycleKinds             map[string]int
		inFlight, inFlightDone int
		ddl                    []string
	}
}

type srcDDL struct {
	op   ddlKind
	view *srcView
}

type ddlKind int

const (
	ddlCreate ddlKind = iota
	ddlDrop
	ddlPause
	ddlResume
)

func (d *srcDDL) sql() string {
	switch d.op {
	case ddlCreate:
		return d.view.create()
	case ddlDrop:
		return "DROP MATERIALIZED VIEW " + d.view.name
	case ddlPause:
		return "ALTER MATERIALIZED VIEW " + d.view.name + " PAUSE"
	}
	return "ALTER MATERIALIZED VIEW " + d.view.name + " RESUME"
}

// sourceSeeds returns the seeds of TestSourceCrashRecovery: -seed alone,
// -seeds random ones when given, else srcDefaultSeeds.
func sourceSeeds() []uint64 {
	explicit := false
	flag.Visit(func(f *flag.Flag) { explicit = explicit || f.Name == "seeds" })
	s := seeds()
	if *flagSeed == 0 && !explicit {
		s = s[:min(len(s), srcDefaultSeeds)]
	}
	return s
}

// TestSourceCrashRecovery kills the server with SIGKILL at random moments
// while a paced datagen source feeds aggregate and join views and clients
// change the joined table, restarts it, and checks every view against the
// test's own run of the generator after every restart and at the end (see
// the comment on srcKeys and srcHarness.verify).
func TestSourceCrashRecovery(t *testing.T) {
	cycles := *flagCycles + 3
	if testing.Short() {
		cycles = min(cycles, 3)
	}
	for _, seed := range sourceSeeds() {
		t.Run(fmt.Sprintf("seed=%d", seed), func(t *testing.T) {
			s := newSrcHarness(t, seed, cycles)
			s.start()
			s.setup()
			for range cycles {
				s.workload()
				s.restart()
				s.verify(false)
			}
			s.finish()
			s.logSrcStats()
		})
	}
}

func newSrcHarness(t *testing.T, seed uint64, cycles int) *srcHarness {
	h := newHarness(t, seed)
	s := &srcHarness{harness: h, floor: map[string]int64{}}
	s.srcStats.cycleKinds = map[string]int{}
	// The source: paced so that it is still producing during most cycles
	// (a cycle keeps the server up for about a second), sometimes unpaced.
	s.cfg.seed = int64(h.rng.IntN(1_000_000))
	if h.rng.IntN(6) == 0 {
		s.cfg.rate = 0
		s.cfg.total = int64(10_000 + h.rng.IntN(10_000))
	} else {
		s.cfg.rate = int64(500 + 250*h.rng.IntN(7))
		secs := 0.5 + float64(cycles)*(0.4+0.5*h.rng.Float64())
		s.cfg.total = int64(float64(s.cfg.rate) * secs)
	}
	gen, err := s.cfg.generate()
	if err != nil {
		t.Fatalf("seed %d: running the generator: %v", seed, err)
	}
	s.gen = gen
	for i := range dimClients {
		c := newDimClient(int64(i+1), seed)
		s.dcs = append(s.dcs, c)
		h.writers = append(h.writers, &c.writerLog)
	}
	// Each start may also allow several checkpoints in flight (barriers,
	// and so reader positions, of several epochs under way at once) and
	// make only every n-th barrier of the interval a checkpoint.
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
	t.Logf("seed %d: source of %d rows at %d rows/s (0: unpaced), datagen.seed %d, %d cycles",
		seed, s.cfg.total, s.cfg.rate, s.cfg.seed, cycles)
	t.Cleanup(func() {
		if t.Failed() {
			// The source's size depends on the number of cycles too.
			short := ""
			if testing.Short() {
				short = " -short"
			}
			t.Logf("the schedule depends on the number of cycles as well: go test ./internal/crashtest -run "+
				"'TestSourceCrashRecovery' -seed=%d -cycles=%d%s -v", seed, *flagCycles, short)
		}
	})
	return s
}

// setup creates the dimension table with a few rows per client, the source
// and the fixed views.
func (s *srcHarness) setup() {
	s.t.Helper()
	db := s.session()
	defer db.close()
	db.exec(createDim)
	for _, c := range s.dcs {
		for range 3 + c.rng.IntN(3) {
			st := c.nextStmt1()
			c.history = append(c.history, st.sql)
			if got, want := db.exec(st.sql), st.apply(c.acked); got != want {
				s.fatalf("%s returned %q, want %q", st.sql, got, want)
			}
		}
	}
	db.exec(s.cfg.createSource())
	for _, v := range srcFixedViews {
		db.exec(v.create())
		c := *v
		s.views = append(s.views, &c)
	}
}

// srcKills are the kill plans of TestSourceCrashRecovery's cycles: those
// of TestCrashRecovery and killDuringCommit. Here killAfterAcks kills
// right after the dim clients' acknowledgement number n, and killIdle
// while only the source (and its checkpoints every barrier interval) runs.
var srcKills = killConfig{
	modes:       []killMode{killAfterDelay, killAfterAcks, killDuringCommit, killDuringDDL, killIdle, killDuringShutdown},
	maxDelay:    time.Second,
	maxAcks:     25,
	maxDDLDelay: 400 * time.Millisecond,
	targetWait:  2 * time.Second,
}

// chooseDDL picks an extra view to create, drop, pause or resume.
func (s *srcHarness) chooseDDL() *srcDDL {
	extras := s.views[len(srcFixedViews):]
	var paused, running []*srcView
	for _, v := range extras {
		if v.paused {
			paused = append(paused, v)
		} else {
			running = append(running, v)
		}
	}
	pick := func(vs []*srcView) *srcView { return vs[s.rng.IntN(len(vs))] }
	switch r := s.rng.IntN(6); {
	case len(paused) > 0 && r < 3:
		return &srcDDL{op: ddlResume, view: pick(paused)}
	case len(running) > 0 && r < 2:
		return &srcDDL{op: ddlPause, view: pick(running)}
	case len(extras) >= 2 || (len(extras) > 0 && r < 4):
		return &srcDDL{op: ddlDrop, view: pick(extras)}
	}
	def := *srcExtraViews[s.rng.IntN(len(srcExtraViews))]
	def.name = s.extraName(def.name)
	return &srcDDL{op: ddlCreate, view: &def}
}

func (s *srcHarness) applyDDL(d *srcDDL) {
	switch d.op {
	case ddlCreate:
		s.views = append(s.views, d.view)
	case ddlDrop:
		s.views = slices.DeleteFunc(s.views, func(v *srcView) bool { return v == d.view })
	case ddlPause:
		d.view.paused, d.view.pausedAt = true, -1
	case ddlResume:
		d.view.paused = false
	}
}

// observe checks rows read from view v (dim nil: while clients may change
// dim) and that its P has not gone back; it raises the view's floor.
func (s *srcHarness) observe(v *srcView, rows [][]string, dim dimModel, floor map[string]int64) (lo, hi int64, err error) {
	if v.paused {
		dim = nil
	}
	lo, hi, err = s.gen.checkView(v, rows, dim)
	if err != nil {
		return 0, 0, fmt.Errorf("view %s: %w", v.name, err)
	}
	if f := floor[v.name]; hi < f {
		return 0, 0, fmt.Errorf("view %s went back: it reflects the first %d..%d source rows, but a read of a committed "+
			"epoch already showed %d rows", v.name, lo, hi, f)
	}
	floor[v.name] = max(floor[v.name], lo)
	if v.paused {
		if v.pausedAt >= 0 && lo != v.pausedAt {
			return 0, 0, fmt.Errorf("view %s is paused, but it went from %d source rows to %d", v.name, v.pausedAt, lo)
		}
		v.pausedAt = lo
	}
	return lo, hi, nil
}

// workload runs the dim clients, a monitor that reads the views while they
// run, and maybe one DDL statement, and kills the server at a moment chosen
// by a random kill mode.
func (s *srcHarness) workload() {
	s.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), hangTimeout)
	defer cancel()
	t0 := time.Now()

	// Every random choice of the controller is made here, up front.
	var ddl *srcDDL
	plan := s.planKill(srcKills, func() { ddl = s.chooseDDL() })

	cy := s.newCycle(ctx, plan)
	for _, c := range s.dcs {
		cy.goConn(func(conn *pgx.Conn) error { return c.run(cy, conn, s.gen) })
	}
	// The monitor reads the views (but the one the DDL is about) while the
	// clients write: each read must be a prefix, and P must not go back.
	var watched []*srcView
	for _, v := range s.views {
		if ddl == nil || ddl.view != v {
			watched = append(watched, v)
		}
	}
	cy.goConn(func(conn *pgx.Conn) error {
		for !cy.stop.Load() {
			for _, v := range watched {
				rows, err := queryRows(ctx, conn, "SELECT * FROM "+v.name)
				if err != nil {
					if !cy.killed.Load() {
						return fmt.Errorf("monitor: %w", err)
					}
					return nil
				}
				if _, _, err := s.observe(v, rows, nil, s.floor); err != nil {
					return fmt.Errorf("monitor, while the server runs: %w", err)
				}
				s.srcStats.polls++
			}
			time.Sleep(20 * time.Millisecond)
		}
		return nil
	})
	if ddl != nil {
		cy.goDDL(ddl.sql(), func() { s.pending = ddl }, func() {
			s.applyDDL(ddl)
			s.pending = nil
		})
	}
	cy.end(false)

	s.stats.kills++
	s.srcStats.cycleKinds[plan.mode.String()]++
	inFlight := 0
	for _, c := range s.dcs {
		inFlight += len(c.pending)
	}
	if ddl != nil && cy.ddlOutcome != "in flight" {
		s.srcStats.ddl = append(s.srcStats.ddl, cy.ddlOutcome)
	}
	s.t.Logf("cycle %d (barrier interval %v, %s; started in %v, ran %v): SIGKILL %s: %d statements acknowledged, "+
		"%d in flight, P seen: %s%s",
		s.stats.cycles, s.interval, strings.Join(s.args, " "), s.startupTime.Round(time.Millisecond),
		time.Since(t0).Round(time.Millisecond), plan.mode, cy.acks.Load(), inFlight, s.floors(), cy.ddlNote())
	s.stats.cycles++
}

func (s *srcHarness) floors() string {
	var parts []string
	for _, v := range s.views {
		parts = append(parts, fmt.Sprintf("%s=%d", v.name, s.floor[v.name]))
	}
	return strings.Join(parts, " ")
}

// verify checks the restarted server: dim holds every acknowledged write
// and a prefix of the writes in flight at the kill, the views are the
// known ones, and each view equals its query over the first P generated
// rows and the dim rows, for a P at least the one it was seen at before.
// It returns, per view, the range of P its rows allow (one value but for
// the row-level join). With final set, nothing may change any more, and
// the view over a view must also equal its query run as a batch SELECT.
func (s *srcHarness) verify(final bool) map[string][2]int64 {
	s.t.Helper()
	db := s.session()
	defer db.close()
	query := db.query

	// dim, client by client.
	dimRows := query("SELECT k, w, name FROM dim")
	byOwner := map[int64][][]string{}
	for _, r := range dimRows {
		k, err := strconv.ParseInt(r[0], 10, 64)
		if err != nil || k < 0 || k >= dimKeys {
			s.fatalf("after restart %d: dim holds a row no client writes: %v", s.starts, r)
		}
		byOwner[owner(k)] = append(byOwner[owner(k)], r)
	}
	dim := dimModel{}
	for _, c := range s.dcs {
		s.srcStats.inFlight += len(c.pending)
		applied, err := c.resolve(byOwner[c.id])
		if err != nil {
			s.fatalf("after restart %d: %v%s", s.starts, err, c.recentHistory())
		}
		s.srcStats.inFlightDone += applied
		maps.Copy(dim, c.acked)
	}

	// The sources and the views.
	if got := query("SHOW SOURCES"); len(got) != 1 || got[0][0] != "gen" {
		s.fatalf("after restart %d: SHOW SOURCES = %v, want [gen]", s.starts, got)
	}
	var names []string
	status := map[string]string{}
	for _, r := range query("SELECT name, status FROM streamsql_views") {
		names = append(names, r[0])
		status[r[0]] = r[1]
	}
	if d := s.pending; d != nil {
		applied := false
		switch d.op {
		case ddlCreate:
			applied = slices.Contains(names, d.view.name)
		case ddlDrop:
			applied = !slices.Contains(names, d.view.name)
		case ddlPause:
			applied = status[d.view.name] == "paused"
		case ddlResume:
			applied = status[d.view.name] == "running"
		}
		if applied {
			s.applyDDL(d)
		}
		s.srcStats.ddl = append(s.srcStats.ddl, fmt.Sprintf("in flight, applied: %v", applied))
		s.pending = nil
	}
	var want []string
	for _, v := range s.views {
		want = append(want, v.name)
	}
	s.checkViewNames(names, want)
	if got := query("SHOW MATERIALIZED VIEWS"); len(got) != len(names) {
		s.fatalf("after restart %d: SHOW MATERIALIZED VIEWS = %v, want %v", s.starts, got, names)
	}
	for _, v := range s.views {
		if want := map[bool]string{false: "running", true: "paused"}[v.paused]; status[v.name] != want {
			s.fatalf("after restart %d: view %s is %q, want %q", s.starts, v.name, status[v.name], want)
		}
	}
	for name := range s.floor {
		if !slices.Contains(names, name) {
			delete(s.floor, name) // dropped
		}
	}

	ps := map[string][2]int64{}
	for _, v := range s.views {
		lo, hi, err := s.observe(v, query("SELECT * FROM "+v.name), dim, s.floor)
		if err != nil {
			s.fatalf("after restart %d: %v\n--- dim: %v", s.starts, err, firstRows(dim.rows()))
		}
		ps[v.name] = [2]int64{lo, hi}
		s.srcStats.checks++
		if final && v.kind == kindRollup {
			if d := diffRows(query(v.query), query("SELECT * FROM "+v.name), false); d != "" {
				s.fatalf("view %s differs from its defining query run as a batch SELECT: %s", v.name, d)
			}
		}
	}
	return ps
}

// finish lets every view reach the source's total with the clients stopped
// and checks that it stays there: after a few checkpoints, after a SIGKILL
// and restart, and after a clean shutdown and restart.
func (s *srcHarness) finish() {
	s.t.Helper()
	db := s.session()
	for _, v := range s.views {
		if v.paused {
			d := &srcDDL{op: ddlResume, view: v}
			db.exec(d.sql())
			s.applyDDL(d)
		}
	}
	db.close()
	t0 := time.Now()
	// A view created last reads the whole source at the source's rate;
	// allow twice that, plus slack for a loaded machine.
	limit := 20 * time.Second
	if s.cfg.rate > 0 {
		limit += 2 * time.Duration(s.cfg.total) * time.Second / time.Duration(s.cfg.rate)
	}
	for !s.atTotal(s.verify(false)) {
		if time.Since(t0) > limit {
			s.fatalf("the views did not reach the source's %d rows within %v: %s", s.cfg.total, limit, s.floors())
		}
		time.Sleep(50 * time.Millisecond)
	}
	reached := time.Since(t0)
	// Quiet: a few more checkpoints must change nothing.
	time.Sleep(2*s.interval + 100*time.Millisecond)
	s.checkTotal("with the source finished")

	if err := s.srv.Kill(); err != nil {
		s.fatalf("%v", err)
	}
	s.checkLog(s.srv)
	s.start()
	s.checkTotal("after a SIGKILL with the source finished")
	time.Sleep(s.interval + 50*time.Millisecond)
	s.shutdown()
	s.start()
	s.checkTotal("after a clean shutdown with the source finished")
	s.shutdown()
	s.t.Logf("every view reached the source's %d rows %v after the last restart, and kept them",
		s.cfg.total, reached.Round(time.Millisecond))
}

// atTotal reports whether the P of every view can be the source's total
// (for the aggregates: is the total).
func (s *srcHarness) atTotal(ps map[string][2]int64) bool {
	for _, v := range s.views {
		if r := ps[v.name]; r[0] > s.cfg.total || r[1] < s.cfg.total {
			return false
		}
	}
	return true
}

// checkTotal verifies that every view reflects exactly the whole source.
func (s *srcHarness) checkTotal(when string) {
	s.t.Helper()
	ps := s.verify(true)
	if !s.atTotal(ps) {
		s.fatalf("%s: the views do not all reflect the source's %d rows: %v", when, s.cfg.total, ps)
	}
}

func (s *srcHarness) logSrcStats() {
	n := s.counts()
	s.t.Logf("seed %d: %d cycles %v, %d during startup, %d starts; dim: %d of %d statements acknowledged, %d in flight "+
		"at kills of which %d applied, %d read-your-writes checks; %d monitor reads, %d view checks after restarts; DDL: %v",
		s.seed, s.stats.cycles, s.srcStats.cycleKinds, s.stats.startupKills, s.starts, n.ackedStatements, n.statements,
		s.srcStats.inFlight, s.srcStats.inFlightDone, n.checks, s.srcStats.polls, s.srcStats.checks, s.srcStats.ddl)
}
