package engine_test

import (
	"context"
	"testing"
	"time"

	"github.com/streamsql/streamsql/internal/testserver"
)

// TestReturningExtended reads RETURNING rows through every pgx query mode
// (the extended protocol describes them before executing).
func TestReturningExtended(t *testing.T) {
	srv := testserver.Start(t, testserver.Options{})
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	setup := connectMode(t, ctx, srv.URL, queryModes[0])
	if _, err := setup.Exec(ctx, `CREATE TABLE acc (id serial PRIMARY KEY, owner text, n int DEFAULT 0)`); err != nil {
		t.Fatal(err)
	}
	for i, mode := range queryModes {
		conn := connectMode(t, ctx, srv.URL, mode)
		var id, n int32
		if err := conn.QueryRow(ctx, `INSERT INTO acc (owner) VALUES ($1) RETURNING id, n`, "ann").Scan(&id, &n); err != nil {
			t.Fatalf("%v: INSERT RETURNING: %v", mode, err)
		}
		if id != int32(2*i+1) || n != 0 {
			t.Fatalf("%v: INSERT RETURNING gave id %d, n %d; want %d, 0", mode, id, n, 2*i+1)
		}
		var owner string
		if err := conn.QueryRow(ctx, `INSERT INTO acc (id, owner) VALUES ($1, 'bob') ON CONFLICT (id) DO UPDATE SET n = acc.n + 1 RETURNING owner, n`, id).Scan(&owner, &n); err != nil {
			t.Fatalf("%v: ON CONFLICT RETURNING: %v", mode, err)
		}
		if owner != "ann" || n != 1 {
			t.Fatalf("%v: ON CONFLICT RETURNING gave %q, %d; want ann, 1", mode, owner, n)
		}
		if err := conn.QueryRow(ctx, `UPDATE acc SET n = n * 10 WHERE id = $1 RETURNING n`, id).Scan(&n); err != nil || n != 10 {
			t.Fatalf("%v: UPDATE RETURNING: %d, %v", mode, n, err)
		}
		tag, err := conn.Exec(ctx, `INSERT INTO acc (owner) VALUES ('cy') RETURNING id`)
		if err != nil || tag.String() != "INSERT 0 1" {
			t.Fatalf("%v: Exec of INSERT RETURNING: %q, %v", mode, tag, err)
		}
		rows, err := conn.Query(ctx, `DELETE FROM acc WHERE id >= $1 RETURNING id`, id)
		if err != nil {
			t.Fatal(err)
		}
		var deleted []int32
		for rows.Next() {
			var d int32
			if err := rows.Scan(&d); err != nil {
				t.Fatal(err)
			}
			deleted = append(deleted, d)
		}
		if err := rows.Err(); err != nil || len(deleted) != 2 || rows.CommandTag().String() != "DELETE 2" {
			t.Fatalf("%v: DELETE RETURNING gave %v (%s), %v", mode, deleted, rows.CommandTag(), err)
		}
	}
}
