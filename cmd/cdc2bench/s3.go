package main

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/s3"
)

// s3Bench holds the bucket of one run's S3 workloads.
type s3Bench struct {
	client   *s3.Client
	endpoint string
	bucket   string
}

// newS3Bench creates a fresh bucket on endpoint (credentials and region from
// the standard AWS environment; us-east-1 when unset).
func newS3Bench(ctx context.Context, endpoint, bucket string) (*s3Bench, error) {
	cfg, err := config.LoadDefaultConfig(ctx)
	if err != nil {
		return nil, err
	}
	if cfg.Region == "" {
		cfg.Region = "us-east-1"
	}
	c := s3.NewFromConfig(cfg, func(o *s3.Options) {
		o.BaseEndpoint = aws.String(endpoint)
		o.UsePathStyle = true
	})
	if _, err := c.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: aws.String(bucket)}); err != nil {
		return nil, fmt.Errorf("creating bucket %s on %s: %w", bucket, endpoint, err)
	}
	return &s3Bench{client: c, endpoint: endpoint, bucket: bucket}, nil
}

// url is the s3:// URL of prefix.
func (b *s3Bench) url(prefix string) string { return "s3://" + b.bucket + "/" + prefix }

// upload copies the local table dir under prefix.
func (b *s3Bench) upload(ctx context.Context, dir, prefix string) error {
	return filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, err := filepath.Rel(dir, p)
		if err != nil {
			return err
		}
		f, err := os.Open(p)
		if err != nil {
			return err
		}
		defer f.Close()
		key := path.Join(prefix, filepath.ToSlash(rel))
		if _, err := b.client.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String(b.bucket), Key: aws.String(key), Body: f}); err != nil {
			return fmt.Errorf("uploading %s: %w", key, err)
		}
		return nil
	})
}

// bytes sums the sizes of the objects under prefix.
func (b *s3Bench) bytes(ctx context.Context, prefix string) (int64, error) {
	var n int64
	pages := s3.NewListObjectsV2Paginator(b.client, &s3.ListObjectsV2Input{Bucket: aws.String(b.bucket), Prefix: aws.String(prefix + "/")})
	for pages.HasMorePages() {
		page, err := pages.NextPage(ctx)
		if err != nil {
			return 0, fmt.Errorf("listing %s: %w", b.url(prefix), err)
		}
		for _, o := range page.Contents {
			n += aws.ToInt64(o.Size)
		}
	}
	return n, nil
}
