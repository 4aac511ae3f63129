package crashtest

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// modelStmt is one write statement and its effect on M, the model of the
// writing client's rows.
type modelStmt[M any] struct {
	sql string
	// apply changes the client's model as the statement changes the
	// client's rows, and returns the command tag the server must reply
	// with. It is deterministic, so it can be replayed on copies of the
	// model to enumerate the states a crash may leave.
	apply func(m M) string
}

// A writer is what the clients of both tests share: the model M of the
// rows the client owns (every client owns its rows, so they follow its own
// statements exactly), the statements in flight at a kill, its history and
// its counters. It sends the client's units and, after a restart, finds
// which of the statements in flight the server applied. A writer is used by
// one goroutine at a time.
type writer[M any] struct {
	writerLog
	// acked is the model of the client's rows after its acknowledged
	// statements; clone copies a model.
	acked M
	clone func(M) M
	// pending are the statements sent but not acknowledged when the server
	// died, in order. Any prefix of them may have been applied; the next
	// verification finds which and folds it into acked.
	pending []modelStmt[M]
	// rejected is the error the server returned for pending[0], if it
	// returned one (rather than the connection breaking): the statement
	// failed, so it must not have been applied.
	rejected *pgconn.PgError
}

// writerLog is the part of a writer that does not depend on its model; the
// harness keeps the logs of all the clients (harness.writers).
type writerLog struct {
	// name is "client 3" or the like; the client's errors start with it.
	name string
	// history is the log of the client's statements, for failure reports.
	history []string
	writerCounts
}

// writerCounts are a client's counters over the whole run.
type writerCounts struct {
	statements, ackedStatements, checks int
}

func (l *writerLog) recentHistory() string {
	hist := l.history[max(0, len(l.history)-30):]
	return fmt.Sprintf("\n--- last %d statements of %s:\n  %s", len(hist), l.name, strings.Join(hist, "\n  "))
}

// unit returns a unit of n statements made by next, each against the model
// as it will be after the earlier ones: meanwhile w.acked is a scratch copy
// they are applied to.
func (w *writer[M]) unit(n int, next func() modelStmt[M]) []modelStmt[M] {
	saved := w.acked
	w.acked = w.clone(saved)
	var unit []modelStmt[M]
	for range n {
		s := next()
		s.apply(w.acked)
		unit = append(unit, s)
	}
	w.acked = saved
	return unit
}

// run runs the client in cy on conn until the cycle stops or the
// connection breaks. step returns the client's next unit (one statement,
// or a few sent as one simple-protocol query), or runs a read-your-writes
// check and returns no unit and the check's error. An error is a failure
// unless the server is being killed.
func (w *writer[M]) run(cy *cycle, conn *pgx.Conn, step func() ([]modelStmt[M], error)) error {
	for !cy.stop.Load() {
		unit, err := step()
		if unit == nil { // step ran a check
			w.checks++
			if err != nil {
				if cy.killed.Load() {
					return nil
				}
				return err
			}
			continue
		}
		if ok, err := w.send(cy, conn, unit); !ok {
			return err
		}
	}
	return nil
}

// send sends unit as one query, checking each statement's command tag
// against the model, into which it folds the acknowledged statements; it
// calls cy.onSend before and cy.onAck once the unit is fully acknowledged.
// It returns false if the unit was not, with the failure, or with a nil
// error if the server is being killed: then the unacknowledged rest of the
// unit becomes w.pending.
func (w *writer[M]) send(cy *cycle, conn *pgx.Conn, unit []modelStmt[M]) (bool, error) {
	w.statements += len(unit)
	sqls := make([]string, len(unit))
	for i, s := range unit {
		sqls[i] = s.sql
		w.history = append(w.history, s.sql)
	}
	cy.onSend()
	done, err := execUnit(cy.ctx, conn.PgConn(), strings.Join(sqls, "; "), func(i int, tag string) error {
		want := unit[i].apply(w.acked)
		w.ackedStatements++
		if tag != want {
			return fmt.Errorf("%s: %q returned %q, the model expects %q: %w", w.name, unit[i].sql, tag, want, errWrongTag)
		}
		return nil
	})
	switch {
	case errors.Is(err, errWrongTag):
		return false, err
	case err != nil && cy.killed.Load():
		w.pending = unit[done:]
		errors.As(err, &w.rejected)
		for _, s := range w.pending {
			w.history = append(w.history, "  (in flight at the kill) "+s.sql)
		}
		return false, nil
	case err != nil:
		return false, fmt.Errorf("%s: %q: %w", w.name, unit[min(done, len(unit)-1)].sql, err)
	}
	cy.onAck()
	return true, nil
}

// resolvePending finds which prefix of w.pending the server's rows of the
// client reflect: the shortest one after which matches holds for the
// model. It folds that prefix into w.acked, clears w.pending and returns
// its length. If no prefix matches (an acknowledged write was lost, or
// something was applied that no history allows), it returns errNoPrefix
// and changes nothing. With -strict-errors, a prefix that holds a
// statement the server rejected is an error.
func (w *writer[M]) resolvePending(matches func(M) bool) (int, error) {
	state := w.clone(w.acked)
	for p := 0; ; p++ {
		if matches(state) {
			if p > 0 && w.rejected != nil && *flagStrictErrors {
				return 0, fmt.Errorf("%s: %q failed with %q (SQLSTATE %s) but was applied",
					w.name, w.pending[0].sql, w.rejected.Message, w.rejected.Code)
			}
			w.acked = state
			w.pending, w.rejected = nil, nil
			return p, nil
		}
		if p == len(w.pending) {
			return 0, errNoPrefix
		}
		w.pending[p].apply(state)
	}
}

// errNoPrefix is the error of writer.resolvePending when no prefix of the
// statements in flight matches.
var errNoPrefix = errors.New("no prefix of the statements in flight matches")

// stmt is a statement of TestCrashRecovery's clients.
type stmt = modelStmt[*tables]

// client is one connection's writer in TestCrashRecovery. It owns the rows
// whose client column is its id.
type client struct {
	writer[*tables]
	id  int64
	rng *rand.Rand
	// nextKey numbers new ids and seqs; nextStmt numbers statements (notes
	// carry it, so every row version can be traced to its statement).
	nextKey, nextStmt int64
}

func newClient(id int64, seed uint64) *client {
	return &client{
		writer: writer[*tables]{
			writerLog: writerLog{name: fmt.Sprintf("client %d", id)},
			acked:     newTables(),
			clone:     (*tables).clone,
		},
		id:  id,
		rng: rand.New(rand.NewPCG(seed, uint64(id)+1)),
	}
}

func (c *client) key() int64 {
	c.nextKey++
	return c.id*1_000_000_000 + c.nextKey
}

func (c *client) note() string { return fmt.Sprintf("c%ds%d", c.id, c.nextStmt) }

var tags = []string{"red", "green", "blue", "amber", "violet"}

// randomAcct returns the id of one of the client's acct rows, or false.
func (c *client) randomAcct() (int64, bool) {
	rows := c.acked.sortedAcct()
	if len(rows) == 0 {
		return 0, false
	}
	return rows[c.rng.IntN(len(rows))].id, true
}

func (c *client) randomEvent() (int64, bool) {
	rows := c.acked.sortedEvents()
	if len(rows) == 0 {
		return 0, false
	}
	return rows[c.rng.IntN(len(rows))].seq, true
}

// next returns the client's next unit: one statement, or a few sent as one
// simple-protocol query. The choice depends only on the client's random
// stream and its model.
func (c *client) next() []stmt {
	if c.rng.IntN(8) == 0 {
		return c.unit(2+c.rng.IntN(3), c.nextStmt1)
	}
	return []stmt{c.nextStmt1()}
}

// nextStmt1 returns one write statement; inserts are likelier while the
// client has few rows, so the tables stay small.
func (c *client) nextStmt1() stmt {
	c.nextStmt++
	cid := c.id
	note := c.note()
	grow := len(c.acked.acct)+len(c.acked.events) < 80
	if len(c.acked.events) > 150 && c.rng.IntN(3) == 0 {
		return stmt{
			sql: fmt.Sprintf("DELETE FROM events WHERE client = %d AND tag = 'bulk'", cid),
			apply: func(m *tables) string {
				n := 0
				for seq, r := range m.events {
					if r.tag == "bulk" {
						delete(m.events, seq)
						n++
					}
				}
				return fmt.Sprintf("DELETE %d", n)
			},
		}
	}
	switch r := c.rng.IntN(21); {
	case r == 20:
		// A large statement: hundreds of rows in one epoch.
		n, salt := int64(50+c.rng.IntN(350)), int64(c.rng.IntN(2001))
		base := c.key() - 1
		c.nextKey += n - 1
		return stmt{
			sql: fmt.Sprintf("INSERT INTO events SELECT %d, %d + g, g %% 4, (g * 37 + %d) %% 2001 - 1000, 'bulk' "+
				"FROM generate_series(1, %d) AS g", cid, base, salt, n),
			apply: func(m *tables) string {
				for g := int64(1); g <= n; g++ {
					m.events[base+g] = eventRow{client: cid, seq: base + g, grp: g % 4, val: (g*37+salt)%2001 - 1000, tag: "bulk"}
				}
				return fmt.Sprintf("INSERT 0 %d", n)
			},
		}
	case r < 4 || (grow && r < 7):
		n := 1 + c.rng.IntN(4)
		rows := make([]acctRow, n)
		vals := make([]string, n)
		for i := range rows {
			rows[i] = acctRow{id: c.key(), client: cid, grp: int64(c.rng.IntN(4)), amount: int64(c.rng.IntN(1000)), note: note}
			vals[i] = fmt.Sprintf("(%d, %d, %d, %d, '%s')", rows[i].id, cid, rows[i].grp, rows[i].amount, note)
		}
		return stmt{
			sql: "INSERT INTO acct VALUES " + strings.Join(vals, ", "),
			apply: func(m *tables) string {
				for _, r := range rows {
					m.acct[r.id] = r
				}
				return fmt.Sprintf("INSERT 0 %d", n)
			},
		}
	case r < 8 || (grow && r < 11):
		n := 1 + c.rng.IntN(4)
		rows := make([]eventRow, n)
		vals := make([]string, n)
		for i := range rows {
			rows[i] = eventRow{client: cid, seq: c.key(), grp: int64(c.rng.IntN(4)),
				val: int64(c.rng.IntN(2001) - 1000), tag: tags[c.rng.IntN(len(tags))]}
			vals[i] = fmt.Sprintf("(%d, %d, %d, %d, '%s')", cid, rows[i].seq, rows[i].grp, rows[i].val, rows[i].tag)
		}
		return stmt{
			sql: "INSERT INTO events VALUES " + strings.Join(vals, ", "),
			apply: func(m *tables) string {
				for _, r := range rows {
					m.events[r.seq] = r
				}
				return fmt.Sprintf("INSERT 0 %d", n)
			},
		}
	case r < 10:
		id, ok := c.randomAcct()
		if !ok {
			return c.noop()
		}
		amount := int64(c.rng.IntN(1000))
		return stmt{
			sql: fmt.Sprintf("UPDATE acct SET amount = %d, note = '%s' WHERE id = %d", amount, note, id),
			apply: func(m *tables) string {
				r, ok := m.acct[id]
				if !ok {
					return "UPDATE 0"
				}
				r.amount, r.note = amount, note
				m.acct[id] = r
				return "UPDATE 1"
			},
		}
	case r < 11:
		grp, d := int64(c.rng.IntN(4)), int64(c.rng.IntN(601)-300)
		return stmt{
			sql: fmt.Sprintf("UPDATE acct SET amount = amount + %d, note = '%s' WHERE client = %d AND grp = %d", d, note, cid, grp),
			apply: func(m *tables) string {
				n := 0
				for id, r := range m.acct {
					if r.grp == grp {
						r.amount += d
						r.note = note
						m.acct[id] = r
						n++
					}
				}
				return fmt.Sprintf("UPDATE %d", n)
			},
		}
	case r < 12:
		// Move a row to a new primary key.
		old, ok := c.randomAcct()
		if !ok {
			return c.noop()
		}
		id := c.key()
		return stmt{
			sql: fmt.Sprintf("UPDATE acct SET id = %d, note = '%s' WHERE id = %d", id, note, old),
			apply: func(m *tables) string {
				r, ok := m.acct[old]
				if !ok {
					return "UPDATE 0"
				}
				delete(m.acct, old)
				r.id, r.note = id, note
				m.acct[id] = r
				return "UPDATE 1"
			},
		}
	case r < 14:
		id, ok := c.randomAcct()
		if !ok {
			return c.noop()
		}
		return stmt{
			sql: fmt.Sprintf("DELETE FROM acct WHERE id = %d", id),
			apply: func(m *tables) string {
				if _, ok := m.acct[id]; !ok {
					return "DELETE 0"
				}
				delete(m.acct, id)
				return "DELETE 1"
			},
		}
	case r < 15:
		below := int64(c.rng.IntN(150))
		return stmt{
			sql: fmt.Sprintf("DELETE FROM acct WHERE client = %d AND amount < %d", cid, below),
			apply: func(m *tables) string {
				n := 0
				for id, r := range m.acct {
					if r.amount < below {
						delete(m.acct, id)
						n++
					}
				}
				return fmt.Sprintf("DELETE %d", n)
			},
		}
	case r < 17:
		seq, ok := c.randomEvent()
		if !ok {
			return c.noop()
		}
		val, tag := int64(c.rng.IntN(2001)-1000), tags[c.rng.IntN(len(tags))]
		return stmt{
			sql: fmt.Sprintf("UPDATE events SET val = %d, tag = '%s' WHERE seq = %d", val, tag, seq),
			apply: func(m *tables) string {
				r, ok := m.events[seq]
				if !ok {
					return "UPDATE 0"
				}
				r.val, r.tag = val, tag
				m.events[seq] = r
				return "UPDATE 1"
			},
		}
	case r < 18:
		from, to := int64(c.rng.IntN(4)), int64(c.rng.IntN(4))
		return stmt{
			sql: fmt.Sprintf("UPDATE events SET grp = %d WHERE client = %d AND grp = %d", to, cid, from),
			apply: func(m *tables) string {
				n := 0
				for seq, r := range m.events {
					if r.grp == from {
						r.grp = to
						m.events[seq] = r
						n++
					}
				}
				return fmt.Sprintf("UPDATE %d", n)
			},
		}
	case r < 19:
		seq, ok := c.randomEvent()
		if !ok {
			return c.noop()
		}
		return stmt{
			sql: fmt.Sprintf("DELETE FROM events WHERE seq = %d", seq),
			apply: func(m *tables) string {
				if _, ok := m.events[seq]; !ok {
					return "DELETE 0"
				}
				delete(m.events, seq)
				return "DELETE 1"
			},
		}
	default:
		above := int64(850 + c.rng.IntN(150))
		return stmt{
			sql: fmt.Sprintf("DELETE FROM events WHERE client = %d AND (val > %d OR val < -%d)", cid, above, above),
			apply: func(m *tables) string {
				n := 0
				for seq, r := range m.events {
					if r.val > above || r.val < -above {
						delete(m.events, seq)
						n++
					}
				}
				return fmt.Sprintf("DELETE %d", n)
			},
		}
	}
}

// noop is a write that matches nothing (when the client has no row to
// update), so that every choice still sends a statement.
func (c *client) noop() stmt {
	return stmt{
		sql:   fmt.Sprintf("DELETE FROM acct WHERE id = %d", c.id*1_000_000_000),
		apply: func(*tables) string { return "DELETE 0" },
	}
}

// run sends units until the cycle stops or the connection breaks (see
// writer.run); one step in ten is a read-your-writes check.
func (c *client) run(cy *cycle, conn *pgx.Conn) error {
	return c.writer.run(cy, conn, func() ([]stmt, error) {
		if c.rng.IntN(10) == 0 {
			return nil, c.check(cy.ctx, conn)
		}
		return c.next(), nil
	})
}

// errWrongTag marks a statement whose command tag (row count) differs from
// the model's.
var errWrongTag = errors.New("wrong command tag")

// execUnit sends text (one or more statements) as one simple-protocol query
// and calls acked for each statement's CommandComplete, in order. It returns
// how many statements were acknowledged, and the first error of acked or of
// the query.
func execUnit(ctx context.Context, pc *pgconn.PgConn, text string, acked func(i int, tag string) error) (int, error) {
	mrr := pc.Exec(ctx, text)
	n := 0
	var ackErr error
	for mrr.NextResult() {
		tag, err := mrr.ResultReader().Close()
		if err != nil {
			break // mrr.Close reports it
		}
		if ackErr == nil {
			ackErr = acked(n, tag.String())
		}
		n++
	}
	err := mrr.Close()
	if ackErr != nil {
		return n, ackErr
	}
	return n, err
}

// check reads the client's rows and its slice of every per-client view and
// compares them with the model. Every statement of the client was
// acknowledged, so the last committed epoch holds all of them
// (read-your-writes), and no other client touches these rows.
func (c *client) check(ctx context.Context, conn *pgx.Conn) error {
	where := fmt.Sprintf(" WHERE client = %d", c.id)
	got, err := queryRows(ctx, conn, selectAcct+where)
	if err != nil {
		return err
	}
	if d := diffRows(c.acked.acctRows(), got, false); d != "" {
		return fmt.Errorf("client %d: read-your-writes: acct differs from the acknowledged writes: %s", c.id, d)
	}
	if got, err = queryRows(ctx, conn, selectEvents+where); err != nil {
		return err
	}
	if d := diffRows(c.acked.eventRows(), got, false); d != "" {
		return fmt.Errorf("client %d: read-your-writes: events differs from the acknowledged writes: %s", c.id, d)
	}
	for _, v := range fixedViews {
		if !v.perClient {
			continue
		}
		if got, err = queryRows(ctx, conn, "SELECT * FROM "+v.name+where); err != nil {
			return err
		}
		if d := diffRows(v.model(c.acked), got, true); d != "" {
			return fmt.Errorf("client %d: view %s differs from the model of the acknowledged writes: %s", c.id, v.name, d)
		}
	}
	return nil
}

// resolve finds which prefix of the client's pending statements the
// server's rows (of this client) reflect, folds it into c.acked and returns
// its length (see writer.resolvePending).
func (c *client) resolve(acct, events [][]string) (int, error) {
	p, err := c.resolvePending(func(m *tables) bool {
		return diffRows(m.acctRows(), acct, false) == "" && diffRows(m.eventRows(), events, false) == ""
	})
	if err != errNoPrefix {
		return p, err
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

// queryRows runs one query and returns its rows as text, NULL as "NULL".
func queryRows(ctx context.Context, conn *pgx.Conn, query string) ([][]string, error) {
	results, err := conn.PgConn().Exec(ctx, query).ReadAll()
	if err != nil {
		return nil, fmt.Errorf("%s: %w", query, err)
	}
	if len(results) != 1 {
		return nil, fmt.Errorf("%s: %d results", query, len(results))
	}
	rows := make([][]string, 0, len(results[0].Rows))
	for _, r := range results[0].Rows {
		row := make([]string, len(r))
		for i, v := range r {
			if v == nil {
				row[i] = "NULL"
			} else {
				row[i] = string(v)
			}
		}
		rows = append(rows, row)
	}
	return rows, nil
}

// connect opens a connection that uses the simple query protocol.
func connect(ctx context.Context, url string) (*pgx.Conn, error) {
	cfg, err := pgx.ParseConfig(url)
	if err != nil {
		return nil, err
	}
	cfg.DefaultQueryExecMode = pgx.QueryExecModeSimpleProtocol
	return pgx.ConnectConfig(ctx, cfg)
}
