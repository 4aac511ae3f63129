package crashtest

import (
	"cmp"
	"context"
	"fmt"
	"maps"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
)

// The event-time test's tables and clients. Both tables have a watermark
// of ts - etDelay; et_a is APPEND ONLY, et_b has a primary key and takes
// updates and deletes. Every row belongs to one client (column client),
// which alone writes it.
//
// Which changes the watermark-dependent operators drop depends on the
// watermark at the moment the change reaches them, which the clients do not
// observe. So the clients only make changes whose fate is certain (etClock):
// a change is in time if no watermark it can meet is above its ts, and late
// if the watermark of the committed rows is already above its ts and has
// closed every window holding it (etLateBound). The model keeps, besides the
// tables, the effective rows: the row versions inserted in time and not
// deleted in time, which are what the windowed operators hold.
const (
	createETA = `CREATE TABLE et_a (id bigint NOT NULL, client int NOT NULL, k int NOT NULL, v bigint NOT NULL, ` +
		`ts timestamp NOT NULL, WATERMARK FOR ts AS ts - INTERVAL '10 seconds') APPEND ONLY`
	createETB = `CREATE TABLE et_b (id bigint PRIMARY KEY, client int NOT NULL, k int NOT NULL, v bigint NOT NULL, ` +
		`ts timestamp NOT NULL, WATERMARK FOR ts AS ts - INTERVAL '10 seconds')`
	selectETA = `SELECT id, client, k, v, ts FROM et_a`
	selectETB = `SELECT id, client, k, v, ts FROM et_b`

	// etDelay is the delay of both watermarks (in microseconds, as ts).
	etDelay = int64(10 * time.Second / time.Microsecond)
	// etKeys is the number of values of k.
	etKeys = 6
)

// etBase is the event time the clock starts at.
var etBase = time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC).UnixMicro()

// Tables, as indexes into per-table arrays.
const (
	tabA = iota
	tabB
)

// etRow is a row of et_a or et_b (ts in microseconds since the Unix epoch).
// ver numbers the versions of an et_b row: the statement that wrote it.
type etRow struct {
	id, client, k, v, ts int64
	ver                  int64
}

func (r etRow) cells() []string {
	return []string{itoa(r.id), itoa(r.client), itoa(r.k), itoa(r.v), fmtTS(r.ts)}
}

// fmtTS renders a timestamp as streamsql and PostgreSQL print it.
func fmtTS(ts int64) string {
	return time.UnixMicro(ts).UTC().Format("2006-01-02 15:04:05.999999")
}

// etVersion names a version of an et_b row: its id and ver.
type etVersion [2]int64

// etModel is the content of both tables (all of it, or one client's part)
// and their effective rows.
type etModel struct {
	a, b map[int64]etRow
	// effA are the et_a rows inserted in time, effB the et_b row versions
	// inserted in time and not deleted in time.
	effA map[int64]etRow
	effB map[etVersion]etRow
	// maxTS is, per table, the largest ts inserted (by INSERT or UPDATE,
	// late or not; 0: none): the table's watermark is maxTS - etDelay.
	maxTS [2]int64
}

func newETModel() *etModel {
	return &etModel{a: map[int64]etRow{}, b: map[int64]etRow{}, effA: map[int64]etRow{}, effB: map[etVersion]etRow{}}
}

func (m *etModel) clone() *etModel {
	return &etModel{a: maps.Clone(m.a), b: maps.Clone(m.b), effA: maps.Clone(m.effA), effB: maps.Clone(m.effB), maxTS: m.maxTS}
}

// merge adds u's rows to m.
func (m *etModel) merge(u *etModel) {
	maps.Copy(m.a, u.a)
	maps.Copy(m.b, u.b)
	maps.Copy(m.effA, u.effA)
	maps.Copy(m.effB, u.effB)
	for t := range m.maxTS {
		m.maxTS[t] = max(m.maxTS[t], u.maxTS[t])
	}
}

// inserted records that ts was inserted into table t.
func (m *etModel) inserted(t int, ts int64) { m.maxTS[t] = max(m.maxTS[t], ts) }

func rowsOf[K comparable](rows map[K]etRow) [][]string {
	var out [][]string
	for _, r := range rows {
		out = append(out, r.cells())
	}
	return out
}

// sortedB returns the et_b rows in id order.
func (m *etModel) sortedB() []etRow {
	rows := slices.Collect(maps.Values(m.b))
	slices.SortFunc(rows, func(x, y etRow) int { return cmp.Compare(x.id, y.id) })
	return rows
}

// etLateBound is the ts below which a change to table t is late for every
// operator of the views that rely on t's watermark w: the interval join and
// SESSION drop the changes below w; a TUMBLE of 5 s (et_tumble_b, the
// emit-on-window-close views) those of the windows whose start is below
// date_bin('5 s', w), which end at or before w; et_a's HOP of 2 s by 6 s
// those of the windows whose start is below the watermark of its
// window_start, date_bin('2 s', w) - 4 s. A change at or above the bound but
// below w is late for some operators and maybe not for others (a HOP drops a
// row from some of its windows only): the clients make no such change.
func etLateBound(t int, w int64) int64 {
	s := int64(time.Second / time.Microsecond)
	bin := func(size int64) int64 { return w - ((w%size)+size)%size }
	if t == tabA {
		return min(bin(2*s)-4*s, bin(5*s))
	}
	return bin(5 * s)
}

// etFate is what the windowed operators do with a change.
type etFate int

const (
	etUnsure etFate = iota // neither certain: the clients make no such change
	etInTime               // no watermark it can meet is above its ts: applied
	etLate                 // every window holding its ts has closed: dropped
)

// etClock is the event time of the clients' changes, shared by them. It
// decides, as a change is made, whether its fate is certain:
//
//   - late: its ts is below etLateBound of the watermark of the committed
//     rows (committed - etDelay). Watermarks never go back, also across
//     restarts, so the watermark the change meets is at least that.
//   - in time: its ts is at or above the watermark of every insert made
//     before it (sent - etDelay), and no insert made while it is in flight
//     can raise the watermark above its ts: every insert's ts is at most
//     etDelay above the ts of every change in flight (open). Any watermark
//     the change meets comes from rows inserted before it arrives, so it is
//     at most its ts.
//
// Methods are safe for concurrent use.
type etClock struct {
	mu sync.Mutex
	// sent is, per table, the largest ts inserted by any change made;
	// committed the largest ts of the inserts known to be committed.
	sent, committed [2]int64
	// open is, per client (index client id - 1) and table, the smallest ts
	// of the changes it has in flight (math.MaxInt64: none).
	open [][2]int64
	// edgeLate and edgeInTime count the times chosen at the edges.
	edgeLate, edgeInTime int
}

func newETClock(clients int) *etClock {
	k := &etClock{sent: [2]int64{etBase, etBase}, open: make([][2]int64, clients)}
	k.release()
	return k
}

// release forgets the changes in flight of every client (after a restart).
func (k *etClock) release() {
	k.mu.Lock()
	defer k.mu.Unlock()
	for c := range k.open {
		k.open[c] = [2]int64{math.MaxInt64, math.MaxInt64}
	}
}

// settle records that client c has no change in flight and that the
// inserts of m (its acknowledged rows) are committed.
func (k *etClock) settle(c int64, m *etModel) {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.open[c-1] = [2]int64{math.MaxInt64, math.MaxInt64}
	for t := range k.committed {
		k.committed[t] = max(k.committed[t], m.maxTS[t])
	}
}

// commit records that the inserts of m are committed.
func (k *etClock) commit(m *etModel) {
	k.mu.Lock()
	defer k.mu.Unlock()
	for t := range k.committed {
		k.committed[t] = max(k.committed[t], m.maxTS[t])
	}
}

// ceiling is the largest ts an insert into t may have while the changes in
// flight are; k.mu is held.
func (k *etClock) ceiling(t int) int64 {
	low := int64(math.MaxInt64)
	for _, o := range k.open {
		low = min(low, o[t])
	}
	if low == math.MaxInt64 {
		return low
	}
	return low + etDelay
}

// lateBelow is the ts below which changes to t are late; k.mu is held.
func (k *etClock) lateBelow(t int) int64 {
	if k.committed[t] == 0 {
		return math.MinInt64
	}
	return etLateBound(t, k.committed[t]-etDelay)
}

// fate decides the fate of a change by client c to a row of table t with
// time ts (which it does not insert: a delete, or an update that keeps ts)
// and, if it is in time, records it as in flight.
func (k *etClock) fate(c int64, t int, ts int64) etFate {
	k.mu.Lock()
	defer k.mu.Unlock()
	switch {
	case ts < k.lateBelow(t):
		return etLate
	case ts >= k.sent[t]-etDelay && ts <= k.ceiling(t):
		k.open[c-1][t] = min(k.open[c-1][t], ts)
		return etInTime
	}
	return etUnsure
}

// inTime returns the time of a new in-time insert into t by client c,
// about the latest one (up to a second behind or ahead of it: event time
// moves about a quarter of a second per insert) or, one time in ten, at the
// edge: within a millisecond above the watermark of every insert made, the
// lowest time that is certain to be in time. It records it as in flight.
func (k *etClock) inTime(c int64, t int, rng *rand.Rand) int64 {
	k.mu.Lock()
	defer k.mu.Unlock()
	ms := int64(time.Millisecond / time.Microsecond)
	ts := k.sent[t] + (rng.Int64N(2001)-1000)*ms
	if rng.IntN(10) == 0 {
		ts = k.sent[t] - etDelay + rng.Int64N(ms)
		k.edgeInTime++
	}
	ts = max(ts, k.sent[t]-etDelay)
	ts = min(ts, k.ceiling(t))
	k.open[c-1][t] = min(k.open[c-1][t], ts)
	k.sent[t] = max(k.sent[t], ts)
	return ts
}

// late returns the time of a late insert into t, up to 30 s below the
// late bound or, one time in three, within a millisecond below it (the
// last microsecond of a window just closed, or just behind the watermark),
// or false while nothing is committed.
func (k *etClock) late(t int, rng *rand.Rand) (int64, bool) {
	k.mu.Lock()
	defer k.mu.Unlock()
	below := k.lateBelow(t)
	if below == math.MinInt64 {
		return 0, false
	}
	ms := int64(time.Millisecond / time.Microsecond)
	if rng.IntN(3) == 0 {
		k.edgeLate++
		return below - 1 - rng.Int64N(ms), true
	}
	return below - 1 - rng.Int64N(30_000)*ms, true
}

// lateBound returns the late bound of t (false while nothing is committed).
func (k *etClock) lateBound(t int) (int64, bool) {
	k.mu.Lock()
	defer k.mu.Unlock()
	b := k.lateBelow(t)
	return b, b != math.MinInt64
}

// etStmt is a statement of an event-time client.
type etStmt = modelStmt[*etModel]

// etClient is one connection's writer in TestEventTimeCrashRecovery.
type etClient struct {
	writer[*etModel]
	id    int64
	rng   *rand.Rand
	clock *etClock
	// nextKey numbers new ids; nextStmt numbers statements (versions).
	nextKey, nextStmt int64
	// lateInserts and lateChanges count the late rows inserted and the
	// late updates and deletes made; inTimeChanges the in-time ones of et_b.
	lateInserts, lateChanges, inTimeChanges int
}

func newETClient(id int64, seed uint64, clock *etClock) *etClient {
	return &etClient{
		writer: writer[*etModel]{
			writerLog: writerLog{name: fmt.Sprintf("client %d", id)},
			acked:     newETModel(),
			clone:     (*etModel).clone,
		},
		id:    id,
		rng:   rand.New(rand.NewPCG(seed, 2000+uint64(id))),
		clock: clock,
	}
}

func (c *etClient) key() int64 {
	c.nextKey++
	return c.id*1_000_000_000 + c.nextKey
}

// next returns the client's next unit: one statement, or a few sent as one
// query.
func (c *etClient) next() []etStmt {
	n := 1
	if c.rng.IntN(8) == 0 {
		n = 2 + c.rng.IntN(3)
	}
	return c.unit(n, c.nextStmt1)
}

// nextStmt1 returns one write statement: inserts into either table (one in
// six rows late), and single-row updates and deletes of et_b rows whose
// fate is certain; et_b's late rows are deleted in bulk now and then, so the
// table stays small.
func (c *etClient) nextStmt1() etStmt {
	c.nextStmt++
	grow := len(c.acked.b) < 40
	r := c.rng.IntN(12)
	switch {
	case r < 3:
		return c.insert(tabA)
	case r < 6 || grow && r < 9:
		return c.insert(tabB)
	case r < 11:
		if s, ok := c.change(c.rng.IntN(3)); ok {
			return s
		}
		return c.insert(tabB)
	}
	if s, ok := c.deleteLate(); ok {
		return s
	}
	return c.insert(tabA)
}

// insert inserts 1 to 3 rows into table t.
func (c *etClient) insert(t int) etStmt {
	n := 1 + c.rng.IntN(3)
	rows := make([]etRow, n)
	inTime := make([]bool, n)
	vals := make([]string, n)
	for i := range rows {
		ts, late := int64(0), false
		if c.rng.IntN(6) == 0 {
			ts, late = c.clock.late(t, c.rng)
		}
		if !late {
			ts = c.clock.inTime(c.id, t, c.rng)
		} else {
			c.lateInserts++
		}
		rows[i] = etRow{id: c.key(), client: c.id, k: int64(c.rng.IntN(etKeys)), v: int64(c.rng.IntN(1000)), ts: ts, ver: c.nextStmt}
		inTime[i] = !late
		vals[i] = fmt.Sprintf("(%d, %d, %d, %d, '%s')", rows[i].id, c.id, rows[i].k, rows[i].v, fmtTS(ts))
	}
	table := [...]string{"et_a", "et_b"}[t]
	return etStmt{
		sql: "INSERT INTO " + table + " VALUES " + strings.Join(vals, ", "),
		apply: func(m *etModel) string {
			for i, r := range rows {
				m.inserted(t, r.ts)
				if t == tabA {
					m.a[r.id] = r
					if inTime[i] {
						m.effA[r.id] = r
					}
					continue
				}
				m.b[r.id] = r
				if inTime[i] {
					m.effB[etVersion{r.id, r.ver}] = r
				}
			}
			return fmt.Sprintf("INSERT 0 %d", n)
		},
	}
}

// change makes an update of v (kind 0), an update of ts to a new in-time
// one (kind 1) or a delete (kind 2) of one of the client's et_b rows whose
// fate is certain, or returns false if it finds none. Kind 1 of a late row
// moves it in time: a late UpdateDelete, dropped, and an in-time
// UpdateInsert, so the operators keyed by time hold both versions.
func (c *etClient) change(kind int) (etStmt, bool) {
	rows := c.acked.sortedB()
	if len(rows) == 0 {
		return etStmt{}, false
	}
	old := rows[c.rng.IntN(len(rows))]
	fate := c.clock.fate(c.id, tabB, old.ts)
	if fate == etUnsure {
		return etStmt{}, false
	}
	if fate == etLate {
		c.lateChanges++
	} else {
		c.inTimeChanges++
	}
	id, ver := old.id, c.nextStmt
	var sql string
	var set func(r *etRow)
	newFate := fate
	switch kind {
	case 0:
		v := int64(c.rng.IntN(1000))
		sql = fmt.Sprintf("UPDATE et_b SET v = %d WHERE id = %d", v, id)
		set = func(r *etRow) { r.v = v }
	case 1:
		ts := c.clock.inTime(c.id, tabB, c.rng)
		newFate = etInTime
		sql = fmt.Sprintf("UPDATE et_b SET ts = '%s' WHERE id = %d", fmtTS(ts), id)
		set = func(r *etRow) { r.ts = ts }
	default:
		return etStmt{
			sql: fmt.Sprintf("DELETE FROM et_b WHERE id = %d", id),
			apply: func(m *etModel) string {
				r, ok := m.b[id]
				if !ok {
					return "DELETE 0"
				}
				delete(m.b, id)
				if fate == etInTime {
					delete(m.effB, etVersion{id, r.ver})
				}
				return "DELETE 1"
			},
		}, true
	}
	return etStmt{
		sql: sql,
		apply: func(m *etModel) string {
			r, ok := m.b[id]
			if !ok {
				return "UPDATE 0"
			}
			if fate == etInTime {
				delete(m.effB, etVersion{id, r.ver})
			}
			set(&r)
			r.ver = ver
			m.b[id] = r
			m.inserted(tabB, r.ts)
			if newFate == etInTime {
				m.effB[etVersion{id, ver}] = r
			}
			return "UPDATE 1"
		},
	}, true
}

// deleteLate deletes the client's et_b rows below the late bound, or
// returns false while nothing is committed.
func (c *etClient) deleteLate() (etStmt, bool) {
	below, ok := c.clock.lateBound(tabB)
	if !ok {
		return etStmt{}, false
	}
	c.lateChanges++
	return etStmt{
		sql: fmt.Sprintf("DELETE FROM et_b WHERE client = %d AND ts < '%s'", c.id, fmtTS(below)),
		apply: func(m *etModel) string {
			n := 0
			for id, r := range m.b {
				if r.ts < below {
					delete(m.b, id) // late: the effective version stays
					n++
				}
			}
			return fmt.Sprintf("DELETE %d", n)
		},
	}, true
}

// run sends units until the cycle stops or the connection breaks (see
// writer.run); one step in ten is a read-your-writes check. Every step
// starts with the client's earlier units settled.
func (c *etClient) run(cy *cycle, conn *pgx.Conn) error {
	return c.writer.run(cy, conn, func() ([]etStmt, error) {
		c.clock.settle(c.id, c.acked)
		if c.rng.IntN(10) == 0 {
			return nil, c.check(cy.ctx, conn)
		}
		return c.next(), nil
	})
}

// check reads the client's rows of both tables: they must equal its
// acknowledged writes.
func (c *etClient) check(ctx context.Context, conn *pgx.Conn) error {
	where := fmt.Sprintf(" WHERE client = %d", c.id)
	for _, t := range []struct {
		name, query string
		want        map[int64]etRow
	}{{"et_a", selectETA, c.acked.a}, {"et_b", selectETB, c.acked.b}} {
		got, err := queryRows(ctx, conn, t.query+where)
		if err != nil {
			return err
		}
		if d := diffRows(rowsOf(t.want), got, false); d != "" {
			return fmt.Errorf("client %d: read-your-writes: %s differs from the acknowledged writes: %s", c.id, t.name, d)
		}
	}
	return nil
}

// resolve finds which prefix of the client's pending statements the
// server's rows of this client reflect (see writer.resolvePending).
func (c *etClient) resolve(a, b [][]string) (int, error) {
	p, err := c.resolvePending(func(m *etModel) bool {
		return diffRows(rowsOf(m.a), a, false) == "" && diffRows(rowsOf(m.b), b, false) == ""
	})
	if err != errNoPrefix {
		return p, err
	}
	msg := fmt.Sprintf("client %d: the tables match no state allowed by the history (%d statements in flight)", c.id, len(c.pending))
	if d := diffRows(rowsOf(c.acked.a), a, false); d != "" {
		msg += "\n  et_a vs the acknowledged state: " + d
	}
	if d := diffRows(rowsOf(c.acked.b), b, false); d != "" {
		msg += "\n  et_b vs the acknowledged state: " + d
	}
	return 0, fmt.Errorf("%s", msg)
}
