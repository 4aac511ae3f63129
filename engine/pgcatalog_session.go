package engine

import (
	"sync/atomic"

	"github.com/streamsql/streamsql/ir"
	"github.com/streamsql/streamsql/pgwire"
	"github.com/streamsql/streamsql/sql"
)

// The session side of the catalog functions (sql.Session): current_user,
// pg_backend_pid, current_setting and set_config.

// backendPIDs numbers the sessions of no connection for pg_backend_pid.
var backendPIDs atomic.Int32

// User implements sql.Session: the current user (session_role.go).
func (s *session) User() string { return s.currentUser() }

// BackendPID is the session's process id: its connection's (the one
// BackendKeyData sent), else a number counted for sessions of no
// connection.
func (s *session) BackendPID() int32 {
	if s.pid == 0 {
		s.pid = backendPIDs.Add(1)
	}
	return s.pid
}

// Setting returns the value SHOW name shows.
func (s *session) Setting(name string) (string, bool) {
	if _, ok := s.params[name]; !ok && parameters[name] == nil {
		switch name {
		case "barrier_interval", "query_memory_limit", "checkpoint_mode", "memory_limit", roleParam, sessionAuthParam:
		default:
			return "", false
		}
	}
	return s.value(name), true
}

// SetSetting sets name as SET does. Without transactions of their own,
// settings made local to one last for the session. The ParameterStatus a
// reported parameter's change sends from SET is not sent.
func (s *session) SetSetting(name, value string, local bool) error {
	return s.set(&ir.SetVar{Name: name, Value: value}, paramSink{})
}

// paramSink is the result writer of a SET run by set_config: it drops the
// ParameterStatus message, the only one set writes.
type paramSink struct{ pgwire.ResultWriter }

func (paramSink) ParameterStatus(name, value string) error { return nil }

// bindIn gives each statement the session to bind its session functions in.
func (s *session) bindIn(stmts []*sql.Parsed) []*sql.Parsed {
	for _, p := range stmts {
		p.SetSession(s)
	}
	return stmts
}

// The settings pg_dump makes before it reads the catalog.
func init() {
	parameters["synchronize_seqscans"] = &parameter{def: "on", check: boolValue("synchronize_seqscans"),
		desc: "Accepted for compatibility: batch queries do not share scans."}
	parameters["check_function_bodies"] = &parameter{def: "on", check: boolValue("check_function_bodies"),
		desc: "Accepted for compatibility: function bodies are always checked."}
	parameters["xmloption"] = &parameter{def: "content", check: onlyValues("xmloption", "content"),
		desc: "Accepted for compatibility: streamsql has no xml type."}
	parameters["default_tablespace"] = &parameter{def: "", check: onlyValues("default_tablespace", "", "pg_default"),
		desc: "Accepted for compatibility: all state is in the data directory."}
	parameters["default_table_access_method"] = &parameter{def: "heap", check: onlyValues("default_table_access_method", "heap"),
		desc: "Accepted for compatibility: tables are stored in the state store."}
	parameters["quote_all_identifiers"] = &parameter{def: "off", check: onlyValues("quote_all_identifiers", "off"),
		desc: "Whether to quote every identifier in generated SQL (only off)."}
}
