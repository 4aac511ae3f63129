package engine_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/streamsql/streamsql/internal/testserver"
)

// The client tests run real drivers (psycopg2, node-postgres) against a
// server: scripts in testdata/clients, which scripts/test.sh installs the
// drivers for. Without a driver a test is skipped, unless
// STREAMSQL_REQUIRE_CLIENTS is set (as the test script sets it), when it
// fails.

func requireClient(t *testing.T, ok bool, what string) {
	t.Helper()
	if ok {
		return
	}
	if os.Getenv("STREAMSQL_REQUIRE_CLIENTS") != "" {
		t.Fatalf("%s is missing (scripts/test.sh installs it)", what)
	}
	t.Skipf("%s is missing (scripts/test.sh installs it)", what)
}

// runClient runs a client script and checks that it printed "ok".
func runClient(t *testing.T, name string, args ...string) {
	t.Helper()
	if out := clientOutput(t, name, args...); strings.TrimSpace(out) != "ok" {
		t.Fatalf("%s %s printed\n%s", name, strings.Join(args, " "), out)
	}
}

// clientOutput runs a client program in testdata/clients and returns what
// it printed.
func clientOutput(t *testing.T, name string, args ...string) string {
	t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Dir = filepath.Join("..", "testdata", "clients")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out)
	}
	return string(out)
}

// TestPsycopg2 runs testdata/clients/psycopg2_test.py.
func TestPsycopg2(t *testing.T) {
	python := pythonWithPsycopg2()
	requireClient(t, python != "", "python3-psycopg2")
	srv := testserver.Start(t, testserver.Options{})
	runClient(t, python, "psycopg2_test.py", "host=127.0.0.1 port="+port(srv)+" dbname=dev user=py")
}

// TestNodePostgres runs testdata/clients/node_pg_test.js.
func TestNodePostgres(t *testing.T) {
	node, err := exec.LookPath("node")
	_, statErr := os.Stat(filepath.Join("..", "testdata", "clients", "node_modules", "pg"))
	requireClient(t, err == nil && statErr == nil, "node and the pg module (npm ci in testdata/clients)")
	srv := testserver.Start(t, testserver.Options{})
	runClient(t, node, "node_pg_test.js", "postgres://node@127.0.0.1:"+port(srv)+"/dev")
}

func port(srv *testserver.Server) string {
	return srv.Addr[strings.LastIndexByte(srv.Addr, ':')+1:]
}

// pythonWithPsycopg2 returns a python3 that imports psycopg2: the one on
// PATH, else the system's (Debian's python3-psycopg2 installs there), or "".
func pythonWithPsycopg2() string {
	for _, p := range []string{"python3", "/usr/bin/python3"} {
		if path, err := exec.LookPath(p); err == nil && exec.Command(path, "-c", "import psycopg2").Run() == nil {
			return path
		}
	}
	return ""
}

// pgJDBCJar is Debian's libpostgresql-jdbc-java.
const pgJDBCJar = "/usr/share/java/postgresql.jar"

// TestPgJDBC compiles and runs testdata/clients/JdbcMeta.java: pgJDBC's
// DatabaseMetaData.getTables, getColumns, getPrimaryKeys (of a composite
// key), getIndexInfo and getImportedKeys/getExportedKeys, as IDEs and BI
// tools browse.
func TestPgJDBC(t *testing.T) {
	javac, errc := exec.LookPath("javac")
	java, errj := exec.LookPath("java")
	_, errJar := os.Stat(pgJDBCJar)
	requireClient(t, errc == nil && errj == nil && errJar == nil, "a JDK and libpostgresql-jdbc-java")
	classes := t.TempDir()
	clientOutput(t, javac, "-d", classes, "-cp", pgJDBCJar, "JdbcMeta.java")
	srv := testserver.Start(t, testserver.Options{})
	url := "jdbc:postgresql://127.0.0.1:" + port(srv) + "/dev?user=jdbc"
	got := clientOutput(t, java, "-cp", pgJDBCJar+string(os.PathListSeparator)+classes, "JdbcMeta", url)
	want := `table item_count MATERIALIZED VIEW
table items TABLE
table stock TABLE
column id int4 4 nullable=NO
column name text 12 nullable=NO
column price numeric 2 nullable=YES
pk stock shop 1 stock_pkey
pk stock item 2 stock_pkey
index stock_pkey shop 1 unique=true
index stock_pkey item 2 unique=true
count 1
ok
`
	if got != want {
		t.Errorf("JdbcMeta printed\n%s\nwant\n%s", got, want)
	}
}
