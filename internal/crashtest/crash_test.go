package crashtest

import (
	"context"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// seeds returns the seeds to run: -seed alone, or -seeds random ones (one
// in -short mode).
func seeds() []uint64 {
	if *flagSeed != 0 {
		return []uint64{*flagSeed}
	}
	n := *flagSeeds
	if testing.Short() {
		n = 1
	}
	out := make([]uint64, n)
	for i := range out {
		out[i] = rand.Uint64()%1_000_000 + 1
	}
	return out
}

// TestCrashRecovery kills the server with SIGKILL at random moments under
// concurrent writes and DDL, restarts it on the same data directory and
// verifies it after every restart (see harness.verify). Every few cycles it
// also kills the server while it starts up.
func TestCrashRecovery(t *testing.T) {
	cycles := *flagCycles
	if testing.Short() {
		cycles = min(cycles, 3)
	}
	for _, seed := range seeds() {
		t.Run(fmt.Sprintf("seed=%d", seed), func(t *testing.T) {
			h := newHarness(t, seed)
			h.start()
			h.setup()
			for range cycles {
				h.workload(false)
				if h.rng.IntN(4) == 0 {
					h.killDuringStartup()
				}
				h.start()
				h.verify()
			}
			h.shutdown()
			h.logStats()
		})
	}
}

// TestCleanShutdown stops the server with SIGTERM, first while clients
// write and then while idle: it must exit with status 0, and a restart must
// hold every acknowledged write (and, after the idle stop, nothing else).
func TestCleanShutdown(t *testing.T) {
	h := newHarness(t, seeds()[0])
	h.start()
	h.setup()

	h.workload(true)
	h.start()
	h.verify()

	// Idle: run the clients, let them finish, then SIGTERM.
	h.writeFor(time.Duration(100+h.rng.IntN(400)) * time.Millisecond)
	h.shutdown()
	if !strings.Contains(h.srv.Log(), "database closed") {
		h.fatalf("the log of a clean shutdown does not say \"database closed\"")
	}
	h.start()
	h.verify() // no statement is pending: the tables must equal the model exactly
	h.logStats()
}

// TestDataDirInUse starts a second server on the data directory of a running
// one: it must refuse to start, saying the directory is in use, and leave
// the first server and its data alone.
func TestDataDirInUse(t *testing.T) {
	bin := binary(t)
	dir := t.TempDir()
	opts := Options{Binary: bin, DataDir: filepath.Join(dir, "data"), LogPath: filepath.Join(dir, "first.log")}
	ctx, cancel := context.WithTimeout(context.Background(), hangTimeout)
	defer cancel()
	first, err := Start(ctx, opts)
	if err != nil {
		t.Fatal(err)
	}
	defer first.Kill()
	conn, err := connect(ctx, first.URL)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{"CREATE TABLE t (k int PRIMARY KEY, v text)", "INSERT INTO t VALUES (1, 'one')"} {
		if _, err := conn.Exec(ctx, s); err != nil {
			t.Fatalf("%s: %v", s, err)
		}
	}

	second := opts
	second.LogPath = filepath.Join(dir, "second.log")
	s2, err := Launch(second)
	if err != nil {
		t.Fatal(err)
	}
	st, err := s2.Wait(ctx)
	if err != nil {
		t.Fatalf("the second server on the same data directory did not exit: %v", err)
	}
	out := s2.LogTail(4096)
	if st.ExitCode() == 0 {
		t.Fatalf("the second server on the same data directory exited with status 0; log:\n%s", out)
	}
	if !strings.Contains(out, "data directory") || !strings.Contains(out, "in use") {
		t.Fatalf("the second server's message does not say the data directory is in use:\n%s", out)
	}
	if !strings.Contains(out, opts.DataDir) {
		t.Errorf("the second server's message does not name the data directory %s:\n%s", opts.DataDir, out)
	}

	// The first server still works.
	if _, err := conn.Exec(ctx, "INSERT INTO t VALUES (2, 'two')"); err != nil {
		t.Fatalf("the first server failed after the second was refused: %v", err)
	}
	conn.Close(ctx)

	// After the first server dies, its lock goes with it.
	if err := first.Kill(); err != nil {
		t.Fatal(err)
	}
	opts.LogPath = filepath.Join(dir, "third.log")
	third, err := Start(ctx, opts)
	if err != nil {
		t.Fatalf("restarting after the first server was killed: %v", err)
	}
	defer third.Kill()
	conn, err = connect(ctx, third.URL)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	rows, err := queryRows(ctx, conn, "SELECT k, v FROM t")
	if err != nil {
		t.Fatal(err)
	}
	if d := diffRows([][]string{{"1", "one"}, {"2", "two"}}, rows, false); d != "" {
		t.Fatalf("after the restart: %s", d)
	}
}

func (h *harness) logStats() {
	s := h.stats
	acked, stmts, checks := 0, 0, 0
	for _, c := range h.clients {
		acked += c.ackedStatements
		stmts += c.statements
		checks += c.checks
	}
	h.t.Logf("seed %d: %d cycles, %d SIGKILLs under load, %d during startup, %d starts; %d of %d statements acknowledged, "+
		"%d in flight at kills of which %d applied; %d read-your-writes checks; DDL: %d acknowledged, %d in flight of which %d applied",
		h.seed, s.cycles, s.kills, s.startupKills, h.starts, acked, stmts, s.inFlight, s.inFlightApplied, checks,
		s.ddlAcked, s.ddlInFlight, s.ddlInFlightApplied)
}
