package slt

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/streamsql/streamsql/internal/pgtest"
)

var schemaCount int // subtests run sequentially

// newDB creates a schema named after the test on pg and returns a URL whose
// sessions use it: each subtest gets its own tables.
func newDB(t *testing.T, pg *pgtest.Server) string {
	t.Helper()
	schemaCount++
	name := strings.ToLower(regexp.MustCompile(`[^A-Za-z0-9]+`).ReplaceAllString(t.Name(), "_"))
	name = fmt.Sprintf("%.50s_%d", name, schemaCount)
	ctx := context.Background()
	conn, err := pgconn.Connect(ctx, pg.URL)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, fmt.Sprintf(`CREATE SCHEMA "%s"`, name)).ReadAll(); err != nil {
		t.Fatal(err)
	}
	return pg.URL + "&search_path=" + name
}

// writeFile writes an inline test file and returns its path.
func writeFile(t *testing.T, text string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "inline.slt")
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// expectedFailures reads the "# fails: TEXT" markers of a test file: each
// names the failure expected at the line after it.
func expectedFailures(t *testing.T, path string) map[int]string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	want := map[int]string{}
	sc := bufio.NewScanner(f)
	for line := 1; sc.Scan(); line++ {
		if text, ok := strings.CutPrefix(sc.Text(), "# fails: "); ok {
			want[line+1] = text
		}
	}
	return want
}

func TestPostgres(t *testing.T) {
	pg := pgtest.StartT(t, pgtest.Options{})
	ctx := context.Background()

	t.Run("own database", func(t *testing.T) {
		// Two files that each create t pass one after the other on one
		// server only if each runs in a database of its own.
		dir := t.TempDir()
		var files []string
		for _, name := range []string{"a-1.slt", "b.slt"} {
			path := filepath.Join(dir, name)
			text := "statement ok\nCREATE TABLE t (a int)\n\nquery T\nSELECT current_database()\n----\nslt_" + strings.NewReplacer("-", "_", ".slt", "").Replace(name) + "\n"
			if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
				t.Fatal(err)
			}
			files = append(files, path)
		}
		var out bytes.Buffer
		results, err := Run(ctx, files, Options{URL: pg.URL, OwnDatabase: true}, &out)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range results {
			if r.Failed > 0 || r.Passed != 2 {
				t.Errorf("own databases: %s", out.String())
			}
		}
		out.Reset()
		if results, _ = Run(ctx, files, Options{URL: newDB(t, pg)}, &out); results[1].Failed == 0 {
			t.Errorf("the second file passed in a shared database:\n%s", out.String())
		}
	})

	t.Run("pass", func(t *testing.T) {
		var verbose bytes.Buffer
		res, err := RunFile(ctx, "testdata/pass.slt", Options{URL: newDB(t, pg), Verbose: &verbose})
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range res.Failures {
			t.Errorf("unexpected failure:\n%s", f)
		}
		if res.Passed != 31 || res.Failed != 0 || res.Skipped != 2 {
			t.Errorf("passed %d, failed %d, skipped %d; want 31, 0, 2", res.Passed, res.Failed, res.Skipped)
		}
		for _, want := range []string{
			`testdata/pass.slt: engine "postgresql"`,
			"testdata/pass.slt:4: statement ok\n    CREATE TABLE t (a int, b text)\n",
			"testdata/pass.slt:114: statement ok skipped\n",
			"(connection writer)",
		} {
			if !strings.Contains(verbose.String(), want) {
				t.Errorf("verbose output lacks %q:\n%s", want, verbose.String())
			}
		}
		if strings.Contains(verbose.String(), "NOT SQL EITHER") {
			t.Errorf("a record after halt ran")
		}
	})

	t.Run("fail", func(t *testing.T) {
		const path = "testdata/fail.slt"
		want := expectedFailures(t, path)
		res, err := RunFile(ctx, path, Options{URL: newDB(t, pg)})
		if err != nil {
			t.Fatal(err)
		}
		if res.Failed != len(want) || len(res.Failures) != len(want) || res.Passed != 5 {
			t.Errorf("passed %d, failed %d (%d failures); want 5 passed, %d failed",
				res.Passed, res.Failed, len(res.Failures), len(want))
		}
		for _, f := range res.Failures {
			text, ok := want[f.Line]
			if !ok {
				t.Errorf("unexpected failure at line %d:\n%s", f.Line, f)
				continue
			}
			delete(want, f.Line)
			if !strings.Contains(f.Message, text) || f.File != path || f.SQL == "" {
				t.Errorf("failure at line %d does not mention %q:\n%s", f.Line, text, f)
			}
		}
		for line, text := range want {
			t.Errorf("no failure at line %d (%s)", line, text)
		}
	})

	t.Run("run output", func(t *testing.T) {
		var out bytes.Buffer
		results, err := Run(ctx, []string{"testdata/pass.slt", "testdata/fail.slt"}, Options{URL: newDB(t, pg)}, &out)
		if err != nil {
			t.Fatal(err)
		}
		if len(results) != 2 || results[0].Failed != 0 || results[1].Failed != 12 {
			t.Fatalf("results %+v", results)
		}
		got := out.String()
		for _, want := range []string{
			"ok   testdata/pass.slt  31 passed, 2 skipped\n",
			"FAIL testdata/fail.slt  5 passed, 12 failed\n",
			"    testdata/fail.slt:38:\n        SELECT a FROM f ORDER BY a DESC\n        query result differs (nosort, 2 rows)\n" +
				"        expected:\n            1\n            2\n        actual:\n            2\n            1\n",
			"FAIL 2 files, 1 failed  36 passed, 12 failed, 2 skipped\n",
		} {
			if !strings.Contains(got, want) {
				t.Errorf("output lacks %q:\n%s", want, got)
			}
		}
		if !strings.HasSuffix(got, "FAIL 2 files, 1 failed  36 passed, 12 failed, 2 skipped\n") {
			t.Errorf("output does not end with the total line:\n%s", got)
		}
	})

	t.Run("engine option", func(t *testing.T) {
		path := writeFile(t, `onlyif streamsql
statement ok
SELECT 1

skipif streamsql
statement ok
SELECT nope

skipif postgresql
statement ok
SELECT 1
`)
		res, err := RunFile(ctx, path, Options{URL: newDB(t, pg), Engine: "StreamSQL"})
		if err != nil || res.Passed != 2 || res.Skipped != 1 || res.Failed != 0 {
			t.Errorf("got %+v, %v; want 2 passed, 1 skipped", res, err)
		}
	})

	t.Run("restart callback", func(t *testing.T) {
		url, other := newDB(t, pg), newDB(t, pg)
		calls := 0
		restart := func(ctx context.Context) (string, error) {
			calls++
			if calls == 1 {
				return other, nil // reconnect elsewhere
			}
			return "", nil // keep the URL
		}
		name := other[strings.LastIndex(other, "=")+1:]
		path := writeFile(t, `statement ok
CREATE TEMP TABLE tmp (a int)

connection second
statement ok
CREATE TEMP TABLE tmp (a int)

restart

statement error 42P01
SELECT * FROM tmp

connection second
statement error 42P01
SELECT * FROM tmp

query T
SHOW search_path
----
`+name+`

restart

query T
SHOW search_path
----
`+name+`
`)
		res, err := RunFile(ctx, path, Options{URL: url, Restart: restart})
		if err != nil || res.Failed != 0 || res.Passed != 6 {
			t.Fatalf("got %+v, %v; want 6 passed", res, err)
		}
		if calls != 2 {
			t.Errorf("Restart called %d times, want 2", calls)
		}
	})

	t.Run("restart failure stops the file", func(t *testing.T) {
		path := writeFile(t, `statement ok
SELECT 1

restart

statement ok
SELECT 1
`)
		boom := errors.New("boom")
		res, err := RunFile(ctx, path, Options{URL: newDB(t, pg),
			Restart: func(context.Context) (string, error) { return "", boom }})
		if !errors.Is(err, boom) {
			t.Fatalf("err = %v, want boom", err)
		}
		if res.Passed != 1 || res.Failed != 1 || res.Failures[0].Line != 4 ||
			!strings.Contains(res.Failures[0].Message, "stopped: restarting the server: boom") {
			t.Errorf("got %+v", res)
		}
	})

	t.Run("lost session", func(t *testing.T) {
		// The server ends the session: the record sees the error, and the
		// next record reconnects.
		path := writeFile(t, `statement ok
SET application_name = 'before'

statement error 57P01
SELECT pg_terminate_backend(pg_backend_pid())

query T
SHOW application_name
----
(empty)
`)
		res, err := RunFile(ctx, path, Options{URL: newDB(t, pg)})
		if err != nil || res.Failed != 0 || res.Passed != 3 {
			t.Fatalf("got %+v, %v; want 3 passed", res, err)
		}
	})

	t.Run("timeout", func(t *testing.T) {
		path := writeFile(t, `statement ok
SELECT pg_sleep(60)

query I
SELECT 1
----
1
`)
		res, err := RunFile(ctx, path, Options{URL: newDB(t, pg), Timeout: 100 * time.Millisecond})
		if err != nil || res.Failed != 1 || res.Passed != 1 ||
			!strings.Contains(res.Failures[0].Message, "timed out after 100ms") {
			t.Fatalf("got %+v, %v; want the sleep to time out and the query to pass", res, err)
		}
	})

	// Last, as it restarts the server under every subtest.
	t.Run("restart postgres", func(t *testing.T) {
		path := writeFile(t, `statement ok
CREATE TABLE t (a int)

statement count 2
INSERT INTO t VALUES (1), (2)

restart

query I
SELECT count(*) FROM t
----
2
`)
		restarts := 0
		res, err := RunFile(ctx, path, Options{URL: newDB(t, pg),
			Restart: func(context.Context) (string, error) { restarts++; return "", pg.Restart() }})
		if err != nil || res.Failed != 0 || res.Passed != 3 || restarts != 1 {
			t.Fatalf("got %+v, %v, %d restarts", res, err, restarts)
		}
	})
}

func TestUnreachableServer(t *testing.T) {
	path := writeFile(t, "statement ok\nSELECT 1\n")
	// Port 1 on loopback: nothing listens there.
	res, err := RunFile(context.Background(), path, Options{URL: "postgres://postgres@127.0.0.1:1/postgres?sslmode=disable"})
	if err == nil || !strings.Contains(err.Error(), "connecting to the server") {
		t.Fatalf("err = %v", err)
	}
	if res.Failed != 1 || res.Failures[0].Line != 1 {
		t.Errorf("got %+v", res)
	}
}

func TestParseErrorStopsFile(t *testing.T) {
	path := writeFile(t, "statement ok\nSELECT 1\n\nnonsense\n")
	var out bytes.Buffer
	results, err := Run(context.Background(), []string{path}, Options{URL: "postgres://unused"}, &out)
	if err == nil || !strings.Contains(err.Error(), path+":4: unknown record type") {
		t.Fatalf("err = %v", err)
	}
	if len(results) != 1 || results[0].Passed != 0 {
		t.Errorf("results %+v", results)
	}
	if !strings.Contains(out.String(), "FAIL "+path+"  0 passed\n    stopped: "+path+":4: unknown record type") {
		t.Errorf("output:\n%s", out.String())
	}
}

func TestFiles(t *testing.T) {
	dir := t.TempDir()
	for _, f := range []string{"b.slt", "a/z.slt", "a/y.slt", "a/notes.txt"} {
		p := filepath.Join(dir, f)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got, err := Files(dir, filepath.Join(dir, "*.slt"), filepath.Join(dir, "a", "notes.txt"))
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"a/y.slt", "a/z.slt", "b.slt", "b.slt", "a/notes.txt"}
	for i := range want {
		want[i] = filepath.Join(dir, want[i])
	}
	if strings.Join(got, ",") != strings.Join(want, ",") {
		t.Errorf("Files = %q, want %q", got, want)
	}
	if _, err := Files(filepath.Join(dir, "*.sql")); err == nil {
		t.Error("a pattern matching nothing is not an error")
	}
	if _, err := Files(filepath.Join(dir, "missing.slt")); err == nil {
		t.Error("a missing file is not an error")
	}
}
