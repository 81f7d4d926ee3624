package s3store

import (
	"errors"
	"fmt"
	"net/url"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"

	"github.com/cdc2delta/cdc2delta/internal/urlcred"
)

// DefaultMaxRetries is the retry bound used when Options.MaxRetries is zero.
const DefaultMaxRetries = 5

// Options configures a Store.
type Options struct {
	// Bucket is the bucket holding the table. Required.
	Bucket string
	// Prefix is the key prefix of the table root ("warehouse/orders"), without leading or
	// trailing slashes (they are trimmed). Empty means the bucket root.
	Prefix string
	// Region is the bucket's region. Empty takes it from the standard AWS configuration
	// (AWS_REGION, profile); with a custom Endpoint it then defaults to us-east-1.
	Region string
	// Endpoint is a custom endpoint URL for S3-compatible servers
	// ("http://127.0.0.1:9000"). Empty uses AWS. With a custom endpoint the SDK sends
	// checksums only where S3 requires them, since not every compatible server accepts
	// the trailing checksums AWS now gets by default.
	Endpoint string
	// UsePathStyle addresses buckets as endpoint/bucket/key instead of
	// bucket.endpoint/key; most S3-compatible servers need it.
	UsePathStyle bool
	// Credentials overrides the standard AWS credential chain (environment, shared
	// files, SSO, web identity, instance roles), which is used when nil.
	Credentials aws.CredentialsProvider
	// MaxRetries bounds the retries of one request: the SDK's retries of transient
	// errors, and PutIfAbsent's retries after 409 ConditionalRequestConflict. Zero means
	// DefaultMaxRetries; negative disables retries.
	MaxRetries int
	// RequestTimeout is how long one operation (Get, Put, a page of List, with the SDK's
	// retries) may go without progress: an attempt starting, a byte sent or received.
	// Past it the operation fails with a *TimeoutError matching deltalog.ErrUnavailable,
	// so a frozen endpoint never holds its caller. Zero means DefaultRequestTimeout.
	RequestTimeout time.Duration
}

// validate checks and completes the options a Client uses.
func (o *Options) validate() error {
	if urlcred.HasUserinfo(o.Endpoint) {
		// The SDK would ignore them (SigV4 signs with the credential chain's
		// keys), and the endpoint shows up in errors.
		return fmt.Errorf("s3store: endpoint %q carries credentials; they come from the AWS credential chain", urlcred.Redact(o.Endpoint))
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
		return fmt.Errorf("s3store: negative request timeout %s", o.RequestTimeout)
	}
	return nil
}

// ParseURL splits a table URL "s3://bucket/prefix" (or "s3a://...", as Spark writes it)
// into Options with Bucket and Prefix set; the caller fills in the rest.
func ParseURL(raw string) (Options, error) {
	// Errors quote the URL with any password masked.
	shown := urlcred.Redact(raw)
	u, err := url.Parse(raw)
	if err != nil {
		return Options{}, fmt.Errorf("s3store: parsing %q: %v", shown, errors.Unwrap(err)) // *url.Error repeats raw
	}
	if u.Scheme != "s3" && u.Scheme != "s3a" {
		return Options{}, fmt.Errorf("s3store: %q: scheme must be s3 or s3a", shown)
	}
	if u.Host == "" {
		return Options{}, fmt.Errorf("s3store: %q: no bucket", shown)
	}
	if u.User != nil {
		return Options{}, fmt.Errorf("s3store: %q: a table URL carries no credentials; they come from the AWS credential chain", shown)
	}
	if u.RawQuery != "" || u.Fragment != "" {
		return Options{}, fmt.Errorf("s3store: %q: unexpected query or fragment", shown)
	}
	return Options{Bucket: u.Host, Prefix: strings.Trim(u.Path, "/")}, nil
}
