package crashtest

import (
	"context"
	"crypto/sha256"
	"errors"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
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

// harness runs one seed: a data directory, the server process of the
// moment, the clients and the model of what the database must hold.
type harness struct {
	t    *testing.T
	seed uint64
	rng  *rand.Rand // the controller's choices; clients have their own
	bin  string
	dir  string // holds data/ and server.log

	srv      *Server
	interval time.Duration // the running server's barrier interval
	args     []string      // and its extra arguments
	// startupTime is how long the last start took until the server
	// accepted connections; kills during startup aim inside it.
	startupTime time.Duration
	starts      int
	clients     []*client

	// serverArgs, if set, returns extra command-line arguments for each
	// start of the server (drawing on rng, so that the seed decides them).
	serverArgs func() []string

	// views are the materialized views known to exist, in creation order;
	// pendingDDL is a statement on them that was in flight at the kill.
	views      []*viewDef
	pendingDDL *ddlOp
	nextExtra  int

	// stop asks the clients to finish; killed tells them that errors from
	// now on are expected.
	stop, killed atomic.Bool

	stats struct {
		kills, startupKills, cycles               int
		inFlight, inFlightApplied                 int
		ddlAcked, ddlInFlight, ddlInFlightApplied int
	}
}

type ddlOp struct {
	create bool
	view   *viewDef
}

func (d *ddlOp) sql() string {
	if d.create {
		return d.view.create()
	}
	return "DROP MATERIALIZED VIEW " + d.view.name
}

func newHarness(t *testing.T, seed uint64) *harness {
	h := &harness{
		t:    t,
		seed: seed,
		rng:  rand.New(rand.NewPCG(seed, 0)),
		bin:  binary(t),
	}
	dir, err := os.MkdirTemp("", fmt.Sprintf("streamsql-crashtest-%d-", seed))
	if err != nil {
		t.Fatal(err)
	}
	h.dir = dir
	for i := range *flagClients {
		h.clients = append(h.clients, newClient(int64(i+1), seed))
	}
	t.Cleanup(func() {
		if h.srv != nil {
			_ = h.srv.Kill()
		}
		if t.Failed() {
			t.Logf("seed %d failed; reproduce with: go test ./internal/crashtest -run '%s' -seed=%d -v",
				seed, strings.Split(t.Name(), "/")[0], seed)
			t.Logf("data directory and server log kept in %s", dir)
			return
		}
		if !*flagKeep {
			os.RemoveAll(dir)
		}
	})
	return h
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
	}
	if h.serverArgs != nil {
		opts.Args = h.serverArgs()
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

// setup creates the tables and the fixed views.
func (h *harness) setup() {
	h.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), hangTimeout)
	defer cancel()
	conn := h.connect(ctx)
	defer conn.Close(ctx)
	stmts := []string{createAcct, createEvents}
	for _, v := range fixedViews {
		stmts = append(stmts, v.create())
	}
	for _, s := range stmts {
		if _, err := conn.Exec(ctx, s); err != nil {
			h.fatalf("%s: %v", s, err)
		}
	}
	h.views = append(h.views, fixedViews...)
}

// killMode is when a cycle kills the server.
type killMode int

const (
	// killAfterDelay kills after a random delay while clients write.
	killAfterDelay killMode = iota
	// killAfterAcks kills the moment the clients have received a random
	// number of acknowledgements.
	killAfterAcks
	// killDuringDDL kills shortly after a CREATE or DROP MATERIALIZED VIEW
	// was sent, while clients write.
	killDuringDDL
	// killIdle stops the clients, waits up to two barrier intervals and
	// kills a server with nothing in flight.
	killIdle
	// killDuringShutdown sends SIGTERM after a random delay and SIGKILL a
	// moment later, in the middle of the clean shutdown (its final
	// checkpoint).
	killDuringShutdown
	numKillModes
)

func (m killMode) String() string {
	return [...]string{"after-delay", "after-acks", "during-DDL", "idle", "during-shutdown"}[m]
}

// workload runs the clients (and maybe one DDL statement) against the
// running server and ends it: with SIGKILL at a moment chosen by a random
// kill mode, or with SIGTERM when term is set.
func (h *harness) workload(term bool) {
	h.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), hangTimeout)
	defer cancel()
	h.stop.Store(false)
	h.killed.Store(false)

	// Every random choice of the controller is made here, up front.
	mode := killMode(h.rng.IntN(int(numKillModes)))
	delay := time.Duration(h.rng.IntN(800)) * time.Millisecond
	ackTarget := int64(1 + h.rng.IntN(150))
	var ddl *ddlOp
	var ddlDelay time.Duration
	if mode == killDuringDDL || h.rng.IntN(2) == 0 {
		ddl, ddlDelay = h.chooseDDL(), time.Duration(h.rng.IntN(500))*time.Millisecond
	}
	ddlKillDelay := time.Duration(h.rng.Int64N(int64(h.interval) + int64(20*time.Millisecond)))
	idleWait := time.Duration(h.rng.Int64N(2 * int64(h.interval)))
	termWait := time.Duration(h.rng.IntN(30_000)) * time.Microsecond

	failed := make(chan error, len(h.clients)+1)
	fail := func(err error) {
		select {
		case failed <- err:
		default:
		}
	}
	var acks atomic.Int64
	ackReached := make(chan struct{})
	onAck := func() {
		if acks.Add(1) == ackTarget {
			close(ackReached)
		}
	}
	stmtsBefore := 0
	for _, c := range h.clients {
		stmtsBefore += c.ackedStatements
	}

	var wg sync.WaitGroup
	var conns []*pgx.Conn
	for _, c := range h.clients {
		conn := h.connect(ctx)
		conns = append(conns, conn)
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := c.run(ctx, conn, h.stop.Load, h.killed.Load, onAck); err != nil {
				fail(err)
			}
		}()
	}
	ddlSent := make(chan struct{})
	ddlOutcome := "not sent"
	if ddl != nil {
		conn := h.connect(ctx)
		conns = append(conns, conn)
		wg.Add(1)
		go func() {
			defer wg.Done()
			select {
			case <-time.After(ddlDelay):
			case <-ctx.Done():
				return
			}
			if h.stop.Load() {
				return
			}
			h.pendingDDL = ddl
			ddlOutcome = "in flight"
			close(ddlSent)
			if _, err := conn.Exec(ctx, ddl.sql()); err != nil {
				if !h.killed.Load() {
					fail(fmt.Errorf("%s: %w", ddl.sql(), err))
				}
				return
			}
			h.applyDDL(ddl)
			h.pendingDDL = nil
			ddlOutcome = "acknowledged"
			h.stats.ddlAcked++
		}()
	}

	// Wait for the moment to end the server, or for a failure.
	var timer <-chan time.Time
	var acked, sent <-chan struct{}
	switch {
	case term || mode == killAfterDelay || mode == killIdle || mode == killDuringShutdown:
		timer = time.After(delay)
	case mode == killAfterAcks:
		acked = ackReached
		timer = time.After(5 * time.Second) // too slow to reach the target: kill anyway
	case mode == killDuringDDL:
		sent = ddlSent
	}
	select {
	case <-timer:
	case <-acked:
	case <-sent:
		time.Sleep(ddlKillDelay)
	case err := <-failed:
		h.endServer(false, &wg)
		h.fatalf("%v%s", err, h.clientHistory(err))
	case <-h.srv.Exited():
		h.endServer(false, &wg)
		h.fatalf("the server exited on its own while clients were writing")
	}
	if mode == killIdle && !term {
		h.stop.Store(true)
		wg.Wait()
		time.Sleep(idleWait)
	}
	if mode == killDuringShutdown && !term {
		h.killed.Store(true)
		h.stop.Store(true)
		if err := h.srv.Signal(syscall.SIGTERM); err != nil {
			h.fatalf("%v", err)
		}
		time.Sleep(termWait)
	}
	h.endServer(term, &wg)
	for _, conn := range conns {
		conn.Close(ctx)
	}
	select {
	case err := <-failed:
		h.fatalf("%v%s", err, h.clientHistory(err))
	default:
	}
	h.checkLog(h.srv)

	acksNow, inFlight := 0, 0
	for _, c := range h.clients {
		acksNow += c.ackedStatements
		inFlight += len(c.pending)
	}
	how := "SIGTERM"
	if !term {
		how = "SIGKILL " + mode.String()
		h.stats.kills++
	}
	ddlNote := ""
	if ddl != nil {
		ddlNote = fmt.Sprintf("; %q %s", ddl.sql(), ddlOutcome)
	}
	h.t.Logf("cycle %d (barrier interval %v): %s: %d statements acknowledged, %d in flight%s",
		h.stats.cycles, h.interval, how, acksNow-stmtsBefore, inFlight, ddlNote)
	h.stats.cycles++
}

// writeFor runs the clients for d, then stops them and waits until they
// have returned; the server keeps running.
func (h *harness) writeFor(d time.Duration) {
	h.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), hangTimeout)
	defer cancel()
	h.stop.Store(false)
	h.killed.Store(false)
	errs := make(chan error, len(h.clients))
	var wg sync.WaitGroup
	for _, c := range h.clients {
		conn := h.connect(ctx)
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer conn.Close(ctx)
			if err := c.run(ctx, conn, h.stop.Load, h.killed.Load, func() {}); err != nil {
				errs <- err
			}
		}()
	}
	time.Sleep(d)
	h.stop.Store(true)
	wg.Wait()
	close(errs)
	for err := range errs {
		h.fatalf("%v%s", err, h.clientHistory(err))
	}
}

// endServer stops the clients and kills (or terminates) the server, then
// waits for the clients to return.
func (h *harness) endServer(term bool, wg *sync.WaitGroup) {
	h.t.Helper()
	h.killed.Store(true)
	h.stop.Store(true)
	if term {
		ctx, cancel := context.WithTimeout(context.Background(), hangTimeout)
		defer cancel()
		st, err := h.srv.Terminate(ctx)
		if err != nil {
			wg.Wait()
			h.fatalf("SIGTERM: %v", err)
		}
		if st.ExitCode() != 0 {
			wg.Wait()
			h.fatalf("after SIGTERM the server exited with %v, want exit status 0", st)
		}
	} else if err := h.srv.Kill(); err != nil {
		h.fatalf("%v", err)
	}
	wg.Wait()
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

// chooseDDL picks a view to create or drop.
func (h *harness) chooseDDL() *ddlOp {
	var extras []*viewDef
	for _, v := range h.views[len(fixedViews):] {
		extras = append(extras, v)
	}
	if len(extras) >= 3 || (len(extras) > 0 && h.rng.IntN(3) == 0) {
		return &ddlOp{view: extras[h.rng.IntN(len(extras))]}
	}
	def := *extraViews[h.rng.IntN(len(extraViews))]
	h.nextExtra++
	def.name += "_" + strconv.Itoa(h.nextExtra)
	return &ddlOp{create: true, view: &def}
}

func (h *harness) applyDDL(d *ddlOp) {
	if d.create {
		h.views = append(h.views, d.view)
		return
	}
	h.views = slices.DeleteFunc(h.views, func(v *viewDef) bool { return v == d.view })
}

// clientHistory returns the recent statements of the client an error is
// about.
func (h *harness) clientHistory(err error) string {
	for _, c := range h.clients {
		if strings.HasPrefix(err.Error(), fmt.Sprintf("client %d:", c.id)) {
			return c.recentHistory()
		}
	}
	return ""
}

func (c *client) recentHistory() string {
	hist := c.history[max(0, len(c.history)-30):]
	return fmt.Sprintf("\n--- last %d statements of client %d:\n  %s", len(hist), c.id, strings.Join(hist, "\n  "))
}

// verify checks the restarted server against the model: the tables hold
// every acknowledged write and some prefix of the statements in flight at
// the kill (which then join the model), the views are exactly the known
// ones, and each view equals both its defining query run as a batch SELECT
// and the model's computation of it.
func (h *harness) verify() {
	h.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), hangTimeout)
	defer cancel()
	conn := h.connect(ctx)
	defer conn.Close(ctx)
	query := func(q string) [][]string {
		rows, err := queryRows(ctx, conn, q)
		if err != nil {
			h.fatalf("%v", err)
		}
		return rows
	}

	// Tables, client by client.
	acct, events := query(selectAcct), query(selectEvents)
	acctOf, eventsOf := map[string][][]string{}, map[string][][]string{}
	for _, r := range acct {
		acctOf[r[1]] = append(acctOf[r[1]], r)
	}
	for _, r := range events {
		eventsOf[r[0]] = append(eventsOf[r[0]], r)
	}
	all := newTables()
	for _, c := range h.clients {
		id := itoa(c.id)
		applied, err := c.resolve(acctOf[id], eventsOf[id])
		if err != nil {
			h.fatalf("after restart %d: %v%s", h.starts, err, c.recentHistory())
		}
		h.stats.inFlight += len(c.pending)
		h.stats.inFlightApplied += applied
		c.pending, c.rejected = nil, nil
		delete(acctOf, id)
		delete(eventsOf, id)
		all.merge(c.acked)
	}
	for id, rows := range acctOf {
		h.fatalf("after restart %d: acct holds rows of unknown client %s: %v", h.starts, id, rows)
	}
	for id, rows := range eventsOf {
		h.fatalf("after restart %d: events holds rows of unknown client %s: %v", h.starts, id, rows)
	}

	// The set of views.
	var names []string
	for _, r := range query("SHOW MATERIALIZED VIEWS") {
		names = append(names, r[0])
	}
	if d := h.pendingDDL; d != nil {
		h.stats.ddlInFlight++
		if slices.Contains(names, d.view.name) == d.create {
			h.applyDDL(d)
			h.stats.ddlInFlightApplied++
		}
		h.pendingDDL = nil
	}
	var want []string
	for _, v := range h.views {
		want = append(want, v.name)
	}
	slices.Sort(names)
	slices.Sort(want)
	if !slices.Equal(names, want) {
		h.fatalf("after restart %d: SHOW MATERIALIZED VIEWS = %v, want %v", h.starts, names, want)
	}

	// Each view's content.
	for _, v := range h.views {
		got := query("SELECT * FROM " + v.name)
		batch := query(v.query)
		if d := diffRows(batch, got, false); d != "" {
			h.fatalf("after restart %d: view %s differs from its defining query run as a batch SELECT: %s",
				h.starts, v.name, d)
		}
		if d := diffRows(v.model(all), got, true); d != "" {
			h.fatalf("after restart %d: view %s differs from the model: %s", h.starts, v.name, d)
		}
	}
}

// resolve finds which prefix of the client's pending statements the
// server's rows (of this client) reflect, folds it into c.acked and returns
// its length. It fails if no prefix matches: an acknowledged write was lost,
// or something was applied that no history allows.
func (c *client) resolve(acct, events [][]string) (int, error) {
	state := c.acked.clone()
	for p := 0; ; p++ {
		if diffRows(state.acctRows(), acct, false) == "" && diffRows(state.eventRows(), events, false) == "" {
			if p > 0 && c.rejected != nil && *flagStrictErrors {
				return 0, fmt.Errorf("client %d: %q failed with %q (SQLSTATE %s) but was applied",
					c.id, c.pending[0].sql, c.rejected.Message, c.rejected.Code)
			}
			c.acked = state
			return p, nil
		}
		if p == len(c.pending) {
			break
		}
		c.pending[p].apply(state)
	}
	msg := fmt.Sprintf("client %d: the tables match no state allowed by the history (%d statements in flight)", c.id, len(c.pending))
	if d := diffRows(c.acked.acctRows(), acct, false); d != "" {
		msg += "\n  acct vs the acknowledged state: " + d
	}
	if d := diffRows(c.acked.eventRows(), events, false); d != "" {
		msg += "\n  events vs the acknowledged state: " + d
	}
	return 0, errors.New(msg)
}
