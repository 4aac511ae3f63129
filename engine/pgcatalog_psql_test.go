package engine_test

import (
	"flag"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/streamsql/streamsql/internal/testserver"
)

var updatePsql = flag.Bool("update-psql", false, "rewrite testdata/psql_catalog.txt with what psql prints")

// TestPsqlCatalog runs psql's describe commands, and the queries its tab
// completion sends for table and column names, against a server, and checks
// what psql prints against testdata/psql_catalog.txt.
func TestPsqlCatalog(t *testing.T) {
	psql, err := exec.LookPath("psql")
	if err != nil {
		t.Skip("psql is not on PATH")
	}
	srv := testserver.Start(t, testserver.Options{})
	run := func(args ...string) string {
		t.Helper()
		cmd := exec.Command(psql, append([]string{"-X", "-d", srv.URL}, args...)...)
		cmd.Env = append(os.Environ(), "PSQLRC=/dev/null", "PGCONNECT_TIMEOUT=10")
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("psql %v: %v\n%s", args, err, out)
		}
		return string(out)
	}
	run("-q", "-v", "ON_ERROR_STOP=1",
		"-c", "CREATE TABLE bids (id int PRIMARY KEY, price int NOT NULL, who varchar(20), amt numeric(10,2))",
		"-c", "CREATE INDEX bids_who ON bids (who)",
		"-c", "CREATE MATERIALIZED VIEW totals AS SELECT who, sum(price) AS total FROM bids GROUP BY who",
		"-c", "CREATE VIEW cheap AS SELECT id FROM bids WHERE price < 10",
		"-c", "CREATE SCHEMA audit",
		"-c", "CREATE TABLE audit.log (at timestamptz, note text)",
		"-c", "CREATE FUNCTION twice(x int) RETURNS int LANGUAGE SQL AS 'SELECT x * 2'")
	var out strings.Builder
	for _, cmd := range []string{
		`\d`,
		`\dt`,
		`\dt audit.*`,
		`\dv`,
		`\dm`,
		`\di`,
		`\dn`,
		`\d bids`,
		`\d+ totals`,
		`\d cheap`,
		`\d bids_who`,
		`\df`,
		`\dx`,
		`\dT`,
		`SELECT c.relname, NULL::pg_catalog.text FROM pg_catalog.pg_class c WHERE c.relkind IN ('r', 'S', 'v', 'm', 'f', 'p') AND (c.relname) LIKE 'b%' AND pg_catalog.pg_table_is_visible(c.oid) AND c.relnamespace <> (SELECT oid FROM pg_catalog.pg_namespace WHERE nspname = 'pg_catalog')
	UNION ALL
	SELECT NULL::pg_catalog.text, n.nspname FROM pg_catalog.pg_namespace n WHERE n.nspname LIKE 'a%' AND n.nspname NOT LIKE E'pg\\_%'
	LIMIT 1000`,
		`SELECT a.attname, NULL::pg_catalog.text FROM pg_catalog.pg_attribute a, pg_catalog.pg_class c WHERE c.oid = a.attrelid and a.attnum > 0 and not a.attisdropped AND (a.attname) LIKE 'pr%' AND c.relname = 'bids' AND pg_catalog.pg_table_is_visible(c.oid)
	LIMIT 1000`,
	} {
		fmt.Fprintf(&out, "> %s\n%s", cmd, run("-c", cmd))
	}
	const golden = "testdata/psql_catalog.txt"
	if *updatePsql {
		if err := os.WriteFile(golden, []byte(out.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	if got := out.String(); got != string(want) {
		t.Errorf("psql printed\n%s\nwant (%s; -update-psql rewrites it)\n%s", got, golden, want)
	}
	// \l and \du show the one database and role (names depend on the server).
	for cmd, want := range map[string]string{`\l`: " dev ", `\du`: "Superuser"} {
		if got := run("-c", cmd); !strings.Contains(got, want) {
			t.Errorf("psql -c %s printed\n%s\nwant it to contain %q", cmd, got, want)
		}
	}
}
