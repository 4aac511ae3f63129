package engine_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"
	"github.com/streamsql/streamsql/internal/testserver"
)

// TestStructWire reads struct and map columns over the wire: a struct is a
// record (OID 2249) that pgx decodes from PostgreSQL's binary record
// format, and reads as record text in the text format; a map is text.
func TestStructWire(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	srv := testserver.Start(t, testserver.Options{})
	conn := connectMode(t, ctx, srv.URL, pgx.QueryExecModeCacheStatement)
	for _, sql := range []string{
		"CREATE TABLE st (k int PRIMARY KEY, s STRUCT<a int, b varchar, c STRUCT<x bigint>>, m MAP(varchar, int))",
		"INSERT INTO st VALUES (1, ROW(7, 'a b', ROW(9)), MAP {'q': 1}), (2, ROW(NULL, '', ROW(NULL)), NULL)",
	} {
		if _, err := conn.Exec(ctx, sql); err != nil {
			t.Fatalf("%s: %v", sql, err)
		}
	}
	q := "SELECT s, m FROM st WHERE k >= $1 ORDER BY k"
	rows, err := conn.Query(ctx, q, pgx.QueryResultFormats{pgx.BinaryFormatCode, pgx.TextFormatCode}, 0)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for rows.Next() {
		var a *int32
		var b *string
		var x *int64
		c := pgtype.CompositeFields{&x}
		var m *string
		if err := rows.Scan(pgtype.CompositeFields{&a, &b, &c}, &m); err != nil {
			t.Fatal(err)
		}
		got = append(got, fmt.Sprintf("%v %q %v %s", derefInt(a), deref(b), derefInt(x), deref(m)))
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	if want := `[7 "a b" 9 {q:1} <nil> "" <nil> <nil>]`; fmt.Sprint(got) != want {
		t.Fatalf("binary: got %s, want %s", fmt.Sprint(got), want)
	}
	var text string
	if err := conn.QueryRow(ctx, q, pgx.QueryResultFormats{pgx.TextFormatCode}, 0).Scan(&text, nil); err != nil {
		t.Fatal(err)
	}
	if text != `(7,"a b","(9)")` {
		t.Fatalf("text: got %s", text)
	}
}

func deref(s *string) string {
	if s == nil {
		return "<nil>"
	}
	return *s
}

func derefInt[T int32 | int64](p *T) any {
	if p == nil {
		return "<nil>"
	}
	return *p
}
