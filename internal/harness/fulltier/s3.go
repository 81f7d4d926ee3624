package fulltier

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
	"github.com/google/uuid"
)

// S3Endpoint returns the URL of the full tier's S3 server (moto),
// "http://127.0.0.1:PORT". It is served path-style with dummy credentials.
func S3Endpoint(t testing.TB) string {
	t.Helper()
	return env(t, EnvS3Endpoint)
}

// S3Client returns an S3 client for the full tier's S3 server: path-style
// addressing and the dummy credentials from the environment.
func S3Client(t testing.TB) *s3.Client {
	t.Helper()
	return s3ClientAt(S3Endpoint(t))
}

func s3ClientAt(endpoint string) *s3.Client {
	region := envOr("AWS_REGION", "us-east-1")
	creds := credentials.NewStaticCredentialsProvider(
		envOr("AWS_ACCESS_KEY_ID", "test"), envOr("AWS_SECRET_ACCESS_KEY", "test"), "")
	return s3.New(s3.Options{
		Region:       region,
		Credentials:  creds,
		BaseEndpoint: aws.String(endpoint),
		UsePathStyle: true,
	})
}

// NewBucket creates an empty bucket with a unique name on the full tier's S3
// server and returns its name. The bucket and its objects are deleted when
// the test ends.
func NewBucket(t testing.TB) string {
	t.Helper()
	client := S3Client(t)
	name := "t-" + strings.ReplaceAll(uuid.NewString(), "-", "")[:24]
	if _, err := client.CreateBucket(t.Context(), &s3.CreateBucketInput{Bucket: aws.String(name)}); err != nil {
		t.Fatalf("fulltier: creating bucket %s: %v", name, err)
	}
	t.Cleanup(func() {
		// t.Context is already cancelled when cleanups run.
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if err := emptyBucket(ctx, client, name); err != nil {
			t.Errorf("fulltier: emptying bucket %s: %v", name, err)
			return
		}
		if _, err := client.DeleteBucket(ctx, &s3.DeleteBucketInput{Bucket: aws.String(name)}); err != nil {
			t.Errorf("fulltier: deleting bucket %s: %v", name, err)
		}
	})
	return name
}

func emptyBucket(ctx context.Context, client *s3.Client, bucket string) error {
	pages := s3.NewListObjectsV2Paginator(client, &s3.ListObjectsV2Input{Bucket: aws.String(bucket)})
	for pages.HasMorePages() {
		page, err := pages.NextPage(ctx)
		if err != nil {
			return fmt.Errorf("listing: %w", err)
		}
		if len(page.Contents) == 0 {
			continue
		}
		ids := make([]types.ObjectIdentifier, 0, len(page.Contents))
		for _, o := range page.Contents {
			ids = append(ids, types.ObjectIdentifier{Key: o.Key})
		}
		if _, err := client.DeleteObjects(ctx, &s3.DeleteObjectsInput{
			Bucket: aws.String(bucket),
			Delete: &types.Delete{Objects: ids, Quiet: aws.Bool(true)},
		}); err != nil {
			return fmt.Errorf("deleting objects: %w", err)
		}
	}
	return nil
}

func envOr(key, def string) string {
	if v := os.Getenv(key); v != "" {
		return v
	}
	return def
}
