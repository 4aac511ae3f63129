package engine_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/streamsql/streamsql/internal/testserver"
)

// TestHasPrivilegeOverCatalogRows checks the has_*_privilege functions
// whose object argument is a catalog column (by OID or by name), with and
// without the user argument, against GRANTs; and their errors.
func TestHasPrivilegeOverCatalogRows(t *testing.T) {
	ctx := context.Background()
	srv := testserver.Start(t, testserver.Options{SuperuserPassword: "pw"})
	f := &authFixture{t: t, srv: srv}
	root := f.connect("root", "pw")
	execOK(t, root, "CREATE TABLE hp_a (x int, y int)", "CREATE TABLE hp_b (x int)", "CREATE SCHEMA hp_s",
		"CREATE ROLE bob LOGIN PASSWORD 'b'", "GRANT SELECT ON hp_a TO bob", "GRANT INSERT ON hp_b TO bob",
		"GRANT CREATE ON SCHEMA hp_s TO bob",
		"CREATE FUNCTION hp_f(v int) RETURNS int LANGUAGE sql AS 'SELECT v + 1'")
	bob := f.connect("bob", "b")
	for _, c := range []struct {
		user string
		sql  string
		want string
	}{
		{"bob", `SELECT string_agg(relname, ',' ORDER BY relname) FROM pg_class WHERE relname LIKE 'hp_%' AND has_table_privilege(oid, 'SELECT')`, "hp_a"},
		{"root", `SELECT string_agg(relname, ',' ORDER BY relname) FROM pg_class WHERE relname LIKE 'hp_%' AND has_table_privilege('bob', oid, 'INSERT')`, "hp_b"},
		{"root", `SELECT string_agg(relname, ',' ORDER BY relname) FROM pg_class WHERE relname LIKE 'hp_%' AND has_table_privilege('bob', relname, 'select, insert')`, ""},
		{"root", `SELECT string_agg(relname, ',' ORDER BY relname) FROM pg_class WHERE relname LIKE 'hp_%' AND has_table_privilege(relname, 'DELETE')`, "hp_a,hp_b"},
		{"bob", `SELECT string_agg(n.nspname || '.' || c.relname, ',' ORDER BY c.relname) FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE c.relname LIKE 'hp_%' AND has_table_privilege(n.nspname || '.' || c.relname, 'SELECT')`, "public.hp_a"},
		{"bob", `SELECT count(*)::text FROM pg_class WHERE relname = 'pg_class' AND has_table_privilege(oid, 'SELECT')`, "1"},
		{"bob", `SELECT string_agg(attname, ',' ORDER BY attnum) FROM pg_attribute WHERE attrelid = 'hp_a'::regclass AND attnum > 0 AND has_column_privilege(attrelid, attnum, 'SELECT')`, "x,y"},
		{"bob", `SELECT has_column_privilege('hp_a', 'x', 'UPDATE')::text || has_column_privilege('hp_b', 'x', 'INSERT')::text`, "falsetrue"},
		{"bob", `SELECT string_agg(nspname, ',' ORDER BY nspname) FROM pg_namespace WHERE has_schema_privilege(oid, 'CREATE')`, "hp_s"},
		{"root", `SELECT string_agg(nspname, ',' ORDER BY nspname) FROM pg_namespace WHERE has_schema_privilege('bob', nspname, 'USAGE') AND nspname IN ('public', 'hp_s', 'pg_catalog')`, "pg_catalog,public"}, // CREATE on hp_s, not USAGE,
		{"bob", `SELECT string_agg(datname, ',') FROM pg_database WHERE has_database_privilege(oid, 'CONNECT') AND NOT has_database_privilege(datname, 'CREATE')`, "dev"},
		{"bob", `SELECT string_agg(proname, ',') FROM pg_proc WHERE has_function_privilege(oid, 'EXECUTE')`, "hp_f"},
		{"bob", `SELECT has_function_privilege('hp_f(integer)', 'EXECUTE')::text || has_function_privilege('lower(text)', 'execute')::text`, "truetrue"},
		{"bob", `SELECT coalesce(has_table_privilege(987654321, 'SELECT')::text, 'null')`, "null"},
	} {
		conn := bob
		if c.user == "root" {
			conn = root
		}
		var got *string
		if err := conn.QueryRow(ctx, c.sql).Scan(&got); err != nil {
			t.Errorf("%s: %v", c.sql, err)
			continue
		}
		if s := ""; got == nil && c.want != "" || got != nil && *got != c.want {
			if got != nil {
				s = *got
			}
			t.Errorf("%s = %q, want %q", c.sql, s, c.want)
		}
	}
	for _, c := range []struct{ sql, code, msg string }{
		{`SELECT has_table_privilege('nosuch', 'SELECT')`, "42P01", `relation "nosuch" does not exist`},
		{`SELECT has_table_privilege('nobody', 'hp_a', 'SELECT')`, "42704", `role "nobody" does not exist`},
		{`SELECT has_table_privilege('hp_a', 'EXECUTE')`, "22023", `unrecognized privilege type: "EXECUTE"`},
		{`SELECT has_schema_privilege('nosuch', 'USAGE')`, "3F000", `schema "nosuch" does not exist`},
		{`SELECT has_database_privilege('nosuch', 'CONNECT')`, "3D000", `database "nosuch" does not exist`},
		{`SELECT has_column_privilege('hp_a', 'nosuch', 'SELECT')`, "42703", `column "nosuch" of relation "hp_a" does not exist`},
		{`SELECT has_table_privilege(relname, 'SEL' || 'ECT') FROM pg_class`, "0A000", "not a text constant"},
	} {
		_, err := bob.Exec(ctx, c.sql)
		var pe *pgconn.PgError
		if !errors.As(err, &pe) || pe.Code != c.code || !strings.Contains(pe.Message, c.msg) {
			t.Errorf("%s: %v, want %s %q", c.sql, err, c.code, c.msg)
		}
	}
}
