package kafka

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
	"math/big"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/streamsql/streamsql/sqlerr"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
)

// secureCluster starts a broker with topic t and the given options.
func secureCluster(t *testing.T, opts ...kfake.Opt) []string {
	t.Helper()
	c, err := kfake.NewCluster(append(opts, kfake.NumBrokers(1), kfake.SeedTopics(1, "t"))...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	return c.ListenAddrs()
}

// sourceOpts are a source's options on brokers, with extra options.
func sourceOpts(t *testing.T, brokers []string, extra map[string]string) *SourceOptions {
	t.Helper()
	opts := map[string]string{"connector": "kafka", "topic": "t", "properties.bootstrap.server": brokers[0], "format": "plain", "encode": "json"}
	for k, v := range extra {
		opts[k] = v
	}
	o, err := ParseSourceOptions(opts)
	if err != nil {
		t.Fatal(err)
	}
	return o
}

// readOne produces a message with a client connecting as o says and reads
// it back with a Reader of o.
func readOne(t *testing.T, o *SourceOptions) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	sec, err := o.Security.ClientOpts()
	if err != nil {
		t.Fatal(err)
	}
	cl, err := kgo.NewClient(append(sec, kgo.SeedBrokers(o.Brokers...), kgo.DefaultProduceTopic("t"))...)
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	if err := cl.ProduceSync(ctx, &kgo.Record{Value: []byte(`{"id": 1}`)}).FirstErr(); err != nil {
		t.Fatal(err)
	}
	rd, err := NewReader(o)
	if err != nil {
		t.Fatal(err)
	}
	defer rd.Close()
	rd.Consume(map[int32]int64{0: 0})
	for ctx.Err() == nil {
		if f := rd.Poll(ctx, 10); len(f.Records) > 0 {
			return
		}
	}
	t.Fatal("nothing read")
}

// wantCode fails unless err is a sqlerr with code.
func wantCode(t *testing.T, err error, code string) {
	t.Helper()
	var se *sqlerr.Error
	if !errors.As(err, &se) || se.Code != code {
		t.Fatalf("got %v, want SQLSTATE %s", err, code)
	}
}

// TestSASL: a broker that requires SASL is read with PLAIN and SCRAM
// credentials, and refuses the wrong ones (08001 at the check).
func TestSASL(t *testing.T) {
	for _, mech := range []string{"PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512"} {
		t.Run(mech, func(t *testing.T) {
			brokers := secureCluster(t, kfake.EnableSASL(), kfake.Superuser(mech, "alice", "s3cret"))
			good := sourceOpts(t, brokers, map[string]string{"properties.security.protocol": "SASL_PLAINTEXT",
				"properties.sasl.mechanism": mech, "properties.sasl.username": "alice", "properties.sasl.password": "s3cret"})
			if err := CheckSource(context.Background(), good); err != nil {
				t.Fatal(err)
			}
			readOne(t, good)
			bad := sourceOpts(t, brokers, map[string]string{"properties.security.protocol": "SASL_PLAINTEXT",
				"properties.sasl.mechanism": mech, "properties.sasl.username": "alice", "properties.sasl.password": "wrong"})
			wantCode(t, CheckSource(context.Background(), bad), connectionFailure)
			wantCode(t, CheckBrokers(context.Background(), bad.Brokers, bad.Security), connectionFailure)
			none := sourceOpts(t, brokers, nil)
			wantCode(t, CheckSource(context.Background(), none), connectionFailure)
		})
	}
}

// TestTLS: a broker with a TLS listener is read with its CA
// (properties.ssl.ca.location), and not without it.
func TestTLS(t *testing.T) {
	dir := t.TempDir()
	cert := selfSigned(t, dir)
	brokers := secureCluster(t, kfake.TLS(&tls.Config{Certificates: []tls.Certificate{cert}}))
	good := sourceOpts(t, brokers, map[string]string{"properties.security.protocol": "SSL",
		"properties.ssl.ca.location": filepath.Join(dir, "ca.pem")})
	if err := CheckSource(context.Background(), good); err != nil {
		t.Fatal(err)
	}
	readOne(t, good)
	wantCode(t, CheckSource(context.Background(), sourceOpts(t, brokers, map[string]string{"properties.security.protocol": "SSL"})), connectionFailure)
	missing := sourceOpts(t, brokers, map[string]string{"properties.security.protocol": "SSL", "properties.ssl.ca.location": filepath.Join(dir, "none.pem")})
	wantCode(t, CheckSource(context.Background(), missing), sqlerr.InvalidParameterValue)
}

// TestSecurityOptions: bad security options are 22023.
func TestSecurityOptions(t *testing.T) {
	for _, opts := range []map[string]string{
		{"properties.security.protocol": "TLS"},
		{"properties.security.protocol": "SASL_SSL", "properties.sasl.mechanism": "GSSAPI", "properties.sasl.username": "u"},
		{"properties.security.protocol": "SASL_PLAINTEXT"},
		{"properties.sasl.username": "u"},
		{"properties.ssl.ca.location": "/ca.pem"},
		{"properties.security.protocol": "SSL", "properties.ssl.certificate.location": "/c.pem"},
	} {
		_, err := ParseSecurity(opts)
		wantCode(t, err, sqlerr.InvalidParameterValue)
	}
}

// selfSigned writes a self-signed certificate for 127.0.0.1 to dir/ca.pem
// and returns it with its key.
func selfSigned(t *testing.T, dir string) tls.Certificate {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "kfake"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1")}, DNSNames: []string{"localhost"},
		KeyUsage: x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign, IsCA: true, BasicConstraintsValid: true,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "ca.pem"), pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}
}
