//go:build integration

package fulltier_test

import (
	"bytes"
	"errors"
	"io"
	"net/http"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/stretchr/testify/require"

	"github.com/cdc2delta/cdc2delta/internal/harness/fulltier"
)

// TestS3PutGet writes and reads an object on the moto endpoint with
// aws-sdk-go-v2 in path style, and checks that moto honours
// If-None-Match: * (the put-if-absent that Delta commits rely on).
func TestS3PutGet(t *testing.T) {
	t.Parallel()
	client := fulltier.S3Client(t)
	bucket := fulltier.NewBucket(t)
	key := "table/_delta_log/00000000000000000000.json"

	_, err := client.PutObject(t.Context(), &s3.PutObjectInput{
		Bucket:      aws.String(bucket),
		Key:         aws.String(key),
		Body:        bytes.NewReader([]byte("first")),
		IfNoneMatch: aws.String("*"),
	})
	require.NoError(t, err)

	_, err = client.PutObject(t.Context(), &s3.PutObjectInput{
		Bucket:      aws.String(bucket),
		Key:         aws.String(key),
		Body:        bytes.NewReader([]byte("second")),
		IfNoneMatch: aws.String("*"),
	})
	var resp *awshttp.ResponseError
	require.ErrorAs(t, err, &resp, "second put-if-absent must fail")
	require.Equal(t, http.StatusPreconditionFailed, resp.HTTPStatusCode())

	got, err := client.GetObject(t.Context(), &s3.GetObjectInput{
		Bucket: aws.String(bucket), Key: aws.String(key),
	})
	require.NoError(t, err)
	defer got.Body.Close()
	body, err := io.ReadAll(got.Body)
	require.NoError(t, err)
	require.Equal(t, "first", string(body))

	_, err = client.GetObject(t.Context(), &s3.GetObjectInput{
		Bucket: aws.String(bucket), Key: aws.String("missing"),
	})
	require.Error(t, err)
	require.True(t, errors.As(err, &resp) && resp.HTTPStatusCode() == http.StatusNotFound, "%v", err)
}
