// Package flightsrv serves Arrow Flight SQL: analytics clients (ADBC,
// pyarrow, Polars, DuckDB's Flight extension) run SELECT over tables and
// views and get the Arrow record batches the query produced, with no row
// conversion; INSERT, UPDATE, DELETE and DDL run through DoPut.
//
// Statements run in sessions of the same Engine the PostgreSQL protocol
// serves (pgwire.Engine), so they are bound, authorized and executed exactly
// as over pgwire: every call opens a session for the authenticated user,
// runs one statement, and closes it (autocommit). Clients authenticate with
// Flight's basic authentication (a Handshake with user and password, which
// returns a bearer token for the later calls).
//
// Result columns keep streamsql's Arrow types (types.T.ArrowType), except
// unconstrained numeric, whose values each carry their own scale: it is sent
// as utf8 text, exactly as psql would print it.
package flightsrv

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"log/slog"
	"net"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/flight"
	"github.com/apache/arrow-go/v18/arrow/flight/flightsql"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/streamsql/streamsql/pgwire"
	"github.com/streamsql/streamsql/sqlerr"
)

// Engine is what the server needs of the database: sessions, and checking
// a password given in plain text.
type Engine interface {
	pgwire.Engine
	// CheckPassword authenticates user; loopback says the listener is on a
	// loopback address.
	CheckPassword(user, password string, loopback bool) error
}

// Options configure a Server.
type Options struct {
	Logger *slog.Logger
	// Database is the database sessions connect to (default "dev").
	Database string
	// TokenTTL is how long a bearer token stays valid (default 24h).
	TokenTTL time.Duration
	// Mem allocates what the server builds (converted columns, messages);
	// default memory.DefaultAllocator.
	Mem memory.Allocator
}

// Server is a Flight SQL server over an Engine. Its methods are safe for
// concurrent use, as gRPC calls them.
type Server struct {
	flightsql.BaseServer
	engine   Engine
	log      *slog.Logger
	db       string
	ttl      time.Duration
	loopback bool

	mu       sync.Mutex
	tokens   map[string]token
	prepared map[string]preparedQuery
	srv      flight.Server
}

type token struct {
	user    string
	expires time.Time
}

// preparedQuery is a statement prepared by CreatePreparedStatement.
type preparedQuery struct {
	user, query string
}

// New returns a server for e.
func New(e Engine, opts Options) *Server {
	s := &Server{engine: e, log: opts.Logger, db: opts.Database, ttl: opts.TokenTTL,
		tokens: map[string]token{}, prepared: map[string]preparedQuery{}}
	if s.log == nil {
		s.log = slog.New(slog.DiscardHandler)
	}
	if s.db == "" {
		s.db = "dev"
	}
	if s.ttl <= 0 {
		s.ttl = 24 * time.Hour
	}
	s.Alloc = opts.Mem
	if s.Alloc == nil {
		s.Alloc = memory.DefaultAllocator
	}
	return s
}

// Serve serves Flight SQL on ln until Shutdown.
func (s *Server) Serve(ln net.Listener) error {
	if a, ok := ln.Addr().(*net.TCPAddr); ok {
		s.loopback = a.IP.IsLoopback()
	}
	srv := flight.NewServerWithMiddleware([]flight.ServerMiddleware{flight.CreateServerBasicAuthMiddleware(authValidator{s})})
	srv.RegisterFlightService(flightsql.NewFlightServer(s))
	srv.InitListener(ln)
	s.mu.Lock()
	s.srv = srv
	s.mu.Unlock()
	return srv.Serve()
}

// Shutdown stops the server, waiting for running calls.
func (s *Server) Shutdown() {
	s.mu.Lock()
	srv := s.srv
	s.mu.Unlock()
	if srv != nil {
		srv.Shutdown()
	}
}

// authValidator checks Handshake credentials and bearer tokens.
type authValidator struct{ s *Server }

func (v authValidator) Validate(user, password string) (string, error) {
	if err := v.s.engine.CheckPassword(user, password, v.s.loopback); err != nil {
		return "", status.Error(codes.Unauthenticated, err.Error())
	}
	b := make([]byte, 24)
	rand.Read(b)
	tok := hex.EncodeToString(b)
	v.s.mu.Lock()
	defer v.s.mu.Unlock()
	now := time.Now()
	for k, t := range v.s.tokens {
		if now.After(t.expires) {
			delete(v.s.tokens, k)
		}
	}
	v.s.tokens[tok] = token{user: user, expires: now.Add(v.s.ttl)}
	return tok, nil
}

func (v authValidator) IsValid(bearer string) (any, error) {
	v.s.mu.Lock()
	defer v.s.mu.Unlock()
	t, ok := v.s.tokens[bearer]
	if !ok || time.Now().After(t.expires) {
		return nil, status.Error(codes.Unauthenticated, "invalid or expired token: authenticate again")
	}
	return t.user, nil
}

// session opens a session for the call's authenticated user.
func (s *Server) session(ctx context.Context) (pgwire.Session, string, error) {
	user, _ := flight.AuthFromContext(ctx).(string)
	if user == "" {
		return nil, "", status.Error(codes.Unauthenticated, "must authenticate first")
	}
	sess, err := s.engine.Connect(ctx, map[string]string{"user": user, "database": s.db, "application_name": "flightsql"})
	if err != nil {
		return nil, "", grpcError(err)
	}
	return sess, user, nil
}

// grpcError maps a statement's error to a gRPC status: the SQLSTATE and
// message in the description, the code by class.
func grpcError(err error) error {
	if _, ok := status.FromError(err); ok {
		return err
	}
	e := sqlerr.Wrap(err)
	code := codes.Internal
	switch {
	case e.Code == sqlerr.InsufficientPrivilege:
		code = codes.PermissionDenied
	case strings.HasPrefix(e.Code, "42"), strings.HasPrefix(e.Code, "22"), strings.HasPrefix(e.Code, "0A"):
		code = codes.InvalidArgument
	case strings.HasPrefix(e.Code, "28"):
		code = codes.Unauthenticated
	case strings.HasPrefix(e.Code, "23"), strings.HasPrefix(e.Code, "40"):
		code = codes.Aborted
	case e.Code == sqlerr.QueryCanceled:
		code = codes.Canceled
	}
	return status.Errorf(code, "%s (SQLSTATE %s)", e.Message, e.Code)
}

// schemaOf prepares query to learn its result columns.
func (s *Server) schemaOf(ctx context.Context, sess pgwire.Session, query string) (*arrow.Schema, error) {
	ps, err := sess.Prepare(ctx, query, nil)
	if err != nil {
		return nil, grpcError(err)
	}
	defer ps.Close()
	cols := ps.Columns()
	if cols == nil {
		return nil, status.Error(codes.InvalidArgument, "the statement returns no rows: run it with ExecuteUpdate")
	}
	return resultSchema(cols), nil
}

// flightInfo describes query's result, whose ticket is handle.
func (s *Server) flightInfo(ctx context.Context, query string, handle []byte, desc *flight.FlightDescriptor) (*flight.FlightInfo, error) {
	sess, _, err := s.session(ctx)
	if err != nil {
		return nil, err
	}
	defer sess.Close()
	schema, err := s.schemaOf(ctx, sess, query)
	if err != nil {
		return nil, err
	}
	return &flight.FlightInfo{
		Schema:           flight.SerializeSchema(schema, s.Alloc),
		FlightDescriptor: desc,
		Endpoint:         []*flight.FlightEndpoint{{Ticket: &flight.Ticket{Ticket: handle}}},
		TotalRecords:     -1,
		TotalBytes:       -1,
	}, nil
}

// GetFlightInfoStatement describes a query; its ticket is the query text.
func (s *Server) GetFlightInfoStatement(ctx context.Context, cmd flightsql.StatementQuery, desc *flight.FlightDescriptor) (*flight.FlightInfo, error) {
	if len(cmd.GetTransactionId()) > 0 {
		return nil, status.Error(codes.Unimplemented, "Flight SQL transactions are not supported: each statement commits on its own")
	}
	tkt, err := flightsql.CreateStatementQueryTicket([]byte(cmd.GetQuery()))
	if err != nil {
		return nil, err
	}
	return s.flightInfo(ctx, cmd.GetQuery(), tkt, desc)
}

// GetSchemaStatement returns a query's result schema.
func (s *Server) GetSchemaStatement(ctx context.Context, cmd flightsql.StatementQuery, _ *flight.FlightDescriptor) (*flight.SchemaResult, error) {
	sess, _, err := s.session(ctx)
	if err != nil {
		return nil, err
	}
	defer sess.Close()
	schema, err := s.schemaOf(ctx, sess, cmd.GetQuery())
	if err != nil {
		return nil, err
	}
	return &flight.SchemaResult{Schema: flight.SerializeSchema(schema, s.Alloc)}, nil
}

// DoGetStatement runs the query of a ticket and streams its batches.
func (s *Server) DoGetStatement(ctx context.Context, tkt flightsql.StatementQueryTicket) (*arrow.Schema, <-chan flight.StreamChunk, error) {
	return s.stream(ctx, string(tkt.GetStatementHandle()))
}

// stream runs query in a new session and streams its result batches.
func (s *Server) stream(ctx context.Context, query string) (*arrow.Schema, <-chan flight.StreamChunk, error) {
	sess, _, err := s.session(ctx)
	if err != nil {
		return nil, nil, err
	}
	schema, err := s.schemaOf(ctx, sess, query)
	if err != nil {
		sess.Close()
		return nil, nil, err
	}
	ch := make(chan flight.StreamChunk, 2)
	go func() {
		defer close(ch)
		defer sess.Close()
		w := &batchWriter{ctx: ctx, ch: ch, schema: schema, mem: s.Alloc}
		if err := sess.Query(ctx, query, w); err != nil {
			select {
			case ch <- flight.StreamChunk{Err: grpcError(err)}:
			case <-ctx.Done():
			}
		}
	}()
	return schema, ch, nil
}

// DoPutCommandStatementUpdate runs a statement that returns no rows and
// reports the rows it changed (0 for DDL).
func (s *Server) DoPutCommandStatementUpdate(ctx context.Context, cmd flightsql.StatementUpdate) (int64, error) {
	if len(cmd.GetTransactionId()) > 0 {
		return 0, status.Error(codes.Unimplemented, "Flight SQL transactions are not supported: each statement commits on its own")
	}
	sess, _, err := s.session(ctx)
	if err != nil {
		return 0, err
	}
	defer sess.Close()
	w := &updateWriter{}
	if err := sess.Query(ctx, cmd.GetQuery(), w); err != nil {
		return 0, grpcError(err)
	}
	return w.rows, nil
}

// CreatePreparedStatement prepares a query (parameters are not supported:
// the statement runs as it is).
func (s *Server) CreatePreparedStatement(ctx context.Context, req flightsql.ActionCreatePreparedStatementRequest) (flightsql.ActionCreatePreparedStatementResult, error) {
	var res flightsql.ActionCreatePreparedStatementResult
	sess, user, err := s.session(ctx)
	if err != nil {
		return res, err
	}
	defer sess.Close()
	ps, err := sess.Prepare(ctx, req.GetQuery(), nil)
	if err != nil {
		return res, grpcError(err)
	}
	defer ps.Close()
	if len(ps.Params()) > 0 {
		return res, status.Error(codes.Unimplemented, "prepared statements with parameters are not supported over Flight SQL")
	}
	if cols := ps.Columns(); cols != nil {
		res.DatasetSchema = resultSchema(cols)
	}
	b := make([]byte, 16)
	rand.Read(b)
	res.Handle = []byte(hex.EncodeToString(b))
	s.mu.Lock()
	s.prepared[string(res.Handle)] = preparedQuery{user: user, query: req.GetQuery()}
	s.mu.Unlock()
	return res, nil
}

// ClosePreparedStatement forgets a prepared statement.
func (s *Server) ClosePreparedStatement(_ context.Context, req flightsql.ActionClosePreparedStatementRequest) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.prepared, string(req.GetPreparedStatementHandle()))
	return nil
}

// preparedQuery returns the query of a prepared statement of the call's
// user.
func (s *Server) preparedQuery(ctx context.Context, handle []byte) (string, error) {
	user, _ := flight.AuthFromContext(ctx).(string)
	s.mu.Lock()
	defer s.mu.Unlock()
	p, ok := s.prepared[string(handle)]
	if !ok || p.user != user {
		return "", status.Error(codes.InvalidArgument, "unknown prepared statement handle")
	}
	return p.query, nil
}

// GetFlightInfoPreparedStatement describes a prepared query.
func (s *Server) GetFlightInfoPreparedStatement(ctx context.Context, cmd flightsql.PreparedStatementQuery, desc *flight.FlightDescriptor) (*flight.FlightInfo, error) {
	q, err := s.preparedQuery(ctx, cmd.GetPreparedStatementHandle())
	if err != nil {
		return nil, err
	}
	tkt, err := flightsql.CreateStatementQueryTicket([]byte(q))
	if err != nil {
		return nil, err
	}
	return s.flightInfo(ctx, q, tkt, desc)
}

// DoGetPreparedStatement runs a prepared query.
func (s *Server) DoGetPreparedStatement(ctx context.Context, cmd flightsql.PreparedStatementQuery) (*arrow.Schema, <-chan flight.StreamChunk, error) {
	q, err := s.preparedQuery(ctx, cmd.GetPreparedStatementHandle())
	if err != nil {
		return nil, nil, err
	}
	return s.stream(ctx, q)
}

// DoPutPreparedStatementUpdate runs a prepared statement that returns no
// rows.
func (s *Server) DoPutPreparedStatementUpdate(ctx context.Context, cmd flightsql.PreparedStatementUpdate, _ flight.MessageReader) (int64, error) {
	q, err := s.preparedQuery(ctx, cmd.GetPreparedStatementHandle())
	if err != nil {
		return 0, err
	}
	return s.DoPutCommandStatementUpdate(ctx, statementUpdate(q))
}

// statementUpdate is a StatementUpdate of a query.
type statementUpdate string

func (q statementUpdate) GetQuery() string         { return string(q) }
func (q statementUpdate) GetTransactionId() []byte { return nil }

// rowsOfTag reads the row count of a command tag ("INSERT 0 5", "UPDATE
// 3"); 0 for tags without one.
func rowsOfTag(tag string) int64 {
	f := strings.Fields(tag)
	if len(f) < 2 {
		return 0
	}
	n, err := strconv.ParseInt(f[len(f)-1], 10, 64)
	if err != nil {
		return 0
	}
	return n
}
