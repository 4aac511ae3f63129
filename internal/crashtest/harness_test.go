package crashtest

import (
	"context"
	"crypto/sha256"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

var (
	flagSeed       = flag.Uint64("seed", 0, "run only this seed (0: -seeds random seeds)")
	flagSeeds      = flag.Int("seeds", 3, "number of random seeds when -seed is not given")
	flagCycles     = flag.Int("cycles", 5, "kill cycles per seed")
	flagClients    = flag.Int("clients", 4, "concurrent writing clients")
	flagServerRace = flag.Bool("server-race", false, "build the server with the race detector")
	flagBinary     = flag.String("binary", "", "test this streamsql executable instead of building ./cmd/streamsql")
	// A statement the server answered with an error must not have been
	// applied: the engine finishes a write that reached its table (ignoring
	// the statement's cancellation) and the server lets running statements
	// finish at shutdown.
	flagStrictErrors = flag.Bool("strict-errors", true,
		"fail when a statement the server answered with an error was applied anyway")
	flagParallelism = flag.Int("parallelism", 0,
		"run the servers with --streaming-parallelism N (0: chosen per seed, see seedParallelism)")
	flagKeep = flag.Bool("keep", false, "keep data directories and server logs (they are always kept when a seed fails)")
)

var serverBinary struct {
	once sync.Once
	path string
	err  error
}

func TestMain(m *testing.M) {
	flag.Parse()
	os.Exit(m.Run())
}

// binary builds the streamsql binary once per test run and returns its
// path. The binary lives in the user's cache directory, one per module
// root, so that go build can skip linking when nothing changed since the
// last run (linking the binary takes seconds).
func binary(t testing.TB) string {
	t.Helper()
	serverBinary.once.Do(func() {
		if *flagBinary != "" {
			serverBinary.path, serverBinary.err = filepath.Abs(*flagBinary)
			return
		}
		root, err := ModuleRoot(".")
		if err != nil {
			serverBinary.err = err
			return
		}
		dir, err := os.UserCacheDir()
		if err != nil {
			dir = os.TempDir()
		}
		dir = filepath.Join(dir, "streamsql-crashtest", fmt.Sprintf("%x", sha256.Sum256([]byte(root)))[:16])
		if err := os.MkdirAll(dir, 0o755); err != nil {
			serverBinary.err = err
			return
		}
		name := "streamsql"
		if *flagServerRace {
			name += "-race"
		}
		path := filepath.Join(dir, name)
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
		defer cancel()
		start := time.Now()
		serverBinary.err = BuildServer(ctx, root, path, *flagServerRace)
		serverBinary.path = path
		t.Logf("built %s in %v", path, time.Since(start).Round(time.Millisecond))
	})
	if serverBinary.err != nil {
		t.Fatalf("building streamsql: %v", serverBinary.err)
	}
	return serverBinary.path
}

// hangTimeout bounds every wait on the server, so that a hung server fails
// the test with its log instead of blocking until the test binary times out.
// It is not an assertion about speed.
const hangTimeout = 2 * time.Minute

// harness runs one seed of a crash test: a data directory and the server
// process of the moment, which it starts, kills and checks; each test adds
// its workload, its model and its checks (crashHarness, srcHarness), and
// runs its cycles with newCycle.
type harness struct {
	t    *testing.T
	seed uint64
	rng  *rand.Rand // the controller's choices; clients have their own
	bin  string
	dir  string // holds data/ and server.log

	// parallelism is the server's --streaming-parallelism: the actors
	// every view's partitioned part runs on.
	parallelism int

	srv      *Server
	interval time.Duration // the running server's barrier interval
	args     []string      // and its extra arguments
	// startupTime is how long the last start took until the server
	// accepted connections; kills during startup aim inside it.
	startupTime time.Duration
	starts      int

	// serverArgs, if set, returns extra command-line arguments for each
	// start of the server (drawing on rng, so that the seed decides them).
	serverArgs func() []string
	// writers are the logs of the test's clients, for failure reports and
	// statistics.
	writers []*writerLog
	// extras numbers the views created during the run.
	extras int

	stats struct {
		kills, startupKills, cycles int
	}
}

func newHarness(t *testing.T, seed uint64) *harness {
	h := &harness{
		t:    t,
		seed: seed,
		rng:  rand.New(rand.NewPCG(seed, 0)),
		bin:  binary(t),
	}
	h.parallelism = seedParallelism(seed)
	t.Logf("seed %d: views run on %d actors (--streaming-parallelism)", seed, h.parallelism)
	dir, err := os.MkdirTemp("", fmt.Sprintf("streamsql-crashtest-%d-", seed))
	if err != nil {
		t.Fatal(err)
	}
	h.dir = dir
	t.Cleanup(func() {
		if h.srv != nil {
			_ = h.srv.Kill()
		}
		if t.Failed() {
			t.Logf("seed %d failed; reproduce with: go test ./internal/crashtest -run '%s' -seed=%d -parallelism=%d -v",
				seed, strings.Split(t.Name(), "/")[0], seed, h.parallelism)
			t.Logf("data directory and server log kept in %s", dir)
			return
		}
		if !*flagKeep {
			os.RemoveAll(dir)
		}
	})
	return h
}

// seedParallelism returns the --streaming-parallelism of a seed's servers:
// -parallelism if given, else 1, 2, 2 or 4 by the seed, so that CI's few
// random seeds run both one-actor and parallel views. It draws nothing from
// the seed's random choices, whose schedule stays that of the seed.
func seedParallelism(seed uint64) int {
	if *flagParallelism > 0 {
		return *flagParallelism
	}
	return [...]int{1, 2, 2, 4}[seed%4]
}

func (h *harness) dataDir() string { return filepath.Join(h.dir, "data") }
func (h *harness) logPath() string { return filepath.Join(h.dir, "server.log") }

// fatalf fails the seed, adding the tail of the server's log.
func (h *harness) fatalf(format string, args ...any) {
	h.t.Helper()
	msg := fmt.Sprintf(format, args...)
	if h.srv != nil {
		msg += "\n--- server log (tail):\n" + h.srv.LogTail(3000)
	}
	h.t.Fatalf("seed %d: %s", h.seed, msg)
}

func (h *harness) options() Options {
	opts := Options{
		Binary:          h.bin,
		DataDir:         h.dataDir(),
		BarrierInterval: time.Duration(20+h.rng.IntN(481)) * time.Millisecond,
		LogPath:         h.logPath(),
		Args:            []string{"--streaming-parallelism", strconv.Itoa(h.parallelism)},
	}
	if h.serverArgs != nil {
		opts.Args = append(opts.Args, h.serverArgs()...)
	}
	return opts
}

// start starts the server on the data directory and waits until it accepts
// connections.
func (h *harness) start() {
	h.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), hangTimeout)
	defer cancel()
	opts := h.options()
	t0 := time.Now()
	srv, err := Start(ctx, opts)
	if err != nil {
		h.fatalf("start %d (barrier interval %v, args %q): %v", h.starts+1, opts.BarrierInterval, opts.Args, err)
	}
	h.startupTime = time.Since(t0)
	h.srv, h.interval, h.args = srv, opts.BarrierInterval, opts.Args
	h.starts++
}

// restart starts the server again after a cycle ended it. One time in four
// it first kills a start during recovery.
func (h *harness) restart() {
	h.t.Helper()
	if h.rng.IntN(4) == 0 {
		h.killDuringStartup()
	}
	h.start()
}

// killDuringStartup launches the server and kills it at a random moment
// of its startup (up to 1.5 times the last startup's duration): before,
// during or just after recovery.
func (h *harness) killDuringStartup() {
	h.t.Helper()
	opts := h.options()
	delay := time.Duration(h.rng.Int64N(int64(h.startupTime)*3/2 + 1))
	srv, err := Launch(opts)
	if err != nil {
		h.fatalf("launch: %v", err)
	}
	time.Sleep(delay)
	if err := srv.Kill(); err != nil {
		h.fatalf("%v", err)
	}
	h.stats.startupKills++
	h.t.Logf("killed a starting server after %v (the last start took %v)", delay, h.startupTime)
	h.checkLog(srv)
}

func (h *harness) connect(ctx context.Context) *pgx.Conn {
	h.t.Helper()
	conn, err := connect(ctx, h.srv.URL)
	if err != nil {
		h.fatalf("connecting: %v", err)
	}
	return conn
}

// A session is a connection of the controller's to the running server for
// setting up and verifying, bounded by hangTimeout. Its methods fail the
// seed on an error.
type session struct {
	h      *harness
	ctx    context.Context
	cancel context.CancelFunc
	conn   *pgx.Conn
}

// session connects to the running server. The caller closes the session.
func (h *harness) session() *session {
	h.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), hangTimeout)
	conn, err := connect(ctx, h.srv.URL)
	if err != nil {
		cancel()
		h.fatalf("connecting: %v", err)
	}
	return &session{h: h, ctx: ctx, cancel: cancel, conn: conn}
}

func (s *session) close() {
	s.conn.Close(s.ctx)
	s.cancel()
}

// exec runs a statement and returns its command tag.
func (s *session) exec(q string) string {
	s.h.t.Helper()
	tag, err := s.conn.Exec(s.ctx, q)
	if err != nil {
		s.h.fatalf("%s: %v", q, err)
	}
	return tag.String()
}

// query runs a query and returns its rows (see queryRows).
func (s *session) query(q string) [][]string {
	s.h.t.Helper()
	rows, err := queryRows(s.ctx, s.conn, q)
	if err != nil {
		s.h.fatalf("%v", err)
	}
	return rows
}

// extraName returns name with a new number, for a view created during the
// run.
func (h *harness) extraName(name string) string {
	h.extras++
	return name + "_" + strconv.Itoa(h.extras)
}

// checkViewNames fails the seed unless the restarted server's materialized
// views, names, are the ones the model knows, want, in any order. It sorts
// both.
func (h *harness) checkViewNames(names, want []string) {
	h.t.Helper()
	slices.Sort(names)
	slices.Sort(want)
	if !slices.Equal(names, want) {
		h.fatalf("after restart %d: the materialized views are %v, want %v", h.starts, names, want)
	}
}

// history returns the recent statements of the client an error is about,
// if it is about one.
func (h *harness) history(err error) string {
	for _, w := range h.writers {
		if strings.HasPrefix(err.Error(), w.name+":") {
			return w.recentHistory()
		}
	}
	return ""
}

// counts sums the counters of the clients.
func (h *harness) counts() writerCounts {
	var n writerCounts
	for _, w := range h.writers {
		n.statements += w.statements
		n.ackedStatements += w.ackedStatements
		n.checks += w.checks
	}
	return n
}

// shutdown stops an idle server with SIGTERM; it must exit with status 0
// and log no problems.
func (h *harness) shutdown() {
	h.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), hangTimeout)
	defer cancel()
	st, err := h.srv.Terminate(ctx)
	if err != nil {
		h.fatalf("SIGTERM: %v", err)
	}
	if st.ExitCode() != 0 {
		h.fatalf("after SIGTERM the server exited with %v, want exit status 0", st)
	}
	h.checkLog(h.srv)
}

// checkLog fails if the log of a server that has exited reports errors,
// panics or data races.
func (h *harness) checkLog(s *Server) {
	h.t.Helper()
	problems := s.LogProblems()
	if len(problems) > 0 {
		h.t.Fatalf("seed %d: the server logged problems:\n%s", h.seed, strings.Join(problems, "\n"))
	}
}
