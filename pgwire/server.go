// Package pgwire serves the PostgreSQL frontend/backend protocol (version 3.0)
// to clients such as psql and Postgres drivers.
//
// It handles startup (TLS when configured, GSS encryption declined;
// authentication trust or SCRAM-SHA-256 as an Authenticator decides: see
// auth.go), the simple and the extended query protocols (prepared statements,
// portals, parameters and results in text or binary format; see extended.go),
// query cancellation and shutdown. What the statements mean is up to the
// Engine plugged in: pgwire knows nothing of SQL beyond the types and errors
// it puts on the wire. COPY's sub-protocol is in copy.go; the function call
// protocol is not supported.
//
// Every connection runs in its own goroutine, plus a reader goroutine that
// notices a client going away while a query runs, so that the query's context
// is cancelled promptly.
package pgwire

import (
	"context"
	"crypto/rand"
	"crypto/subtle"
	"crypto/tls"
	"errors"
	"log/slog"
	"net"
	"sync"
	"sync/atomic"
	"time"
)

// Options configure a Server.
type Options struct {
	Logger *slog.Logger
	// ServerVersion is reported as server_version (default "15.0").
	ServerVersion string
	// ShutdownGrace is how long Close lets running queries finish before it
	// cancels them (default 30s). Writes acknowledged to a client are durable,
	// so a write that has reached its table is better finished than cancelled.
	ShutdownGrace time.Duration
	// TLS, if set, accepts SSLRequests with this configuration (else they
	// are declined).
	TLS *tls.Config
	// Auth decides how clients authenticate; nil trusts every client.
	Auth Authenticator
	// MaxConnections caps the sessions open at once (0: no cap); a client
	// beyond it gets FATAL 53300.
	MaxConnections int
}

// Server serves the protocol for an Engine on any number of listeners and
// connections. Its methods are safe for concurrent use.
type Server struct {
	engine   Engine
	log      *slog.Logger
	version  string
	grace    time.Duration
	tls      *tls.Config
	auth     Authenticator
	maxConns int
	// sessions counts the connections past their startup packet.
	sessions atomic.Int64

	mu        sync.Mutex
	closed    bool
	listeners map[net.Listener]struct{}
	// conns holds every connection being served, by process id (the id in
	// BackendKeyData, which CancelRequest names).
	conns   map[uint32]*conn
	nextPID uint32
	// wg counts the goroutines serving connections (and ServeConn calls).
	wg sync.WaitGroup

	// testHookWaitInput, if set, is called by a connection goroutine when it
	// may be about to block waiting for client input.
	testHookWaitInput func()
	// testHookQueryRead, if set, is called by a connection goroutine when it
	// has read a Query message, before the query is cancellable.
	testHookQueryRead func()
}

// NewServer returns a server for e.
func NewServer(e Engine, opts Options) *Server {
	s := &Server{
		engine:    e,
		log:       opts.Logger,
		version:   opts.ServerVersion,
		grace:     opts.ShutdownGrace,
		tls:       opts.TLS,
		auth:      opts.Auth,
		maxConns:  opts.MaxConnections,
		listeners: make(map[net.Listener]struct{}),
		conns:     make(map[uint32]*conn),
		// Process ids look like PostgreSQL's and are unique per server.
		nextPID: 1000,
	}
	if s.log == nil {
		s.log = slog.New(slog.DiscardHandler)
	}
	if s.version == "" {
		s.version = "15.0"
	}
	return s
}

// Serve accepts connections on ln until Close; each connection runs in its own
// goroutine. It returns nil after Close.
//
// Serve closes ln when it returns. An Accept error other than a temporary one
// (after a short backoff) ends Serve with that error.
func (s *Server) Serve(ln net.Listener) error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		ln.Close()
		return nil
	}
	s.listeners[ln] = struct{}{}
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		delete(s.listeners, ln)
		s.mu.Unlock()
		ln.Close()
	}()

	var backoff time.Duration
	for {
		nc, err := ln.Accept()
		if err != nil {
			if s.isClosed() {
				return nil
			}
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() || isTemporary(err) {
				backoff = min(max(2*backoff, 5*time.Millisecond), time.Second)
				s.log.Info("pgwire: accept failed; retrying", "err", err, "backoff", backoff)
				time.Sleep(backoff)
				continue
			}
			return err
		}
		backoff = 0
		s.mu.Lock()
		if s.closed {
			s.mu.Unlock()
			nc.Close()
			return nil
		}
		s.wg.Add(1)
		s.mu.Unlock()
		go func() {
			defer s.wg.Done()
			s.ServeConn(context.Background(), nc)
		}()
	}
}

// isTemporary reports whether an Accept error is worth retrying (for example
// running out of file descriptors).
func isTemporary(err error) bool {
	var t interface{ Temporary() bool }
	return errors.As(err, &t) && t.Temporary()
}

func (s *Server) isClosed() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.closed
}

// Close stops accepting and ends every connection with FATAL 57P01
// ("terminating connection due to administrator command"): idle ones at
// once, busy ones once their running query has finished and its result was
// sent. Queries still running after Options.ShutdownGrace see their context
// cancelled. Close waits for every connection goroutine and closes every
// Session. A client that does not read its output is given shutdownWriteGrace
// before its writes fail.
func (s *Server) Close() error {
	s.mu.Lock()
	s.closed = true
	for ln := range s.listeners {
		ln.Close()
	}
	conns := make([]*conn, 0, len(s.conns))
	for _, c := range s.conns {
		conns = append(conns, c)
	}
	s.mu.Unlock()
	// Idle connections end now; busy ones after their query.
	for _, c := range conns {
		c.drain()
	}
	done := make(chan struct{})
	go func() {
		s.wg.Wait()
		close(done)
	}()
	grace := s.grace
	if grace <= 0 {
		grace = 30 * time.Second
	}
	select {
	case <-done:
	case <-time.After(grace):
		s.mu.Lock()
		for _, c := range s.conns {
			c.shutdown()
		}
		s.mu.Unlock()
		<-done
	}
	return nil
}

// ServeConn runs the protocol on one connection until it ends (exported for the
// fuzz test and for tests using net.Pipe).
//
// ServeConn closes c before it returns. Cancelling ctx ends the connection as
// Close does.
func (s *Server) ServeConn(ctx context.Context, c net.Conn) {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		c.Close()
		return
	}
	s.wg.Add(1)
	defer s.wg.Done()
	for s.nextPID++; s.nextPID == 0 || s.conns[s.nextPID] != nil; s.nextPID++ {
	}
	cn := newConn(ctx, s, c, s.nextPID)
	s.conns[cn.pid] = cn
	s.mu.Unlock()

	defer func() {
		s.mu.Lock()
		delete(s.conns, cn.pid)
		s.mu.Unlock()
	}()
	cn.serve()
}

// newSecret returns a random cancel key.
func newSecret() [4]byte {
	var k [4]byte
	rand.Read(k[:])
	return k
}

// cancel handles a CancelRequest: it cancels the running query of the
// connection with process id pid if secret is that connection's key, and does
// nothing otherwise (the requester learns nothing either way).
func (s *Server) cancel(pid uint32, secret []byte) {
	s.mu.Lock()
	c := s.conns[pid]
	s.mu.Unlock()
	if c == nil || !c.keySent.Load() || subtle.ConstantTimeCompare(c.secret[:], secret) != 1 {
		s.log.Debug("pgwire: cancel request matches no session", "pid", pid)
		return
	}
	c.cancelQuery()
}
