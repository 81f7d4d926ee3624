package gcsstore

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestParseURL(t *testing.T) {
	tests := []struct {
		url    string
		bucket string
		prefix string
		field  string // of the *URLError; empty: valid
	}{
		{url: "gs://lake/sales/orders", bucket: "lake", prefix: "sales/orders"},
		{url: "gs://lake/sales/orders/", bucket: "lake", prefix: "sales/orders"},
		{url: "gs://lake", bucket: "lake"},
		{url: "gs://my_lake.example.com/t", bucket: "my_lake.example.com", prefix: "t"},
		{url: "gs://a-b/{database}/{table}", bucket: "a-b", prefix: "{database}/{table}"},
		{url: "s3://lake/t", field: "scheme"},
		{url: "gcs://lake/t", field: "scheme"},
		{url: "gs:///t", field: "bucket"},
		{url: "gs://ab/t", field: "bucket"},
		{url: "gs://Lake/t", field: "bucket"},
		{url: "gs://-lake/t", field: "bucket"},
		{url: "gs://lake:80/t", field: "bucket"},
		{url: "gs://" + string(make([]byte, 64)) + "/t", field: "url"},
		{url: "gs://user:secret@lake/t", field: "credentials"},
		{url: "gs://lake/t?x=1", field: "query"},
		{url: "gs://lake/t#f", field: "query"},
		{url: "gs://lake/%zz", field: "url"},
	}
	for _, tc := range tests {
		t.Run(tc.url, func(t *testing.T) {
			o, err := ParseURL(tc.url)
			if tc.field == "" {
				require.NoError(t, err)
				require.Equal(t, tc.bucket, o.Bucket)
				require.Equal(t, tc.prefix, o.Prefix)
				return
			}
			var ue *URLError
			require.ErrorAs(t, err, &ue)
			require.Equal(t, tc.field, ue.Field, "%v", err)
			require.True(t, errors.Is(err, ErrBadURL))
			require.Contains(t, err.Error(), tc.field+": ")
			require.NotContains(t, err.Error(), "secret", "the password is masked")
		})
	}
}

func noEnv(string) string { return "" }

func TestBucketNameLimits(t *testing.T) {
	long := func(n int) string {
		b := make([]byte, n)
		for i := range b {
			b[i] = 'a'
		}
		return string(b)
	}
	require.Empty(t, bucketProblem(long(63)))
	require.NotEmpty(t, bucketProblem(long(64)), "a part over 63")
	require.Empty(t, bucketProblem(long(63)+"."+long(63)))
	require.NotEmpty(t, bucketProblem(long(223)))
}

func TestOptionsValidate(t *testing.T) {
	for _, tc := range []struct {
		name string
		o    Options
		want string
	}{
		{"endpoint not a URL", Options{Endpoint: "127.0.0.1:4443"}, "not an http:// or https:// URL"},
		{"endpoint with credentials", Options{Endpoint: "http://u:secret@127.0.0.1:4443"}, "carries credentials"},
		{"negative timeout", Options{RequestTimeout: -1}, "negative request timeout"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.o.validate(noEnv)
			require.ErrorContains(t, err, tc.want)
			require.NotContains(t, err.Error(), "secret")
		})
	}
	o := Options{Endpoint: "http://127.0.0.1:4443/", Prefix: "/t/"}
	require.NoError(t, o.validate(noEnv))
	require.Equal(t, Options{Endpoint: "http://127.0.0.1:4443", Prefix: "t", MaxRetries: DefaultMaxRetries, RequestTimeout: DefaultRequestTimeout}, o)

	emulator := func(k string) string { return map[string]string{"STORAGE_EMULATOR_HOST": "127.0.0.1:4443"}[k] }
	o = Options{}
	require.NoError(t, o.validate(emulator))
	require.Equal(t, "http://127.0.0.1:4443", o.Endpoint, "STORAGE_EMULATOR_HOST, as the SDK reads it")
	o = Options{Endpoint: "https://gcs.example.com"}
	require.NoError(t, o.validate(emulator))
	require.Equal(t, "https://gcs.example.com", o.Endpoint, "an explicit endpoint wins")
}
