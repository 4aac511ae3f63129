package engine_test

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/streamsql/streamsql/connector/datagen"
	"github.com/streamsql/streamsql/connector/nexmark"
	"github.com/streamsql/streamsql/internal/testserver"
	"github.com/streamsql/streamsql/types"
)

// splitViews are views over sources of four splits, each with the query
// that recomputes it over tables holding the same rows (nb.bid, nb.dg).
var splitViews = []struct{ name, def, check string }{
	{"nx", "SELECT auction, bidder, price * 2 AS p2, date_time FROM bid WHERE price % 3 <> 0",
		"SELECT auction, bidder, price * 2 AS p2, date_time FROM nb.bid WHERE price % 3 <> 0"},
	{"dg", "SELECT id, v + 1 AS w, s FROM dg WHERE v < 700",
		"SELECT id, v + 1 AS w, s FROM nb.dg WHERE v < 700"},
	// The readers' rows exchanged to an aggregation.
	{"dgagg", "SELECT v % 10 AS g, count(*) AS n, sum(id) AS s FROM dg GROUP BY v % 10",
		"SELECT v % 10 AS g, count(*) AS n, sum(id) AS s FROM nb.dg GROUP BY v % 10"},
}

// TestSplitSourceReaders reads a nexmark and a datagen source of four
// splits into views at parallelism 1 and 4 (whose readers share the
// splits), kills the server (kill -9) while they read, rescales the views
// at parallelism 4 to 2 and then 3, with another kill in between (one of
// them paused until the second rescale), and
// checks that every view then holds exactly the rows of its query over the
// same rows generated into tables: each split resumes at its checkpointed
// position whatever reader reads it.
func TestSplitSourceReaders(t *testing.T) {
	n, m := int64(8_000), int64(6_000)
	if raceEnabled {
		n, m = 3_000, 3_000
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	srv := testserver.Start(t, testserver.Options{Crashable: true, BarrierInterval: 20 * time.Millisecond})
	conn, err := srv.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	mustExec(ctx, t, conn, "CREATE SCHEMA nb", "SET search_path = nb")
	loadTables(ctx, t, conn, append(bidTable(t, nexmarkTables(t, n)), datagenTable(t, m)))
	mustExec(ctx, t, conn, "SET search_path = public")
	for _, ddl := range nexmark.SourceDDL(nexmark.SourceOptions{EventNum: n, Splits: 4,
		Extra: fmt.Sprintf("nexmark.event.rate = '%d', nexmark.min.event.gap.in.ns = '1000000', nexmark.max.chunk.size = '64'", nexmarkRate)}) {
		mustExec(ctx, t, conn, ddl)
	}
	mustExec(ctx, t, conn, fmt.Sprintf("CREATE SOURCE dg (id bigint, v int, s text) WITH (%s, datagen.split.num = '4', datagen.rows.per.second = '3000')", datagenOptions(m)))
	for _, p := range []int{1, 4} {
		mustExec(ctx, t, conn, fmt.Sprintf("SET streaming_parallelism = %d", p))
		for _, v := range splitViews {
			mustExec(ctx, t, conn, fmt.Sprintf("CREATE MATERIALIZED VIEW %s%d AS %s", v.name, p, v.def))
		}
	}
	plan := strings.Join(queryRows(ctx, t, conn, "EXPLAIN SELECT * FROM nx4"), "\n")
	explain := strings.Join(queryRows(ctx, t, conn, "EXPLAIN CREATE MATERIALIZED VIEW x AS "+splitViews[0].def), "\n")
	if !strings.Contains(explain, "Fragment 0 { actors: 4, reads: sources, splits shared among 4 readers }") {
		t.Fatalf("EXPLAIN of a view over a source of 4 splits at parallelism 4:\n%s\n(%s)", explain, plan)
	}
	// dg4 is paused across the first kill and rescale: its readers stop at
	// the pausing barrier and start from there after the resume.
	mustExec(ctx, t, conn, "ALTER MATERIALIZED VIEW dg4 PAUSE")
	conn.Close(ctx)
	for _, p := range []int{2, 3} {
		time.Sleep(400 * time.Millisecond)
		if err := srv.Kill(); err != nil {
			t.Fatal(err)
		}
		conn, err := srv.Conn(ctx)
		if err != nil {
			t.Fatal(err)
		}
		for _, v := range splitViews {
			mustExec(ctx, t, conn, fmt.Sprintf("ALTER MATERIALIZED VIEW %s4 SET PARALLELISM %d", v.name, p))
		}
		if p == 3 {
			mustExec(ctx, t, conn, "ALTER MATERIALIZED VIEW dg4 RESUME")
		}
		conn.Close(ctx)
	}
	conn, err = srv.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	var partial int64
	if err := conn.QueryRow(ctx, "SELECT count(*) FROM dg4").Scan(&partial); err != nil {
		t.Fatal(err)
	}
	for _, v := range splitViews {
		want := queryRows(ctx, t, conn, v.check)
		for _, p := range []int{1, 4} {
			view := fmt.Sprintf("%s%d", v.name, p)
			deadline := time.Now().Add(time.Minute)
			for {
				got := queryRows(ctx, t, conn, "SELECT * FROM "+view)
				if slices.Equal(got, want) {
					break
				}
				if time.Now().After(deadline) || len(got) > len(want) {
					t.Fatalf("%s after kills and rescales:\n%s", view, diffRows(got, want))
				}
				time.Sleep(100 * time.Millisecond)
			}
		}
	}
	t.Logf("dg4 had %d rows after the kills and rescales", partial)
}

// bidTable returns the bid table of tables.
func bidTable(t *testing.T, tables []nexmarkTable) []nexmarkTable {
	for _, tab := range tables {
		if tab.name == "bid" {
			return []nexmarkTable{tab}
		}
	}
	t.Fatal("no bid table")
	return nil
}

// datagenOptions are the options of the test's datagen source of m rows
// (and of its table).
func datagenOptions(m int64) string {
	return fmt.Sprintf("connector = 'datagen', datagen.total.rows = '%d', datagen.seed = '3', fields.id.kind = 'sequence', fields.v.min = '0', fields.v.max = '999', fields.s.length = '4'", m)
}

// datagenTable generates the rows of the test's datagen source in one
// split, as the table dg.
func datagenTable(t *testing.T, m int64) nexmarkTable {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	opts := map[string]string{"connector": "datagen", "datagen.total.rows": strconv.FormatInt(m, 10), "datagen.seed": "3",
		"fields.id.kind": "sequence", "fields.v.min": "0", "fields.v.max": "999", "fields.s.length": "4"}
	cols := []datagen.Column{{Name: "id", Type: types.Int64T}, {Name: "v", Type: types.Int32T}, {Name: "s", Type: types.TextT}}
	g, err := datagen.New(cols, opts)
	if err != nil {
		t.Fatal(err)
	}
	rec := g.Batch(mem, 0, m)
	defer rec.Release()
	tab := nexmarkTable{name: "dg", cols: []nexmark.Column{{Name: "id", Type: types.Int64T}, {Name: "v", Type: types.Int32T}, {Name: "s", Type: types.TextT}}}
	for i := 0; i < int(rec.NumRows()); i++ {
		s := rec.Column(2).(*array.String).Value(i)
		tab.rows = append(tab.rows, []string{
			strconv.FormatInt(rec.Column(0).(*array.Int64).Value(i), 10),
			strconv.FormatInt(int64(rec.Column(1).(*array.Int32).Value(i)), 10),
			"'" + strings.ReplaceAll(s, "'", "''") + "'",
		})
	}
	return tab
}
