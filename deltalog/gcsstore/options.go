package gcsstore

import (
	"errors"
	"fmt"
	"net/url"
	"strings"
	"time"

	"github.com/cdc2delta/cdc2delta/internal/urlcred"
)

// DefaultMaxRetries is the retry bound used when Options.MaxRetries is zero.
const DefaultMaxRetries = 5

// Options configures a Store.
type Options struct {
	// Bucket is the bucket holding the table. Required.
	Bucket string
	// Prefix is the object name prefix of the table root ("warehouse/orders"), without
	// leading or trailing slashes (they are trimmed). Empty means the bucket root.
	Prefix string
	// Endpoint is the base URL of a GCS emulator ("http://127.0.0.1:4443"). Empty takes
	// STORAGE_EMULATOR_HOST, as the SDK does, and without it uses Google Cloud Storage.
	// With an endpoint and no CredentialsFile, requests are sent without credentials,
	// as emulators expect.
	Endpoint string
	// CredentialsFile is a service-account key file (JSON). Empty uses the application
	// default credentials (GOOGLE_APPLICATION_CREDENTIALS, gcloud's, the metadata
	// server). Only its path ever appears in errors, never its content.
	CredentialsFile string
	// MaxRetries bounds the retries of one request after a transient error. Zero means
	// DefaultMaxRetries; negative disables retries.
	MaxRetries int
	// RequestTimeout is how long one operation (Get, Put, a page of List, with the SDK's
	// retries) may go without progress: an attempt starting, a byte sent or received.
	// Past it the operation fails with a *TimeoutError matching deltalog.ErrUnavailable,
	// so a frozen endpoint never holds its caller. Zero means DefaultRequestTimeout.
	RequestTimeout time.Duration
}

// validate checks and completes the options a Client uses.
func (o *Options) validate(getenv func(string) string) error {
	if o.Endpoint == "" {
		o.Endpoint = getenv("STORAGE_EMULATOR_HOST")
		if o.Endpoint != "" && !strings.Contains(o.Endpoint, "://") {
			o.Endpoint = "http://" + o.Endpoint // the SDK's reading of a bare host:port
		}
	}
	if o.Endpoint != "" {
		u, err := url.Parse(o.Endpoint)
		switch {
		case err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "":
			return fmt.Errorf("gcsstore: endpoint %q is not an http:// or https:// URL", urlcred.Redact(o.Endpoint))
		case u.User != nil:
			return fmt.Errorf("gcsstore: endpoint %q carries credentials; they come from a key file or the application default credentials", urlcred.Redact(o.Endpoint))
		}
		o.Endpoint = strings.TrimRight(o.Endpoint, "/")
	}
	o.Prefix = strings.Trim(o.Prefix, "/")
	switch {
	case o.MaxRetries == 0:
		o.MaxRetries = DefaultMaxRetries
	case o.MaxRetries < 0:
		o.MaxRetries = 0
	}
	switch {
	case o.RequestTimeout == 0:
		o.RequestTimeout = DefaultRequestTimeout
	case o.RequestTimeout < 0:
		return fmt.Errorf("gcsstore: negative request timeout %s", o.RequestTimeout)
	}
	return nil
}

// ErrBadURL is what every *URLError matches.
var ErrBadURL = errors.New("gcsstore: bad table URL")

// URLError reports a table URL ParseURL refuses, naming the part that is wrong.
type URLError struct {
	URL     string // the URL, with any password masked
	Field   string // "url", "scheme", "bucket", "credentials", "query"
	Problem string
}

func (e *URLError) Error() string {
	return fmt.Sprintf("gcsstore: table URL %q: %s: %s", e.URL, e.Field, e.Problem)
}

// Is makes every URLError match ErrBadURL.
func (e *URLError) Is(target error) bool { return target == ErrBadURL }

// ParseURL splits a table URL "gs://bucket/prefix" into Options with Bucket and Prefix
// set; the caller fills in the rest. A URL it refuses gives a *URLError.
func ParseURL(raw string) (Options, error) {
	bad := func(field, format string, args ...any) (Options, error) {
		return Options{}, &URLError{URL: urlcred.Redact(raw), Field: field, Problem: fmt.Sprintf(format, args...)}
	}
	u, err := url.Parse(raw)
	if err != nil {
		return bad("url", "%v", errors.Unwrap(err)) // *url.Error repeats raw
	}
	if u.Scheme != "gs" {
		return bad("scheme", "must be gs, got %q", u.Scheme)
	}
	if u.User != nil {
		return bad("credentials", "a table URL carries none; they come from a key file or the application default credentials")
	}
	if msg := bucketProblem(u.Host); msg != "" {
		return bad("bucket", "%s", msg)
	}
	if u.RawQuery != "" || u.Fragment != "" {
		return bad("query", "unexpected query or fragment")
	}
	return Options{Bucket: u.Host, Prefix: strings.Trim(u.Path, "/")}, nil
}

// bucketProblem checks a bucket name against the GCS naming rules, so that a typo fails
// at startup rather than as a 400 on the first commit.
func bucketProblem(b string) string {
	switch {
	case b == "":
		return "missing (gs://BUCKET/path)"
	case len(b) < 3 || len(b) > 222:
		return fmt.Sprintf("%q must have 3 to 222 characters", b)
	}
	for i, c := range b {
		switch {
		case 'a' <= c && c <= 'z', '0' <= c && c <= '9':
		case (c == '-' || c == '_' || c == '.') && i > 0 && i < len(b)-1:
		default:
			return fmt.Sprintf("%q: only lowercase letters, digits, '-', '_' and '.' inside, starting and ending with a letter or digit", b)
		}
	}
	for part := range strings.SplitSeq(b, ".") {
		if len(part) > 63 {
			return fmt.Sprintf("%q: a dot-separated part longer than 63 characters", b)
		}
	}
	return ""
}
