package engine

import (
	"context"
	"runtime/debug"
	"slices"

	"github.com/streamsql/streamsql/ir"
	"github.com/streamsql/streamsql/pgwire"
	"github.com/streamsql/streamsql/sql"
	"github.com/streamsql/streamsql/sqlerr"
	"github.com/streamsql/streamsql/types"
)

// The extended query protocol. A Parse message prepares a statement: it is
// parsed and bound once (sql.Prepare) to learn its parameter types and
// result columns, which Describe reports. A Bind message binds it again
// with the parameter values as constants (sql.BindParams): the bound
// statement has no parameters left and runs like any other. Binding per
// Bind keeps one execution path for both protocols; a prepared statement
// saves the client a round trip, not the server any work.

// preparedStatement implements pgwire.PreparedStatement. Like the session,
// it is used by one goroutine at a time.
type preparedStatement struct {
	s *session
	// parsed is the statement; nil for an empty query.
	parsed *sql.Parsed
	params []types.T
	cols   []pgwire.Column
}

var _ pgwire.PreparedStatement = (*preparedStatement)(nil)

// errMultipleCommands is PostgreSQL's error for a Parse message with more
// than one statement.
var errMultipleCommands = sqlerr.New(sqlerr.SyntaxError, "cannot insert multiple commands into a prepared statement")

// Prepare implements pgwire.Session.
func (s *session) Prepare(ctx context.Context, text string, paramTypes []types.T) (_ pgwire.PreparedStatement, err error) {
	defer func() { s.noteError(err) }()
	defer s.recoverPanic(&err)
	if err := s.checkDatabase(); err != nil {
		return nil, err
	}
	stmts, err := sql.Parse(text)
	if err != nil {
		return nil, err
	}
	if len(stmts) == 1 {
		if err := s.checkFailed(stmts[0]); err != nil {
			return nil, err
		}
	}
	s.bindIn(stmts)
	ps := &preparedStatement{s: s, params: paramTypes}
	switch len(stmts) {
	case 0:
		return ps, nil // an empty query
	case 1:
	default:
		return nil, errMultipleCommands
	}
	st, params, err := sql.PrepareInZone(s.cat, s.searchPath(), s.zone, stmts[0], paramTypes)
	if err != nil {
		return nil, err
	}
	ps.parsed, ps.params, ps.cols = stmts[0], params, s.resultColumns(st)
	return ps, nil
}

func (ps *preparedStatement) Params() []types.T        { return ps.params }
func (ps *preparedStatement) Columns() []pgwire.Column { return ps.cols }
func (ps *preparedStatement) Close()                   {}

// Bind implements pgwire.PreparedStatement.
func (ps *preparedStatement) Bind(ctx context.Context, params []types.Datum) (_ pgwire.Portal, err error) {
	s := ps.s
	defer func() { s.noteError(err) }()
	defer s.recoverPanic(&err)
	p := &portal{ps: ps, params: slices.Clone(params)}
	if ps.parsed == nil {
		return p, nil
	}
	if err := s.checkFailed(ps.parsed); err != nil {
		return nil, err
	}
	if p.st, p.refs, err = ps.bind(p.params); err != nil {
		return nil, err
	}
	p.seq = s.seq
	return p, nil
}

// bind binds the statement with parameter values and checks that its result
// is still the one Describe reported.
func (ps *preparedStatement) bind(params []types.Datum) (ir.Statement, sql.Access, error) {
	st, refs, err := sql.BindParamsInZoneRefs(ps.s.cat, ps.s.searchPath(), ps.s.zone, ps.parsed, ps.params, params)
	if err != nil {
		return nil, refs, err
	}
	if !slices.Equal(ps.s.resultColumns(st), ps.cols) {
		// A relation the statement reads was replaced since Parse.
		return nil, refs, sqlerr.New(sqlerr.FeatureNotSupported, "cached plan must not change result type")
	}
	return st, refs, nil
}

// portal implements pgwire.Portal.
type portal struct {
	ps     *preparedStatement
	params []types.Datum
	// st is the statement bound at Bind; nil for an empty query. seq is the
	// session's statement count then: if the session has run a statement
	// since, which may have changed the catalog, Run binds again.
	st  ir.Statement
	seq uint64
	// refs is what st touches (privileges are checked on it).
	refs sql.Access
}

var _ pgwire.Portal = (*portal)(nil)

// Run implements pgwire.Portal.
func (p *portal) Run(ctx context.Context, w pgwire.ResultWriter) (err error) {
	s := p.ps.s
	defer func() { s.noteError(err) }()
	defer s.recoverPanic(&err)
	if p.ps.parsed == nil {
		return w.EmptyQuery()
	}
	if err := s.checkFailed(p.ps.parsed); err != nil {
		return err
	}
	s.endLocalRole(true)
	st, refs := p.st, p.refs
	if p.seq != s.seq {
		if st, refs, err = p.ps.bind(p.params); err != nil {
			return err
		}
	}
	defer s.e.queries.start(s, p.ps.parsed.Text)()
	ctx, timedOut := s.withStatementTimeout(ctx)
	return timedOut(s.executeChecked(ctx, st, refs, w))
}

func (p *portal) Close() {}

// resultColumns returns the columns a statement's execution reports to
// BeginRows, or nil if it returns no rows.
func (s *session) resultColumns(st ir.Statement) []pgwire.Column {
	text := func(names ...string) []pgwire.Column {
		cols := make([]pgwire.Column, len(names))
		for i, n := range names {
			cols[i] = pgwire.Column{Name: n, Type: types.TextT}
		}
		return cols
	}
	if ret := sql.ReturningOf(st); ret != nil {
		st = &ir.Select{Query: ret}
	}
	switch st := st.(type) {
	case *ir.Select:
		all := st.Query.Columns()
		vis := ir.VisibleColumns(st.Query)
		cols := make([]pgwire.Column, len(vis))
		for i, c := range vis {
			cols[i] = pgwire.Column{Name: all[c].Name, Type: all[c].Type}
		}
		return cols
	case *sql.Fetch:
		return s.cursorColumns(st)
	case *sql.Subscribe:
		return subscribeColumns(st)
	case *ir.Explain, *sql.ExplainView:
		return text("QUERY PLAN")
	case *sql.Execute:
		return s.executeColumns(st)
	case *sql.VerifyView:
		return verifyColumns()
	case *ir.ShowRelations:
		return text("Name")
	case *sql.ShowCreate:
		return text("Name", "Create Sql")
	case *sql.ShowColumns:
		return text("Name", "Type", "Is Hidden", "Description")
	case *ir.ShowVar:
		if st.Name == "jobs" {
			return jobColumns()
		}
		if showAll(st.Name) {
			return text("name", "setting", "description")
		}
		return text(showName(st.Name))
	case *sql.Savepoint:
		if st.Drop {
			return text("drop_savepoint")
		}
		return text("create_savepoint")
	}
	return nil
}

// recoverPanic turns a panic into an XX000 error in *err. A panic is a bug:
// it fails the statement and is logged with its stack, instead of taking
// the server down. Deferred by every entry point of a session.
func (s *session) recoverPanic(err *error) {
	if r := recover(); r != nil {
		s.e.log.Error("internal error executing a statement", "panic", r, "stack", string(debug.Stack()))
		*err = sqlerr.New(sqlerr.InternalError, "internal error: %v", r)
	}
}
