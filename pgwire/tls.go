package pgwire

import (
	"context"
	"crypto/tls"
	"time"

	"github.com/streamsql/streamsql/sqlerr"
)

// startTLS accepts an SSLRequest: it answers 'S' and runs the TLS handshake,
// after which the connection reads and writes through TLS. It reports
// whether the handshake succeeded; the connection ends if not (the client
// sees no PostgreSQL error, as the handshake has begun).
func (c *conn) startTLS() bool {
	if c.write([]byte{'S'}) != nil || c.flush() != nil {
		return false
	}
	tc := tls.Server(c.nc, c.srv.tls)
	ctx, cancel := context.WithTimeout(c.ctx, startupTimeout)
	defer cancel()
	if err := tc.HandshakeContext(ctx); err != nil {
		c.log.Info("pgwire: TLS handshake failed", "err", err)
		c.fatalSent = true
		return false
	}
	c.io = tc
	c.bw.Reset(tc)
	c.nc.SetReadDeadline(time.Now().Add(startupTimeout))
	return true
}

// admit counts the connection among the server's sessions, or refuses it
// with 53300 when Options.MaxConnections are already open, as PostgreSQL's
// "sorry, too many clients already".
func (c *conn) admit() bool {
	n := c.srv.sessions.Add(1)
	c.admitted = true
	if max := c.srv.maxConns; max > 0 && n > int64(max) {
		c.fatal(sqlerr.TooManyConnections, "sorry, too many clients already")
		return false
	}
	return true
}
