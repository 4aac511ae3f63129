package engine_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
	"github.com/jackc/pgx/v5"

	"github.com/streamsql/streamsql/internal/testserver"
)

// TestFSSink writes a table's rows to Parquet and a query's to JSON lines
// through inserts, a restart and a simulated kill -9, and checks that the
// published files hold every row exactly once and no partial file is left.
func TestFSSink(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	srv := testserver.Start(t, testserver.Options{Crashable: true})
	c := mustConn(t, srv)
	pq, js := filepath.Join(dir, "pq"), filepath.Join(dir, "js")
	execOK(t, c,
		"CREATE TABLE events (id bigint, kind text, amount numeric, price numeric(10,2)) APPEND ONLY",
		fmt.Sprintf("CREATE SINK s1 FROM events WITH (connector = 'fs', fs.path = '%s') FORMAT PLAIN ENCODE PARQUET", pq),
		fmt.Sprintf("CREATE SINK s2 AS SELECT id, kind FROM events WHERE amount > 1 WITH (connector = 'fs', fs.path = '%s') FORMAT PLAIN ENCODE JSON", js),
		"CREATE TABLE keyed (k int PRIMARY KEY)")
	_, err := c.Exec(ctx, fmt.Sprintf("CREATE SINK bad FROM keyed WITH (connector = 'fs', fs.path = '%s') FORMAT PLAIN ENCODE JSON", js))
	wantSQLState(t, err, "22023")
	_, err = c.Exec(ctx, fmt.Sprintf("CREATE SINK bad FROM events WITH (connector = 'fs', fs.path = '%s') FORMAT PLAIN ENCODE AVRO", js))
	wantSQLState(t, err, "0A000")
	execOK(t, c, fmt.Sprintf("CREATE SINK forced FROM keyed WITH (connector = 'fs', fs.path = '%s', force_append_only = 'true') FORMAT PLAIN ENCODE JSON", filepath.Join(dir, "forced")))

	next := 0
	insert := func(n int) {
		t.Helper()
		for i := 0; i < n; i++ {
			execOK(t, c, fmt.Sprintf("INSERT INTO events VALUES (%d, 'k%d', %d.50, %d.25)", next, next%3, next%4, next))
			next++
		}
	}
	insert(20)
	if err := srv.Restart(); err != nil {
		t.Fatal(err)
	}
	c = mustConn(t, srv)
	insert(15)
	execOK(t, c, "FLUSH")
	if err := srv.Kill(); err != nil {
		t.Fatal(err)
	}
	c = mustConn(t, srv)
	insert(10)
	execOK(t, c, "FLUSH")

	wantAll, wantJSON := map[string]int{}, map[string]int{}
	for i := 0; i < next; i++ {
		wantAll[fmt.Sprintf("%d k%d %d.50 %d.25", i, i%3, i%4, i)] = 1
		if i%4 >= 1 {
			wantJSON[fmt.Sprintf(`{"id":%d,"kind":"k%d"}`, i, i%3)] = 1
		}
	}
	waitFiles(t, "parquet", func() map[string]int { return readParquetRows(t, pq) }, wantAll)
	waitFiles(t, "json", func() map[string]int { return readJSONRows(t, js) }, wantJSON)
	for _, d := range []string{pq, js} {
		entries, _ := os.ReadDir(d)
		for _, e := range entries {
			if !strings.HasPrefix(e.Name(), "part-") {
				t.Errorf("%s: left over file %s", d, e.Name())
			}
		}
	}
}

// waitFiles waits until read returns want (files are published once their
// checkpoint commits, after the FLUSH that made it).
func waitFiles(t *testing.T, what string, read func() map[string]int, want map[string]int) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		got := read()
		if fmt.Sprint(got) == fmt.Sprint(want) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s files hold\n%v\nwant\n%v", what, sortedKeys(got), sortedKeys(want))
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func sortedKeys(m map[string]int) []string {
	var out []string
	for k, n := range m {
		out = append(out, fmt.Sprintf("%s x%d", k, n))
	}
	sort.Strings(out)
	return out
}

// readParquetRows reads every published Parquet file of dir, each row as
// its values joined by spaces, with how often it occurs.
func readParquetRows(t *testing.T, dir string) map[string]int {
	t.Helper()
	rows := map[string]int{}
	files, _ := filepath.Glob(filepath.Join(dir, "part-*.parquet"))
	for _, f := range files {
		pf, err := file.OpenParquetFile(f, false)
		if err != nil {
			t.Fatal(err)
		}
		fr, err := pqarrow.NewFileReader(pf, pqarrow.ArrowReadProperties{}, memory.DefaultAllocator)
		if err != nil {
			t.Fatal(err)
		}
		tbl, err := fr.ReadTable(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		tr := array.NewTableReader(tbl, 1024)
		for tr.Next() {
			rec := tr.RecordBatch()
			for r := 0; r < int(rec.NumRows()); r++ {
				vals := make([]string, rec.NumCols())
				for k := range vals {
					vals[k] = rec.Column(k).ValueStr(r)
				}
				rows[strings.Join(vals, " ")]++
			}
		}
		tr.Release()
		tbl.Release()
		pf.Close()
	}
	return rows
}

// readJSONRows reads every published JSON lines file of dir.
func readJSONRows(t *testing.T, dir string) map[string]int {
	t.Helper()
	rows := map[string]int{}
	files, _ := filepath.Glob(filepath.Join(dir, "part-*.json"))
	for _, f := range files {
		fh, err := os.Open(f)
		if err != nil {
			t.Fatal(err)
		}
		sc := bufio.NewScanner(fh)
		for sc.Scan() {
			if !json.Valid(sc.Bytes()) {
				t.Fatalf("%s: not JSON: %s", f, sc.Text())
			}
			rows[sc.Text()]++
		}
		fh.Close()
	}
	return rows
}

func mustConn(t *testing.T, srv *testserver.Server) *pgx.Conn {
	t.Helper()
	c, err := srv.Conn(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close(context.Background()) })
	return c
}
