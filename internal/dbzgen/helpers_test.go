package dbzgen_test

import (
	"encoding/binary"
	"net/http/httptest"
	"testing"

	"github.com/linkedin/goavro/v2"
	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/sr"

	"github.com/cdc2delta/cdc2delta/internal/dbzgen"
	"github.com/cdc2delta/cdc2delta/internal/registry"
)

// harness is a generator registering into an in-process registry through
// franz-go's sr client, and a decoder that fetches schemas back by id.
type harness struct {
	gen    *dbzgen.Generator
	cl     *sr.Client
	codecs map[int]*goavro.Codec
}

func newHarness(t testing.TB, opts dbzgen.Options) *harness {
	t.Helper()
	reg, err := registry.New()
	require.NoError(t, err)
	srv := httptest.NewServer(reg.Handler())
	t.Cleanup(srv.Close)
	cl, err := sr.NewClient(sr.URLs(srv.URL))
	require.NoError(t, err)
	return &harness{gen: dbzgen.New(cl, opts), cl: cl, codecs: map[int]*goavro.Codec{}}
}

// decode checks the wire header and decodes the body with the schema the
// registry holds for its id.
func (h *harness) decode(t *testing.T, msg []byte) map[string]any {
	t.Helper()
	require.GreaterOrEqual(t, len(msg), 5)
	require.Equal(t, byte(0), msg[0], "magic byte")
	id := int(binary.BigEndian.Uint32(msg[1:5]))
	codec, ok := h.codecs[id]
	if !ok {
		s, err := h.cl.SchemaByID(t.Context(), id)
		require.NoError(t, err)
		codec, err = goavro.NewCodec(s.Schema)
		require.NoError(t, err)
		h.codecs[id] = codec
	}
	native, rest, err := codec.NativeFromBinary(msg[5:])
	require.NoError(t, err)
	require.Empty(t, rest, "trailing bytes")
	return native.(map[string]any)
}

// unwrap removes goavro's single-key union maps from a record's fields.
func unwrap(m map[string]any) map[string]any {
	out := make(map[string]any, len(m))
	for k, v := range m {
		if u, ok := v.(map[string]any); ok && len(u) == 1 {
			for _, inner := range u {
				v = inner
			}
		}
		out[k] = v
	}
	return out
}

// image returns the unwrapped before or after record of a decoded envelope.
func image(t *testing.T, env map[string]any, which string) map[string]any {
	t.Helper()
	v := env[which]
	if v == nil {
		return nil
	}
	u, ok := v.(map[string]any)
	require.True(t, ok, "%s is %T", which, v)
	require.Len(t, u, 1)
	for _, rec := range u {
		return unwrap(rec.(map[string]any))
	}
	return nil
}
