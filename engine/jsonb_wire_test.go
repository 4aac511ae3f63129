package engine_test

import (
	"context"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/streamsql/streamsql/internal/testserver"
)

// TestJSONBWire sends jsonb parameters and reads jsonb results in binary
// (the version byte 1 and the text) and in text, in every pgx query mode.
func TestJSONBWire(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	srv := testserver.Start(t, testserver.Options{})
	for i, mode := range queryModes {
		t.Run(mode.String(), func(t *testing.T) {
			conn := connectMode(t, ctx, srv.URL, mode)
			tbl := "j" + string(rune('a'+i))
			if _, err := conn.Exec(ctx, "CREATE TABLE "+tbl+" (id int PRIMARY KEY, doc jsonb)"); err != nil {
				t.Fatal(err)
			}
			var param any = map[string]any{"b": []int{1, 2}, "a": "x"} // encoded as jsonb, binary where pgx can
			if mode == pgx.QueryExecModeExec || mode == pgx.QueryExecModeSimpleProtocol {
				param = `{"b": [1, 2], "a": "x"}` // no statement description to encode by
			}
			if _, err := conn.Exec(ctx, "INSERT INTO "+tbl+" VALUES ($1, $2)", 1, param); err != nil {
				t.Fatal(err)
			}
			formats := []pgx.QueryResultFormats{nil}
			if mode == pgx.QueryExecModeCacheStatement || mode == pgx.QueryExecModeDescribeExec {
				formats = append(formats, pgx.QueryResultFormats{pgx.TextFormatCode}, pgx.QueryResultFormats{pgx.BinaryFormatCode})
			}
			for _, f := range formats {
				args := []any{}
				if f != nil {
					args = append(args, f)
				}
				var text string
				var doc map[string]any
				err := conn.QueryRow(ctx, "SELECT doc::text, doc FROM "+tbl+" WHERE doc @> $1", append(args, `{"a": "x"}`)...).Scan(&text, &doc)
				if err != nil {
					t.Fatal(err)
				}
				if text != `{"a": "x", "b": [1, 2]}` || doc["a"] != "x" || len(doc["b"].([]any)) != 2 {
					t.Errorf("formats %v: got %q and %v", f, text, doc)
				}
			}
		})
	}
}
