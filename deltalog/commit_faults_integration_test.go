//go:build integration

package deltalog_test

import (
	"testing"

	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/cdc2delta/cdc2delta/deltalog/faultstore"
	"github.com/cdc2delta/cdc2delta/deltalog/s3store"
	"github.com/cdc2delta/cdc2delta/internal/harness/fulltier"
)

// TestCommitFaultsS3 runs the commit fault tests against S3 (moto): the faults wrap the
// real store, so a lost response there is a conditional put that really landed.
func TestCommitFaultsS3(t *testing.T) {
	bucket := fulltier.NewBucket(t)
	endpoint := fulltier.S3Endpoint(t)
	for _, ft := range faultTests {
		t.Run(ft.name, func(t *testing.T) {
			s, err := s3store.New(t.Context(), s3store.Options{
				Bucket: bucket, Prefix: "faults/" + uuid.NewString(), Endpoint: endpoint, UsePathStyle: true,
				Region:      envOrDefault("AWS_REGION", "us-east-1"),
				Credentials: credentials.NewStaticCredentialsProvider(envOrDefault("AWS_ACCESS_KEY_ID", "test"), envOrDefault("AWS_SECRET_ACCESS_KEY", "test"), ""),
			})
			require.NoError(t, err)
			ft.run(t, faultstore.Wrap(s))
		})
	}
}
