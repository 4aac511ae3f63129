package pgwire

import "context"

// Backend is the connection a session serves, as PostgreSQL's backend
// process: its process id (the one BackendKeyData sends and CancelRequest
// names) and the signals pg_cancel_backend and pg_terminate_backend send
// it. Its methods are safe for concurrent use, also after the connection
// has ended (they then do nothing).
type Backend struct{ c *conn }

// backendKey keys the Backend in a connection's context.
type backendKey struct{}

// BackendOf returns the Backend whose connection ctx belongs to: the
// context Engine.Connect and the session's methods are given. ok is false
// for a context of no connection.
func BackendOf(ctx context.Context) (b Backend, ok bool) {
	c, ok := ctx.Value(backendKey{}).(*conn)
	return Backend{c}, ok
}

// PID is the connection's process id.
func (b Backend) PID() uint32 { return b.c.pid }

// Cancel cancels the running statement as a CancelRequest does: it fails
// with 57014; between statements nothing happens.
func (b Backend) Cancel() { b.c.cancelQuery() }

// Terminate ends the connection: a running statement is cancelled and
// the client gets FATAL 57P01 (terminating connection due to
// administrator command).
func (b Backend) Terminate() { b.c.shutdown() }
