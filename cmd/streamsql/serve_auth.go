package main

import (
	"crypto/tls"
	"fmt"
	"net"
	"os"

	"github.com/spf13/pflag"

	"github.com/streamsql/streamsql/engine"
	"github.com/streamsql/streamsql/pgwire"
)

// authOptions are the serve flags of authentication, TLS and admission.
type authOptions struct {
	auth              string
	superuser         string
	superuserPassword string
	tlsCert, tlsKey   string
	maxConnections    int
}

func addAuthFlags(f *pflag.FlagSet, o *authOptions) {
	f.StringVar(&o.auth, "auth", engine.AuthAuto, "authentication: auto (SCRAM-SHA-256 for roles with a password, trust for the others on loopback only), scram (every client gives its role's password), md5 (as scram, with md5 for roles whose password is stored as an md5 hash; allows storing md5 hashes) or trust (no password; loopback only)")
	f.StringVar(&o.superuser, "superuser", engine.DefaultSuperuser, "name of the bootstrap superuser, created at the first start")
	f.StringVar(&o.superuserPassword, "superuser-password", "", "password of the bootstrap superuser (default $STREAMSQL_SUPERUSER_PASSWORD); set at every start when given")
	f.StringVar(&o.tlsCert, "tls-cert", "", "PEM certificate file: serve TLS (sslmode=require, verify-full) with --tls-key")
	f.StringVar(&o.tlsKey, "tls-key", "", "PEM private key file of --tls-cert")
	f.IntVar(&o.maxConnections, "max-connections", 100, "sessions open at once; clients beyond get 53300 (0: no limit)")
}

// engineOptions sets the engine's authentication options.
func (o authOptions) engineOptions(eo *engine.Options) {
	eo.Auth = o.auth
	eo.Superuser = o.superuser
	eo.SuperuserPassword = o.superuserPassword
	if eo.SuperuserPassword == "" {
		eo.SuperuserPassword = os.Getenv("STREAMSQL_SUPERUSER_PASSWORD")
	}
}

// check refuses flag combinations that cannot work, before anything starts.
func (o authOptions) check(listen string) error {
	if (o.tlsCert == "") != (o.tlsKey == "") {
		return fmt.Errorf("--tls-cert and --tls-key go together")
	}
	if o.auth == engine.AuthTrust {
		host, _, err := net.SplitHostPort(listen)
		if ip := net.ParseIP(host); err != nil || host != "localhost" && (ip == nil || !ip.IsLoopback()) {
			return fmt.Errorf("--auth trust admits loopback connections only: --listen %s is not a loopback address", listen)
		}
	}
	return nil
}

// serverOptions sets the protocol server's authentication, TLS and
// admission options.
func (o authOptions) serverOptions(eng *engine.Engine, so *pgwire.Options) error {
	auth, err := eng.Authenticator()
	if err != nil {
		return err
	}
	so.Auth = auth
	so.MaxConnections = o.maxConnections
	if o.tlsCert != "" {
		cert, err := tls.LoadX509KeyPair(o.tlsCert, o.tlsKey)
		if err != nil {
			return fmt.Errorf("loading --tls-cert/--tls-key: %w", err)
		}
		so.TLS = &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}
	}
	return nil
}
