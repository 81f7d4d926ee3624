package azstore

import (
	"context"
	"errors"
	"net"
	"net/http"
	"testing"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/stretchr/testify/require"

	"github.com/cdc2delta/cdc2delta/deltalog"
)

func TestClassify(t *testing.T) {
	status := func(code int, errCode string) error {
		return &azcore.ResponseError{StatusCode: code, ErrorCode: errCode,
			RawResponse: &http.Response{StatusCode: code, Status: http.StatusText(code)}}
	}
	for _, tc := range []struct {
		name      string
		err       error
		transient bool
		msg       string
	}{
		{"503", status(503, "ServerBusy"), true, "HTTP 503 ServerBusy"},
		{"500", status(500, "InternalError"), true, "HTTP 500 InternalError"},
		{"429", status(429, ""), true, "HTTP 429"},
		{"403", status(403, "AuthenticationFailed"), false, "HTTP 403 AuthenticationFailed"},
		{"404 container", status(404, "ContainerNotFound"), false, "HTTP 404 ContainerNotFound"},
		{"timed out", status(400, "OperationTimedOut"), true, "OperationTimedOut"},
		{"dial", &net.OpError{Op: "dial", Err: errors.New("connection refused")}, true, "connection refused"},
		{"deadline", context.DeadlineExceeded, true, "deadline"},
		{"canceled", context.Canceled, false, "canceled"},
		{"other", errors.New("boom"), false, "boom"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := classify(tc.err)
			require.Equal(t, tc.transient, errors.Is(got, deltalog.ErrUnavailable), "%v", got)
			require.ErrorIs(t, got, tc.err, "the cause stays reachable")
			require.Contains(t, got.Error(), tc.msg)
			require.NotContains(t, got.Error(), "\n", "one line")
		})
	}
}
