package gcsstore

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestKeyFileNeverShown: a key file the SDK cannot use fails the client with an error
// that names no key material.
func TestKeyFileNeverShown(t *testing.T) {
	dir := t.TempDir()
	for name, content := range map[string]string{
		"garbage.json":   `{"type":"service_account","private_key":"SECRETKEYMATERIAL","client_email":"a@b"`,
		"wrongtype.json": `{"type":"authorized_user","client_secret":"SECRETKEYMATERIAL","refresh_token":"SECRETKEYMATERIAL"}`,
		"badpem.json":    `{"type":"service_account","private_key":"-----BEGIN PRIVATE KEY-----\nSECRETKEYMATERIAL\n-----END PRIVATE KEY-----\n","client_email":"a@b","token_uri":"http://127.0.0.1:1/token"}`,
	} {
		p := filepath.Join(dir, name)
		require.NoError(t, os.WriteFile(p, []byte(content), 0o600))
		// The endpoint keeps the test off the network; the key file still signs.
		s, err := New(t.Context(), Options{Bucket: "lake", CredentialsFile: p, Endpoint: "http://127.0.0.1:1", MaxRetries: -1})
		if err == nil {
			_, err = s.Get(t.Context(), "_delta_log/00000000000000000000.json")
		}
		require.Error(t, err, name)
		require.NotContains(t, err.Error(), "SECRETKEYMATERIAL", name)
	}
}
