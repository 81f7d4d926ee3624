package codecs

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"time"

	"github.com/twmb/franz-go/pkg/sr"

	"github.com/cdc2delta/cdc2delta/internal/backoff"
	"github.com/cdc2delta/cdc2delta/internal/urlcred"
)

// RegistryOptions configures a [Registry] client.
type RegistryOptions struct {
	// URLs of the registry; the next one is tried on transport errors.
	// Default http://localhost:8081. A URL may carry basic-auth credentials
	// (http://user:password@host): they are taken out of it and used as
	// User and Password, so the URL the client sends, logs and puts in its
	// errors carries none. They are refused when User or Password is set
	// too, when URLs carry different ones, and with BearerToken.
	URLs []string
	// BasicAuth user and password (both empty: none).
	User, Password string
	// BearerToken is sent as "Authorization: Bearer ..." when set.
	BearerToken string
	// TLS configures HTTPS (client certificates, custom CAs).
	TLS *tls.Config
	// Timeout bounds one HTTP request (default 10s).
	Timeout time.Duration
	// MinBackoff and MaxBackoff bound the exponential, jittered delay
	// between retries (defaults 100ms and 10s).
	MinBackoff, MaxBackoff time.Duration
	// MaxAttempts caps attempts per lookup; 0 retries until the context
	// ends, so an outage stalls decoding instead of failing records.
	MaxAttempts int
	// Logger receives one Warn line per failed attempt (default discard).
	Logger *slog.Logger
}

// Registry is a Confluent Schema Registry [SchemaSource] on franz-go's sr
// client. It retries timeouts, transport errors, 429 and 5xx answers with
// backoff; other answers (404: unknown id, 401/403: credentials) fail at
// once because retrying cannot cure them. It does not cache: [Decoder]
// caches compiled schemas per id.
type Registry struct {
	cl   *sr.Client
	opts RegistryOptions
}

// NewRegistry returns a client for the registry described by opts.
func NewRegistry(opts RegistryOptions) (*Registry, error) {
	if opts.Timeout <= 0 {
		opts.Timeout = 10 * time.Second
	}
	if opts.MinBackoff <= 0 {
		opts.MinBackoff = 100 * time.Millisecond
	}
	if opts.MaxBackoff < opts.MinBackoff {
		opts.MaxBackoff = max(10*time.Second, opts.MinBackoff)
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	if err := opts.splitCredentials(); err != nil {
		return nil, err
	}
	transport := http.DefaultTransport.(*http.Transport).Clone()
	transport.TLSClientConfig = opts.TLS
	copts := []sr.ClientOpt{
		sr.HTTPClient(&http.Client{Timeout: opts.Timeout, Transport: transport}),
		sr.UserAgent("cdc2delta"),
	}
	if len(opts.URLs) > 0 {
		copts = append(copts, sr.URLs(opts.URLs...))
	}
	if opts.User != "" || opts.Password != "" {
		copts = append(copts, sr.BasicAuth(opts.User, opts.Password))
	}
	if opts.BearerToken != "" {
		copts = append(copts, sr.BearerToken(opts.BearerToken))
	}
	cl, err := sr.NewClient(copts...)
	if err != nil {
		return nil, fmt.Errorf("creating registry client: %w", err)
	}
	return &Registry{cl: cl, opts: opts}, nil
}

// splitCredentials moves credentials carried by the URLs into User and
// Password. Errors name the URLs redacted.
func (o *RegistryOptions) splitCredentials() error {
	urls := make([]string, len(o.URLs))
	var from string // the URL whose credentials are used
	user, password := "", ""
	for i, raw := range o.URLs {
		clean, u, p, err := urlcred.Split(raw)
		if err != nil {
			return fmt.Errorf("codecs: registry URL: %w", err)
		}
		urls[i] = clean
		if u == "" && p == "" {
			continue
		}
		switch {
		case o.User != "" || o.Password != "":
			return fmt.Errorf("codecs: registry URL %s carries credentials and a user and password are given too: give them once", urlcred.Redact(raw))
		case o.BearerToken != "":
			return fmt.Errorf("codecs: registry URL %s carries basic-auth credentials and a bearer token is given too: use one", urlcred.Redact(raw))
		case from != "" && (u != user || p != password):
			return fmt.Errorf("codecs: registry URLs %s and %s carry different credentials; the client has one", urlcred.Redact(from), urlcred.Redact(raw))
		}
		from, user, password = raw, u, p
	}
	o.URLs = urls
	if from != "" {
		o.User, o.Password = user, password
	}
	return nil
}

// SchemaByID fetches the Avro schema text of id, retrying transient
// failures until success, a permanent failure, MaxAttempts, or ctx's end.
func (r *Registry) SchemaByID(ctx context.Context, id int) (string, error) {
	for attempt := 1; ; attempt++ {
		s, err := r.cl.SchemaByID(ctx, id)
		if err == nil {
			if s.Type != sr.TypeAvro {
				return "", fmt.Errorf("%w: schema %d is %s, not AVRO", ErrUnsupportedSchema, id, s.Type)
			}
			if len(s.References) > 0 {
				// Debezium with AvroConverter inlines every named type.
				return "", fmt.Errorf("%w: schema %d has references", ErrUnsupportedSchema, id)
			}
			return s.Schema, nil
		}
		if isNotFound(err) {
			return "", fmt.Errorf("%w: %d", ErrUnknownSchema, id)
		}
		if ctx.Err() != nil {
			return "", fmt.Errorf("%w: schema %d: %w", ErrRegistry, id, context.Cause(ctx))
		}
		if refused(err) {
			return "", fmt.Errorf("%w: schema %d: %w", ErrRegistryRefused, id, err)
		}
		if !isRetryable(err) {
			return "", fmt.Errorf("%w: schema %d: %w", ErrRegistry, id, err)
		}
		if r.opts.MaxAttempts > 0 && attempt >= r.opts.MaxAttempts {
			return "", fmt.Errorf("%w: schema %d after %d attempts: %w", ErrRegistry, id, attempt, err)
		}
		delay := backoff.Policy{Min: r.opts.MinBackoff, Max: r.opts.MaxBackoff}.Delay(attempt - 1)
		r.opts.Logger.Warn("schema registry lookup failed; decoding stalls until it succeeds",
			"schema_id", id, "attempt", attempt, "retry_in", delay, "err", err)
		if werr := backoff.Sleep(ctx, delay); werr != nil {
			return "", fmt.Errorf("%w: schema %d: %w (last error: %v)", ErrRegistry, id, werr, err)
		}
	}
}

func isNotFound(err error) bool {
	var re *sr.ResponseError
	return errors.As(err, &re) && (re.StatusCode == http.StatusNotFound || sr.IsNotFoundError(re.ErrorCode))
}

// refused reports an answer that no retry changes: the registry rejected
// the credentials (401), the permissions (403) or the request itself (4xx).
func refused(err error) bool {
	var re *sr.ResponseError
	return errors.As(err, &re) && re.StatusCode >= 400 && re.StatusCode < 500 && !isRetryable(err)
}

// isRetryable is the one place deciding which registry failures are
// transient.
func isRetryable(err error) bool {
	var re *sr.ResponseError
	if errors.As(err, &re) {
		return re.StatusCode >= 500 || re.StatusCode == http.StatusTooManyRequests || re.StatusCode == http.StatusRequestTimeout
	}
	var ne net.Error
	if errors.As(err, &ne) {
		return true
	}
	// Anything else from the transport (connection refused, reset, EOF)
	// is treated as transient too: stalling is safer than dropping.
	return !errors.Is(err, context.Canceled)
}
