package engine_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/streamsql/streamsql/internal/testserver"
)

// TestCopy drives COPY FROM STDIN and TO STDOUT as drivers do: pgx's
// CopyFrom (binary format) and pgconn's CopyFrom/CopyTo with text and csv
// data, whose expected output is what PostgreSQL 15 prints for the same
// statements.
func TestCopy(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	srv := testserver.Start(t, testserver.Options{})
	conn := connectMode(t, ctx, srv.URL, pgx.QueryExecModeSimpleProtocol)
	exec := func(sql string) {
		t.Helper()
		if _, err := conn.Exec(ctx, sql); err != nil {
			t.Fatalf("%s: %v", sql, err)
		}
	}
	copyIn := func(sql, data string) (int64, error) {
		t.Helper()
		tag, err := conn.PgConn().CopyFrom(ctx, strings.NewReader(data), sql)
		return tag.RowsAffected(), err
	}
	copyOut := func(sql string) string {
		t.Helper()
		var buf bytes.Buffer
		if _, err := conn.PgConn().CopyTo(ctx, &buf, sql); err != nil {
			t.Fatalf("%s: %v", sql, err)
		}
		return buf.String()
	}

	t.Run("binary, pgx CopyFrom", func(t *testing.T) {
		exec("CREATE TABLE every (" + allTypesColumns + ")")
		exec("CREATE MATERIALIZED VIEW every_count AS SELECT count(*) AS n, count(s) AS s FROM every")
		full := allTypesRow{k: 1, b: ptr(true), i2: ptr(int16(-32768)), i8: ptr(int64(9_000_000_000)), f4: ptr(float32(1.5)), f8: ptr(0.1),
			n: numeric(t, "12345678901234567890.123456789"), n2: numeric(t, "-1234.5"), s: ptr("tab\there 'q' \\ \"x\"\nline"), vc: ptr("abc")}
		rows := [][]any{full.args(), (&allTypesRow{k: 2}).args()}
		for k := 3; k <= 5000; k++ {
			rows = append(rows, (&allTypesRow{k: int32(k), s: ptr(fmt.Sprint(k))}).args())
		}
		cols := []string{"k", "b", "i2", "i8", "f4", "f8", "n", "n2", "s", "vc", "d", "ts", "tstz", "iv"}
		n, err := conn.CopyFrom(ctx, pgx.Identifier{"every"}, cols, pgx.CopyFromRows(rows))
		if err != nil || n != 5000 {
			t.Fatalf("CopyFrom: %d rows, %v", n, err)
		}
		var got allTypesRow
		if err := conn.QueryRow(ctx, "SELECT * FROM every WHERE k = 1").Scan(got.dest()...); err != nil {
			t.Fatal(err)
		}
		if got.String() != full.String() {
			t.Errorf("row 1 after COPY:\n got %s\nwant %s", got.String(), full.String())
		}
		var count, texts int64
		if err := conn.QueryRow(ctx, "SELECT n, s FROM every_count").Scan(&count, &texts); err != nil || count != 5000 || texts != 4999 {
			t.Errorf("view after COPY: %d rows, %d texts, %v", count, texts, err)
		}
		// A duplicate key fails the whole COPY.
		_, err = conn.CopyFrom(ctx, pgx.Identifier{"every"}, []string{"k"}, pgx.CopyFromRows([][]any{{int32(6000)}, {int32(1)}}))
		var pe *pgconn.PgError
		if !errors.As(err, &pe) || pe.Code != "23505" {
			t.Fatalf("duplicate key in COPY: %v", err)
		}
		if err := conn.QueryRow(ctx, "SELECT count(*) FROM every").Scan(&count); err != nil || count != 5000 {
			t.Errorf("after the failed COPY: %d rows, %v", count, err)
		}
		// Binary out, binary in: the same rows.
		var bin bytes.Buffer
		if _, err := conn.PgConn().CopyTo(ctx, &bin, "COPY (SELECT * FROM every ORDER BY k) TO STDOUT (FORMAT binary)"); err != nil {
			t.Fatal(err)
		}
		exec("CREATE TABLE every2 (" + allTypesColumns + ")")
		if _, err := conn.PgConn().CopyFrom(ctx, &bin, "COPY every2 FROM STDIN WITH (FORMAT binary)"); err != nil {
			t.Fatal(err)
		}
		var diff int64
		if err := conn.QueryRow(ctx, "SELECT count(*) FROM (SELECT * FROM every EXCEPT SELECT * FROM every2) d").Scan(&diff); err != nil || diff != 0 {
			t.Errorf("binary round trip: %d rows differ, %v", diff, err)
		}
	})

	t.Run("text", func(t *testing.T) {
		exec("CREATE TABLE words (id int PRIMARY KEY, w text, n numeric(6,2), d date DEFAULT '2024-01-01')")
		n, err := copyIn("COPY words (id, w, n) FROM STDIN", "1\tplain\t1.5\n2\ttab\\there\t\\N\n3\tback\\\\slash \\x41\\101\t-2\r\n4\t\t0\n\\.\n")
		if err != nil || n != 4 {
			t.Fatalf("COPY FROM text: %d, %v", n, err)
		}
		want := "1\tplain\t1.50\t2024-01-01\n2\ttab\\there\t\\N\t2024-01-01\n3\tback\\\\slash AA\t-2.00\t2024-01-01\n4\t\t0.00\t2024-01-01\n"
		if got := copyOut("COPY words TO STDOUT"); got != want {
			t.Errorf("COPY TO text:\n got %q\nwant %q", got, want)
		}
		if got := copyOut("COPY (SELECT id, w FROM words WHERE id < 3 ORDER BY id) TO STDOUT WITH (DELIMITER '|', NULL 'NULL')"); got != "1|plain\n2|tab\\there\n" {
			t.Errorf("COPY query TO text with options: %q", got)
		}
	})

	t.Run("csv", func(t *testing.T) {
		exec("CREATE TABLE csvt (id int, a text, b text)")
		data := "id,a,b\n1,\"quoted, comma\",\n2,\"\",\"multi\nline \"\"q\"\"\"\n3,plain,NULL\n"
		n, err := copyIn("COPY csvt FROM STDIN WITH (FORMAT csv, HEADER true)", data)
		if err != nil || n != 3 {
			t.Fatalf("COPY FROM csv: %d, %v", n, err)
		}
		var nulls int64
		if err := conn.QueryRow(ctx, "SELECT count(*) FROM csvt WHERE b IS NULL").Scan(&nulls); err != nil || nulls != 1 {
			t.Errorf("csv NULLs: %d, %v", nulls, err)
		}
		want := "id,a,b\n1,\"quoted, comma\",\n2,\"\",\"multi\nline \"\"q\"\"\"\n3,plain,NULL\n"
		if got := copyOut("COPY (SELECT * FROM csvt ORDER BY id) TO STDOUT WITH (FORMAT csv, HEADER)"); got != want {
			t.Errorf("COPY TO csv:\n got %q\nwant %q", got, want)
		}
		if got := copyOut("COPY (SELECT * FROM csvt WHERE id = 3) TO STDOUT WITH (FORMAT csv, FORCE_QUOTE *)"); got != "\"3\",\"plain\",\"NULL\"\n" {
			t.Errorf("FORCE_QUOTE *: %q", got)
		}
	})

	t.Run("errors", func(t *testing.T) {
		exec("CREATE TABLE strict (id int PRIMARY KEY, v int NOT NULL)")
		for _, c := range []struct{ sql, data, code string }{
			{"COPY strict FROM STDIN", "1\t2\n2\tx\n", "22P02"},
			{"COPY strict FROM STDIN", "1\t2\t3\n", "22P04"},
			{"COPY strict FROM STDIN", "1\n", "22P04"},
			{"COPY strict FROM STDIN", "1\t\\N\n", "23502"},
			{"COPY strict FROM STDIN (FORMAT binary)", "not binary", "22P04"},
			{"COPY strict FROM '/etc/passwd'", "", "0A000"},
			{"COPY strict FROM STDIN (FORMAT xml)", "", "22023"},
			{"COPY missing FROM STDIN", "", "42P01"},
			{"COPY every_count FROM STDIN", "", "42809"},
		} {
			_, err := copyIn(c.sql, c.data)
			var pe *pgconn.PgError
			if !errors.As(err, &pe) || pe.Code != c.code {
				t.Errorf("%s with %q: %v, want %s", c.sql, c.data, err, c.code)
			}
		}
		var count int64
		if err := conn.QueryRow(ctx, "SELECT count(*) FROM strict").Scan(&count); err != nil || count != 0 {
			t.Errorf("after failed COPYs: %d rows, %v", count, err)
		}
	})
}
