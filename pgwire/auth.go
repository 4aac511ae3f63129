package pgwire

import (
	"crypto/tls"
	"crypto/x509"
	"encoding/binary"
	"errors"
	"io"
	"net"

	"github.com/jackc/pgx/v5/pgproto3"
	"github.com/xdg-go/scram"

	"github.com/streamsql/streamsql/sqlerr"
)

// AuthMethod is how a client proves who it is.
type AuthMethod uint8

const (
	// AuthTrust asks for no proof.
	AuthTrust AuthMethod = iota
	// AuthSCRAM asks for SCRAM-SHA-256 (RFC 7677), with channel binding
	// (tls-server-end-point) offered on a TLS connection.
	AuthSCRAM
	// AuthMD5 asks for the password hashed with md5 and a random salt
	// (AuthenticationMD5Password), for roles whose stored secret is an md5
	// hash.
	AuthMD5
)

// Authenticator decides how each client authenticates. Its methods are
// called from connection goroutines, concurrently.
type Authenticator interface {
	// Method returns how user, connecting from remote (over TLS or not),
	// must authenticate. An error refuses the connection: it is sent as a
	// FATAL ErrorResponse (an *sqlerr.Error keeps its SQLSTATE, anything
	// else is 28000).
	Method(user string, remote net.Addr, tls bool) (AuthMethod, error)
	// Credentials returns user's SCRAM-SHA-256 credentials. An error fails
	// the exchange as a wrong password does, so that a client cannot tell
	// a missing role from a wrong password.
	Credentials(user string) (scram.StoredCredentials, error)
	// MD5Secret returns user's stored md5 hash, "md5" followed by the hex
	// md5 of the password and the user name. An error fails the exchange
	// as a wrong password does.
	MD5Secret(user string) (string, error)
}

// The SASL mechanisms offered.
const (
	mechSCRAM     = "SCRAM-SHA-256"
	mechSCRAMPlus = "SCRAM-SHA-256-PLUS"
)

// authenticate runs the authentication exchange for user and reports
// whether the client proved who it is. On failure the client has been sent
// its FATAL error.
func (c *conn) authenticate(user string) bool {
	if c.srv.auth == nil {
		return true
	}
	tc, isTLS := c.io.(*tls.Conn)
	method, err := c.srv.auth.Method(user, c.nc.RemoteAddr(), isTLS)
	if err != nil {
		e := sqlerr.Wrap(err)
		if _, ok := err.(*sqlerr.Error); !ok {
			e = sqlerr.New(sqlerr.InvalidAuthorization, "%s", err.Error())
		}
		c.log.Info("pgwire: connection refused", "user", user, "err", e.Message)
		c.sendError("FATAL", e)
		c.fatalSent = true
		c.flush()
		return false
	}
	if method == AuthTrust {
		return true
	}
	exchange := func() error { return c.scramExchange(user, tc) }
	if method == AuthMD5 {
		exchange = func() error { return c.md5Exchange(user) }
	}
	if err := exchange(); err != nil {
		c.log.Info("pgwire: authentication failed", "user", user, "err", err)
		if c.wErr == nil {
			c.fatal(sqlerr.InvalidPassword, "password authentication failed for user \"%s\"", user)
		}
		return false
	}
	return true
}

// scramExchange runs SCRAM-SHA-256 with the client: AuthenticationSASL,
// the client's first message, AuthenticationSASLContinue, the client's
// final message, AuthenticationSASLFinal. The user name inside the SCRAM
// messages is ignored, as PostgreSQL ignores it: the startup packet's name
// is the one checked. tc is the TLS connection, or nil.
func (c *conn) scramExchange(user string, tc *tls.Conn) error {
	lookup := func(string) (scram.StoredCredentials, error) { return c.srv.auth.Credentials(user) }
	srv, err := scram.SHA256.NewServer(lookup)
	if err != nil {
		return err
	}
	mechs := []string{mechSCRAM}
	var binding scram.ChannelBinding
	if tc != nil {
		if binding, err = serverEndpointBinding(c.srv.tls); err == nil {
			mechs = []string{mechSCRAMPlus, mechSCRAM}
		}
	}
	if err := c.send(&pgproto3.AuthenticationSASL{AuthMechanisms: mechs}); err != nil {
		return err
	}
	if err := c.flush(); err != nil {
		return err
	}
	body, err := c.readAuthMessage()
	if err != nil {
		return err
	}
	var first pgproto3.SASLInitialResponse
	if err := first.Decode(body); err != nil {
		return err
	}
	var conv *scram.ServerConversation
	switch first.AuthMechanism {
	case mechSCRAM:
		conv = srv.NewConversation()
	case mechSCRAMPlus:
		if !binding.IsSupported() {
			return errors.New("channel binding asked for without TLS")
		}
		conv = srv.NewConversationWithChannelBinding(binding)
	default:
		return errors.New("unsupported SASL mechanism " + first.AuthMechanism)
	}
	serverFirst, err := conv.Step(string(first.Data))
	if err != nil {
		return err
	}
	if err := c.send(&pgproto3.AuthenticationSASLContinue{Data: []byte(serverFirst)}); err != nil {
		return err
	}
	if err := c.flush(); err != nil {
		return err
	}
	if body, err = c.readAuthMessage(); err != nil {
		return err
	}
	var final pgproto3.SASLResponse
	if err := final.Decode(body); err != nil {
		return err
	}
	serverFinal, err := conv.Step(string(final.Data))
	if err != nil || !conv.Valid() {
		return errors.Join(errors.New("client proof did not verify"), err)
	}
	return c.send(&pgproto3.AuthenticationSASLFinal{Data: []byte(serverFinal)})
}

// readAuthMessage reads one password message ('p') during startup and
// returns its body.
func (c *conn) readAuthMessage() ([]byte, error) {
	r := startupReader{c}
	var hdr [5]byte
	if _, err := io.ReadFull(r, hdr[:]); err != nil {
		return nil, err
	}
	if hdr[0] != 'p' {
		return nil, errors.New("expected a password message")
	}
	n := int(int32(binary.BigEndian.Uint32(hdr[1:]))) - 4
	if n < 0 || n > smallMessageLimit {
		return nil, errors.New("invalid password message length")
	}
	body := make([]byte, n)
	if _, err := io.ReadFull(r, body); err != nil {
		return nil, err
	}
	return body, nil
}

// serverEndpointBinding returns the tls-server-end-point channel binding
// (RFC 5929) of the server's certificate: the hash of the certificate the
// client saw. It is known only for a configuration with one certificate.
func serverEndpointBinding(cfg *tls.Config) (scram.ChannelBinding, error) {
	if len(cfg.Certificates) != 1 || len(cfg.Certificates[0].Certificate) == 0 {
		return scram.ChannelBinding{}, errors.New("no single server certificate")
	}
	leaf := cfg.Certificates[0].Leaf
	if leaf == nil {
		var err error
		if leaf, err = x509.ParseCertificate(cfg.Certificates[0].Certificate[0]); err != nil {
			return scram.ChannelBinding{}, err
		}
	}
	// The library computes the binding from a client's view of the
	// connection: give it the certificate as the client's peer.
	return scram.NewTLSServerEndpointBinding(&tls.ConnectionState{PeerCertificates: []*x509.Certificate{leaf}})
}
