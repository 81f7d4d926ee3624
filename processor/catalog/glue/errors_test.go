package glue

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/cdc2delta/cdc2delta/processor/catalog"
)

// Glue's error answers map onto the catalog's sentinels.
func TestGlueErrors(t *testing.T) {
	for _, tc := range []struct {
		status int
		code   string
		want   error
	}{
		{400, "UnrecognizedClientException", catalog.ErrDenied},
		{403, "AccessDeniedException", catalog.ErrDenied},
		{400, "EntityNotFoundException", catalog.ErrNotFound},
		{400, "AlreadyExistsException", catalog.ErrExists},
		{500, "InternalServiceException", catalog.ErrUnavailable},
		{400, "ThrottlingException", catalog.ErrUnavailable},
	} {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/x-amz-json-1.1")
			w.Header().Set("X-Amzn-ErrorType", tc.code)
			w.WriteHeader(tc.status)
			_, _ = w.Write([]byte(`{"__type":"` + tc.code + `","message":"test"}`))
		}))
		c, err := New(t.Context(), Options{Endpoint: srv.URL, Region: "us-east-1", AccessKeyID: "k", SecretAccessKey: "s"})
		require.NoError(t, err)
		_, err = c.Lookup(t.Context(), catalog.Name{Schema: "db", Table: "t"})
		require.ErrorIs(t, err, tc.want, "%s: %v", tc.code, err)
		require.ErrorContains(t, err, "glue: looking up db.t in Glue at "+srv.URL)
		srv.Close()
	}
	c, err := New(t.Context(), Options{Endpoint: "http://127.0.0.1:1", Region: "us-east-1", AccessKeyID: "k", SecretAccessKey: "s"})
	require.NoError(t, err)
	_, err = c.Lookup(t.Context(), catalog.Name{Schema: "db", Table: "t"})
	require.ErrorIs(t, err, catalog.ErrUnavailable, "connection refused")
	_, err = c.Lookup(t.Context(), catalog.Name{Catalog: "c", Schema: "db", Table: "t"})
	require.ErrorContains(t, err, "must have two parts")
}
