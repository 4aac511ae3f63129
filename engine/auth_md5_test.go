package engine_test

import (
	"context"
	"crypto/md5"
	"encoding/hex"
	"net"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgproto3"

	"github.com/streamsql/streamsql/internal/testserver"
)

func md5Hash(user, password string) string {
	sum := md5.Sum([]byte(password + user))
	return "md5" + hex.EncodeToString(sum[:])
}

// firstAuthRequest sends a startup packet for user and returns the
// server's first authentication request.
func firstAuthRequest(t *testing.T, addr, user string) pgproto3.BackendMessage {
	t.Helper()
	nc, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	nc.SetDeadline(time.Now().Add(10 * time.Second))
	fe := pgproto3.NewFrontend(nc, nc)
	fe.Send(&pgproto3.StartupMessage{ProtocolVersion: pgproto3.ProtocolVersion30,
		Parameters: map[string]string{"user": user, "database": "dev"}})
	if err := fe.Flush(); err != nil {
		t.Fatal(err)
	}
	m, err := fe.Receive()
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// TestMD5Authentication checks --auth md5: roles whose password is stored
// as an md5 hash (given as one, or hashed under password_encryption = md5)
// authenticate with md5, the others with SCRAM, through pgx and psql and
// across a restart.
func TestMD5Authentication(t *testing.T) {
	srv := testserver.Start(t, testserver.Options{Auth: "md5", SuperuserPassword: "pw"})
	f := &authFixture{t: t, srv: srv}
	root := f.connect("root", "pw")
	execOK(t, root,
		"CREATE ROLE given LOGIN PASSWORD '"+md5Hash("given", "g-pw")+"'",
		"SET password_encryption = 'md5'",
		"CREATE ROLE hashed LOGIN PASSWORD 'h-pw'",
		"RESET password_encryption",
		"CREATE ROLE scrammed LOGIN PASSWORD 's-pw'")
	// The exchange each role is asked for shows how its secret is stored.
	for user, want := range map[string]string{"given": "md5", "hashed": "md5", "scrammed": "scram", "root": "scram", "nobody": "scram"} {
		got := "other"
		switch firstAuthRequest(t, srv.Addr, user).(type) {
		case *pgproto3.AuthenticationMD5Password:
			got = "md5"
		case *pgproto3.AuthenticationSASL:
			got = "scram"
		}
		if got != want {
			t.Errorf("%s is asked for %s, want %s", user, got, want)
		}
	}
	check := func() {
		t.Helper()
		f.connect("given", "g-pw")
		f.connect("hashed", "h-pw")
		f.connect("scrammed", "s-pw")
		for user, pw := range map[string]string{"given": "h-pw", "hashed": "", "scrammed": "g-pw", "nobody": "x"} {
			_, err := f.try(user, pw)
			wantSQLState(t, err, "28P01")
		}
	}
	check()
	if err := srv.Restart(); err != nil {
		t.Fatal(err)
	}
	check()

	psql, err := exec.LookPath("psql")
	if err != nil {
		t.Log("psql is not on PATH: skipping its part")
		return
	}
	host, port, _ := net.SplitHostPort(srv.Addr)
	for pw, ok := range map[string]bool{"g-pw": true, "wrong": false} {
		cmd := exec.Command(psql, "-h", host, "-p", port, "-U", "given", "-d", "dev", "-At", "-c", "SELECT 42")
		cmd.Env = append(os.Environ(), "PSQLRC=/dev/null", "PGPASSWORD="+pw, "PGSSLMODE=disable", "PGCONNECT_TIMEOUT=10")
		out, err := cmd.CombinedOutput()
		if ok && (err != nil || strings.TrimSpace(string(out)) != "42") {
			t.Fatalf("psql with md5: %v\n%s", err, out)
		}
		if !ok && (err == nil || !strings.Contains(string(out), "password authentication failed")) {
			t.Fatalf("psql with a wrong md5 password: %v\n%s", err, out)
		}
	}
}

// TestMD5RefusedWithoutMD5Mode checks that md5 hashes cannot be stored on
// a server that does not authenticate with md5, where no exchange could
// check them.
func TestMD5RefusedWithoutMD5Mode(t *testing.T) {
	ctx := context.Background()
	for _, mode := range []string{"", "scram"} {
		srv := testserver.Start(t, testserver.Options{Auth: mode, SuperuserPassword: "pw"})
		root := (&authFixture{t: t, srv: srv}).connect("root", "pw")
		_, err := root.Exec(ctx, "CREATE ROLE m LOGIN PASSWORD '"+md5Hash("m", "x")+"'")
		wantSQLState(t, err, "0A000")
		execOK(t, root, "SET password_encryption = 'md5'")
		_, err = root.Exec(ctx, "CREATE ROLE m LOGIN PASSWORD 'x'")
		wantSQLState(t, err, "0A000")
		_, err = root.Exec(ctx, "SET password_encryption = 'des'")
		wantSQLState(t, err, "22023")
		execOK(t, root, "SET password_encryption = 'scram-sha-256'", "CREATE ROLE m LOGIN PASSWORD 'x'")
	}
}

// TestTrustOnlyOnLoopback checks that --auth trust admits loopback clients
// and refuses any other address.
func TestTrustOnlyOnLoopback(t *testing.T) {
	srv := testserver.Start(t, testserver.Options{Auth: "trust", SuperuserPassword: "pw"})
	(&authFixture{t: t, srv: srv}).connect("root", "")
	if err := srv.Engine.CheckPassword("root", "", true); err != nil {
		t.Fatalf("loopback: %v", err)
	}
	err := srv.Engine.CheckPassword("root", "pw", false)
	if err == nil || !strings.Contains(err.Error(), "loopback") {
		t.Fatalf("trust from another host: %v, want a refusal", err)
	}
}
