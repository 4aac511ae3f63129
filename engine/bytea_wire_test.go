package engine_test

import (
	"bytes"
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"

	"github.com/streamsql/streamsql/internal/testserver"
)

// TestByteaUUIDWire sends bytea and uuid parameters and reads them back in
// every query mode, in text and in binary, through a table and a view.
func TestByteaUUIDWire(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	srv := testserver.Start(t, testserver.Options{})
	blob := []byte{0x00, 0xff, '\\', 'x', 0x01}
	id := pgtype.UUID{Bytes: [16]byte{0xa0, 0xee, 0xbc, 0x99, 0x9c, 0x0b, 0x4e, 0xf8, 0xbb, 0x6d, 0x6b, 0xb9, 0xbd, 0x38, 0x0a, 0x11}, Valid: true}
	for i, mode := range queryModes {
		t.Run(mode.String(), func(t *testing.T) {
			conn := connectMode(t, ctx, srv.URL, mode)
			tbl, view := fmt.Sprintf("bw%d", i), fmt.Sprintf("bwv%d", i)
			for _, q := range []string{
				"CREATE TABLE " + tbl + " (k int PRIMARY KEY, b bytea, u uuid)",
				"CREATE MATERIALIZED VIEW " + view + " AS SELECT u, b || b AS bb FROM " + tbl,
			} {
				if _, err := conn.Exec(ctx, q); err != nil {
					t.Fatalf("%s: %v", q, err)
				}
			}
			if _, err := conn.Exec(ctx, "INSERT INTO "+tbl+" VALUES ($1, $2, $3), (2, NULL, NULL)", 1, blob, id); err != nil {
				t.Fatal(err)
			}
			// A serial column and a default, through prepared inserts.
			sq := fmt.Sprintf("sq%d", i)
			if _, err := conn.Exec(ctx, "CREATE TABLE "+sq+" (id serial, b bytea DEFAULT '\\x00', u uuid DEFAULT gen_random_uuid())"); err != nil {
				t.Fatal(err)
			}
			for _, v := range [][]byte{blob, nil} {
				if _, err := conn.Exec(ctx, "INSERT INTO "+sq+" (b) VALUES ($1)", v); err != nil {
					t.Fatal(err)
				}
			}
			if _, err := conn.Exec(ctx, "INSERT INTO "+sq+" (id) VALUES ($1)", 10); err != nil {
				t.Fatal(err)
			}
			var ids, defaults, uuids int
			err := conn.QueryRow(ctx, "SELECT sum(id), count(*) FILTER (WHERE b = '\\x00'), count(DISTINCT u) FROM "+sq).Scan(&ids, &defaults, &uuids)
			if err != nil || ids != 13 || defaults != 1 || uuids != 3 {
				t.Errorf("serial table: ids %d, defaults %d, uuids %d (%v)", ids, defaults, uuids, err)
			}
			formats := []pgx.QueryResultFormats{nil}
			if mode == pgx.QueryExecModeCacheStatement || mode == pgx.QueryExecModeDescribeExec {
				formats = append(formats, pgx.QueryResultFormats{pgx.TextFormatCode, pgx.TextFormatCode},
					pgx.QueryResultFormats{pgx.BinaryFormatCode, pgx.BinaryFormatCode})
			}
			for _, f := range formats {
				args := []any{}
				if f != nil {
					args = append(args, f)
				}
				var b []byte
				var u pgtype.UUID
				err := conn.QueryRow(ctx, "SELECT b, u FROM "+tbl+" WHERE u = $1", append(args, id)...).Scan(&b, &u)
				if err != nil {
					t.Fatalf("formats %v: %v", f, err)
				}
				if !bytes.Equal(b, blob) || u != id {
					t.Errorf("formats %v: got %x %x", f, b, u.Bytes)
				}
				err = conn.QueryRow(ctx, "SELECT b, u FROM "+tbl+" WHERE k = 2", args...).Scan(&b, &u)
				if err != nil || b != nil || u.Valid {
					t.Errorf("formats %v: NULLs read as %x %v (%v)", f, b, u, err)
				}
				var bb []byte
				err = conn.QueryRow(ctx, "SELECT bb, u FROM "+view+" WHERE u IS NOT NULL", args...).Scan(&bb, &u)
				if err != nil || !bytes.Equal(bb, append(append([]byte(nil), blob...), blob...)) || u != id {
					t.Errorf("formats %v: view row %x %x (%v)", f, bb, u.Bytes, err)
				}
			}
		})
	}
}
