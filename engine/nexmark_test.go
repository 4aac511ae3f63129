package engine_test

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/jackc/pgx/v5"
	"github.com/streamsql/streamsql/connector/nexmark"
	"github.com/streamsql/streamsql/internal/pgtest"
	"github.com/streamsql/streamsql/internal/testserver"
)

var nexmarkEvents = flag.Int("nexmark.events", 0, "events of TestNexmarkQueries (default 20,000; 5,000 with -short, 2,000 with -race)")

// nexmarkRate is the sources' event rate in the test: 500 events per
// second of event time spread the events over tens of seconds, so that the
// windowed queries see many windows.
const nexmarkRate = 500

// TestNexmarkQueries runs every Nexmark query as a materialized view over
// nexmark sources (two splits each) and compares each view, once its
// sources are consumed, with the same query run as a batch SELECT over
// tables holding the same events, and, where PostgreSQL is installed, with
// PostgreSQL's answer over those tables (windowed queries rewritten with
// date_bin and generate_series).
func TestNexmarkQueries(t *testing.T) {
	n := nexmarkN()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	views, tables := verifyNexmark(ctx, t, n, nexmark.SourceOptions{Splits: 2}, nexmark.Queries)
	t.Run("postgresql", func(t *testing.T) {
		pg, err := pgtest.Start(pgtest.Options{Settings: map[string]string{"timezone": "UTC"}})
		if errors.Is(err, pgtest.ErrNotInstalled) {
			t.Skip(err)
		}
		if err != nil {
			t.Fatal(err)
		}
		defer pg.Stop()
		pconn, err := pgx.Connect(ctx, pg.URL)
		if err != nil {
			t.Fatal(err)
		}
		defer pconn.Close(ctx)
		loadTables(ctx, t, pconn, tables)
		for _, q := range nexmark.Queries {
			got, ok := views[q.Name]
			if !ok {
				continue
			}
			cols := q.Columns()
			want := queryRows(ctx, t, pconn, "SELECT "+cols+" FROM ("+postgresDialect(q.Select())+") q")
			if !slices.Equal(normalize(got), normalize(want)) {
				t.Errorf("%s differs from PostgreSQL:\n%s", q.Name, diffRows(normalize(got), normalize(want)))
			}
		}
	})
}

// TestNexmarkWatermark runs every query over sources that declare RisingWave's
// watermark (date_time - 4 seconds), which lets windowed aggregations and
// joins clean their state.
func TestNexmarkWatermark(t *testing.T) {
	if testing.Short() {
		t.Skip("TestNexmarkQueries covers the queries in -short")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	verifyNexmark(ctx, t, nexmarkN()/2, nexmark.SourceOptions{Splits: 4, Watermark: true}, nexmark.Queries)
}

// TestNexmarkCombined runs queries over RisingWave's combined form: one
// source of every event, with a watermark and three splits, and views
// person, auction and bid over it.
func TestNexmarkCombined(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	var qs []nexmark.Query
	for _, name := range []string{"q0", "q3", "q4", "q5", "q7", "q8", "q9", "q15", "q101", "q104"} {
		q, _ := nexmark.QueryNamed(name)
		qs = append(qs, q)
	}
	verifyNexmark(ctx, t, nexmarkN()/2, nexmark.SourceOptions{Combined: true, Splits: 3, Watermark: true}, qs)
}

func nexmarkN() int {
	switch {
	case *nexmarkEvents > 0:
		return *nexmarkEvents
	case raceEnabled:
		return 2_000
	case testing.Short():
		return 5_000
	}
	return 20_000
}

// verifyNexmark creates the nexmark sources of n events and opts and a view
// per query on a new server, and compares each view, once its sources are
// consumed, with the same query run as a batch SELECT over tables holding
// the same events. It returns the views' rows and the tables.
func verifyNexmark(ctx context.Context, t *testing.T, n int, opts nexmark.SourceOptions, queries []nexmark.Query) (map[string][]string, []nexmarkTable) {
	srv := testserver.Start(t, testserver.Options{BarrierInterval: 20 * time.Millisecond})
	conn, err := srv.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	batch, err := srv.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer batch.Close(ctx)

	tables := nexmarkTables(t, int64(n))
	mustExec(ctx, t, batch, "CREATE SCHEMA nb", "SET search_path = nb")
	loadTables(ctx, t, batch, tables)
	opts.EventNum = int64(n)
	opts.Extra = fmt.Sprintf("nexmark.event.rate = '%d'", nexmarkRate)
	for _, ddl := range nexmark.SourceDDL(opts) {
		mustExec(ctx, t, conn, ddl)
	}
	start := time.Now()
	for _, q := range queries {
		mustExec(ctx, t, conn, q.SQL)
	}
	views := map[string][]string{}
	for _, q := range queries {
		t.Run(q.Name, func(t *testing.T) {
			cols, from := q.Columns(), "("+q.Select()+") q"
			want := queryRows(ctx, t, batch, "SELECT "+cols+" FROM "+from)
			deadline := time.Now().Add(2 * time.Minute)
			for wait := 20 * time.Millisecond; ; wait = min(2*wait, 500*time.Millisecond) {
				got := queryRows(ctx, t, conn, "SELECT "+cols+" FROM "+q.View())
				if slices.Equal(got, want) {
					views[q.Name] = got
					t.Logf("%s: %d rows", q.Name, len(got))
					return
				}
				if time.Now().After(deadline) {
					t.Fatalf("view differs from the batch query:\n%s", diffRows(got, want))
				}
				time.Sleep(wait)
			}
		})
	}
	t.Logf("%d events, %d of %d queries verified in %v", n, len(views), len(queries), time.Since(start).Round(time.Millisecond))
	return views, tables
}

// nexmarkTable is the events of one table type as SQL literals.
type nexmarkTable struct {
	name string
	cols []nexmark.Column
	rows [][]string
}

// nexmarkTables generates the first n events as rows of literals.
func nexmarkTables(t *testing.T, n int64) []nexmarkTable {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	var out []nexmarkTable
	for _, table := range []string{"person", "auction", "bid"} {
		cfg, err := nexmark.ParseOptions(map[string]string{"nexmark.table.type": table,
			"nexmark.event.num": strconv.FormatInt(n, 10), "nexmark.event.rate": strconv.Itoa(nexmarkRate)})
		if err != nil {
			t.Fatal(err)
		}
		g := nexmark.New(cfg)
		rec := g.Batch(mem, 0, 0, g.SplitRows(0))
		tab := nexmarkTable{name: table, cols: nexmark.Columns(cfg.Table)}
		for i := 0; i < int(rec.NumRows()); i++ {
			row := make([]string, len(tab.cols))
			for c := range tab.cols {
				switch col := rec.Column(c).(type) {
				case *array.Int64:
					row[c] = strconv.FormatInt(col.Value(i), 10)
				case *array.String:
					row[c] = "'" + strings.ReplaceAll(col.Value(i), "'", "''") + "'"
				case *array.Timestamp:
					row[c] = "'" + time.UnixMicro(int64(col.Value(i))).UTC().Format("2006-01-02 15:04:05.000000") + "'"
				default:
					t.Fatalf("column %s: %T", tab.cols[c].Name, col)
				}
			}
			tab.rows = append(tab.rows, row)
		}
		rec.Release()
		out = append(out, tab)
	}
	return out
}

// loadTables creates the tables in conn's first schema and inserts their
// rows.
func loadTables(ctx context.Context, t *testing.T, conn *pgx.Conn, tables []nexmarkTable) {
	for _, tab := range tables {
		var ddl strings.Builder
		fmt.Fprintf(&ddl, "CREATE TABLE %s (", tab.name)
		for i, c := range tab.cols {
			if i > 0 {
				ddl.WriteString(", ")
			}
			ddl.WriteString(c.Name + " " + c.Type.String())
		}
		ddl.WriteString(")")
		mustExec(ctx, t, conn, ddl.String())
		for first := 0; first < len(tab.rows); first += 1000 {
			var ins strings.Builder
			fmt.Fprintf(&ins, "INSERT INTO %s VALUES ", tab.name)
			for i, row := range tab.rows[first:min(first+1000, len(tab.rows))] {
				if i > 0 {
					ins.WriteString(", ")
				}
				ins.WriteString("(" + strings.Join(row, ", ") + ")")
			}
			mustExec(ctx, t, conn, ins.String())
		}
	}
}

func mustExec(ctx context.Context, t *testing.T, conn *pgx.Conn, stmts ...string) {
	t.Helper()
	for _, s := range stmts {
		if _, err := conn.Exec(ctx, s); err != nil {
			if len(s) > 300 {
				s = s[:300] + "..."
			}
			t.Fatalf("%s: %v", s, err)
		}
	}
}

// queryRows returns the rows of q as sorted text lines.
func queryRows(ctx context.Context, t *testing.T, conn *pgx.Conn, q string) []string {
	t.Helper()
	rows, err := conn.Query(ctx, q, pgx.QueryResultFormats{pgx.TextFormatCode})
	if err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var b strings.Builder
		for i, v := range rows.RawValues() {
			if i > 0 {
				b.WriteByte('|')
			}
			if v == nil {
				b.WriteString("NULL")
			} else {
				b.Write(v)
			}
		}
		out = append(out, b.String())
	}
	if err := rows.Err(); err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	slices.Sort(out)
	return out
}

// normalize prints decimal numbers with 12 significant digits, so that
// numeric display scales do not matter, and sorts again.
func normalize(rows []string) []string {
	out := make([]string, len(rows))
	for i, r := range rows {
		vals := strings.Split(r, "|")
		for j, v := range vals {
			if strings.Contains(v, ".") {
				if f, err := strconv.ParseFloat(v, 64); err == nil {
					vals[j] = strconv.FormatFloat(f, 'g', 12, 64)
				}
			}
		}
		out[i] = strings.Join(vals, "|")
	}
	slices.Sort(out)
	return out
}

// diffRows describes the difference of two sorted row lists.
func diffRows(got, want []string) string {
	var only, missing []string
	i, j := 0, 0
	for i < len(got) || j < len(want) {
		switch {
		case j == len(want) || (i < len(got) && got[i] < want[j]):
			only = append(only, got[i])
			i++
		case i == len(got) || want[j] < got[i]:
			missing = append(missing, want[j])
			j++
		default:
			i++
			j++
		}
	}
	cut := func(rs []string) []string { return rs[:min(len(rs), 5)] }
	return fmt.Sprintf("%d rows, want %d; %d extra, e.g. %q; %d missing, e.g. %q", len(got), len(want), len(only), cut(only), len(missing), cut(missing))
}

var (
	tumbleRe = regexp.MustCompile(`TUMBLE\((\w+), (\w+), INTERVAL '(\d+)' SECOND\)`)
	hopRe    = regexp.MustCompile(`HOP\((\w+), (\w+), INTERVAL '(\d+)' SECOND, INTERVAL '(\d+)' SECOND\)`)
)

// postgresDialect rewrites LIMIT ... WITH TIES, TUMBLE and HOP for
// PostgreSQL: a tumbling
// window is date_bin of the time; the hopping windows of a row are the
// slide-aligned starts in (time - size, time].
func postgresDialect(q string) string {
	q = strings.ReplaceAll(q, "LIMIT 1000 WITH TIES", "FETCH FIRST 1000 ROWS WITH TIES")
	q = tumbleRe.ReplaceAllString(q, `(SELECT w.*, date_bin(interval '$3 seconds', w.$2, timestamp '1970-01-01') AS window_start,
		date_bin(interval '$3 seconds', w.$2, timestamp '1970-01-01') + interval '$3 seconds' AS window_end FROM $1 w) AS tumble_$1`)
	return hopRe.ReplaceAllString(q, `(SELECT w.*, ws AS window_start, ws + interval '$4 seconds' AS window_end
		FROM $1 w, generate_series(date_bin(interval '$3 seconds', w.$2, timestamp '1970-01-01') - interval '$4 seconds' + interval '$3 seconds',
			date_bin(interval '$3 seconds', w.$2, timestamp '1970-01-01'), interval '$3 seconds') AS ws) AS hop_$1`)
}

// TestNexmarkSourceReplay kills the server (kill -9) while paced nexmark
// sources with several splits and a watermark are being read, twice, and
// checks that the views then hold exactly the events, each once: every
// split resumes from its checkpointed position, and no row is late for a
// windowed aggregation.
func TestNexmarkSourceReplay(t *testing.T) {
	n := int64(10_000)
	if raceEnabled {
		n = 4_000
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	srv := testserver.Start(t, testserver.Options{Crashable: true, BarrierInterval: 20 * time.Millisecond})
	conn, err := srv.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	tables := nexmarkTables(t, n)
	mustExec(ctx, t, conn, "CREATE SCHEMA nb", "SET search_path = nb")
	loadTables(ctx, t, conn, tables)
	mustExec(ctx, t, conn, "SET search_path = public")
	// About 2,800 bids a second over three splits: a few seconds to read.
	for _, ddl := range nexmark.SourceDDL(nexmark.SourceOptions{EventNum: n, Splits: 3, Watermark: true,
		Extra: fmt.Sprintf("nexmark.event.rate = '%d', nexmark.min.event.gap.in.ns = '1000000', nexmark.max.chunk.size = '64'", nexmarkRate)}) {
		mustExec(ctx, t, conn, ddl)
	}
	mustExec(ctx, t, conn,
		"CREATE MATERIALIZED VIEW bids AS SELECT * FROM bid",
		"CREATE MATERIALIZED VIEW people AS SELECT * FROM person",
		"CREATE MATERIALIZED VIEW per_auction AS SELECT auction, count(*) AS n, sum(price) AS s FROM bid GROUP BY auction",
		"CREATE MATERIALIZED VIEW per_window AS SELECT window_start, count(*) AS n FROM TUMBLE(auction, date_time, INTERVAL '2' SECOND) GROUP BY window_start")
	conn.Close(ctx)
	for kill := 0; kill < 2; kill++ {
		time.Sleep(700 * time.Millisecond)
		if err := srv.Kill(); err != nil {
			t.Fatal(err)
		}
	}
	conn, err = srv.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	var partial int64
	if err := conn.QueryRow(ctx, "SELECT count(*) FROM bids").Scan(&partial); err != nil {
		t.Fatal(err)
	}
	if partial >= n*46/50 {
		t.Logf("the source was read before the kills (%d bids)", partial)
	}
	for _, c := range []struct{ view, want string }{
		{"bids", "nb.bid"},
		{"people", "nb.person"},
		{"per_auction", "(SELECT auction, count(*) AS n, sum(price) AS s FROM nb.bid GROUP BY auction) q"},
		{"per_window", "(SELECT date_bin('2 seconds', date_time, '1970-01-01') AS window_start, count(*) AS n FROM nb.auction GROUP BY 1) q"},
	} {
		want := queryRows(ctx, t, conn, "SELECT * FROM "+c.want)
		deadline := time.Now().Add(time.Minute)
		for {
			got := queryRows(ctx, t, conn, "SELECT * FROM "+c.view)
			if slices.Equal(got, want) {
				break
			}
			if time.Now().After(deadline) || len(got) > len(want) {
				t.Fatalf("%s after kills:\n%s", c.view, diffRows(got, want))
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
	t.Logf("%d of %d bids read before the last kill", partial, n*46/50)
}
