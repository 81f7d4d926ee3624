package processor

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
)

func TestAccessError(t *testing.T) {
	for _, tc := range []struct {
		name string
		err  error
		want bool
	}{
		{"sasl", fmt.Errorf("init: %w", kerr.SaslAuthenticationFailed), true},
		{"group acl", &kgo.ErrGroupSession{Err: kerr.GroupAuthorizationFailed}, true},
		{"topic acl", kerr.TopicAuthorizationFailed, true},
		{"untrusted certificate", &tls.CertificateVerificationError{Err: x509.UnknownAuthorityError{}}, true},
		{"not tls", tls.RecordHeaderError{Msg: "first record does not look like a TLS handshake"}, true},
		{"broker down", errors.New("dial tcp 127.0.0.1:1: connect: connection refused"), false},
		{"eof", io.ErrUnexpectedEOF, false},
		{"not coordinator", kerr.NotCoordinator, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			require.Equal(t, tc.want, accessError(tc.err))
		})
	}
}
