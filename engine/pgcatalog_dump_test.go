package engine_test

import (
	"os"
	"os/exec"
	"regexp"
	"strings"
	"testing"

	"github.com/streamsql/streamsql/internal/testserver"
)

// TestPgDumpReplay dumps a database's schema with pg_dump --schema-only and
// replays the script with psql (ON_ERROR_STOP) into a fresh server, which
// then has the same tables, primary keys, views and materialized views,
// maintained and keyed as the originals. pg_dump adds the primary keys
// after the views over their tables (ALTER TABLE ONLY ... ADD CONSTRAINT).
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
		"-c", `CREATE TABLE pairs (a int, b int, v int, PRIMARY KEY (a, b))`,
		"-c", `CREATE MATERIALIZED VIEW pricey AS SELECT id, price FROM bids WHERE price > 10`,
		"-c", `CREATE MATERIALIZED VIEW joined AS SELECT p.a, p.v, b.who FROM pairs p JOIN bids b ON b.id = p.b`,
		"-c", `CREATE MATERIALIZED VIEW top AS SELECT who, total FROM totals WHERE total > 10`,
		"-c", `CREATE MATERIALIZED VIEW onjoined AS SELECT a, count(*) AS n FROM joined GROUP BY a`,
		"-c", `CREATE TABLE people (name varchar(20) PRIMARY KEY, email text UNIQUE)`,
		"-c", `CREATE MATERIALIZED VIEW emails AS SELECT email FROM people`,
		"-c", `COMMENT ON TABLE bids IS 'every bid'`,
		"-c", `COMMENT ON COLUMN bids.who IS 'the bidder'`,
		"-c", `COMMENT ON MATERIALIZED VIEW totals IS 'per bidder'`,
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
		"COMMENT ON TABLE public.bids IS 'every bid';",
		"COMMENT ON COLUMN public.bids.who IS 'the bidder';",
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
	out, err := run(psql, "-X", "-q", "-v", "ON_ERROR_STOP=1", "-d", dst.URL, "-f", script)
	if err != nil || strings.Contains(out, "ERROR") {
		t.Fatalf("replay: %v\n%s", err, out)
	}
	query := func(url, sql string) string {
		t.Helper()
		got, err := run(psql, "-X", "-q", "-A", "-t", "-d", url, "-c", sql)
		if err != nil {
			t.Errorf("%s: %v\n%s", sql, err, got)
		}
		return strings.TrimSpace(got)
	}
	check := func(sql, want string) {
		t.Helper()
		if got := query(dst.URL, sql); got != want {
			t.Errorf("%s: got %q, want %q", sql, got, want)
		}
	}
	// The same constraints, and the views keyed by the same columns.
	same := func(sql string, clean func(string) string) {
		t.Helper()
		want, got := clean(query(src.URL, sql)), clean(query(dst.URL, sql))
		if got != want || want == "" {
			t.Errorf("%s: the replay gives\n%s\nthe original\n%s", sql, got, want)
		}
	}
	keep := func(s string) string { return s }
	same(`SELECT string_agg(c.relname || ' ' || d.objsubid || ' ' || d.description, E'\n' ORDER BY c.relname, d.objsubid) FROM pg_description d JOIN pg_class c ON c.oid = d.objoid`, keep)
	same(`SELECT string_agg(c.relname || ' ' || conname || ' ' || contype || ' ' || pg_get_constraintdef(k.oid), E'\n' ORDER BY conname) FROM pg_constraint k JOIN pg_class c ON c.oid = k.conrelid`, keep)
	same(`SELECT string_agg(indexdef, E'\n' ORDER BY indexname) FROM pg_indexes WHERE schemaname = 'public'`, keep)
	check(`SELECT string_agg(conname, ',' ORDER BY conname) FROM pg_constraint WHERE contype = 'p'`, "bids_pkey,pairs_pkey,people_pkey")
	stateTables := regexp.MustCompile(`state_tables?: (#\d+|\[[^]]*\])`)
	for _, v := range []string{"totals", "pricey", "joined", "top", "onjoined", "emails", "audit.recent"} {
		same("EXPLAIN MATERIALIZED VIEW "+v, func(s string) string { return stateTables.ReplaceAllString(s, "state_table") })
	}
	check(`SELECT string_agg(n.nspname || '.' || c.relname || ':' || c.relkind, ',' ORDER BY n.nspname, c.relname) FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname IN ('public', 'audit') AND c.relkind <> 'i'`,
		"audit.log:r,audit.recent:m,public.bids:r,public.cheap:v,public.emails:m,public.joined:m,public.onjoined:m,public.pairs:r,public.people:r,public.pricey:m,public.top:m,public.totals:m")
	check(`SELECT string_agg(attname || ' ' || format_type(atttypid, atttypmod), ', ' ORDER BY attnum) FROM pg_attribute WHERE attrelid = 'bids'::regclass AND attnum > 0`,
		"id integer, price integer, who character varying(20), note text")
	check(`SELECT indexdef FROM pg_indexes WHERE indexname = 'bids_who'`, "CREATE INDEX bids_who ON public.bids USING btree (who DESC)")
	check(`INSERT INTO bids (id, price, who) VALUES (1, 5, 'ann'), (2, 7, 'ann'), (3, 50, 'bo')`, "")
	check(`FLUSH`, "")
	check(`SELECT who || '=' || total || '/' || n FROM totals ORDER BY 1`, "ann=12/2\nbo=50/1")
	check(`SELECT string_agg(id::text, ',' ORDER BY id) FROM cheap`, "1,2")
	check(`SELECT note FROM bids WHERE id = 1`, "none")
	check(`INSERT INTO pairs VALUES (1, 1, 10), (1, 3, 30), (2, 2, 20)`, "")
	check(`INSERT INTO people VALUES ('ann', 'a@x'), ('bo', NULL)`, "")
	check(`FLUSH`, "")
	check(`SELECT string_agg(id || ':' || price, ',' ORDER BY id) FROM pricey`, "3:50")
	check(`SELECT string_agg(a || ':' || v || ':' || who, ',' ORDER BY a, v) FROM joined`, "1:10:ann,1:30:bo,2:20:ann")
	check(`SELECT string_agg(who || ':' || total, ',' ORDER BY who) FROM top`, "ann:12,bo:50")
	check(`SELECT string_agg(a || ':' || n, ',' ORDER BY a) FROM onjoined`, "1:2,2:1")
	check(`SELECT count(*) || ':' || count(email) FROM emails`, "2:1")
	for _, dup := range []string{`INSERT INTO bids (id, price) VALUES (1, 1)`, `INSERT INTO pairs VALUES (1, 1, 0)`, `INSERT INTO people VALUES ('cy', 'a@x')`} {
		if out, err := run(psql, "-X", "-q", "-d", dst.URL, "-c", dup); err == nil || !strings.Contains(out, "duplicate key") {
			t.Errorf("%s: got %v\n%s, want a duplicate key error", dup, err, out)
		}
	}
}
