package config

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"os"
)

// ClientConfig is the TLS client configuration t describes: the CA file's
// certificates as the roots (the system's when none), and the client
// certificate. Validate builds it too, so a file that does not load is
// refused before anything connects.
func (t TLS) ClientConfig() (*tls.Config, error) {
	tc, field, err := t.clientConfig()
	if err != nil {
		return nil, fmt.Errorf("%s: %w", field, err)
	}
	return tc, nil
}

// clientConfig also names the field a problem is in.
func (t TLS) clientConfig() (*tls.Config, string, error) {
	tc := &tls.Config{MinVersion: tls.VersionTLS12, InsecureSkipVerify: t.InsecureSkipVerify} //nolint:gosec // the user asked for it
	if t.CAFile != "" {
		pem, err := os.ReadFile(t.CAFile)
		if err != nil {
			return nil, "ca_file", fmt.Errorf("cannot read %q: %v", t.CAFile, errors.Unwrap(err))
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return nil, "ca_file", fmt.Errorf("%q holds no PEM certificate", t.CAFile)
		}
		tc.RootCAs = pool
	}
	if t.CertFile != "" || t.KeyFile != "" {
		var pems [2][]byte
		for i, f := range []struct{ field, file string }{{"cert_file", t.CertFile}, {"key_file", t.KeyFile}} {
			var err error
			if pems[i], err = os.ReadFile(f.file); err != nil {
				return nil, f.field, fmt.Errorf("cannot read %q: %v", f.file, errors.Unwrap(err))
			}
		}
		cert, err := tls.X509KeyPair(pems[0], pems[1])
		if err != nil {
			return nil, "cert_file", fmt.Errorf("%q and key_file %q are not a certificate and its key: %v", t.CertFile, t.KeyFile, err)
		}
		tc.Certificates = []tls.Certificate{cert}
	}
	return tc, "", nil
}
