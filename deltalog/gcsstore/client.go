package gcsstore

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"strings"
	"time"

	"cloud.google.com/go/storage"
	"github.com/googleapis/gax-go/v2"
	"google.golang.org/api/option"
	htransport "google.golang.org/api/transport/http"

	"github.com/cdc2delta/cdc2delta/deltalog/storewatch"
)

// Client is a GCS client that any number of stores share: one credential cache and one
// connection pool for every table of a process.
type Client struct {
	gcs        *storage.Client
	timeout    time.Duration
	maxRetries int
	endpoint   string // for errors: the emulator's URL, or "GCS"
}

// NewClient builds the client from opts (Bucket and Prefix are not used). It does not
// contact GCS, but it finds the credentials: without a key file, an endpoint or the
// application default credentials it fails.
func NewClient(ctx context.Context, opts Options) (*Client, error) {
	if err := opts.validate(os.Getenv); err != nil {
		return nil, err
	}
	var auth []option.ClientOption
	switch {
	case opts.CredentialsFile != "":
		auth = append(auth, option.WithAuthCredentialsFile(option.ServiceAccount, opts.CredentialsFile))
	case opts.Endpoint != "":
		auth = append(auth, option.WithoutAuthentication()) // emulators take no credentials
	}
	// Every request goes through the watchdog's transport, under the credentials'.
	base := http.DefaultTransport.(*http.Transport).Clone()
	rt, err := htransport.NewTransport(ctx, watchedTransport{next: base},
		append(auth, option.WithScopes(storage.ScopeReadWrite))...)
	if err != nil {
		// The SDK's message names the file or the places it looked, never key material.
		return nil, fmt.Errorf("gcsstore: credentials: %w", err)
	}
	clientOpts := []option.ClientOption{option.WithHTTPClient(&http.Client{Transport: rt}), storage.WithJSONReads()}
	if opts.Endpoint != "" {
		clientOpts = append(clientOpts, option.WithEndpoint(opts.Endpoint+"/storage/v1/"))
	}
	gcs, err := storage.NewClient(ctx, clientOpts...)
	if err != nil {
		return nil, fmt.Errorf("gcsstore: %w", err)
	}
	gcs.SetRetry(
		storage.WithMaxAttempts(opts.MaxRetries+1),
		storage.WithBackoff(gax.Backoff{Initial: 100 * time.Millisecond, Max: min(30*time.Second, storewatch.MaxRetryDelay(opts.RequestTimeout)), Multiplier: 2}),
		// Put rewrites the same bytes and PutIfAbsent reads back after a 412, so both
		// are safe to retry, as the S3 SDK does.
		storage.WithPolicy(storage.RetryAlways),
		// The SDK's test would retry a refused budget, whose message quotes a refused
		// connection, until the context ends.
		storage.WithErrorFunc(func(err error) bool {
			var re *RetriesError
			return !errors.As(err, &re) && storage.ShouldRetry(err)
		}),
	)
	endpoint := opts.Endpoint
	if endpoint == "" {
		endpoint = "GCS"
	}
	return &Client{gcs: gcs, timeout: opts.RequestTimeout, maxRetries: opts.MaxRetries, endpoint: endpoint}, nil
}

// Close releases the client's connections.
func (c *Client) Close() error { return c.gcs.Close() }

// Store is the store of the table at bucket/prefix (slashes around prefix are trimmed),
// through c.
func (c *Client) Store(bucket, prefix string) (*Store, error) {
	if bucket == "" {
		return nil, errors.New("gcsstore: empty bucket")
	}
	s := &Store{bucket: c.gcs.Bucket(bucket), name: bucket, timeout: c.timeout, maxRetries: c.maxRetries, endpoint: c.endpoint}
	if p := strings.Trim(prefix, "/"); p != "" {
		s.root = p + "/"
	}
	return s, nil
}

// New builds a client from opts, as NewClient does, and the store on opts.Bucket and
// opts.Prefix through it.
func New(ctx context.Context, opts Options) (*Store, error) {
	if opts.Bucket == "" {
		return nil, errors.New("gcsstore: Options.Bucket is empty")
	}
	c, err := NewClient(ctx, opts)
	if err != nil {
		return nil, err
	}
	return c.Store(opts.Bucket, opts.Prefix)
}
