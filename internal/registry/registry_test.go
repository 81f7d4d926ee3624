package registry_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/sr"

	"github.com/cdc2delta/cdc2delta/internal/registry"
)

const (
	keySchema   = `{"type":"record","name":"Key","namespace":"shop.sales.dbo.orders","fields":[{"name":"order_id","type":"int"}],"connect.name":"shop.sales.dbo.orders.Key"}`
	otherSchema = `{"type":"record","name":"Key","namespace":"shop.sales.dbo.customers","fields":[{"name":"id","type":"long"}]}`
)

func newClient(t *testing.T, r *registry.Registry) *sr.Client {
	t.Helper()
	srv := httptest.NewServer(r.Handler())
	t.Cleanup(srv.Close)
	cl, err := sr.NewClient(sr.URLs(srv.URL))
	require.NoError(t, err)
	return cl
}

func TestRegisterAndLookupWithSRClient(t *testing.T) {
	r, err := registry.New()
	require.NoError(t, err)
	cl := newClient(t, r)
	ctx := t.Context()

	id1, err := cl.RegisterSchema(ctx, "orders-key", sr.Schema{Schema: keySchema}, -1, -1)
	require.NoError(t, err)
	require.Equal(t, 1, id1)

	// Same schema, different whitespace: same id, no new version.
	spaced := strings.ReplaceAll(keySchema, ",", ", ")
	again, err := cl.RegisterSchema(ctx, "orders-key", sr.Schema{Schema: spaced}, -1, -1)
	require.NoError(t, err)
	require.Equal(t, id1, again)
	versions, err := cl.SubjectVersions(ctx, "orders-key")
	require.NoError(t, err)
	require.Equal(t, []int{1}, versions)

	// Same schema under another subject: same global id, that subject's v1.
	ss, err := cl.CreateSchema(ctx, "copy-key", sr.Schema{Schema: keySchema})
	require.NoError(t, err)
	require.Equal(t, id1, ss.ID)
	require.Equal(t, 1, ss.Version)
	require.Equal(t, "copy-key", ss.Subject)

	// A new schema under the first subject: new id, version 2.
	id2, err := cl.RegisterSchema(ctx, "orders-key", sr.Schema{Schema: otherSchema}, -1, -1)
	require.NoError(t, err)
	require.Equal(t, 2, id2)

	got, err := cl.SchemaByID(ctx, id1)
	require.NoError(t, err)
	require.JSONEq(t, keySchema, got.Schema)
	require.Equal(t, sr.TypeAvro, got.Type)

	text, err := cl.SchemaTextByID(ctx, id2)
	require.NoError(t, err)
	require.JSONEq(t, otherSchema, text)

	latest, err := cl.SchemaByVersion(ctx, "orders-key", -1)
	require.NoError(t, err)
	require.Equal(t, 2, latest.Version)
	require.Equal(t, id2, latest.ID)
	require.JSONEq(t, otherSchema, latest.Schema.Schema)

	v1, err := cl.SchemaByVersion(ctx, "orders-key", 1)
	require.NoError(t, err)
	require.Equal(t, id1, v1.ID)

	look, err := cl.LookupSchema(ctx, "orders-key", sr.Schema{Schema: otherSchema})
	require.NoError(t, err)
	require.Equal(t, 2, look.Version)
	require.Equal(t, id2, look.ID)

	subjects, err := cl.Subjects(ctx)
	require.NoError(t, err)
	require.Equal(t, []string{"copy-key", "orders-key"}, subjects)

	usages, err := cl.SchemaUsagesByID(ctx, id1)
	require.NoError(t, err)
	require.Len(t, usages, 2)

	bySubject, err := cl.SubjectsByID(ctx, id1)
	require.NoError(t, err)
	require.Equal(t, []string{"copy-key", "orders-key"}, bySubject)

	compat := cl.Compatibility(ctx)
	require.Len(t, compat, 1)
	require.NoError(t, compat[0].Err)
	require.Equal(t, sr.CompatNone, compat[0].Level)
}

func TestErrorsAreConfluentErrors(t *testing.T) {
	r, err := registry.New()
	require.NoError(t, err)
	cl := newClient(t, r)
	ctx := t.Context()
	_, err = cl.RegisterSchema(ctx, "k", sr.Schema{Schema: keySchema}, -1, -1)
	require.NoError(t, err)

	tests := []struct {
		name string
		call func() error
		want error
	}{
		{"unknown id", func() error { _, err := cl.SchemaByID(ctx, 99); return err }, sr.ErrSchemaNotFound},
		{"unknown subject", func() error { _, err := cl.SubjectVersions(ctx, "nope"); return err }, sr.ErrSubjectNotFound},
		{"unknown version", func() error { _, err := cl.SchemaByVersion(ctx, "k", 7); return err }, sr.ErrVersionNotFound},
		{"lookup unknown subject", func() error {
			_, err := cl.LookupSchema(ctx, "nope", sr.Schema{Schema: keySchema})
			return err
		}, sr.ErrSubjectNotFound},
		{"lookup schema not in subject", func() error {
			_, err := cl.LookupSchema(ctx, "k", sr.Schema{Schema: otherSchema})
			return err
		}, sr.ErrSchemaNotFound},
		{"invalid avro", func() error {
			_, err := cl.RegisterSchema(ctx, "k", sr.Schema{Schema: `{"type":"record","name":"X"}`}, -1, -1)
			return err
		}, sr.ErrInvalidSchema},
		{"not json", func() error {
			_, err := cl.RegisterSchema(ctx, "k", sr.Schema{Schema: `{`}, -1, -1)
			return err
		}, sr.ErrInvalidSchema},
		{"protobuf refused", func() error {
			_, err := cl.RegisterSchema(ctx, "k", sr.Schema{Schema: `syntax = "proto3";`, Type: sr.TypeProtobuf}, -1, -1)
			return err
		}, sr.ErrInvalidSchema},
		{"fixed id refused", func() error {
			_, err := cl.RegisterSchema(ctx, "k2", sr.Schema{Schema: otherSchema}, 50, -1)
			return err
		}, sr.ErrIDDoesNotMatch},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.call()
			require.Error(t, err)
			var re *sr.ResponseError
			require.True(t, errors.As(err, &re), "want a *sr.ResponseError, got %T %v", err, err)
			require.ErrorIs(t, re.SchemaError(), tc.want)
		})
	}
}

func TestErrorBodyAndContentType(t *testing.T) {
	r, err := registry.New()
	require.NoError(t, err)
	srv := httptest.NewServer(r.Handler())
	t.Cleanup(srv.Close)

	resp, err := http.Get(srv.URL + "/schemas/ids/12")
	require.NoError(t, err)
	defer resp.Body.Close()
	require.Equal(t, http.StatusNotFound, resp.StatusCode)
	require.Equal(t, "application/vnd.schemaregistry.v1+json", resp.Header.Get("Content-Type"))
	var body struct {
		Code    int    `json:"error_code"`
		Message string `json:"message"`
	}
	require.NoError(t, decodeJSON(resp, &body))
	require.Equal(t, 40403, body.Code)
	require.Contains(t, body.Message, "schema not found")

	resp2, err := http.Get(srv.URL + "/subjects/x/versions/zero")
	require.NoError(t, err)
	defer resp2.Body.Close()
	require.Equal(t, http.StatusUnprocessableEntity, resp2.StatusCode)
}

func TestConcurrentRegistrationGivesOneIDPerSchema(t *testing.T) {
	r, err := registry.New()
	require.NoError(t, err)
	cl := newClient(t, r)
	ctx := t.Context()

	const schemas, workers = 8, 16
	ids := make([][schemas]int, workers)
	var wg sync.WaitGroup
	errs := make(chan error, workers)
	for w := range workers {
		wg.Go(func() {
			for i := range schemas {
				s := fmt.Sprintf(`{"type":"record","name":"R%d","fields":[{"name":"f","type":"int"}]}`, i)
				id, err := cl.RegisterSchema(ctx, fmt.Sprintf("s%d-value", i), sr.Schema{Schema: s}, -1, -1)
				if err != nil {
					errs <- err
					return
				}
				got, err := cl.SchemaByID(ctx, id)
				if err != nil {
					errs <- err
					return
				}
				if !strings.Contains(got.Schema, fmt.Sprintf(`"R%d"`, i)) {
					errs <- fmt.Errorf("id %d returned %s", id, got.Schema)
					return
				}
				ids[w][i] = id
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}
	seen := map[int]bool{}
	for i := range schemas {
		for w := range workers {
			require.Equal(t, ids[0][i], ids[w][i], "schema %d", i)
		}
		require.False(t, seen[ids[0][i]], "id %d given to two schemas", ids[0][i])
		seen[ids[0][i]] = true
	}
	for i := range schemas {
		vs, err := cl.SubjectVersions(ctx, fmt.Sprintf("s%d-value", i))
		require.NoError(t, err)
		require.Equal(t, []int{1}, vs)
	}
}

func TestPersistenceSurvivesRestart(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "sr")
	r, err := registry.New(registry.Dir(dir))
	require.NoError(t, err)
	a, err := r.Register("a-key", keySchema)
	require.NoError(t, err)
	b, err := r.Register("b-key", otherSchema)
	require.NoError(t, err)

	r2, err := registry.New(registry.Dir(dir))
	require.NoError(t, err)
	text, err := r2.SchemaByID(b.ID)
	require.NoError(t, err)
	require.JSONEq(t, otherSchema, text)
	require.Equal(t, []string{"a-key", "b-key"}, r2.Subjects())
	again, err := r2.Register("a-key", keySchema)
	require.NoError(t, err)
	require.Equal(t, a, again)
	c, err := r2.Register("c-key", `{"type":"string"}`)
	require.NoError(t, err)
	require.Equal(t, 3, c.ID, "ids continue after a restart")

	require.NoError(t, os.WriteFile(filepath.Join(dir, "registry.json"), []byte("{"), 0o644))
	_, err = registry.New(registry.Dir(dir))
	require.Error(t, err)
}

func TestStartServesOnLocalhost(t *testing.T) {
	r, err := registry.New()
	require.NoError(t, err)
	require.Empty(t, r.URL())
	require.NoError(t, r.Start(t.Context(), "127.0.0.1:0"))
	require.ErrorIs(t, r.Start(t.Context(), "127.0.0.1:0"), registry.ErrStarted)
	url := r.URL()
	require.True(t, strings.HasPrefix(url, "http://127.0.0.1:"), url)

	cl, err := sr.NewClient(sr.URLs(url))
	require.NoError(t, err)
	id, err := cl.RegisterSchema(t.Context(), "x-value", sr.Schema{Schema: keySchema}, -1, -1)
	require.NoError(t, err)
	require.Equal(t, 1, id)

	require.NoError(t, r.Close())
	require.NoError(t, r.Close())
	_, err = cl.SchemaByID(t.Context(), id)
	require.Error(t, err, "a closed registry must not answer")
}

func decodeJSON(resp *http.Response, v any) error {
	return json.NewDecoder(resp.Body).Decode(v)
}

// FuzzRegister feeds arbitrary schema text: the registry either refuses it
// as invalid or stores it so that it reads back and re-registers to one id.
func FuzzRegister(f *testing.F) {
	for _, s := range []string{keySchema, otherSchema, `"string"`, `{"type":"record","name":"X"}`, `{`, ``, `[]`, `["null","int"]`, `{"type":"enum","name":"E","symbols":["A","A"]}`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, schema string) {
		r, err := registry.New()
		require.NoError(t, err)
		s, err := r.Register("s-value", schema)
		if err != nil {
			require.ErrorIs(t, err, registry.ErrInvalidSchema)
			return
		}
		text, err := r.SchemaByID(s.ID)
		require.NoError(t, err)
		require.Equal(t, s.Schema, text)
		again, err := r.Register("s-value", text)
		require.NoError(t, err)
		require.Equal(t, s, again)
	})
}
