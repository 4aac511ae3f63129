package engine

import (
	"crypto/hmac"
	"crypto/rand"
	"encoding/base64"
	"fmt"
	"net"
	"strconv"
	"strings"

	"github.com/xdg-go/scram"

	"github.com/streamsql/streamsql/pgwire"
	"github.com/streamsql/streamsql/sqlerr"
)

// Authentication modes (Options.Auth).
const (
	// AuthAuto asks roles that have a password for it (SCRAM-SHA-256) and
	// trusts the others on loopback connections only.
	AuthAuto = "auto"
	// AuthSCRAM asks every client for its role's password.
	AuthSCRAM = "scram"
	// AuthTrust asks nothing, and admits loopback connections only.
	AuthTrust = "trust"
)

// scramIterations is the PBKDF2 iteration count of new verifiers, as
// PostgreSQL's scram_iterations default.
const scramIterations = 4096

const scramPrefix = "SCRAM-SHA-256$"

// Authenticator returns the pgwire.Authenticator of the engine's roles in
// the configured mode. A client whose user name is no role can connect only
// where the mode trusts it: AuthTrust over loopback, or AuthAuto over
// loopback while the bootstrap superuser has no password (a development
// server, where any local tool connects as any name); it then has a
// superuser's rights. Roles that cannot log in are refused at Connect.
func (e *Engine) Authenticator() (pgwire.Authenticator, error) {
	switch e.opts.Auth {
	case "", AuthAuto, AuthSCRAM, AuthTrust:
		return roleAuthenticator{e}, nil
	}
	return nil, fmt.Errorf("unknown authentication mode %q (auto, scram or trust)", e.opts.Auth)
}

type roleAuthenticator struct{ e *Engine }

func (a roleAuthenticator) Method(user string, remote net.Addr, _ bool) (pgwire.AuthMethod, error) {
	r := a.e.roles.ByName(user)
	loopback := isLoopback(remote)
	switch a.e.opts.Auth {
	case AuthSCRAM:
		return pgwire.AuthSCRAM, nil
	case AuthTrust:
		if !loopback {
			return 0, sqlerr.New(sqlerr.InvalidAuthorization, "trust authentication admits loopback connections only, not %s", remote)
		}
		return pgwire.AuthTrust, nil
	}
	switch {
	case r != nil && r.Password != "":
		return pgwire.AuthSCRAM, nil
	case r == nil && a.e.secured():
		return 0, sqlerr.New(sqlerr.InvalidAuthorization, "role \"%s\" does not exist", user)
	case loopback:
		return pgwire.AuthTrust, nil
	}
	return 0, sqlerr.New(sqlerr.InvalidPassword, "password authentication failed for user \"%s\"", user).
		WithDetail("Connections from other hosts need a role with a password.")
}

// secured reports whether the bootstrap superuser has a password: from
// then on the auto mode admits only roles.
func (e *Engine) secured() bool {
	name := e.opts.Superuser
	if name == "" {
		name = DefaultSuperuser
	}
	r := e.roles.ByName(name)
	return r != nil && r.Password != ""
}

func (a roleAuthenticator) Credentials(user string) (scram.StoredCredentials, error) {
	r := a.e.roles.ByName(user)
	if r == nil || r.Password == "" {
		return scram.StoredCredentials{}, fmt.Errorf("role %q has no password", user)
	}
	return parseVerifier(r.Password)
}

// isLoopback reports whether a client connects from this machine (TCP over
// a loopback address, a Unix socket, or an in-process pipe).
func isLoopback(addr net.Addr) bool {
	switch a := addr.(type) {
	case *net.TCPAddr:
		return a.IP.IsLoopback()
	case *net.UnixAddr:
		return true
	}
	return addr == nil || addr.Network() == "pipe"
}

// checkLogin refuses a session for a role that may not log in.
func (e *Engine) checkLogin(user string) error {
	if r := e.roles.ByName(user); r != nil && !r.Login {
		return sqlerr.New(sqlerr.InvalidAuthorization, "role \"%s\" is not permitted to log in", user)
	}
	return nil
}

// passwordVerifier returns what is stored for a role's new password: a
// SCRAM-SHA-256 verifier, computed here unless the password already is one
// (what pg_dumpall emits). md5 hashes are refused: they cannot give a SCRAM
// verifier.
func passwordVerifier(user, password string) (string, error) {
	if strings.HasPrefix(password, scramPrefix) {
		if _, err := parseVerifier(password); err == nil {
			return password, nil
		}
	}
	if len(password) == 35 && strings.HasPrefix(password, "md5") {
		return "", sqlerr.Unsupported("md5 password hashes (give the password, or a SCRAM-SHA-256 verifier)")
	}
	if password == "" {
		return "", nil // PostgreSQL: an empty password is no password
	}
	return scramVerifier(user, password)
}

// scramVerifier computes a SCRAM-SHA-256 verifier of password with a new
// random salt, in PostgreSQL's format.
func scramVerifier(user, password string) (string, error) {
	client, err := scram.SHA256.NewClient(user, password, "")
	if err != nil {
		return "", sqlerr.New(sqlerr.InvalidParameterValue, "invalid password: %v", err)
	}
	salt := make([]byte, 16)
	rand.Read(salt)
	c, err := client.GetStoredCredentialsWithError(scram.KeyFactors{Salt: string(salt), Iters: scramIterations})
	if err != nil {
		return "", err
	}
	enc := base64.StdEncoding.EncodeToString
	return fmt.Sprintf("%s%d:%s$%s:%s", scramPrefix, c.Iters, enc(salt), enc(c.StoredKey), enc(c.ServerKey)), nil
}

// verifierMatches reports whether verifier v was made from password.
func verifierMatches(v, user, password string) bool {
	c, err := parseVerifier(v)
	if err != nil {
		return false
	}
	client, err := scram.SHA256.NewClient(user, password, "")
	if err != nil {
		return false
	}
	got, err := client.GetStoredCredentialsWithError(c.KeyFactors)
	return err == nil && hmac.Equal(got.StoredKey, c.StoredKey)
}

// parseVerifier reads "SCRAM-SHA-256$<iterations>:<salt>$<StoredKey>:<ServerKey>".
func parseVerifier(v string) (scram.StoredCredentials, error) {
	bad := fmt.Errorf("malformed SCRAM-SHA-256 verifier")
	rest, ok := strings.CutPrefix(v, scramPrefix)
	if !ok {
		return scram.StoredCredentials{}, bad
	}
	factors, keys, ok := strings.Cut(rest, "$")
	if !ok {
		return scram.StoredCredentials{}, bad
	}
	iters, salt, ok1 := strings.Cut(factors, ":")
	stored, server, ok2 := strings.Cut(keys, ":")
	n, err := strconv.Atoi(iters)
	if !ok1 || !ok2 || err != nil || n <= 0 {
		return scram.StoredCredentials{}, bad
	}
	dec := base64.StdEncoding.DecodeString
	s, err1 := dec(salt)
	sk, err2 := dec(stored)
	vk, err3 := dec(server)
	if err1 != nil || err2 != nil || err3 != nil {
		return scram.StoredCredentials{}, bad
	}
	return scram.StoredCredentials{KeyFactors: scram.KeyFactors{Salt: string(s), Iters: n}, StoredKey: sk, ServerKey: vk}, nil
}

// CheckPassword authenticates user by a password given in plain text, as
// the pgwire exchange would a client on a loopback connection (or not):
// for protocols that carry passwords rather than a SCRAM exchange (Arrow
// Flight SQL's basic authentication, over TLS where it matters).
func (e *Engine) CheckPassword(user, password string, loopback bool) error {
	addr := &net.TCPAddr{IP: net.IPv4(192, 0, 2, 1)} // any address that is not loopback
	if loopback {
		addr = &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1)}
	}
	m, err := roleAuthenticator{e}.Method(user, addr, false)
	if err != nil {
		return err
	}
	if m == pgwire.AuthSCRAM {
		r := e.roles.ByName(user)
		if r == nil || !verifierMatches(r.Password, user, password) {
			return sqlerr.New(sqlerr.InvalidPassword, "password authentication failed for user \"%s\"", user)
		}
	}
	return e.checkLogin(user)
}
