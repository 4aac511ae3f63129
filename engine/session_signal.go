package engine

import (
	"github.com/streamsql/streamsql/pgwire"
	"github.com/streamsql/streamsql/sqlerr"
)

// pg_cancel_backend and pg_terminate_backend (sql.Session's
// SignalBackend). A session's process id is its connection's: the one
// BackendKeyData sent, pg_backend_pid returns and pg_stat_activity.pid
// shows, so a CancelRequest and pg_cancel_backend name a session alike.

// warningCode is the SQLSTATE of a plain WARNING (PostgreSQL's
// ERRCODE_WARNING).
const warningCode = "01000"

// SignalBackend cancels the running statement of the session with process
// id pid, or ends that session when terminate is set. As in PostgreSQL, a
// role may signal its own sessions, a superuser any, and only a superuser
// a superuser's. A pid of no session gets a WARNING (sent with the
// statement's result) and false.
func (s *session) SignalBackend(pid int32, terminate bool) (bool, error) {
	target, user := s.e.queries.byPID(pid)
	if target == nil || !target.hasBackend {
		s.warn("PID %d is not a PostgreSQL backend process", pid)
		return false, nil
	}
	if err := s.maySignal(user, terminate); err != nil {
		return false, err
	}
	if terminate {
		target.backend.Terminate()
	} else {
		target.backend.Cancel()
	}
	return true, nil
}

// maySignal checks that the current user may signal a session of user.
func (s *session) maySignal(user string, terminate bool) error {
	what, whose := "cancel query", "whose query is being canceled"
	if terminate {
		what, whose = "terminate process", "whose process is being terminated"
	}
	if s.isSuperuser() {
		return nil
	}
	if r := s.e.roles.ByName(user); r == nil || r.Superuser {
		return &sqlerr.Error{Code: sqlerr.InsufficientPrivilege, Message: "permission denied to " + what,
			Detail: "Only roles with the SUPERUSER attribute may " + what + " of roles with the SUPERUSER attribute."}
	}
	if s.currentUser() != user {
		return &sqlerr.Error{Code: sqlerr.InsufficientPrivilege, Message: "permission denied to " + what,
			Detail: "Only roles with privileges of the role " + whose + " or with privileges of the \"pg_signal_backend\" role may " + what + "."}
	}
	return nil
}

// warn queues a WARNING for the running statement's result (see
// sendWarnings). A warning the statement queued already, as binding
// again repeats it, is not queued twice.
func (s *session) warn(format string, args ...any) {
	msg := sqlerr.New(warningCode, format, args...).Message
	for _, m := range s.warnings {
		if m == msg {
			return
		}
	}
	s.warnings = append(s.warnings, msg)
}

// sendWarnings sends and forgets the queued warnings.
func (s *session) sendWarnings(w pgwire.ResultWriter) error {
	ws := s.warnings
	s.warnings = nil
	for _, m := range ws {
		if err := w.Notice("WARNING", warningCode, m); err != nil {
			return err
		}
	}
	return nil
}

// byPID returns the open session with process id pid and the user it
// connected as, or nil.
func (q *runningQueries) byPID(pid int32) (*session, string) {
	q.mu.Lock()
	defer q.mu.Unlock()
	for s, a := range q.sessions {
		if a.pid == pid {
			return s, a.user
		}
	}
	return nil, ""
}
