package engine_test

import (
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/streamsql/streamsql/internal/testserver"
)

// TestPgDumpReplay dumps a database's schema with pg_dump --schema-only and
// replays the script with psql into a fresh server, which then has the same
// tables, views and materialized views, maintained.
func TestPgDumpReplay(t *testing.T) {
	pgDump, err1 := exec.LookPath("pg_dump")
	psql, err2 := exec.LookPath("psql")
	if err1 != nil || err2 != nil {
		t.Skip("pg_dump or psql is not on PATH")
	}
	env := append(os.Environ(), "PSQLRC=/dev/null", "PGCONNECT_TIMEOUT=10")
	run := func(name string, args ...string) (string, error) {
		cmd := exec.Command(name, args...)
		cmd.Env = env
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	src := testserver.Start(t, testserver.Options{})
	if out, err := run(psql, "-X", "-q", "-v", "ON_ERROR_STOP=1", "-d", src.URL,
		"-c", "CREATE TABLE bids (id int PRIMARY KEY, price int NOT NULL, who varchar(20), note text DEFAULT 'none')",
		"-c", "CREATE INDEX bids_who ON bids (who DESC)",
		"-c", "CREATE SCHEMA audit",
		"-c", "CREATE TABLE audit.log (at timestamptz, what text)",
		"-c", `CREATE MATERIALIZED VIEW totals AS SELECT who, sum(price) AS total, count(*) AS n FROM bids GROUP BY who`,
		"-c", `CREATE VIEW cheap AS SELECT b.id FROM bids b JOIN totals t ON t.who = b.who WHERE b.price < 10`,
		"-c", `CREATE MATERIALIZED VIEW audit.recent AS SELECT what FROM audit.log WHERE what <> ''`,
	); err != nil {
		t.Fatalf("setup: %v\n%s", err, out)
	}
	dump, err := run(pgDump, "--schema-only", "--no-owner", "-d", src.URL)
	if err != nil {
		t.Fatalf("pg_dump: %v\n%s", err, dump)
	}
	for _, want := range []string{
		"CREATE TABLE public.bids (", "CREATE SCHEMA audit;", "CREATE TABLE audit.log (",
		"CREATE MATERIALIZED VIEW public.totals AS\n SELECT who, sum(price) AS total, count(*) AS n FROM public.bids GROUP BY who\n  WITH NO DATA;",
		"CREATE VIEW public.cheap AS\n SELECT b.id FROM public.bids b JOIN public.totals t ON t.who = b.who WHERE b.price < 10;",
		"CREATE INDEX bids_who ON public.bids USING btree (who DESC);",
		"ADD CONSTRAINT bids_pkey PRIMARY KEY (id);",
	} {
		if !strings.Contains(dump, want) {
			t.Errorf("the dump lacks %q:\n%s", want, dump)
		}
	}
	script := t.TempDir() + "/schema.sql"
	if err := os.WriteFile(script, []byte(dump), 0o644); err != nil {
		t.Fatal(err)
	}
	dst := testserver.Start(t, testserver.Options{})
	out, err := run(psql, "-X", "-q", "-d", dst.URL, "-f", script)
	if err != nil {
		t.Fatalf("replay: %v\n%s", err, out)
	}
	// pg_dump adds the primary key after the views over the table, and
	// streamsql refuses to rewrite a table that views read (2BP01): the
	// replayed table has no primary key.
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		if strings.Contains(line, "ERROR") && !strings.Contains(line, "cannot add primary key of table bids because other objects depend on it") {
			t.Errorf("replay printed %q\n%s", line, out)
		}
	}
	check := func(sql, want string) {
		t.Helper()
		got, err := run(psql, "-X", "-q", "-A", "-t", "-d", dst.URL, "-c", sql)
		if err != nil || strings.TrimSpace(got) != want {
			t.Errorf("%s: got %q (%v), want %q", sql, got, err, want)
		}
	}
	check(`SELECT string_agg(n.nspname || '.' || c.relname || ':' || c.relkind, ',' ORDER BY n.nspname, c.relname) FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname IN ('public', 'audit') AND c.relkind <> 'i'`,
		"audit.log:r,audit.recent:m,public.bids:r,public.cheap:v,public.totals:m")
	check(`SELECT string_agg(attname || ' ' || format_type(atttypid, atttypmod), ', ' ORDER BY attnum) FROM pg_attribute WHERE attrelid = 'bids'::regclass AND attnum > 0`,
		"id integer, price integer, who character varying(20), note text")
	check(`SELECT indexdef FROM pg_indexes WHERE indexname = 'bids_who'`, "CREATE INDEX bids_who ON public.bids USING btree (who DESC)")
	check(`INSERT INTO bids (id, price, who) VALUES (1, 5, 'ann'), (2, 7, 'ann'), (3, 50, 'bo')`, "")
	check(`FLUSH`, "")
	check(`SELECT who || '=' || total || '/' || n FROM totals ORDER BY 1`, "ann=12/2\nbo=50/1")
	check(`SELECT string_agg(id::text, ',' ORDER BY id) FROM cheap`, "1,2")
	check(`SELECT note FROM bids WHERE id = 1`, "none")
}
