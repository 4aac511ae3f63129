package pgwire

import (
	"bufio"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/jackc/pgx/v5/pgproto3"

	"github.com/streamsql/streamsql/sqlerr"
)

const (
	// startupTimeout bounds the startup phase, as PostgreSQL's
	// authentication_timeout does.
	startupTimeout = 60 * time.Second
	// shutdownWriteGrace is how long a connection that is being ended (by
	// Close or a lost client) may still spend writing its last messages.
	shutdownWriteGrace = 5 * time.Second
	// outputBufferSize is the size of the output buffer: a result larger than
	// that streams to the client as it is produced.
	outputBufferSize = 32 << 10

	// Message size limits, as PostgreSQL's PQ_SMALL_MESSAGE_LIMIT and
	// PQ_LARGE_MESSAGE_LIMIT.
	smallMessageLimit  = 10000
	largeMessageLimit  = 0x3fffffff - 1
	maxStartupPacket   = 10000
	minStartupPacket   = 4
	retainedBufferSize = 1 << 20

	// Startup packet codes.
	protocolMajor3    = 3
	cancelRequestCode = 80877102
	sslRequestCode    = 80877103
	gssEncRequestCode = 80877104
)

// The causes with which a connection's or a query's context is cancelled.
var (
	errQueryCanceled = errors.New("pgwire: query canceled by a cancel request")
	errShutdown      = errors.New("pgwire: server closing")
	errClientGone    = errors.New("pgwire: client connection lost")
	errConnDone      = errors.New("pgwire: connection ended")
	errIdleInTx      = errors.New("pgwire: idle in transaction too long")
)

// aLongTimeAgo is a deadline in the past, to make a blocked read return.
var aLongTimeAgo = time.Unix(1, 0)

// conn is one client connection. Everything but the fields under mu, keySent
// and the context is owned by the connection goroutine (the one in serve).
type conn struct {
	srv *Server
	// nc is the client's network connection: deadlines and Close go to it.
	// io is what the protocol is read from and written to: nc, or the TLS
	// connection over it once the client asked for SSL. It changes only
	// during startup, before any other goroutine reads it.
	nc  net.Conn
	io  net.Conn
	log *slog.Logger
	pid uint32
	// secret is the cancel key sent in BackendKeyData. keySent is set before
	// it is sent: a CancelRequest can match only after that.
	secret  [4]byte
	keySent atomic.Bool

	// ctx lives as long as the connection; it is cancelled with errShutdown by
	// Server.Close, with errClientGone when a read or write fails and with
	// errConnDone when serve returns.
	ctx    context.Context
	cancel context.CancelCauseFunc

	in   *inputReader  // nil during startup
	br   *bufio.Reader // reads in after startup
	bw   *bufio.Writer
	wErr error // the first write error; nothing is written after it

	fatalSent bool
	admitted  bool   // counted in Server.sessions
	msgBuf    []byte // scratch for encoding messages
	body      []byte // the body of the message last read

	session Session
	rw      resultWriter

	// The extended query protocol's prepared statements and portals, by
	// name ("" is the unnamed one); see extended.go.
	stmts   map[string]*statement
	portals map[string]*portal
	// skipToSync is set by an error in an extended-protocol message: the
	// messages up to the next Sync are discarded.
	skipToSync bool

	mu sync.Mutex
	// queryCancel cancels the running query's context; nil between queries.
	queryCancel context.CancelCauseFunc
	// busy is set while the connection goroutine handles a message it has
	// read, and cancelPending by a CancelRequest that came then with no
	// query running yet: the next query of the message starts cancelled.
	// Both are cleared when the goroutine goes back to reading.
	busy, cancelPending bool
	// draining is set by Server.Close: the connection ends after its query.
	draining atomic.Bool
}

func newConn(ctx context.Context, s *Server, nc net.Conn, pid uint32) *conn {
	c := &conn{
		srv:    s,
		nc:     nc,
		io:     nc,
		pid:    pid,
		secret: newSecret(),
		log:    s.log.With("pid", pid, "remote", nc.RemoteAddr().String()),
		bw:     bufio.NewWriterSize(nc, outputBufferSize),
	}
	c.ctx, c.cancel = context.WithCancelCause(context.WithValue(ctx, backendKey{}, c))
	c.rw.c = c
	return c
}

// shutdown ends the connection on behalf of Server.Close. It may be called from
// any goroutine.
func (c *conn) shutdown() { c.cancel(errShutdown) }

// drain ends the connection on behalf of Server.Close: at once if it is idle,
// otherwise after its running query. It may be called from any goroutine.
func (c *conn) drain() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.draining.Store(true)
	if c.queryCancel == nil {
		c.cancel(errShutdown)
	} else if d, ok := c.session.(Drainer); ok {
		d.Drain() // the running query may never end by itself
	}
}

// cancelQuery cancels the running query, if any, for a CancelRequest. It may be
// called from any goroutine.
func (c *conn) cancelQuery() {
	c.mu.Lock()
	defer c.mu.Unlock()
	switch {
	case c.queryCancel != nil:
		c.log.Debug("pgwire: query canceled by cancel request")
		c.queryCancel(errQueryCanceled)
	case c.busy:
		c.cancelPending = true
	}
}

// setBusy records whether the connection goroutine handles a message
// (busy) or waits for the next one. A cancel still pending when it goes
// back to waiting is dropped: as in PostgreSQL, a cancel that finds no
// statement to run is ignored.
func (c *conn) setBusy(busy bool) {
	c.mu.Lock()
	c.busy = busy
	if !busy {
		c.cancelPending = false
	}
	c.mu.Unlock()
}

// serve runs the connection to its end and releases everything it holds.
func (c *conn) serve() {
	c.log.Debug("pgwire: connection opened")
	// Once the connection's context is done, a blocked read returns at once and
	// writes get a little time to say why.
	stop := context.AfterFunc(c.ctx, func() {
		c.nc.SetReadDeadline(aLongTimeAgo)
		c.nc.SetWriteDeadline(time.Now().Add(shutdownWriteGrace))
	})
	defer stop()

	if c.startup() {
		c.run()
	}
	if context.Cause(c.ctx) == errIdleInTx && c.wErr == nil {
		c.fatal(sqlerr.IdleInTransactionTimeout, "terminating connection due to idle-in-transaction timeout")
	}
	if (c.ctx.Err() != nil || c.draining.Load()) && context.Cause(c.ctx) != errClientGone && !c.fatalSent && c.wErr == nil {
		// Server.Close or the ServeConn context ended the connection.
		c.fatal(sqlerr.AdminShutdown, "terminating connection due to administrator command")
	}
	c.cancel(errConnDone)
	if c.session != nil {
		c.closeAll()
		c.session.Close()
	}
	if c.admitted {
		c.srv.sessions.Add(-1)
	}
	c.io.Close()
	if c.in != nil {
		c.in.close()
	}
	c.log.Debug("pgwire: connection closed", "cause", context.Cause(c.ctx))
}

// startup runs the startup phase: encryption requests, the startup message or
// a cancel request, authentication and session creation. It reports whether
// the connection is ready for queries.
func (c *conn) startup() bool {
	// Startup reads exactly what each packet holds, without read-ahead, so
	// that nothing is read before an encryption handshake could start.
	c.nc.SetReadDeadline(time.Now().Add(startupTimeout))
	sslDone, gssDone := false, false
	var params map[string]string
	var minor uint32
	var pqOptions []string
	r := startupReader{c}
	for params == nil {
		var hdr [4]byte
		if _, err := io.ReadFull(r, hdr[:]); err != nil {
			c.readFailed("startup", err)
			return false
		}
		n := int(int32(binary.BigEndian.Uint32(hdr[:]))) - 4
		if n < minStartupPacket || n > maxStartupPacket {
			c.fatal(sqlerr.ProtocolViolation, "invalid length of startup packet")
			return false
		}
		body := make([]byte, n)
		if _, err := io.ReadFull(r, body); err != nil {
			c.readFailed("startup", err)
			return false
		}
		code := binary.BigEndian.Uint32(body)
		switch {
		case code == sslRequestCode || code == gssEncRequestCode:
			if code == sslRequestCode && sslDone || code == gssEncRequestCode && gssDone {
				c.fatal(sqlerr.ProtocolViolation, "duplicate encryption request in startup")
				return false
			}
			sslDone = sslDone || code == sslRequestCode
			gssDone = gssDone || code == gssEncRequestCode
			if code == sslRequestCode && c.srv.tls != nil {
				if !c.startTLS() {
					return false
				}
				continue
			}
			// Decline encryption; the client goes on unencrypted or gives up.
			if c.write([]byte{'N'}) != nil || c.flush() != nil {
				return false
			}
		case code == cancelRequestCode:
			// Process id and key; PostgreSQL 18 allows keys up to 256 bytes.
			if n < 12 || n > 264 {
				c.fatal(sqlerr.ProtocolViolation, "invalid length of cancel request packet")
				return false
			}
			c.srv.cancel(binary.BigEndian.Uint32(body[4:]), body[8:])
			c.fatalSent = true // a cancel connection is closed without a word
			return false
		case code>>16 == protocolMajor3:
			minor = code & 0xffff
			var err error
			if params, pqOptions, err = parseStartupParams(body[4:]); err != nil {
				c.fatal(sqlerr.ProtocolViolation, "%s", err.Error())
				return false
			}
		default:
			c.fatal(sqlerr.FeatureNotSupported,
				"unsupported frontend protocol %d.%d: server supports 3.0", code>>16, code&0xffff)
			return false
		}
	}

	if minor > 0 || len(pqOptions) > 0 {
		// Ask for 3.0 and decline every protocol extension.
		c.send(&pgproto3.NegotiateProtocolVersion{NewestMinorProtocol: 0, UnrecognizedOptions: pqOptions})
	}
	user := params["user"]
	if user == "" {
		c.fatal(sqlerr.InvalidAuthorization, "no PostgreSQL user name specified in startup packet")
		return false
	}
	if params["database"] == "" {
		params["database"] = user
	}
	if r, ok := params["replication"]; ok {
		switch strings.ToLower(r) {
		case "false", "off", "no", "0":
		default:
			c.fatal(sqlerr.FeatureNotSupported, "replication connections are not supported")
			return false
		}
	}
	c.log.Debug("pgwire: startup", "user", user, "database", params["database"],
		"application_name", params["application_name"])
	if !c.admit() || !c.authenticate(user) {
		return false
	}

	s, err := c.srv.engine.Connect(c.ctx, params)
	if err != nil {
		if c.ctx.Err() != nil {
			// Ended while connecting; serve says why.
			return false
		}
		e := sqlerr.Wrap(err)
		c.log.Info("pgwire: session refused", "code", e.Code, "err", e.Message)
		c.sendError("FATAL", e)
		c.fatalSent = true
		c.flush()
		return false
	}
	c.session = s

	c.send(&pgproto3.AuthenticationOk{})
	for _, p := range [...][2]string{
		{"application_name", params["application_name"]},
		{"client_encoding", "UTF8"},
		{"DateStyle", "ISO, MDY"},
		{"default_transaction_read_only", "off"},
		{"in_hot_standby", "off"},
		{"integer_datetimes", "on"},
		{"IntervalStyle", "postgres"},
		{"is_superuser", "on"},
		{"server_encoding", "UTF8"},
		{"server_version", c.srv.version},
		{"session_authorization", user},
		{"standard_conforming_strings", "on"},
		{"TimeZone", sessionZone(s).Name()},
	} {
		c.send(&pgproto3.ParameterStatus{Name: p[0], Value: noNUL(p[1])})
	}
	c.keySent.Store(true)
	c.send(&pgproto3.BackendKeyData{ProcessID: c.pid, SecretKey: c.secret[:]})
	if !c.ready() {
		return false
	}

	// From here on a reader goroutine reads the client's input.
	c.nc.SetReadDeadline(time.Time{})
	if c.ctx.Err() != nil {
		// The connection ended as the deadline was cleared; it may have been
		// lifted after the shutdown set it.
		return false
	}
	c.in = startInput(c.io, func(err error) { c.cancel(errClientGone) }, c.srv.testHookWaitInput)
	c.br = bufio.NewReaderSize(c.in, inputChunkSize)
	return true
}

// startupReader reads the connection during startup.
type startupReader struct{ c *conn }

func (r startupReader) Read(p []byte) (int, error) {
	if h := r.c.srv.testHookWaitInput; h != nil {
		h()
	}
	return r.c.io.Read(p)
}

// parseStartupParams parses the name/value pairs of a startup message. Names
// starting with "_pq_." (protocol extensions) are returned apart.
func parseStartupParams(b []byte) (params map[string]string, pqOptions []string, err error) {
	params = make(map[string]string)
	for {
		if len(b) == 0 {
			return nil, nil, errors.New("invalid startup packet layout: expected terminator as last byte")
		}
		if b[0] == 0 {
			if len(b) != 1 {
				return nil, nil, errors.New("invalid startup packet layout: expected terminator as last byte")
			}
			return params, pqOptions, nil
		}
		name, rest, ok := cutNUL(b)
		if !ok {
			return nil, nil, errors.New("invalid startup packet layout: expected terminator as last byte")
		}
		value, rest, ok := cutNUL(rest)
		if !ok {
			return nil, nil, errors.New("invalid startup packet layout: expected terminator as last byte")
		}
		if strings.HasPrefix(name, "_pq_.") {
			pqOptions = append(pqOptions, name)
		} else {
			params[name] = value
		}
		b = rest
	}
}

func cutNUL(b []byte) (s string, rest []byte, ok bool) {
	for i, ch := range b {
		if ch == 0 {
			return string(b[:i]), b[i+1:], true
		}
	}
	return "", nil, false
}

// run reads and answers messages until the connection ends.
func (c *conn) run() {
	for {
		if c.draining.Load() {
			return
		}
		c.setBusy(false)
		stopIdle := c.idleTimer()
		typ, n, err := c.readHeader()
		stopIdle()
		if err != nil {
			c.readFailed("message", err)
			return
		}
		c.setBusy(true)
		if c.skipToSync && typ != 'S' && typ != 'X' {
			// Discarded after an error in the extended protocol, simple
			// queries included, as PostgreSQL does.
			if c.skipBody(n) != nil {
				return
			}
			continue
		}
		switch typ {
		case 'Q':
			body, err := c.readBody(n)
			if err != nil {
				c.readFailed("query", err)
				return
			}
			if !c.runQuery(body) {
				return
			}
		case 'X':
			c.log.Debug("pgwire: terminate")
			return
		case 'S':
			if c.skipBody(n) != nil || !c.sync() {
				return
			}
		case 'P', 'B', 'D', 'E', 'C', 'H':
			body, err := c.readBody(n)
			if err != nil {
				c.readFailed("message", err)
				return
			}
			if !c.extended(typ, body) {
				return
			}
		case 'F':
			if c.skipBody(n) != nil {
				return
			}
			c.sendError("ERROR", sqlerr.New(sqlerr.FeatureNotSupported, "function call protocol is not supported"))
			if !c.ready() {
				return
			}
		case 'd', 'c', 'f':
			// Copy messages outside of COPY are ignored, as PostgreSQL does after
			// a failed COPY.
			if c.skipBody(n) != nil {
				return
			}
		}
		if cap(c.body) > retainedBufferSize {
			c.body = nil
		}
	}
}

// runQuery runs the statements of one Query message and ends with
// ReadyForQuery. It reports whether the connection goes on.
func (c *conn) runQuery(body []byte) bool {
	if len(body) == 0 || body[len(body)-1] != 0 || slices.Index(body, 0) != len(body)-1 {
		c.fatal(sqlerr.ProtocolViolation, "invalid Query message format")
		return false
	}
	text := string(body[:len(body)-1])
	// A simple query replaces the unnamed statement and portal.
	c.closeStatement("")
	c.closePortal("")
	if !utf8.ValidString(text) {
		c.sendError("ERROR", sqlerr.New(sqlerr.CharacterNotInRepertoire, "invalid byte sequence for encoding \"UTF8\""))
		return c.ready()
	}

	if h := c.srv.testHookQueryRead; h != nil {
		h()
	}
	reported, canceled, err := c.cancelable(c.rw.start, func(ctx context.Context) error {
		return c.session.Query(ctx, text, &c.rw)
	})

	// A query that finished while a Server.Close drained the connection
	// still ends with ReadyForQuery; the connection ends after it.
	if c.wErr != nil || c.ctx.Err() != nil && (err != nil || !c.draining.Load()) {
		return false
	}
	switch {
	case err != nil:
		c.sendError("ERROR", queryError(err, canceled))
	case !reported:
		// The session reported nothing at all; tell the client the query was
		// empty so that it does not wait for a result.
		c.send(&pgproto3.EmptyQueryResponse{})
	}
	c.endTransaction()
	return c.ready()
}

// queryError is the error the client gets for a statement that failed with
// err: an *sqlerr.Error as it is, else 57014 if the client canceled the
// statement, else XX000.
func queryError(err error, canceled bool) *sqlerr.Error {
	var e *sqlerr.Error
	switch {
	case errors.As(err, &e):
		return e
	case canceled:
		return errCanceled
	}
	return &sqlerr.Error{Code: sqlerr.InternalError, Message: err.Error()}
}

// errCanceled is what the client learns of a query ended by its CancelRequest.
var errCanceled = sqlerr.New(sqlerr.QueryCanceled, "canceling statement due to user request")

// ready sends ReadyForQuery and flushes. It reports whether the connection goes
// on.
func (c *conn) ready() bool {
	c.send(&pgproto3.ReadyForQuery{TxStatus: c.session.TxStatus()})
	return c.flush() == nil
}

// idleTimer ends the connection if the session is in a transaction block
// and idle longer than its idle_in_transaction_session_timeout; the returned
// func stops the timer once a message arrives.
func (c *conn) idleTimer() (stop func()) {
	is, ok := c.session.(IdleTimeoutSession)
	if !ok {
		return func() {}
	}
	d := is.IdleInTransactionTimeout()
	if d <= 0 || c.br.Buffered() > 0 {
		return func() {}
	}
	t := time.AfterFunc(d, func() { c.cancel(errIdleInTx) })
	return func() { t.Stop() }
}

// readHeader reads a message's type and body length and checks both.
func (c *conn) readHeader() (typ byte, n int, err error) {
	var hdr [5]byte
	if _, err := io.ReadFull(c.br, hdr[:]); err != nil {
		return 0, 0, err
	}
	typ = hdr[0]
	var limit int
	switch typ {
	case 'Q', 'F', 'P', 'B', 'd', 'f':
		limit = largeMessageLimit
	case 'X', 'S', 'H', 'C', 'D', 'E', 'c':
		limit = smallMessageLimit
	default:
		return 0, 0, newProtocolError("invalid frontend message type %d", typ)
	}
	n = int(int32(binary.BigEndian.Uint32(hdr[1:]))) - 4
	if n < 0 || n > limit {
		return 0, 0, newProtocolError("invalid message length")
	}
	return typ, n, nil
}

// readBody reads a message body of n bytes. The result is valid until the next
// readBody. The buffer grows as the data arrives, so that a length the client
// claims costs memory only once it is sent.
func (c *conn) readBody(n int) ([]byte, error) {
	b := c.body[:0]
	for len(b) < n {
		step := min(n-len(b), max(len(b), 64<<10))
		b = slices.Grow(b, step)
		m := len(b)
		b = b[:m+step]
		if _, err := io.ReadFull(c.br, b[m:]); err != nil {
			return nil, err
		}
	}
	c.body = b
	return b, nil
}

func (c *conn) skipBody(n int) error {
	if _, err := c.br.Discard(n); err != nil {
		c.readFailed("message", err)
		return err
	}
	return nil
}

// protocolError is a malformed message: the connection gets FATAL 08P01.
type protocolError string

func (e protocolError) Error() string { return string(e) }

func newProtocolError(format string, args ...any) error {
	return protocolError(fmt.Sprintf(format, args...))
}

// readFailed handles an error reading what of the client's input.
func (c *conn) readFailed(what string, err error) {
	var pe protocolError
	switch {
	case errors.As(err, &pe):
		c.fatal(sqlerr.ProtocolViolation, "%s", pe)
	case c.ctx.Err() != nil:
		// Ended by Close or by the reader goroutine; serve says why.
	case errors.Is(err, io.EOF):
		c.log.Debug("pgwire: client closed the connection")
	case errors.Is(err, io.ErrUnexpectedEOF):
		c.log.Info("pgwire: client closed the connection mid-"+what, "err", err)
	default:
		c.log.Debug("pgwire: read failed", "what", what, "err", err)
	}
	c.cancel(errClientGone)
}

// fatal sends a FATAL error; the caller then ends the connection.
func (c *conn) fatal(code, format string, args ...any) {
	e := sqlerr.New(code, format, args...)
	if code == sqlerr.ProtocolViolation || code == sqlerr.FeatureNotSupported {
		c.log.Info("pgwire: protocol error", "code", code, "err", e.Message)
	}
	c.sendError("FATAL", e)
	c.flush()
	c.fatalSent = true
}

// sendError sends e as an ErrorResponse of the given severity (ERROR or
// FATAL).
func (c *conn) sendError(severity string, e *sqlerr.Error) {
	code := e.Code
	if len(code) != 5 {
		code = sqlerr.InternalError
	}
	c.send(&pgproto3.ErrorResponse{
		Severity:            severity,
		SeverityUnlocalized: severity,
		Code:                code,
		Message:             noNUL(e.Message),
		Detail:              noNUL(e.Detail),
		Hint:                noNUL(e.Hint),
		Position:            int32(max(e.Position, 0)),
	})
}

// noNUL drops NUL bytes, which cannot travel in a protocol string.
func noNUL(s string) string {
	if strings.IndexByte(s, 0) < 0 {
		return s
	}
	return strings.ReplaceAll(s, "\x00", "")
}

// send encodes m into the output buffer.
func (c *conn) send(m pgproto3.BackendMessage) error {
	b, err := m.Encode(c.msgBuf[:0])
	if err != nil {
		return sqlerr.New(sqlerr.InternalError, "pgwire: encoding %T: %v", m, err)
	}
	c.msgBuf = b
	return c.write(b)
}

// write appends b to the output buffer, which is written to the client when
// it is full.
func (c *conn) write(b []byte) error {
	if c.wErr != nil {
		return c.wErr
	}
	if _, err := c.bw.Write(b); err != nil {
		c.writeFailed(err)
		return c.wErr
	}
	return nil
}

// flush writes the output buffer to the client.
func (c *conn) flush() error {
	if c.wErr != nil {
		return c.wErr
	}
	if err := c.bw.Flush(); err != nil {
		c.writeFailed(err)
		return c.wErr
	}
	return nil
}

func (c *conn) writeFailed(err error) {
	c.log.Debug("pgwire: write failed", "err", err)
	c.wErr = fmt.Errorf("pgwire: writing to client: %w", err)
	c.cancel(errClientGone)
}

// cancelable runs a statement (or a message's statements) with a context a
// CancelRequest cancels: start prepares the result writer with it, run runs.
// It reports whether the writer reported a result and whether a
// CancelRequest canceled the run. A CancelRequest that came after the
// message was read, before the run, cancels it at once.
func (c *conn) cancelable(start func(context.Context), run func(context.Context) error) (reported, canceled bool, err error) {
	qctx, qcancel := context.WithCancelCause(c.ctx)
	c.mu.Lock()
	c.queryCancel = qcancel
	if c.cancelPending {
		c.cancelPending = false
		qcancel(errQueryCanceled)
	}
	c.mu.Unlock()
	start(qctx)

	err = run(qctx)

	c.mu.Lock()
	c.queryCancel = nil
	c.mu.Unlock()
	reported = c.rw.finish()
	canceled = context.Cause(qctx) == errQueryCanceled
	qcancel(nil)
	return reported, canceled, err
}
