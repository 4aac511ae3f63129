package main

import (
	"testing"

	"github.com/streamsql/streamsql/engine"
)

// TestAuthTrustNeedsLoopback checks that --auth trust refuses to start on
// a listen address other hosts can reach, and that the other modes do not.
func TestAuthTrustNeedsLoopback(t *testing.T) {
	for _, c := range []struct {
		auth, listen string
		ok           bool
	}{
		{engine.AuthTrust, "127.0.0.1:4566", true},
		{engine.AuthTrust, "localhost:4566", true},
		{engine.AuthTrust, "[::1]:4566", true},
		{engine.AuthTrust, "0.0.0.0:4566", false},
		{engine.AuthTrust, ":4566", false},
		{engine.AuthTrust, "192.0.2.1:4566", false},
		{engine.AuthMD5, "0.0.0.0:4566", true},
		{engine.AuthSCRAM, ":4566", true},
	} {
		err := authOptions{auth: c.auth}.check(c.listen)
		if (err == nil) != c.ok {
			t.Errorf("--auth %s --listen %s: %v, want ok=%v", c.auth, c.listen, err, c.ok)
		}
	}
}
