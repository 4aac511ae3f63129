package pgwire

import (
	"os"
	"os/exec"
	"testing"
)

// TestPsql runs the real psql against the fake engine.
func TestPsql(t *testing.T) {
	psql, err := exec.LookPath("psql")
	if err != nil {
		t.Skip("psql is not on PATH")
	}
	ts, done := setup(t)
	defer done()
	cmd := exec.Command(psql, "-h", "127.0.0.1", "-p", ts.port(), "-d", "dev", "-c", "select 1")
	cmd.Env = append(os.Environ(), "PSQLRC=/dev/null", "PGUSER=tester", "PGCONNECT_TIMEOUT=10")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("psql: %v\n%s", err, out)
	}
	const want = " ?column? \n----------\n        1\n(1 row)\n\n"
	if string(out) != want {
		t.Errorf("psql printed\n%q\nwant\n%q", out, want)
	}
	if p := ts.e.lastParams(); p["user"] != "tester" || p["database"] != "dev" || p["application_name"] != "psql" {
		t.Errorf("engine got params %v", p)
	}
}
