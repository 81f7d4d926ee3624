package s3store

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/aws/retry"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/cdc2delta/cdc2delta/deltalog/storewatch"
	"github.com/cdc2delta/cdc2delta/internal/urlcred"
)

// Client is an S3 client that any number of stores share: a process with
// hundreds of tables then loads the AWS configuration once, and keeps one
// credential cache and one connection pool, instead of one per table.
type Client struct {
	s3         *s3.Client
	maxRetries int
	timeout    time.Duration
	endpoint   string // for errors: the endpoint URL, or "AWS"
}

// NewClient builds the client from opts (Bucket and Prefix are not used)
// and the standard AWS configuration. It does not contact S3. Without a
// region from opts or the AWS configuration, and without an endpoint
// (S3-compatible servers need none), it returns ErrNoRegion.
func NewClient(ctx context.Context, opts Options) (*Client, error) {
	if err := opts.validate(); err != nil {
		return nil, err
	}
	var loadOpts []func(*config.LoadOptions) error
	if opts.Region != "" {
		loadOpts = append(loadOpts, config.WithRegion(opts.Region))
	}
	if opts.Credentials != nil {
		loadOpts = append(loadOpts, config.WithCredentialsProvider(opts.Credentials))
	}
	loadOpts = append(loadOpts, config.WithRetryer(func() aws.Retryer {
		return retry.NewStandard(func(o *retry.StandardOptions) {
			o.MaxAttempts = opts.MaxRetries + 1
			o.MaxBackoff = min(o.MaxBackoff, storewatch.MaxRetryDelay(opts.RequestTimeout))
		})
	}))
	cfg, err := config.LoadDefaultConfig(ctx, loadOpts...)
	if err != nil {
		return nil, fmt.Errorf("s3store: loading AWS configuration: %w", err)
	}
	if cfg.Region == "" {
		if opts.Endpoint == "" {
			return nil, ErrNoRegion // every request would fail with "Invalid region"
		}
		cfg.Region = "us-east-1" // S3-compatible servers ignore it, but SigV4 needs one
	}
	client := s3.NewFromConfig(cfg, func(o *s3.Options) {
		o.HTTPClient = watchedClient{next: o.HTTPClient}
		o.UsePathStyle = opts.UsePathStyle
		if opts.Endpoint != "" {
			o.BaseEndpoint = aws.String(opts.Endpoint)
			o.RequestChecksumCalculation = aws.RequestChecksumCalculationWhenRequired
			o.ResponseChecksumValidation = aws.ResponseChecksumValidationWhenRequired
		}
	})
	endpoint := opts.Endpoint
	if endpoint == "" {
		endpoint = "AWS"
	}
	return &Client{s3: client, maxRetries: opts.MaxRetries, timeout: opts.RequestTimeout, endpoint: urlcred.Redact(endpoint)}, nil
}

// Store is the store of the table at bucket/prefix (slashes around prefix
// are trimmed), through c.
func (c *Client) Store(bucket, prefix string) (*Store, error) {
	if bucket == "" {
		return nil, errors.New("s3store: empty bucket")
	}
	s := &Store{client: c.s3, bucket: bucket, maxRetries: c.maxRetries, timeout: c.timeout, endpoint: c.endpoint}
	if p := strings.Trim(prefix, "/"); p != "" {
		s.root = p + "/"
	}
	return s, nil
}

// New builds a client from opts, as NewClient does, and the store on
// opts.Bucket and opts.Prefix through it.
func New(ctx context.Context, opts Options) (*Store, error) {
	if opts.Bucket == "" {
		return nil, errors.New("s3store: Options.Bucket is empty")
	}
	c, err := NewClient(ctx, opts)
	if err != nil {
		return nil, err
	}
	return c.Store(opts.Bucket, opts.Prefix)
}
