package azstore

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/cdc2delta/cdc2delta/deltalog/storetest"
)

// TestHungEndpointTimesOut: every operation on an endpoint that accepts and
// never answers fails within the request timeout (SDK retries included)
// with a *TimeoutError naming Azure, the endpoint and the operation, which
// matches deltalog.ErrUnavailable so that the processor retries it.
func TestHungEndpointTimesOut(t *testing.T) {
	const timeout = 300 * time.Millisecond
	endpoint := "http://" + storetest.SilentListener(t) + "/devstoreaccount1"
	s, err := New(t.Context(), Options{
		Container: "lake", Prefix: "t", Endpoint: endpoint, RequestTimeout: timeout,
		Credentials: Credentials{AccountKey: "a2V5"},
	})
	require.NoError(t, err)
	ops := storetest.Ops(s, storetest.OpNames{Get: "GetBlob", Put: "PutBlob", Delete: "DeleteBlob", List: "ListBlobs"}, 4<<20)
	storetest.RequireTimesOut(t, timeout, ops, func(t *testing.T, op string, err error) {
		var te *TimeoutError
		require.ErrorAs(t, err, &te)
		require.Equal(t, op, te.Op)
		require.Equal(t, endpoint, te.Endpoint)
		require.Contains(t, err.Error(), "Azure Blob at "+endpoint)
	})
}
