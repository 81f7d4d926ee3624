package unity

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/cdc2delta/cdc2delta/processor/catalog"
)

func TestUnityErrorsAndToken(t *testing.T) {
	var auth string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		auth = r.Header.Get("Authorization")
		switch r.URL.Path {
		case "/api/2.1/unity-catalog/tables/c.s.denied":
			w.WriteHeader(401)
			_, _ = w.Write([]byte(`{"error_code":"UNAUTHENTICATED","message":"bad token"}`))
		case "/api/2.1/unity-catalog/tables/c.s.busy":
			w.WriteHeader(503)
		default:
			w.WriteHeader(404)
			_, _ = w.Write([]byte(`{"error_code":"TABLE_NOT_FOUND","message":"Table not found: c.s.x"}`))
		}
	}))
	defer srv.Close()
	c, err := New(Options{Endpoint: srv.URL, Token: "tok"})
	require.NoError(t, err)
	_, err = c.Lookup(t.Context(), catalog.Name{Catalog: "c", Schema: "s", Table: "denied"})
	require.ErrorIs(t, err, catalog.ErrDenied)
	require.ErrorContains(t, err, "HTTP 401 UNAUTHENTICATED: bad token")
	require.NotContains(t, err.Error(), "tok\"")
	require.Equal(t, "Bearer tok", auth)
	_, err = c.Lookup(t.Context(), catalog.Name{Catalog: "c", Schema: "s", Table: "busy"})
	require.ErrorIs(t, err, catalog.ErrUnavailable)
	_, err = c.Lookup(t.Context(), catalog.Name{Catalog: "c", Schema: "s", Table: "x"})
	require.ErrorIs(t, err, catalog.ErrNotFound)
	_, err = c.Lookup(t.Context(), catalog.Name{Schema: "s", Table: "x"})
	require.ErrorContains(t, err, "must have three parts")
}
