package pgwire

import (
	"crypto/md5"
	"crypto/rand"
	"crypto/subtle"
	"encoding/hex"
	"errors"

	"github.com/jackc/pgx/v5/pgproto3"
)

// md5Exchange runs PostgreSQL's md5 authentication: AuthenticationMD5Password
// with a random 4-byte salt, then the client's password message, which must
// be "md5" followed by hex(md5(secret[3:] + salt)) where secret is the
// stored "md5" + hex(md5(password + user)). The salt is new for each
// exchange, so a response seen on the wire cannot be replayed.
func (c *conn) md5Exchange(user string) error {
	var salt [4]byte
	if _, err := rand.Read(salt[:]); err != nil {
		return err
	}
	if err := c.send(&pgproto3.AuthenticationMD5Password{Salt: salt}); err != nil {
		return err
	}
	if err := c.flush(); err != nil {
		return err
	}
	body, err := c.readAuthMessage()
	if err != nil {
		return err
	}
	var msg pgproto3.PasswordMessage
	if err := msg.Decode(body); err != nil {
		return err
	}
	secret, err := c.srv.auth.MD5Secret(user)
	if err != nil {
		return err
	}
	if !md5ResponseMatches(secret, salt, msg.Password) {
		return errors.New("md5 response did not verify")
	}
	return nil
}

// md5ResponseMatches reports whether response is the md5 authentication
// response to salt of a client that knows the password of stored secret
// ("md5" + 32 hex digits).
func md5ResponseMatches(secret string, salt [4]byte, response string) bool {
	if len(secret) != 35 || secret[:3] != "md5" {
		return false
	}
	sum := md5.Sum(append([]byte(secret[3:]), salt[:]...))
	want := "md5" + hex.EncodeToString(sum[:])
	return subtle.ConstantTimeCompare([]byte(want), []byte(response)) == 1
}
