package pgwire

import (
	"crypto/md5"
	"encoding/hex"
	"testing"
)

// TestMD5ResponseMatches checks the md5 response against PostgreSQL's
// definition: "md5" + hex(md5(hex(md5(password + user)) + salt)).
func TestMD5ResponseMatches(t *testing.T) {
	hash := func(s string) string {
		sum := md5.Sum([]byte(s))
		return hex.EncodeToString(sum[:])
	}
	secret := "md5" + hash("pwalice")
	salt := [4]byte{1, 2, 3, 4}
	good := "md5" + hash(secret[3:]+string(salt[:]))
	if !md5ResponseMatches(secret, salt, good) {
		t.Fatal("the right response does not match")
	}
	for _, bad := range []string{"", good[:34], "md5" + hash(secret[3:]+"\x01\x02\x03\x05"), secret, good + "0"} {
		if md5ResponseMatches(secret, salt, bad) {
			t.Errorf("response %q matches", bad)
		}
	}
	if md5ResponseMatches("SCRAM-SHA-256$4096:x$y:z", salt, good) {
		t.Error("a SCRAM secret matches an md5 response")
	}
}
