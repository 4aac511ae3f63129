package engine

import (
	"crypto/hmac"
	"crypto/md5"
	"crypto/rand"
	"crypto/subtle"
	"encoding/base64"
	"encoding/hex"
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
	// AuthMD5 asks every client for its role's password as PostgreSQL's
	// pg_hba method md5 does: with md5 for a role whose stored secret is an
	// md5 hash, with SCRAM-SHA-256 for the others. Only in this mode may
	// md5 hashes be stored (CREATE ROLE ... PASSWORD 'md5...', or
	// password_encryption = 'md5').
	AuthMD5 = "md5"
)

// scramIterations is the PBKDF2 iteration count of new verifiers, as
// PostgreSQL's scram_iterations default.
const scramIterations = 4096

const scramPrefix = "SCRAM-SHA-256$"

// md5Prefix starts a stored md5 hash: "md5" + hex(md5(password + user)).
const md5Prefix = "md5"

// isMD5Secret reports whether a stored secret is an md5 hash.
func isMD5Secret(v string) bool {
	if len(v) != 35 || !strings.HasPrefix(v, md5Prefix) {
		return false
	}
	_, err := hex.DecodeString(v[3:])
	return err == nil
}

// md5Secret returns the md5 hash PostgreSQL stores for user's password.
func md5Secret(user, password string) string {
	sum := md5.Sum([]byte(password + user))
	return md5Prefix + hex.EncodeToString(sum[:])
}

// Authenticator returns the pgwire.Authenticator of the engine's roles in
// the configured mode. A client whose user name is no role can connect only
// where the mode trusts it: AuthTrust over loopback, or AuthAuto over
// loopback while the bootstrap superuser has no password (a development
// server, where any local tool connects as any name); it then has a
// superuser's rights. Roles that cannot log in are refused at Connect.
func (e *Engine) Authenticator() (pgwire.Authenticator, error) {
	switch e.opts.Auth {
	case "", AuthAuto, AuthSCRAM, AuthTrust, AuthMD5:
		return roleAuthenticator{e}, nil
	}
	return nil, fmt.Errorf("unknown authentication mode %q (auto, scram, md5 or trust)", e.opts.Auth)
}

type roleAuthenticator struct{ e *Engine }

func (a roleAuthenticator) Method(user string, remote net.Addr, _ bool) (pgwire.AuthMethod, error) {
	r := a.e.roles.ByName(user)
	loopback := isLoopback(remote)
	switch a.e.opts.Auth {
	case AuthSCRAM:
		return pgwire.AuthSCRAM, nil
	case AuthMD5:
		// A name that is no role, or a role without a password, goes
		// through SCRAM and fails as a wrong password would.
		if r != nil && isMD5Secret(r.Password) {
			return pgwire.AuthMD5, nil
		}
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

func (a roleAuthenticator) MD5Secret(user string) (string, error) {
	r := a.e.roles.ByName(user)
	if r == nil || !isMD5Secret(r.Password) {
		return "", fmt.Errorf("role %q has no md5 password", user)
	}
	return r.Password, nil
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
// (what pg_dumpall emits), or, where the server authenticates with md5
// (AuthMD5), an md5 hash: given as one, or computed when the session's
// password_encryption is md5. Elsewhere md5 hashes are refused, as no
// exchange the server offers could check them.
func (e *Engine) passwordVerifier(s *session, user, password string) (string, error) {
	if strings.HasPrefix(password, scramPrefix) {
		if _, err := parseVerifier(password); err == nil {
			return password, nil
		}
	}
	md5Allowed := e.opts.Auth == AuthMD5
	if isMD5Secret(password) {
		if !md5Allowed {
			return "", sqlerr.Unsupported("md5 password hashes on a server without --auth md5 (give the password, or a SCRAM-SHA-256 verifier)")
		}
		return password, nil
	}
	if password == "" {
		return "", nil // PostgreSQL: an empty password is no password
	}
	if s.value("password_encryption") == md5Prefix {
		if !md5Allowed {
			return "", sqlerr.Unsupported("password_encryption = 'md5' on a server without --auth md5")
		}
		return md5Secret(user, password), nil
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

// secretMatches reports whether stored secret v (a SCRAM-SHA-256 verifier
// or an md5 hash) was made from password.
func secretMatches(v, user, password string) bool {
	if isMD5Secret(v) {
		return subtle.ConstantTimeCompare([]byte(v), []byte(md5Secret(user, password))) == 1
	}
	return verifierMatches(v, user, password)
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
	if m != pgwire.AuthTrust {
		r := e.roles.ByName(user)
		if r == nil || !secretMatches(r.Password, user, password) {
			return sqlerr.New(sqlerr.InvalidPassword, "password authentication failed for user \"%s\"", user)
		}
	}
	return e.checkLogin(user)
}
