package crashtest

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5"
)

// killMode is when a cycle kills the server. Each test draws from its own
// list of modes (see killConfig).
type killMode int

const (
	// killAfterDelay kills after a random delay while clients write.
	killAfterDelay killMode = iota
	// killAfterAcks kills the moment the clients have received a random
	// number of acknowledgements: an epoch has just committed.
	killAfterAcks
	// killDuringCommit kills a few milliseconds after a client sent its
	// unit number n, while the checkpoint that write triggered runs
	// through the dataflows or commits.
	killDuringCommit
	// killDuringDDL kills shortly after a DDL statement (CREATE, DROP,
	// PAUSE or RESUME of a materialized view) was sent, while clients
	// write.
	killDuringDDL
	// killIdle stops the clients, waits up to two barrier intervals and
	// kills a server with no statement in flight.
	killIdle
	// killDuringShutdown sends SIGTERM after a random delay and SIGKILL a
	// moment later, in the middle of the clean shutdown (its final
	// checkpoint).
	killDuringShutdown
)

func (m killMode) String() string {
	return [...]string{"after-delay", "after-acks", "during-commit", "during-DDL", "idle", "during-shutdown"}[m]
}

// killConfig is what a test's cycles draw their killPlans from.
type killConfig struct {
	// modes are drawn with equal chances. With killDuringCommit among them,
	// every plan also draws a send target and a commit delay.
	modes []killMode
	// maxDelay bounds the delay of killAfterDelay, killIdle and
	// killDuringShutdown, maxAcks the acknowledgement (and send) target,
	// maxDDLDelay the wait before the DDL statement is sent; the delays
	// are drawn in whole milliseconds.
	maxDelay    time.Duration
	maxAcks     int
	maxDDLDelay time.Duration
	// targetWait is how long killAfterAcks and killDuringCommit wait for
	// their target before killing anyway.
	targetWait time.Duration
}

// killPlan is the controller's random choices for one cycle, drawn up front
// by harness.planKill so that the seed alone decides them.
type killPlan struct {
	mode        killMode
	delay       time.Duration
	ackTarget   int64
	sendTarget  int64         // killDuringCommit
	commitDelay time.Duration // after the send target, killDuringCommit
	ddlDelay    time.Duration // before the DDL statement, if there is one
	// ddlKillDelay follows the DDL statement's send (killDuringDDL),
	// idleWait the clients' stop (killIdle), termWait the SIGTERM
	// (killDuringShutdown).
	ddlKillDelay, idleWait, termWait time.Duration
	targetWait                       time.Duration // from the killConfig
}

// planKill draws a cycle's killPlan from cfg. Whether the cycle sends a
// DDL statement is drawn too: if so, chooseDDL is called to pick it (it may
// draw on h.rng) before the DDL delay is drawn. The order and number of the
// draws are part of both tests' schedules: changing them changes what an
// old seed reproduces.
func (h *harness) planKill(cfg killConfig, chooseDDL func()) killPlan {
	p := killPlan{mode: cfg.modes[h.rng.IntN(len(cfg.modes))], targetWait: cfg.targetWait}
	p.delay = randDuration(h.rng, cfg.maxDelay, time.Millisecond)
	p.ackTarget = int64(1 + h.rng.IntN(cfg.maxAcks))
	if slices.Contains(cfg.modes, killDuringCommit) {
		p.sendTarget = int64(1 + h.rng.IntN(cfg.maxAcks))
		p.commitDelay = randDuration(h.rng, 5*time.Millisecond, time.Microsecond)
	}
	if p.mode == killDuringDDL || h.rng.IntN(2) == 0 {
		chooseDDL()
		p.ddlDelay = randDuration(h.rng, cfg.maxDDLDelay, time.Millisecond)
	}
	p.ddlKillDelay = time.Duration(h.rng.Int64N(int64(h.interval) + int64(20*time.Millisecond)))
	p.idleWait = time.Duration(h.rng.Int64N(2 * int64(h.interval)))
	p.termWait = randDuration(h.rng, 30*time.Millisecond, time.Microsecond)
	return p
}

// randDuration returns a random whole number of units below limit.
func randDuration(rng *rand.Rand, limit, unit time.Duration) time.Duration {
	return time.Duration(rng.IntN(int(limit/unit))) * unit
}

// A cycle is one life of the server under a workload: goroutines (the
// clients, a monitor, a DDL statement) run against it, each on a
// connection of its own, until the controller ends the server at the
// moment its killPlan chooses (end) or just stops them (finish). The cycle
// opens the connections and closes them when it ends; the context given to
// newCycle bounds everything the goroutines do.
//
// The goroutines may call fail, onSend, onAck and stop.Load and
// killed.Load; the other methods belong to the controller's goroutine.
type cycle struct {
	h    *harness
	ctx  context.Context
	plan killPlan

	wg    sync.WaitGroup
	conns []*pgx.Conn
	// failed holds the first failure of a goroutine; later ones are
	// dropped.
	failed chan error
	// stop asks the goroutines to finish; killed tells them that errors
	// from now on are expected.
	stop, killed atomic.Bool

	acks, sends             atomic.Int64
	ackReached, sendReached chan struct{} // closed at the plan's targets

	// ddlSQL is the cycle's DDL statement, if it has one; ddlSent is closed
	// just before it is sent. ddlOutcome is what became of it: "not sent",
	// "in flight" or "acknowledged" (read it after end).
	ddlSQL     string
	ddlSent    chan struct{}
	ddlOutcome string
}

func (h *harness) newCycle(ctx context.Context, plan killPlan) *cycle {
	return &cycle{
		h:           h,
		ctx:         ctx,
		plan:        plan,
		failed:      make(chan error, 1),
		ackReached:  make(chan struct{}),
		sendReached: make(chan struct{}),
		ddlSent:     make(chan struct{}),
	}
}

// fail records a goroutine's failure. It does not block.
func (c *cycle) fail(err error) {
	select {
	case c.failed <- err:
	default:
	}
}

// onSend is to be called as a client sends a unit, onAck once the unit is
// fully acknowledged: they count towards the plan's targets.
func (c *cycle) onSend() {
	if c.sends.Add(1) == c.plan.sendTarget {
		close(c.sendReached)
	}
}

func (c *cycle) onAck() {
	if c.acks.Add(1) == c.plan.ackTarget {
		close(c.ackReached)
	}
}

// goConn opens a connection and runs f with it on a new goroutine; an
// error from f fails the cycle. f must return once stop is set or the
// connection breaks.
func (c *cycle) goConn(f func(conn *pgx.Conn) error) {
	c.h.t.Helper()
	conn := c.h.connect(c.ctx)
	c.conns = append(c.conns, conn)
	c.wg.Add(1)
	go func() {
		defer c.wg.Done()
		if err := f(conn); err != nil {
			c.fail(err)
		}
	}()
}

// goDDL sends the DDL statement sql on a connection of its own after the
// plan's DDL delay, unless the cycle has stopped by then. The goroutine
// calls sending just before it sends the statement and acked once it is
// acknowledged (the caller keeps its model of the views with them). An
// error is a failure unless the server is being killed.
func (c *cycle) goDDL(sql string, sending, acked func()) {
	c.h.t.Helper()
	c.ddlSQL, c.ddlOutcome = sql, "not sent"
	c.goConn(func(conn *pgx.Conn) error {
		select {
		case <-time.After(c.plan.ddlDelay):
		case <-c.ctx.Done():
			return nil
		}
		if c.stop.Load() {
			return nil
		}
		sending()
		c.ddlOutcome = "in flight"
		close(c.ddlSent)
		if _, err := conn.Exec(c.ctx, sql); err != nil {
			if !c.killed.Load() {
				return fmt.Errorf("%s: %w", sql, err)
			}
			return nil
		}
		acked()
		c.ddlOutcome = "acknowledged"
		return nil
	})
}

// ddlNote describes the DDL statement and its outcome for the cycle's log
// line, or is empty if the cycle had none.
func (c *cycle) ddlNote() string {
	if c.ddlSQL == "" {
		return ""
	}
	return fmt.Sprintf("; %q %s", c.ddlSQL, c.ddlOutcome)
}

// end waits for the moment the plan chooses and ends the server with
// SIGKILL, or, with term, waits for the plan's delay and stops the server
// with SIGTERM (it must exit with status 0). Then it waits for the
// goroutines and closes the connections. It fails the seed if a goroutine
// failed, the server exited on its own or its log reports a problem.
func (c *cycle) end(term bool) {
	h, p := c.h, c.plan
	h.t.Helper()
	var timer <-chan time.Time
	var event <-chan struct{}
	var pause time.Duration // after the event
	switch {
	case term || p.mode == killAfterDelay || p.mode == killIdle || p.mode == killDuringShutdown:
		timer = time.After(p.delay)
	case p.mode == killAfterAcks:
		event, timer = c.ackReached, time.After(p.targetWait) // too slow to reach the target: kill anyway
	case p.mode == killDuringCommit:
		event, timer, pause = c.sendReached, time.After(p.targetWait), p.commitDelay
	case p.mode == killDuringDDL:
		event, pause = c.ddlSent, p.ddlKillDelay
	}
	select {
	case <-timer:
	case <-event:
		time.Sleep(pause)
	case err := <-c.failed:
		c.endServer(false)
		h.fatalf("%v%s", err, h.history(err))
	case <-h.srv.Exited():
		c.endServer(false)
		h.fatalf("the server exited on its own during the workload")
	}
	switch {
	case term:
	case p.mode == killIdle:
		c.stop.Store(true)
		c.wg.Wait()
		time.Sleep(p.idleWait)
	case p.mode == killDuringShutdown:
		c.killed.Store(true)
		c.stop.Store(true)
		if err := h.srv.Signal(syscall.SIGTERM); err != nil {
			h.fatalf("%v", err)
		}
		time.Sleep(p.termWait)
	}
	c.endServer(term)
	c.closeConns()
	h.checkLog(h.srv)
}

// finish stops the goroutines, waits for them and closes the connections;
// the server keeps running. It fails the seed if a goroutine failed.
func (c *cycle) finish() {
	c.h.t.Helper()
	c.stop.Store(true)
	c.wg.Wait()
	c.closeConns()
}

// endServer stops the goroutines and kills (or terminates) the server,
// then waits for the goroutines to return.
func (c *cycle) endServer(term bool) {
	h := c.h
	h.t.Helper()
	c.killed.Store(true)
	c.stop.Store(true)
	if term {
		ctx, cancel := context.WithTimeout(context.Background(), hangTimeout)
		defer cancel()
		st, err := h.srv.Terminate(ctx)
		if err != nil {
			c.wg.Wait()
			h.fatalf("SIGTERM: %v", err)
		}
		if st.ExitCode() != 0 {
			c.wg.Wait()
			h.fatalf("after SIGTERM the server exited with %v, want exit status 0", st)
		}
	} else if err := h.srv.Kill(); err != nil {
		h.fatalf("%v", err)
	}
	c.wg.Wait()
}

// closeConns closes the connections of the goroutines, which have
// returned, and fails the seed if one of them failed.
func (c *cycle) closeConns() {
	c.h.t.Helper()
	for _, conn := range c.conns {
		conn.Close(c.ctx)
	}
	select {
	case err := <-c.failed:
		c.h.fatalf("%v%s", err, c.h.history(err))
	default:
	}
}
