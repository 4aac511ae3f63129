package engine

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/streamsql/streamsql/exec/eval"
	"github.com/streamsql/streamsql/ir"
	"github.com/streamsql/streamsql/pgwire"
	"github.com/streamsql/streamsql/sql"
	"github.com/streamsql/streamsql/sqlerr"
	"github.com/streamsql/streamsql/types"
)

// Session commands: PREPARE, EXECUTE, DEALLOCATE, DISCARD, the timeouts and
// the startup options.

// sqlPrepared is a statement of PREPARE: bound again at every EXECUTE.
type sqlPrepared struct {
	parsed *sql.Parsed
	params []types.T
	cols   []pgwire.Column
}

// isSessionCommand reports whether st is a session command a transaction
// block runs.
func isSessionCommand(st ir.Statement) bool {
	switch st := st.(type) {
	case *sql.PrepareStmt, *sql.Execute, *sql.Deallocate:
		return true
	case *sql.Discard:
		return st.What != "ALL"
	}
	return false
}

// sessionCommand runs st if it is a session command; ok reports whether it
// was one.
func (s *session) sessionCommand(ctx context.Context, st ir.Statement, w pgwire.ResultWriter) (ok bool, err error) {
	switch st := st.(type) {
	case *sql.PrepareStmt:
		return true, s.prepare(st, w)
	case *sql.Execute:
		return true, s.executePrepared(ctx, st, w)
	case *sql.Deallocate:
		if st.All {
			s.prepared = nil
		} else if _, found := s.prepared[st.Name]; !found {
			return true, errNoPrepared(st.Name)
		} else {
			delete(s.prepared, st.Name)
		}
		return true, w.Complete(st.Tag())
	case *sql.Discard:
		if st.What == "ALL" {
			if s.tx != nil {
				return true, sqlerr.New(sqlerr.ActiveSQLTransaction, "DISCARD ALL cannot run inside a transaction block")
			}
			s.prepared = nil
			if err := s.set(&ir.SetVar{Name: sessionAuthParam, Reset: true}, w); err != nil {
				return true, err
			}
			if err := s.set(&ir.SetVar{Name: "all", Reset: true}, w); err != nil {
				return true, err
			}
		}
		return true, w.Complete(st.Tag())
	}
	return false, nil
}

func errNoPrepared(name string) error {
	return sqlerr.New(sqlerr.InvalidSQLStatementName, "prepared statement \"%s\" does not exist", name)
}

// prepare runs PREPARE: the statement is bound once to learn its parameter
// types, as a Parse message does.
func (s *session) prepare(st *sql.PrepareStmt, w pgwire.ResultWriter) error {
	if _, dup := s.prepared[st.Name]; dup {
		return sqlerr.New("42P05", "prepared statement \"%s\" already exists", st.Name)
	}
	bound, params, err := sql.PrepareInZone(s.cat, s.searchPath(), s.zone, st.Stmt, st.Types)
	if err != nil {
		return err
	}
	if s.prepared == nil {
		s.prepared = map[string]*sqlPrepared{}
	}
	s.prepared[st.Name] = &sqlPrepared{parsed: st.Stmt, params: params, cols: s.resultColumns(bound)}
	return w.Complete(st.Tag())
}

// executePrepared runs EXECUTE: the arguments are evaluated, then the
// statement is bound with them and runs.
func (s *session) executePrepared(ctx context.Context, st *sql.Execute, w pgwire.ResultWriter) error {
	p := s.prepared[st.Name]
	if p == nil {
		return errNoPrepared(st.Name)
	}
	if st.NumArgs() != len(p.params) {
		return (&sqlerr.Error{Code: sqlerr.SyntaxError, Message: fmt.Sprintf("wrong number of parameters for prepared statement \"%s\"", st.Name),
			Detail: fmt.Sprintf("Expected %d parameters but got %d.", len(p.params), st.NumArgs())})
	}
	args, err := sql.BindExecuteArgs(s.cat, s.searchPath(), s.zone, st, p.params)
	if err != nil {
		return err
	}
	if s.random == nil {
		s.random = eval.NewRandom()
	}
	ectx := &eval.Context{Mem: s.e.mem, Strict: true, Now: time.Now().UnixMicro(), Random: s.random}
	vals := make([]types.Datum, len(args))
	for i, a := range args {
		if vals[i], err = eval.EvalDatum(ectx, a); err != nil {
			return err
		}
	}
	bound, err := sql.BindParamsInZone(s.cat, s.searchPath(), s.zone, p.parsed, p.params, vals)
	if err != nil {
		return err
	}
	return s.execute(ctx, bound, w)
}

// executeColumns are the result columns of EXECUTE (for Describe).
func (s *session) executeColumns(st *sql.Execute) []pgwire.Column {
	if p := s.prepared[st.Name]; p != nil {
		return p.cols
	}
	return nil
}

// errStatementTimeout is the error of a statement that ran longer than
// statement_timeout.
var errStatementTimeout = sqlerr.New(sqlerr.QueryCanceled, "canceling statement due to statement timeout")

// withStatementTimeout returns ctx bounded by statement_timeout and the
// function that turns the statement's error into 57014 if the timeout ended
// it (and releases the timer).
func (s *session) withStatementTimeout(ctx context.Context) (context.Context, func(error) error) {
	d := s.timeout("statement_timeout")
	if d <= 0 {
		return ctx, func(err error) error { return err }
	}
	tctx, cancel := context.WithTimeoutCause(ctx, d, errStatementTimeout)
	return tctx, func(err error) error {
		timedOut := context.Cause(tctx) == errStatementTimeout
		cancel()
		if err != nil && timedOut {
			return errStatementTimeout
		}
		return err
	}
}

// timeout returns the duration parameter name holds (0: none).
func (s *session) timeout(name string) time.Duration {
	ms, _ := parseMillis(s.value(name))
	return time.Duration(ms) * time.Millisecond
}

// IdleInTransactionTimeout implements pgwire.IdleTimeoutSession.
func (s *session) IdleInTransactionTimeout() time.Duration {
	if s.tx == nil {
		return 0
	}
	return s.timeout("idle_in_transaction_session_timeout")
}

// millisUnits are the units of a time parameter, in milliseconds.
var millisUnits = []struct {
	unit string
	ms   float64
}{{"us", 0.001}, {"ms", 1}, {"s", 1000}, {"min", 60000}, {"h", 3600000}, {"d", 86400000}}

// parseMillis parses a time parameter as PostgreSQL does: a number of
// milliseconds, or a number with a unit (us, ms, s, min, h, d).
func parseMillis(v string) (int64, bool) {
	v = strings.TrimSpace(strings.Trim(strings.TrimSpace(v), "'"))
	num, unit := v, ""
	if i := strings.IndexFunc(v, func(r rune) bool { return (r < '0' || r > '9') && r != '.' && r != '-' && r != '+' }); i >= 0 {
		num, unit = strings.TrimSpace(v[:i]), strings.TrimSpace(v[i:])
	}
	f, err := strconv.ParseFloat(num, 64)
	if err != nil {
		return 0, false
	}
	scale := 1.0
	if unit != "" {
		found := false
		for _, u := range millisUnits {
			if u.unit == unit {
				scale, found = u.ms, true
			}
		}
		if !found {
			return 0, false
		}
	}
	ms := f * scale
	if ms < 0 || ms > 2147483647 {
		return 0, false
	}
	return int64(ms + 0.5), true
}

// checkMillis validates a time parameter in milliseconds and normalises it
// to the form SHOW prints (the largest unit that divides it).
func checkMillis(name string) func(string) (string, error) {
	return func(v string) (string, error) {
		ms, ok := parseMillis(v)
		if !ok {
			return "", sqlerr.New(sqlerr.InvalidParameterValue, "invalid value for parameter \"%s\": \"%s\"", name, v).
				WithHint("Valid units for this parameter are \"us\", \"ms\", \"s\", \"min\", \"h\", and \"d\".")
		}
		if ms == 0 {
			return "0", nil
		}
		for i := len(millisUnits) - 1; i >= 1; i-- {
			u := int64(millisUnits[i].ms)
			if ms%u == 0 {
				return strconv.FormatInt(ms/u, 10) + millisUnits[i].unit, nil
			}
		}
		return strconv.FormatInt(ms, 10) + "ms", nil
	}
}

// startupOptions applies the -c name=value (and --name=value) settings of
// the startup packet's options parameter, as PostgreSQL does.
func (s *session) startupOptions(options string) error {
	args := splitOptions(options)
	for i := 0; i < len(args); i++ {
		a := args[i]
		var kv string
		switch {
		case a == "-c" && i+1 < len(args):
			i++
			kv = args[i]
		case strings.HasPrefix(a, "-c"):
			kv = a[2:]
		case strings.HasPrefix(a, "--"):
			kv = a[2:]
		default:
			return sqlerr.New(sqlerr.ProtocolViolation, "invalid command-line argument for server process: %s", a).
				WithHint("Try \"postgres --help\" for more information.")
		}
		name, value, ok := strings.Cut(kv, "=")
		if !ok {
			return sqlerr.New(sqlerr.SyntaxError, "-c %s requires a value", kv)
		}
		name = strings.ReplaceAll(strings.ToLower(name), "-", "_")
		if err := s.set(&ir.SetVar{Name: name, Value: value}, discardParameterStatus{}); err != nil {
			return err
		}
	}
	return nil
}

// splitOptions splits the options startup parameter at unescaped
// whitespace; a backslash escapes the next character.
func splitOptions(s string) []string {
	var out []string
	var cur strings.Builder
	in := false
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '\\' && i+1 < len(s):
			i++
			cur.WriteByte(s[i])
			in = true
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
			if in {
				out = append(out, cur.String())
				cur.Reset()
				in = false
			}
		default:
			cur.WriteByte(c)
			in = true
		}
	}
	if in {
		out = append(out, cur.String())
	}
	return out
}

// discardParameterStatus is the result writer of startup settings: the
// connection reports the parameters it sends at startup itself.
type discardParameterStatus struct{ pgwire.ResultWriter }

func (discardParameterStatus) ParameterStatus(string, string) error { return nil }
