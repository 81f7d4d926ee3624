package processor

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
)

// ErrKafkaAccess means Kafka refused the client's credentials or permissions, or
// its TLS handshake failed: retrying cannot help, the configuration must change.
var ErrKafkaAccess = errors.New("processor: kafka refused access")

// accessError reports whether err is one that no retry fixes: a failed SASL
// authentication, a missing ACL, or a TLS certificate the client does not trust.
func accessError(err error) bool {
	var cve *tls.CertificateVerificationError
	var rhe tls.RecordHeaderError
	return errors.Is(err, kerr.SaslAuthenticationFailed) ||
		errors.Is(err, kerr.IllegalSaslState) ||
		errors.Is(err, kerr.UnsupportedSaslMechanism) ||
		errors.Is(err, kerr.GroupAuthorizationFailed) ||
		errors.Is(err, kerr.TopicAuthorizationFailed) ||
		errors.Is(err, kerr.ClusterAuthorizationFailed) ||
		errors.As(err, &cve) || errors.As(err, &rhe)
}

// preflight connects to a broker once before joining the group, so wrong
// credentials or an untrusted certificate end Run with an error instead of
// franz-go retrying them forever. Other errors (a broker still starting) are
// left to the client's retries.
func (p *Processor) preflight(ctx context.Context) error {
	err := p.client.Ping(ctx)
	if err != nil && accessError(err) {
		return fmt.Errorf("%w: %w", ErrKafkaAccess, err)
	}
	if err != nil {
		p.log.Warn("kafka not reachable yet; retrying", "brokers", p.opts.Brokers, "err", err)
	}
	return nil
}

// kafkaLogger passes franz-go's warnings and errors to the processor's logger,
// so connection and group problems are visible rather than silently retried.
type kafkaLogger struct{ log *slog.Logger }

func (l kafkaLogger) Level() kgo.LogLevel { return kgo.LogLevelWarn }

func (l kafkaLogger) Log(level kgo.LogLevel, msg string, keyvals ...any) {
	lv := slog.LevelWarn
	if level == kgo.LogLevelError {
		lv = slog.LevelError
	}
	l.log.Log(context.Background(), lv, "kafka: "+msg, keyvals...)
}
