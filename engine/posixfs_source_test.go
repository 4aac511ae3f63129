package engine_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/streamsql/streamsql/internal/testserver"
)

// writeFileAtomically writes data to dir/name as a writer of a posix_fs
// source must: under a hidden name, then renamed.
func writeFileAtomically(t testing.TB, dir, name string, data []byte) {
	t.Helper()
	tmp := filepath.Join(dir, "."+name+".tmp")
	if err := os.WriteFile(tmp, data, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, filepath.Join(dir, name)); err != nil {
		t.Fatal(err)
	}
}

// fsFileData returns a file of rows ids [first, first+n) with k = id % 7,
// in encoding enc.
func fsFileData(t testing.TB, enc string, first, n int) []byte {
	t.Helper()
	var buf bytes.Buffer
	switch enc {
	case "csv":
		buf.WriteString("k,id\n")
		for id := first; id < first+n; id++ {
			fmt.Fprintf(&buf, "%d,%d\n", id%7, id)
		}
	case "json":
		for id := first; id < first+n; id++ {
			fmt.Fprintf(&buf, "{\"id\": %d, \"k\": %d}\n", id, id%7)
		}
	case "parquet":
		schema := arrow.NewSchema([]arrow.Field{
			{Name: "id", Type: arrow.PrimitiveTypes.Int64},
			{Name: "k", Type: arrow.PrimitiveTypes.Int32},
		}, nil)
		b := array.NewRecordBuilder(memory.DefaultAllocator, schema)
		defer b.Release()
		for id := first; id < first+n; id++ {
			b.Field(0).(*array.Int64Builder).Append(int64(id))
			b.Field(1).(*array.Int32Builder).Append(int32(id % 7))
		}
		rec := b.NewRecordBatch()
		defer rec.Release()
		w, err := pqarrow.NewFileWriter(schema, &buf, parquet.NewWriterProperties(parquet.WithMaxRowGroupLength(1500)), pqarrow.DefaultWriterProps())
		if err != nil {
			t.Fatal(err)
		}
		if err := w.Write(rec); err != nil {
			t.Fatal(err)
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
	}
	return buf.Bytes()
}

// TestPosixFSSourceExactlyOnce writes CSV, JSON and Parquet files into
// three directories while the server is killed (as by kill -9) in the
// middle of a file and restarted, and checks that the views over the three
// sources count every row of every file once, and that each file is listed
// as done.
func TestPosixFSSourceExactlyOnce(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	encs := []string{"csv", "json", "parquet"}
	dirs := map[string]string{}
	for _, enc := range encs {
		dirs[enc] = t.TempDir()
	}
	srv := testserver.Start(t, testserver.Options{Crashable: true, BarrierInterval: 10 * time.Millisecond})
	conn, err := srv.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, enc := range encs {
		mustExec(ctx, t, conn,
			fmt.Sprintf(`CREATE SOURCE s_%s (id bigint, k int) WITH (connector = 'posix_fs', posix_fs.root = '%s',
				match_pattern = '*.%s', refresh.interval.sec = '0.05') FORMAT PLAIN ENCODE %s`, enc, dirs[enc], enc, strings.ToUpper(enc)),
			fmt.Sprintf("CREATE MATERIALIZED VIEW totals_%s AS SELECT count(*) AS n, sum(id) AS s FROM s_%s", enc, enc),
			fmt.Sprintf("CREATE MATERIALIZED VIEW by_k_%s AS SELECT k, count(*) AS n FROM s_%s GROUP BY k", enc, enc))
	}
	// A view with much state makes its reader slow, for the kills to land
	// in the middle of its files.
	mustExec(ctx, t, conn, "CREATE MATERIALIZED VIEW distinct_csv AS SELECT count(DISTINCT id) AS d FROM s_csv")
	var mu sync.Mutex
	written, files := 0, 0
	writeFiles := func() {
		mu.Lock()
		defer mu.Unlock()
		n := 500 + (files*7919)%3000 // files span several batches
		if files%4 == 3 {
			n = 12000 // and some take a while, for the kills to land in
		}
		for _, enc := range encs {
			writeFileAtomically(t, dirs[enc], fmt.Sprintf("part-%05d.%s", files, enc), fsFileData(t, enc, written+1, n))
		}
		written += n
		files++
	}
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			select {
			case <-done:
				return
			case <-time.After(20 * time.Millisecond):
			}
			if files < 16 {
				writeFiles()
			}
		}
	}()
	midFile := 0
	for kill := 0; kill < 4; kill++ {
		time.Sleep(100 * time.Millisecond)
		// Kill while a view is in the middle of a file, once a checkpoint
		// has committed since it started the file, if one gets there.
		const mid = "SELECT count(*) > 0 FROM streamsql_source_files WHERE NOT done AND records_read > 100"
		const epoch = "SELECT coalesce(max(epoch), 0) FROM streamsql_checkpoints WHERE status = 'completed'"
		for deadline := time.Now().Add(3 * time.Second); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
			if kafkaRows(ctx, t, conn, mid) == "true" {
				e := kafkaRows(ctx, t, conn, epoch)
				for kafkaRows(ctx, t, conn, epoch) == e && time.Now().Before(deadline) {
					time.Sleep(5 * time.Millisecond)
				}
				if kafkaRows(ctx, t, conn, mid) == "true" {
					midFile++
				}
				break
			}
		}
		conn.Close(ctx)
		if err := srv.Kill(); err != nil {
			t.Fatal(err)
		}
		if conn, err = srv.Conn(ctx); err != nil {
			t.Fatal(err)
		}
	}
	close(done)
	wg.Wait()
	n := written
	for _, enc := range encs {
		waitFor(ctx, t, conn, fmt.Sprintf("SELECT n, s::bigint FROM totals_%s", enc), fmt.Sprintf("%d %d", n, n*(n+1)/2))
		waitFor(ctx, t, conn, fmt.Sprintf("SELECT sum(n)::bigint, count(*) FROM by_k_%s", enc), fmt.Sprintf("%d 7", n))
	}
	waitFor(ctx, t, conn, "SELECT d FROM distinct_csv", fmt.Sprint(n))
	t.Logf("%d files of %d rows in each encoding, 4 kills, %d of them in the middle of a file", files, n, midFile)
	waitFor(ctx, t, conn, "SELECT source, count(*), count(*) FILTER (WHERE done) FROM streamsql_source_files WHERE view LIKE 'totals%' GROUP BY source ORDER BY source",
		fmt.Sprintf("s_csv %d %d;s_json %d %d;s_parquet %d %d", files, files, files, files, files, files))

	// A clean restart resumes too, and picks up a new file.
	conn.Close(ctx)
	if err := srv.Restart(); err != nil {
		t.Fatal(err)
	}
	if conn, err = srv.Conn(ctx); err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	writeFiles()
	n = written
	for _, enc := range encs {
		waitFor(ctx, t, conn, fmt.Sprintf("SELECT n, s::bigint FROM totals_%s", enc), fmt.Sprintf("%d %d", n, n*(n+1)/2))
	}
}

// TestPosixFSSourceBadRecords: bad records are skipped, counted and
// logged, or fail the source with error.policy = 'fail', which stays at
// the bad line.
func TestPosixFSSourceBadRecords(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	dir := t.TempDir()
	srv := testserver.Start(t, testserver.Options{})
	conn, err := srv.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	opts := fmt.Sprintf("connector = 'posix_fs', posix_fs.root = '%s', refresh.interval.sec = '0.05'", dir)
	mustExec(ctx, t, conn,
		"CREATE SOURCE skipping (id int, at timestamp, WATERMARK FOR at AS at - INTERVAL '1' SECOND) WITH ("+opts+", match_pattern = '*.json') FORMAT PLAIN ENCODE JSON",
		"CREATE SOURCE failing (id int) WITH ("+opts+", match_pattern = '*.csv', error.policy = 'fail') FORMAT PLAIN ENCODE CSV (without_header = 'true', delimiter = ';')",
		"CREATE MATERIALIZED VIEW ok AS SELECT sum(id) AS s, count(*) AS n FROM skipping",
		"CREATE MATERIALIZED VIEW stops AS SELECT count(*) AS n FROM failing")
	writeFileAtomically(t, dir, "a.json", []byte(`{"id": 1, "at": "2024-01-01 00:00:00"}
{"id": "one"}
{
{"id": 2, "at": "2024-01-01 00:00:05"}
`))
	writeFileAtomically(t, dir, "a.csv", []byte("1\n2\nthree\n4\n"))
	waitFor(ctx, t, conn, "SELECT s, n FROM ok", "3 2")
	waitFor(ctx, t, conn, "SELECT name, bad_records, status FROM streamsql_sources WHERE name = 'skipping'", "skipping 2 running")
	deadline := time.Now().Add(20 * time.Second)
	for {
		_, err := conn.Exec(ctx, "SELECT * FROM stops")
		if err != nil {
			if !strings.Contains(err.Error(), "file a.csv line 3") || !strings.Contains(err.Error(), "error.policy") {
				t.Fatalf("got %v", err)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the view over the failing source did not fail")
		}
		time.Sleep(20 * time.Millisecond)
	}
	// It stays at the bad line (the third: two lines read, four bytes).
	waitFor(ctx, t, conn, "SELECT source, file, bytes_read, records_read, done FROM streamsql_source_files WHERE view = 'stops'", "failing a.csv 4 2 false")
	// The other view goes on with new files.
	writeFileAtomically(t, dir, "b.json", []byte(`{"id": 10}`))
	waitFor(ctx, t, conn, "SELECT s, n FROM ok", "13 3")
}

// TestPosixFSSourceCreateErrors: bad options fail CREATE SOURCE with the
// documented SQLSTATEs.
func TestPosixFSSourceCreateErrors(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	dir := t.TempDir()
	file := filepath.Join(dir, "f.csv")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	srv := testserver.Start(t, testserver.Options{})
	conn, err := srv.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	for _, c := range []struct{ with, format, code, msg string }{
		{"posix_fs.root = '" + dir + "', nope = '1'", "ENCODE CSV", "22023", `unknown posix_fs source option "nope"`},
		{"match_pattern = '*.csv'", "ENCODE CSV", "22023", "needs the option posix_fs.root"},
		{"posix_fs.root = '" + dir + "/none'", "ENCODE CSV", "58P01", "does not exist"},
		{"posix_fs.root = '" + file + "'", "ENCODE CSV", "22023", "is not a directory"},
		{"posix_fs.root = '" + dir + "'", "ENCODE AVRO", "0A000", "ENCODE AVRO"},
		{"posix_fs.root = '" + dir + "', match_pattern = 'a/*'", "ENCODE JSON", "22023", "match_pattern"},
	} {
		q := fmt.Sprintf("CREATE SOURCE a (id int) WITH (connector = 'posix_fs', %s) FORMAT PLAIN %s", c.with, c.format)
		_, err := conn.Exec(ctx, q)
		pe, ok := err.(*pgconn.PgError)
		if !ok || pe.Code != c.code || !strings.Contains(pe.Message, c.msg) {
			t.Errorf("%s: got %v, want %s %q", q, err, c.code, c.msg)
		}
	}
	if got := kafkaRows(ctx, t, conn, "SELECT count(*) FROM streamsql_sources"); got != "0" {
		t.Errorf("%s sources after failed CREATEs", got)
	}
}
