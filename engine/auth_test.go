package engine_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/streamsql/streamsql/internal/testserver"
)

// authFixture connects to a test server as any user, with any password.
type authFixture struct {
	t   *testing.T
	srv *testserver.Server
	// query is appended to every URL (sslmode and the like).
	query string
}

func (f *authFixture) url(user, password string) string {
	cred := user
	if password != "" {
		cred += ":" + password
	}
	q := f.query
	if q == "" {
		q = "sslmode=disable"
	}
	return fmt.Sprintf("postgres://%s@%s/dev?%s", cred, f.srv.Addr, q)
}

func (f *authFixture) try(user, password string) (*pgx.Conn, error) {
	cfg, err := pgx.ParseConfig(f.url(user, password))
	if err != nil {
		f.t.Fatal(err)
	}
	cfg.DefaultQueryExecMode = pgx.QueryExecModeSimpleProtocol
	c, err := pgx.ConnectConfig(context.Background(), cfg)
	if err == nil {
		f.t.Cleanup(func() { c.Close(context.Background()) })
	}
	return c, err
}

func (f *authFixture) connect(user, password string) *pgx.Conn {
	f.t.Helper()
	c, err := f.try(user, password)
	if err != nil {
		f.t.Fatalf("connecting as %s: %v", user, err)
	}
	return c
}

func execOK(t *testing.T, c *pgx.Conn, stmts ...string) {
	t.Helper()
	for _, s := range stmts {
		if _, err := c.Exec(context.Background(), s); err != nil {
			t.Fatalf("%s: %v", s, err)
		}
	}
}

func wantSQLState(t *testing.T, err error, code string) {
	t.Helper()
	var pe *pgconn.PgError
	if !errors.As(err, &pe) || pe.Code != code {
		t.Fatalf("got %v, want SQLSTATE %s", err, code)
	}
}

// TestSCRAMAuthentication checks password authentication: the bootstrap
// superuser's password, roles created with passwords, wrong passwords and
// roles that may not log in, in the auto and scram modes.
func TestSCRAMAuthentication(t *testing.T) {
	srv := testserver.Start(t, testserver.Options{SuperuserPassword: "s3cret"})
	f := &authFixture{t: t, srv: srv}
	_, err := f.try("root", "wrong")
	wantSQLState(t, err, "28P01")
	root := f.connect("root", "s3cret")
	execOK(t, root,
		"CREATE ROLE alice LOGIN PASSWORD 'alice-pw'",
		"CREATE USER bob PASSWORD 'bob-pw'",
		"CREATE ROLE nologin PASSWORD 'x'")
	_, err = root.Exec(context.Background(), "CREATE ROLE alice")
	wantSQLState(t, err, "42710")
	f.connect("alice", "alice-pw")
	f.connect("bob", "bob-pw")
	_, err = f.try("alice", "bob-pw")
	wantSQLState(t, err, "28P01")
	_, err = f.try("alice", "")
	wantSQLState(t, err, "28P01")
	_, err = f.try("nologin", "x")
	wantSQLState(t, err, "28000")

	// A role changes its own password; the old one stops working.
	alice := f.connect("alice", "alice-pw")
	execOK(t, alice, "ALTER ROLE alice PASSWORD 'new-pw'")
	_, err = f.try("alice", "alice-pw")
	wantSQLState(t, err, "28P01")
	f.connect("alice", "new-pw")
	// ... but not its attributes.
	_, err = alice.Exec(context.Background(), "ALTER ROLE alice SUPERUSER")
	wantSQLState(t, err, "42501")

	// Once the superuser has a password, only roles connect.
	_, err = f.try("someone", "")
	wantSQLState(t, err, "28000")

	// Roles and passwords survive a restart.
	if err := srv.Restart(); err != nil {
		t.Fatal(err)
	}
	f.connect("alice", "new-pw")
	_, err = f.try("root", "wrong")
	wantSQLState(t, err, "28P01")

	execOK(t, f.connect("root", "s3cret"), "DROP ROLE bob", "DROP ROLE IF EXISTS bob")
	_, err = f.try("bob", "bob-pw")
	wantSQLState(t, err, "28000")
}

// TestTrustWithoutPassword checks the auto mode of a server whose
// superuser has no password: every loopback client connects, under any
// name, and roles without a password are trusted too.
func TestTrustWithoutPassword(t *testing.T) {
	srv := testserver.Start(t, testserver.Options{})
	f := &authFixture{t: t, srv: srv}
	c := f.connect("someone", "")
	execOK(t, c, "CREATE ROLE dave LOGIN", "CREATE ROLE erin LOGIN PASSWORD 'e'")
	f.connect("dave", "")
	_, err := f.try("erin", "")
	wantSQLState(t, err, "28P01")
	f.connect("erin", "e")
}

// TestSCRAMModeRefusesUnknownUsers checks --auth scram: no user connects
// without its role's password.
func TestSCRAMModeRefusesUnknownUsers(t *testing.T) {
	srv := testserver.Start(t, testserver.Options{Auth: "scram", SuperuserPassword: "pw"})
	f := &authFixture{t: t, srv: srv}
	_, err := f.try("someone", "")
	wantSQLState(t, err, "28P01")
	_, err = f.try("someone", "pw")
	wantSQLState(t, err, "28P01")
	f.connect("root", "pw")
}

// TestPrivileges checks that GRANT and REVOKE decide what a role may read,
// write, create and drop, through role membership and across a restart.
func TestPrivileges(t *testing.T) {
	ctx := context.Background()
	srv := testserver.Start(t, testserver.Options{SuperuserPassword: "pw"})
	f := &authFixture{t: t, srv: srv}
	root := f.connect("root", "pw")
	execOK(t, root,
		"CREATE TABLE t (k int PRIMARY KEY, v int)",
		"INSERT INTO t VALUES (1, 10), (2, 20)",
		"CREATE MATERIALIZED VIEW mv AS SELECT sum(v) AS s FROM t",
		"CREATE ROLE alice LOGIN PASSWORD 'a'",
		"CREATE ROLE bob LOGIN PASSWORD 'b'",
		"CREATE ROLE readers")
	alice := f.connect("alice", "a")
	_, err := alice.Exec(ctx, "SELECT * FROM t")
	wantSQLState(t, err, "42501")
	_, err = alice.Exec(ctx, "SELECT * FROM mv")
	wantSQLState(t, err, "42501")
	_, err = alice.Exec(ctx, "SELECT (SELECT count(*) FROM t)")
	wantSQLState(t, err, "42501")
	// System tables are readable by every role.
	execOK(t, alice, "SELECT * FROM streamsql_views")

	execOK(t, root, "GRANT SELECT ON t TO alice")
	var n int
	if err := alice.QueryRow(ctx, "SELECT count(*) FROM t").Scan(&n); err != nil || n != 2 {
		t.Fatalf("count = %d, %v", n, err)
	}
	_, err = alice.Exec(ctx, "INSERT INTO t VALUES (3, 30)")
	wantSQLState(t, err, "42501")
	_, err = alice.Exec(ctx, "DELETE FROM t")
	wantSQLState(t, err, "42501")
	execOK(t, root, "GRANT INSERT, UPDATE ON TABLE t TO alice")
	execOK(t, alice, "INSERT INTO t VALUES (3, 30)", "UPDATE t SET v = v + 1 WHERE k = 3")
	_, err = alice.Exec(ctx, "DELETE FROM t WHERE k = 3")
	wantSQLState(t, err, "42501")
	// INSERT ... SELECT reads what it selects from.
	_, err = alice.Exec(ctx, "INSERT INTO t SELECT s::int, 0 FROM mv")
	wantSQLState(t, err, "42501")

	// Creating needs CREATE on the schema; the creator owns what it creates.
	_, err = alice.Exec(ctx, "CREATE TABLE mine (a int)")
	wantSQLState(t, err, "42501")
	execOK(t, root, "GRANT CREATE ON SCHEMA public TO alice")
	execOK(t, alice,
		"CREATE TABLE mine (a int)",
		"INSERT INTO mine VALUES (1)",
		"CREATE MATERIALIZED VIEW mine_v AS SELECT count(*) AS n FROM mine",
		"GRANT SELECT ON mine TO readers")
	_, err = alice.Exec(ctx, "DROP TABLE t")
	wantSQLState(t, err, "42501")
	// Without the grant option alice grants nothing (a warning, as in
	// PostgreSQL).
	execOK(t, alice, "GRANT SELECT ON t TO bob")
	_, err = alice.Exec(ctx, "CREATE ROLE carol")
	wantSQLState(t, err, "42501")

	// bob reads mine through readers, once he is a member.
	bob := f.connect("bob", "b")
	_, err = bob.Exec(ctx, "SELECT * FROM t")
	wantSQLState(t, err, "42501")
	_, err = bob.Exec(ctx, "SELECT * FROM mine")
	wantSQLState(t, err, "42501")
	execOK(t, root, "GRANT readers TO bob")
	execOK(t, bob, "SELECT * FROM mine")

	// A role that owns objects cannot be dropped.
	_, err = root.Exec(ctx, "DROP ROLE alice")
	wantSQLState(t, err, "2BP01")

	// Everything survives a restart.
	if err := srv.Restart(); err != nil {
		t.Fatal(err)
	}
	alice, bob = f.connect("alice", "a"), f.connect("bob", "b")
	execOK(t, alice, "SELECT * FROM t", "SELECT * FROM mine_v", "DROP MATERIALIZED VIEW mine_v")
	execOK(t, bob, "SELECT * FROM mine")
	root = f.connect("root", "pw")
	execOK(t, root, "REVOKE SELECT ON t FROM alice", "REVOKE readers FROM bob")
	_, err = alice.Exec(ctx, "SELECT * FROM t")
	wantSQLState(t, err, "42501")
	_, err = bob.Exec(ctx, "SELECT * FROM mine")
	wantSQLState(t, err, "42501")
	execOK(t, root, "GRANT SELECT ON ALL TABLES IN SCHEMA public TO PUBLIC")
	execOK(t, bob, "SELECT * FROM t", "SELECT * FROM mv")
	execOK(t, alice, "DROP TABLE mine")
	execOK(t, root, "DROP ROLE alice")
}

// TestTLS checks sslmode=require and verify-full, SCRAM over TLS (with
// channel binding where the client offers it) and psql over TLS.
func TestTLS(t *testing.T) {
	dir := t.TempDir()
	certFile, cfg := selfSignedCert(t, dir)
	srv := testserver.Start(t, testserver.Options{SuperuserPassword: "pw", TLS: cfg})
	for _, q := range []string{
		"sslmode=require",
		"sslmode=verify-full&sslrootcert=" + certFile,
		"sslmode=require&channel_binding=require",
	} {
		f := &authFixture{t: t, srv: srv, query: q}
		c := f.connect("root", "pw")
		if _, ok := c.PgConn().Conn().(*tls.Conn); !ok {
			t.Errorf("%s: the connection is not TLS", q)
		}
		execOK(t, c, "SELECT 1")
		_, err := f.try("root", "wrong")
		wantSQLState(t, err, "28P01")
	}
	// A client that does not ask for TLS still connects.
	(&authFixture{t: t, srv: srv}).connect("root", "pw")

	psql, err := exec.LookPath("psql")
	if err != nil {
		t.Log("psql is not on PATH: skipping its part")
		return
	}
	host, port, _ := net.SplitHostPort(srv.Addr)
	cmd := exec.Command(psql, "-h", host, "-p", port, "-U", "root", "-d", "dev", "-At", "-c", "SELECT 42")
	cmd.Env = append(os.Environ(), "PSQLRC=/dev/null", "PGPASSWORD=pw", "PGSSLMODE=verify-full",
		"PGSSLROOTCERT="+certFile, "PGCONNECT_TIMEOUT=10")
	out, err := cmd.CombinedOutput()
	if err != nil || strings.TrimSpace(string(out)) != "42" {
		t.Fatalf("psql over TLS: %v\n%s", err, out)
	}
}

// TestMaxConnections checks that a client beyond the cap gets 53300, and
// that a slot frees when a session ends.
func TestMaxConnections(t *testing.T) {
	srv := testserver.Start(t, testserver.Options{MaxConnections: 2})
	f := &authFixture{t: t, srv: srv}
	f.connect("a", "")
	b := f.connect("b", "")
	_, err := f.try("c", "")
	wantSQLState(t, err, "53300")
	b.Close(context.Background())
	deadline := time.Now().Add(5 * time.Second)
	for {
		_, err := f.try("c", "")
		if err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no slot after a session ended: %v", err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// selfSignedCert writes a certificate for 127.0.0.1 and localhost and
// returns its file and the server's TLS configuration.
func selfSignedCert(t *testing.T, dir string) (string, *tls.Config) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: "localhost"},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(24 * time.Hour),
		DNSNames:              []string{"localhost"},
		IPAddresses:           []net.IP{net.ParseIP("127.0.0.1")},
		KeyUsage:              x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage:           []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	certPEM := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	keyPEM := pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER})
	certFile := filepath.Join(dir, "server.crt")
	if err := os.WriteFile(certFile, certPEM, 0o600); err != nil {
		t.Fatal(err)
	}
	cert, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		t.Fatal(err)
	}
	return certFile, &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}
}

// TestPrivilegesExtendedProtocol checks that statements run through Parse,
// Bind and Execute are checked as simple queries are, also when a grant
// changes between two executions of one prepared statement.
func TestPrivilegesExtendedProtocol(t *testing.T) {
	ctx := context.Background()
	srv := testserver.Start(t, testserver.Options{SuperuserPassword: "pw"})
	f := &authFixture{t: t, srv: srv}
	root := f.connect("root", "pw")
	execOK(t, root, "CREATE TABLE t (k int PRIMARY KEY)", "INSERT INTO t VALUES (1)",
		"CREATE ROLE alice LOGIN PASSWORD 'a'")
	alice, err := pgx.Connect(ctx, f.url("alice", "a"))
	if err != nil {
		t.Fatal(err)
	}
	defer alice.Close(ctx)
	var n int
	err = alice.QueryRow(ctx, "SELECT count(*) FROM t WHERE k > $1", 0).Scan(&n)
	wantSQLState(t, err, "42501")
	execOK(t, root, "GRANT SELECT ON t TO alice")
	if err := alice.QueryRow(ctx, "SELECT count(*) FROM t WHERE k > $1", 0).Scan(&n); err != nil || n != 1 {
		t.Fatalf("count = %d, %v", n, err)
	}
	execOK(t, root, "REVOKE SELECT ON t FROM alice")
	err = alice.QueryRow(ctx, "SELECT count(*) FROM t WHERE k > $1", 0).Scan(&n)
	wantSQLState(t, err, "42501")
	_, err = alice.Exec(ctx, "INSERT INTO t VALUES ($1)", 2)
	wantSQLState(t, err, "42501")
}

// TestHasTablePrivilege checks that has_table_privilege answers from the
// grants, by name and by OID, for the session's role and for another.
func TestHasTablePrivilege(t *testing.T) {
	ctx := context.Background()
	srv := testserver.Start(t, testserver.Options{SuperuserPassword: "pw"})
	f := &authFixture{t: t, srv: srv}
	root := f.connect("root", "pw")
	execOK(t, root, "CREATE TABLE t (a int)", "CREATE ROLE alice LOGIN PASSWORD 'a'", "GRANT SELECT ON t TO alice")
	alice := f.connect("alice", "a")
	for _, c := range []struct {
		conn *pgx.Conn
		sql  string
		want bool
	}{
		{alice, "SELECT has_table_privilege('t', 'SELECT')", true},
		{alice, "SELECT has_table_privilege('public.t', 'select, insert')", false},
		{alice, "SELECT has_table_privilege('t'::regclass, 'INSERT')", false},
		{root, "SELECT has_table_privilege('alice', 't', 'SELECT WITH GRANT OPTION')", true},
		{root, "SELECT has_table_privilege('alice', 't', 'DELETE')", false},
		{root, "SELECT has_table_privilege('t', 'DELETE')", true},
	} {
		var got bool
		if err := c.conn.QueryRow(ctx, c.sql).Scan(&got); err != nil || got != c.want {
			t.Errorf("%s = %v, %v; want %v", c.sql, got, err, c.want)
		}
	}
}
