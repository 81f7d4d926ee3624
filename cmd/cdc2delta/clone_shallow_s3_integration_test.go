//go:build integration

package main

import (
	"bytes"
	"io/fs"
	"os"
	"path/filepath"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/stretchr/testify/require"

	"github.com/cdc2delta/cdc2delta/internal/harness/fulltier"
)

// TestShallowCloneOnS3: a shallow clone of a table in a bucket names its files by
// s3:// URI, reads through the bucket's own store, and the source's vacuum keeps them.
func TestShallowCloneOnS3(t *testing.T) {
	endpoint := fulltier.S3Endpoint(t)
	for k, v := range map[string]string{"CDC2DELTA_S3_ENDPOINT": endpoint, "CDC2DELTA_S3_PATH_STYLE": "true",
		"AWS_REGION": "us-east-1", "AWS_ACCESS_KEY_ID": "test", "AWS_SECRET_ACCESS_KEY": "test"} {
		if os.Getenv(k) == "" || k == "CDC2DELTA_S3_ENDPOINT" || k == "CDC2DELTA_S3_PATH_STYLE" {
			t.Setenv(k, v)
		}
	}
	bucket := fulltier.NewBucket(t)
	client := fulltier.S3Client(t)
	dir := t.TempDir()
	testTable(t, dir)
	require.NoError(t, filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		_, err = client.PutObject(t.Context(), &s3.PutObjectInput{Bucket: aws.String(bucket),
			Key: aws.String("sales/src/" + filepath.ToSlash(rel)), Body: bytes.NewReader(data)})
		return err
	}))
	src, dst := "s3://"+bucket+"/sales/src", "s3://"+bucket+"/check/orders_v2"

	r := exe(t, "clone", "--shallow", "--version", "2", src, dst)
	require.Equal(t, exitOK, r.code, r.stderr)
	obj, err := client.GetObject(t.Context(), &s3.GetObjectInput{Bucket: aws.String(bucket), Key: aws.String("check/orders_v2/_delta_log/00000000000000000000.json")})
	require.NoError(t, err)
	var log bytes.Buffer
	_, err = log.ReadFrom(obj.Body)
	require.NoError(t, err)
	require.Contains(t, log.String(), `"path":"`+src+`/part-`)
	require.Contains(t, log.String(), `"pathOrInlineDv":"`+src+`/deletion_vector_`)

	show := func(args ...string) string {
		r := exe(t, append([]string{"show", "--format", "csv", "--limit", "0"}, args...)...)
		require.Equal(t, exitOK, r.code, r.stderr)
		return r.stdout
	}
	atV2 := show("--version", "2", src)
	require.Equal(t, atV2, show(dst))

	r = exe(t, "delete", src, "--where", "id > 0")
	require.Equal(t, exitOK, r.code, r.stderr)
	r = exe(t, "vacuum", "--retain", "0h", "--force", src)
	require.Equal(t, exitOK, r.code, r.stderr)
	require.Contains(t, r.stdout, "keeping 3 files that the shallow clone "+dst+" names")
	require.Equal(t, atV2, show(dst), "the clone still reads after the source's vacuum")
}
