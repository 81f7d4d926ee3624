package processor

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
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

// Kafka reachability: the brokers count as unreachable once no broker has
// answered for kafkaSilence; the check then pings every kafkaCheckEvery and
// says so every kafkaReportEvery until one answers.
const (
	kafkaSilence     = 8 * time.Second
	kafkaCheckEvery  = 2 * time.Second
	kafkaPingTimeout = 5 * time.Second
	kafkaReportEvery = 30 * time.Second
)

// kafkaHealth tracks whether any broker answers. Every successful read from
// a broker (fetches, heartbeats, commits) counts, so a healthy client costs
// no extra requests; only silence triggers a ping.
type kafkaHealth struct {
	p      *Processor
	lastOK atomic.Int64 // unix nanos of the last successful broker read

	mu           sync.Mutex
	down         bool
	downSince    time.Time
	lastErr      error
	lastReported time.Time
	fetchLogged  map[string]time.Time // fetch error log rate limit, per topic
}

func newKafkaHealth(p *Processor) *kafkaHealth {
	return &kafkaHealth{p: p, fetchLogged: map[string]time.Time{}}
}

// OnBrokerRead implements kgo.HookBrokerRead. The answers of a
// connection's setup (API versions, SASL) do not count: a broker that
// refuses the credentials answers those too.
func (k *kafkaHealth) OnBrokerRead(_ kgo.BrokerMetadata, key int16, _ int, _, _ time.Duration, err error) {
	switch kmsg.Key(key) {
	case kmsg.ApiVersions, kmsg.SASLHandshake, kmsg.SASLAuthenticate:
		return
	}
	if err == nil {
		k.lastOK.Store(time.Now().UnixNano())
	}
}

// preflight connects to a broker before joining the group. Refused
// credentials or an untrusted certificate end Run; unreachable brokers are
// reported at once (naming kafka.brokers) and retried.
func (k *kafkaHealth) preflight(ctx context.Context) error {
	pctx, cancel := context.WithTimeout(ctx, 2*kafkaPingTimeout)
	defer cancel()
	err := k.p.client.Ping(pctx)
	switch {
	case err == nil:
		k.lastOK.Store(time.Now().UnixNano())
	case accessError(err):
		return fmt.Errorf("%w: %w", ErrKafkaAccess, err)
	case ctx.Err() == nil:
		k.unreachable(err)
	}
	return nil
}

// run watches reachability until ctx ends.
func (k *kafkaHealth) run(ctx context.Context) {
	t := time.NewTicker(kafkaCheckEvery)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		if time.Since(time.Unix(0, k.lastOK.Load())) < kafkaSilence {
			k.reachable()
			continue
		}
		pctx, cancel := context.WithTimeout(ctx, kafkaPingTimeout)
		err := k.p.client.Ping(pctx)
		cancel()
		switch {
		case err == nil:
			k.lastOK.Store(time.Now().UnixNano())
			k.reachable()
		case ctx.Err() == nil:
			k.unreachable(err)
		}
	}
}

func (k *kafkaHealth) unreachable(err error) {
	k.mu.Lock()
	now := time.Now()
	// A new kind of failure is a new problem, said at once and timed from
	// now: brokers that answered nothing and now refuse the credentials.
	changed := accessError(err) != accessError(k.lastErr)
	if !k.down || changed {
		k.down, k.downSince = true, now
	}
	report := now.Sub(k.lastReported) >= kafkaReportEvery || changed
	k.lastErr = err
	if report {
		k.lastReported = now
	}
	since := k.downSince
	k.mu.Unlock()
	k.p.m.kafkaUp.Set(0)
	switch {
	case !report:
	case accessError(err):
		// A broker answered, and refused: saying that none answers would
		// send the operator to the network instead of the credentials.
		k.p.log.Error("kafka refused access; "+kafkaAccessHint+"; retrying",
			"brokers", k.p.opts.Brokers, "refused_for", now.Sub(since).Round(time.Second), "err", err)
	default:
		k.p.log.Error("no broker in kafka.brokers answers; check the addresses, the network and kafka.tls; retrying",
			"brokers", k.p.opts.Brokers, "down_for", now.Sub(since).Round(time.Second), "err", err)
	}
}

// kafkaAccessHint names the settings behind an access error.
const kafkaAccessHint = "check kafka.sasl (mechanism, username, password, and that kafka.brokers lists a listener that takes them), kafka.tls and the user's ACLs"

func (k *kafkaHealth) reachable() {
	k.mu.Lock()
	was, since := k.down, k.downSince
	k.down, k.lastErr, k.lastReported = false, nil, time.Time{}
	k.mu.Unlock()
	k.p.m.kafkaUp.Set(1)
	if was {
		k.p.log.Info("kafka reachable again", "brokers", k.p.opts.Brokers, "was_down_for", time.Since(since).Round(time.Second))
	}
}

// status reports whether the brokers are unreachable, since when and why.
func (k *kafkaHealth) status() (down bool, since time.Time, err error) {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.down, k.downSince, k.lastErr
}

// fetchError logs a fetch error, at most once per topic every
// kafkaReportEvery (franz-go retries them itself).
func (k *kafkaHealth) fetchError(topic string, part int32, err error) {
	k.mu.Lock()
	now := time.Now()
	log := now.Sub(k.fetchLogged[topic]) >= kafkaReportEvery
	if log {
		k.fetchLogged[topic] = now
	}
	k.mu.Unlock()
	var ne net.Error
	if log {
		k.p.log.Warn("fetch error; retrying", "topic", topic, "partition", part, "network", errors.As(err, &ne), "err", err)
	}
}

// kafkaLogger passes franz-go's log to the processor's logger. Its warnings
// are mostly connection chatter (a dead broker yields dozens a minute) that
// the processor's own lines already report with the table and the cause
// (fetch errors, access errors, the error Run returns), so they go to DEBUG.
// Its errors stay visible at WARN: they are rare and may carry news the
// processor does not report itself.
type kafkaLogger struct{ log *slog.Logger }

// Level keeps franz-go from formatting lines the handler would drop.
func (l kafkaLogger) Level() kgo.LogLevel {
	if l.log.Enabled(context.Background(), slog.LevelDebug) {
		return kgo.LogLevelInfo
	}
	return kgo.LogLevelError
}

func (l kafkaLogger) Log(level kgo.LogLevel, msg string, keyvals ...any) {
	lv := slog.LevelDebug
	if level == kgo.LogLevelError {
		lv = slog.LevelWarn
	}
	l.log.Log(context.Background(), lv, "kafka: "+msg, keyvals...)
}
