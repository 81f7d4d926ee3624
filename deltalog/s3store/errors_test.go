package s3store

import (
	"context"
	"errors"
	"net"
	"net/http"
	"testing"

	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/smithy-go"
	smithyhttp "github.com/aws/smithy-go/transport/http"
	"github.com/stretchr/testify/require"

	"github.com/cdc2delta/cdc2delta/deltalog"
)

func TestClassify(t *testing.T) {
	status := func(code int) error {
		return &awshttp.ResponseError{ResponseError: &smithyhttp.ResponseError{
			Response: &smithyhttp.Response{Response: &http.Response{StatusCode: code}}, Err: errors.New("answer"),
		}}
	}
	for _, tc := range []struct {
		name      string
		err       error
		transient bool
	}{
		{"503", status(503), true},
		{"500", status(500), true},
		{"429", status(429), true},
		{"403", status(403), false},
		{"404", status(404), false},
		{"slow down", &smithy.GenericAPIError{Code: "SlowDown"}, true},
		{"access denied", &smithy.GenericAPIError{Code: "AccessDenied"}, false},
		{"no such bucket", &smithy.GenericAPIError{Code: "NoSuchBucket"}, false},
		{"dial", &net.OpError{Op: "dial", Err: errors.New("connection refused")}, true},
		{"deadline", context.DeadlineExceeded, true},
		{"canceled", context.Canceled, false},
		{"other", errors.New("boom"), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := classify(tc.err)
			require.Equal(t, tc.transient, errors.Is(got, deltalog.ErrUnavailable), "%v", got)
			require.ErrorIs(t, got, tc.err, "the cause stays reachable")
		})
	}
}
