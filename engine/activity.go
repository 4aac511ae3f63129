package engine

import (
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/streamsql/streamsql/ir"
)

// runningQueries are the statements sessions are running, for the
// dashboard. It is safe for concurrent use.
type runningQueries struct {
	mu   sync.Mutex
	next uint64
	m    map[uint64]RunningQuery
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
	q.m[id] = RunningQuery{ID: id, User: s.SessionUser(), Database: db, Query: text, Started: time.Now()}
	return func() {
		q.mu.Lock()
		defer q.mu.Unlock()
		delete(q.m, id)
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
