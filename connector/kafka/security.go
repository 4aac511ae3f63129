package kafka

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"os"
	"strings"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/sasl"
	"github.com/twmb/franz-go/pkg/sasl/plain"
	"github.com/twmb/franz-go/pkg/sasl/scram"
)

// Security is how a client connects to the brokers: RisingWave's (and
// librdkafka's) properties.security.protocol, properties.sasl.* and
// properties.ssl.* options, checked. Sources, tables and sinks share it.
type Security struct {
	// Protocol is PLAINTEXT, SSL, SASL_PLAINTEXT or SASL_SSL.
	Protocol string
	// Mechanism is PLAIN, SCRAM-SHA-256 or SCRAM-SHA-512 (SASL_*).
	Mechanism          string
	Username, Password string
	// CALocation, CertLocation and KeyLocation are PEM files: the CA that
	// signs the brokers' certificates (empty: the system's) and the
	// client's certificate and key (both or neither).
	CALocation, CertLocation, KeyLocation string
}

// securityOptionNames are the options ParseSecurity reads.
var securityOptionNames = map[string]bool{
	"properties.security.protocol": true, "properties.sasl.mechanism": true,
	"properties.sasl.username": true, "properties.sasl.password": true,
	"properties.ssl.ca.location": true, "properties.ssl.certificate.location": true, "properties.ssl.key.location": true,
}

// IsSecurityOption reports whether name is one of the security options.
func IsSecurityOption(name string) bool { return securityOptionNames[name] }

// ParseSecurity checks the security options of opts. Errors are 22023 and
// name the option; the files are read by ClientOpts.
func ParseSecurity(opts map[string]string) (Security, error) {
	s := Security{
		Protocol:  strings.ToUpper(opts["properties.security.protocol"]),
		Mechanism: strings.ToUpper(opts["properties.sasl.mechanism"]),
		Username:  opts["properties.sasl.username"], Password: opts["properties.sasl.password"],
		CALocation: opts["properties.ssl.ca.location"], CertLocation: opts["properties.ssl.certificate.location"],
		KeyLocation: opts["properties.ssl.key.location"],
	}
	if s.Protocol == "" {
		s.Protocol = "PLAINTEXT"
	}
	switch s.Protocol {
	case "PLAINTEXT", "SSL", "SASL_PLAINTEXT", "SASL_SSL":
	default:
		return s, invalidValue("properties.security.protocol must be PLAINTEXT, SSL, SASL_PLAINTEXT or SASL_SSL, not '%s'", opts["properties.security.protocol"])
	}
	if s.sasl() {
		switch s.Mechanism {
		case "":
			s.Mechanism = "PLAIN"
		case "PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512":
		default:
			return s, invalidValue("properties.sasl.mechanism must be PLAIN, SCRAM-SHA-256 or SCRAM-SHA-512, not '%s'", opts["properties.sasl.mechanism"])
		}
		if s.Username == "" {
			return s, invalidValue("properties.security.protocol %s needs properties.sasl.username and properties.sasl.password", s.Protocol)
		}
	} else if s.Mechanism != "" || s.Username != "" || s.Password != "" {
		return s, invalidValue("properties.sasl.* need properties.security.protocol SASL_PLAINTEXT or SASL_SSL")
	}
	if !s.tls() && (s.CALocation != "" || s.CertLocation != "" || s.KeyLocation != "") {
		return s, invalidValue("properties.ssl.* need properties.security.protocol SSL or SASL_SSL")
	}
	if (s.CertLocation == "") != (s.KeyLocation == "") {
		return s, invalidValue("properties.ssl.certificate.location and properties.ssl.key.location go together")
	}
	return s, nil
}

func (s Security) sasl() bool { return strings.HasPrefix(s.Protocol, "SASL_") }

func (s Security) tls() bool { return strings.HasSuffix(s.Protocol, "SSL") }

// ClientOpts returns the client options that connect as s says, reading
// its certificate files. Errors are 22023 naming the file.
func (s Security) ClientOpts() ([]kgo.Opt, error) {
	var opts []kgo.Opt
	if s.tls() {
		cfg := &tls.Config{MinVersion: tls.VersionTLS12}
		if s.CALocation != "" {
			pem, err := os.ReadFile(s.CALocation)
			if err != nil {
				return nil, invalidValue("properties.ssl.ca.location: %v", err)
			}
			cfg.RootCAs = x509.NewCertPool()
			if !cfg.RootCAs.AppendCertsFromPEM(pem) {
				return nil, invalidValue("properties.ssl.ca.location %s holds no PEM certificate", s.CALocation)
			}
		}
		if s.CertLocation != "" {
			cert, err := tls.LoadX509KeyPair(s.CertLocation, s.KeyLocation)
			if err != nil {
				return nil, invalidValue("properties.ssl.certificate.location / key.location: %v", err)
			}
			cfg.Certificates = []tls.Certificate{cert}
		}
		opts = append(opts, kgo.DialTLSConfig(cfg))
	}
	if s.sasl() {
		opts = append(opts, kgo.SASL(s.mechanism()))
	}
	return opts, nil
}

func (s Security) mechanism() sasl.Mechanism {
	switch s.Mechanism {
	case "SCRAM-SHA-256":
		return scram.Sha256(func(context.Context) (scram.Auth, error) { return scram.Auth{User: s.Username, Pass: s.Password}, nil })
	case "SCRAM-SHA-512":
		return scram.Sha512(func(context.Context) (scram.Auth, error) { return scram.Auth{User: s.Username, Pass: s.Password}, nil })
	}
	return plain.Plain(func(context.Context) (plain.Auth, error) { return plain.Auth{User: s.Username, Pass: s.Password}, nil })
}
