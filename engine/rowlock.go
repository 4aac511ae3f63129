package engine

import (
	"context"
	"errors"
	"fmt"
	"github.com/apache/arrow-go/v18/arrow"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/streamsql/streamsql/sqlerr"
)

// Row locks. A write of a row locks its key (the table's relation id and
// the row's encoded primary key or row id) for its writer:
//
//   - a transaction block's UPDATE and DELETE lock every row they change,
//     and its INSERT every primary key it adds, until the transaction ends
//     (COMMIT releases them once its writes are in the tables, before it
//     waits for their checkpoint; ROLLBACK drops them);
//   - a statement outside a transaction block locks nothing while it runs
//     alone: it writes under its table's mutex, which excludes every other
//     writer. It only checks, under that mutex, that no other transaction
//     holds a lock on a row it writes; when one does it waits for that lock
//     (holding it from then on, to the statement's end) and runs again.
//
// A writer that meets a lock another transaction holds waits until it is
// released, the wait's lock_timeout passes (55P03), or its statement is
// cancelled (57014, statement_timeout included). A cancel wins over the
// lock: a statement cancelled before it takes a lock (before it waits,
// while it waits, or as the holder releases it) fails, as a PostgreSQL
// backend fails at its next interrupt check. Locks are exclusive (there is
// no FOR SHARE), so each waiter waits for one holder, and the wait-for graph
// is a set of chains: a writer about to wait follows the chain from the
// holder and fails with 40P01 if it leads back to itself. Every edge is
// added by such a check, under the manager's mutex, so every cycle is found
// by the writer that closes it, and only that one fails.
//
// Waiters are not queued: when a lock is released every waiter wakes and
// tries again; one gets it, the others wait for the new holder.

// lockManager holds the row locks of an engine. It is safe for concurrent
// use.
type lockManager struct {
	mu sync.Mutex
	// tables maps a relation id to its locked keys.
	tables map[uint32]map[string]*rowLock
	// testHookFreed, if set, runs in a waiter woken by the release of the
	// lock it waited for, before it tries to take it.
	testHookFreed func()
}

// rowLock is a held lock on one row.
type rowLock struct {
	table  uint32
	key    string
	holder *lockOwner
	// free is closed when the holder releases the lock.
	free chan struct{}
}

// lockOwner is who holds and waits for row locks: a transaction block, or a
// statement outside one that had to wait. Its locks and wait are guarded by
// the manager's mutex; the rest is set by the owner's session before it
// waits.
type lockOwner struct {
	// pid is the owner's session's backend pid, and xid a number naming the
	// owner, for error details.
	pid int32
	xid uint64
	// describe names a locked row for messages (nil: by relation id). It
	// is called with no lock held.
	describe func(table uint32, key string) string

	held    []*rowLock
	waiting *rowLock
}

var lockOwnerIDs atomic.Uint64

func newLockOwner(pid int32) *lockOwner {
	return &lockOwner{pid: pid, xid: lockOwnerIDs.Add(1)}
}

// errLockTimeout is the error of a wait longer than lock_timeout.
var errLockTimeout = sqlerr.New(sqlerr.LockNotAvailable, "canceling statement due to lock timeout")

// errCanceled is the error of a wait whose statement was cancelled by the
// client.
var errCanceled = sqlerr.New(sqlerr.QueryCanceled, "canceling statement due to user request")

// lock takes the lock on (table, key) for o, waiting while another owner
// holds it (timeout bounds the wait, 0: none). It reports whether it
// waited. It fails with the statement's cancel error once ctx is done, even
// if the lock is free. On error o does not hold the lock; the locks it held
// it keeps.
func (m *lockManager) lock(ctx context.Context, o *lockOwner, table uint32, key []byte, timeout time.Duration) (waited bool, err error) {
	var expired <-chan time.Time
	if timeout > 0 {
		t := time.NewTimer(timeout)
		defer t.Stop()
		expired = t.C
	}
	for {
		// A cancel that came before the lock is taken wins, whether it came
		// before the wait, during it or as the holder let go.
		if err := canceled(ctx); err != nil {
			return waited, err
		}
		free, err := m.tryLock(o, table, key)
		var d *deadlockError
		if errors.As(err, &d) {
			return waited, d.sqlError(o.describe)
		}
		if err != nil || free == nil {
			return waited, err
		}
		waited = true
		select {
		case <-free:
			if h := m.testHookFreed; h != nil {
				h()
			}
			continue
		case <-ctx.Done():
			err = canceled(ctx)
		case <-expired:
			err = errLockTimeout
		}
		m.mu.Lock()
		o.waiting = nil
		m.mu.Unlock()
		return waited, err
	}
}

// canceled returns the error of a statement whose context ctx is done: its
// cause if that is an *sqlerr.Error (statement_timeout), else 57014; nil if
// ctx is not done.
func canceled(ctx context.Context) error {
	if ctx.Err() == nil {
		return nil
	}
	err := context.Cause(ctx)
	var serr *sqlerr.Error
	if !errors.As(err, &serr) {
		err = errCanceled
	}
	return err
}

// tryLock takes the lock on (table, key) for o if it is free (returning
// nil), or returns the channel closed when its holder releases it, with o
// marked as waiting for it; or fails with 40P01 if that wait would close a
// cycle.
func (m *lockManager) tryLock(o *lockOwner, table uint32, key []byte) (<-chan struct{}, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	keys := m.tables[table]
	l := keys[string(key)]
	if l == nil {
		if keys == nil {
			if m.tables == nil {
				m.tables = map[uint32]map[string]*rowLock{}
			}
			keys = map[string]*rowLock{}
			m.tables[table] = keys
		}
		l = &rowLock{table: table, key: string(key), holder: o, free: make(chan struct{})}
		keys[l.key] = l
		o.held = append(o.held, l)
		o.waiting = nil
		return nil, nil
	}
	if l.holder == o {
		o.waiting = nil
		return nil, nil
	}
	if err := m.deadlock(o, l); err != nil {
		o.waiting = nil
		return nil, err
	}
	o.waiting = l
	return l.free, nil
}

// waitEdge is one wait of a cycle: from waits for on, which by holds.
type waitEdge struct {
	from, by int32
	table    uint32
	key      string
}

// deadlockError is a cycle of waits found under the manager's mutex; lock
// turns it into the 40P01 error once it has let go of the mutex.
type deadlockError struct{ cycle []waitEdge }

func (d *deadlockError) Error() string { return "deadlock detected" }

// deadlock returns the cycle closed by o waiting for l, if it closes one.
// The caller holds mu.
func (m *lockManager) deadlock(o *lockOwner, l *rowLock) error {
	var cycle []waitEdge
	edge := func(from *lockOwner, on *rowLock) {
		cycle = append(cycle, waitEdge{from: from.pid, by: on.holder.pid, table: on.table, key: on.key})
	}
	edge(o, l)
	// Each owner waits for at most one lock and each lock has one holder,
	// so the chain is a path; the bound only guards against a bug.
	for h, n := l.holder, 0; h != nil && n < 1<<16; n++ {
		if h == o {
			return &deadlockError{cycle: cycle}
		}
		next := h.waiting
		if next == nil || next.holder == nil {
			return nil
		}
		edge(h, next)
		h = next.holder
	}
	return nil
}

// sqlError is the 40P01 error of the cycle, naming its rows with describe
// (nil: by relation id).
func (d *deadlockError) sqlError(describe func(table uint32, key string) string) error {
	var detail []string
	for _, e := range d.cycle {
		row := fmt.Sprintf("a row of relation %d", e.table)
		if describe != nil {
			row = describe(e.table, e.key)
		}
		detail = append(detail, fmt.Sprintf("Process %d waits for ExclusiveLock on %s; blocked by process %d.", e.from, row, e.by))
	}
	return &sqlerr.Error{Code: sqlerr.DeadlockDetected, Message: "deadlock detected",
		Detail: strings.Join(detail, "\n"), Hint: "See server log for query details."}
}

// heldByOther returns a lock on (table, k) for some k of keys that an owner
// other than o (nil: any owner) holds, or nil.
func (m *lockManager) heldByOther(o *lockOwner, table uint32, keys func(yield func([]byte) bool)) *rowLock {
	m.mu.Lock()
	defer m.mu.Unlock()
	locked := m.tables[table]
	if len(locked) == 0 {
		return nil
	}
	var found *rowLock
	keys(func(k []byte) bool {
		if l := locked[string(k)]; l != nil && l.holder != o {
			found = l
		}
		return found == nil
	})
	return found
}

// releaseAll releases every lock o holds, waking their waiters.
func (m *lockManager) releaseAll(o *lockOwner) {
	if o == nil {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, l := range o.held {
		keys := m.tables[l.table]
		delete(keys, l.key)
		if len(keys) == 0 {
			delete(m.tables, l.table)
		}
		l.holder = nil
		close(l.free)
	}
	o.held = nil
	o.waiting = nil
}

// rowLockedError is what a statement outside a transaction block returns
// from under its table's mutex when a row it would write is locked by
// another transaction: it waits for the lock and runs again.
type rowLockedError struct {
	table uint32
	key   string
}

func (e *rowLockedError) Error() string { return "row is locked" }

// lockedError returns the rowLockedError for a lock some k of keys holds
// against the statement (owner o, nil if it holds none), or nil.
func (w *tableWriter) lockedError(o *lockOwner, keys func(yield func([]byte) bool)) error {
	if l := w.e.locks.heldByOther(o, w.rel.ID, keys); l != nil {
		return &rowLockedError{table: l.table, key: l.key}
	}
	return nil
}

// retryLocked runs write, a statement outside a transaction block, until it
// does not meet a row another transaction locked: then it waits for the
// lock, holding it from then on, and runs write again. The locks it took
// are released when it returns (its writes are in the table then).
func (e *Engine) retryLocked(ctx context.Context, q *batchQuery, write func() error) error {
	defer func() {
		e.locks.releaseAll(q.owner)
		q.owner = nil
	}()
	for {
		// Checked before each run: a cancel that came while the statement
		// computed its rows or took a lock keeps it out of the table.
		if err := canceled(ctx); err != nil {
			return err
		}
		err := write()
		var le *rowLockedError
		if !errors.As(err, &le) {
			return err
		}
		if q.owner == nil {
			q.owner = newLockOwner(q.pid)
			q.owner.describe = e.describeRow
		}
		if _, err := e.locks.lock(ctx, q.owner, le.table, []byte(le.key), q.lockTimeout); err != nil {
			return err
		}
	}
}

// describeRow names a locked row for messages: its key and relation.
func (e *Engine) describeRow(table uint32, key string) string {
	e.mu.Lock()
	w := e.tables[table]
	e.mu.Unlock()
	if w == nil {
		return fmt.Sprintf("a row of relation %d", table)
	}
	w.mu.Lock()
	rel, ts := w.rel, w.types
	w.mu.Unlock()
	if k, ok := keyText(rel, ts, []byte(key)); ok {
		return "tuple " + k + " of relation \"" + rel.Name + "\""
	}
	return "a row of relation \"" + rel.Name + "\""
}

// recKeys yields the key of every row of every record of recs (valid only
// during the yield).
func (w *tableWriter) recKeys(recs ...[]arrow.RecordBatch) func(yield func([]byte) bool) {
	return func(yield func([]byte) bool) {
		for _, rs := range recs {
			for _, r := range rs {
				for i := range int(r.NumRows()) {
					if !yield(w.key(r, i)) {
						return
					}
				}
			}
		}
	}
}

// arenaKeys yields the keys of encodeKeys's arena.
func arenaKeys(arena []byte, keys []rowKey) func(yield func([]byte) bool) {
	return func(yield func([]byte) bool) {
		for _, k := range keys {
			if !yield(arena[k.off:k.end]) {
				return
			}
		}
	}
}
