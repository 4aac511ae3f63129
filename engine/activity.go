package engine

import (
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/streamsql/streamsql/ir"
)

// runningQueries are the statements sessions are running, for the
// dashboard, and what pg_stat_activity shows of every session. It is safe
// for concurrent use.
type runningQueries struct {
	mu       sync.Mutex
	next     uint64
	m        map[uint64]RunningQuery
	sessions map[*session]*sessionActivity
}

// sessionActivity is a session's row of pg_stat_activity.
type sessionActivity struct {
	pid                               int32
	user, database, app               string
	backendStart, queryStart, stateAt time.Time
	state, query                      string
}

// opened records session s, connected now, as idle.
func (q *runningQueries) opened(s *session) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.sessions == nil {
		q.sessions = map[*session]*sessionActivity{}
	}
	now := time.Now()
	q.sessions[s] = &sessionActivity{pid: s.BackendPID(), user: s.user, database: s.cat.DatabaseName(),
		app: s.params["application_name"], backendStart: now, stateAt: now, state: "idle"}
}

// closed forgets session s.
func (q *runningQueries) closed(s *session) {
	q.mu.Lock()
	defer q.mu.Unlock()
	delete(q.sessions, s)
}

// activity returns a copy of every session's row, by pid.
func (q *runningQueries) activity() []sessionActivity {
	q.mu.Lock()
	out := make([]sessionActivity, 0, len(q.sessions))
	for _, a := range q.sessions {
		out = append(out, *a)
	}
	q.mu.Unlock()
	sort.Slice(out, func(a, b int) bool { return out[a].pid < out[b].pid })
	return out
}

// RunningQuery is a statement under way.
type RunningQuery struct {
	ID       uint64    `json:"id"`
	User     string    `json:"user"`
	Database string    `json:"database"`
	Query    string    `json:"query"`
	Started  time.Time `json:"started"`
}

// start records that s runs text; the returned func records its end.
func (q *runningQueries) start(s *session, text string) func() {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.m == nil {
		q.m = map[uint64]RunningQuery{}
	}
	q.next++
	id := q.next
	db := ""
	if s.cat != nil {
		db = s.cat.DatabaseName()
	}
	now := time.Now()
	q.m[id] = RunningQuery{ID: id, User: s.SessionUser(), Database: db, Query: text, Started: now}
	if a := q.sessions[s]; a != nil {
		a.state, a.query, a.queryStart, a.stateAt = "active", text, now, now
	}
	return func() {
		// On the session's goroutine: its transaction state is its own.
		state := "idle"
		switch s.txStatus() {
		case 'T':
			state = "idle in transaction"
		case 'E':
			state = "idle in transaction (aborted)"
		}
		q.mu.Lock()
		defer q.mu.Unlock()
		delete(q.m, id)
		if a := q.sessions[s]; a != nil {
			a.state, a.stateAt = state, time.Now()
		}
	}
}

// RunningQueries lists the statements under way, oldest first.
func (e *Engine) RunningQueries() []RunningQuery {
	e.queries.mu.Lock()
	out := make([]RunningQuery, 0, len(e.queries.m))
	for _, r := range e.queries.m {
		out = append(out, r)
	}
	e.queries.mu.Unlock()
	sort.Slice(out, func(a, b int) bool { return out[a].ID < out[b].ID })
	return out
}

// timeDDL runs a statement and, if it is DDL, records and logs its
// duration.
func (e *Engine) timeDDL(st ir.Statement, run func() error) error {
	tag := st.Tag()
	if !isDDLTag(tag) {
		return run()
	}
	start := time.Now()
	err := run()
	e.ddlDone(tag, start, err)
	return err
}

// isDDLTag reports whether a command tag is of a statement that changes
// the catalog.
func isDDLTag(tag string) bool {
	for _, p := range []string{"CREATE ", "DROP ", "ALTER "} {
		if strings.HasPrefix(tag, p) {
			return true
		}
	}
	return false
}
