package main

import (
	"bytes"
	"encoding/json"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/johannesboyne/gofakes3"
	"github.com/johannesboyne/gofakes3/backend/s3mem"
	"github.com/stretchr/testify/require"

	"github.com/cdc2delta/cdc2delta/config"
	"github.com/cdc2delta/cdc2delta/deltalog/s3store"
)

// TestS3Table runs table commands on an s3:// table in an in-process S3 server, with the
// endpoint from the environment (as scripts set it) and credentials from the AWS chain.
func TestS3Table(t *testing.T) {
	backend := s3mem.New()
	require.NoError(t, backend.CreateBucket("lake"))
	srv := httptest.NewServer(gofakes3.New(backend).Server())
	t.Cleanup(srv.Close)
	t.Setenv("AWS_ACCESS_KEY_ID", "key")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "secret")
	t.Setenv("AWS_REGION", "eu-west-1")

	// Build the table locally and upload it.
	dir := t.TempDir()
	testTable(t, dir)
	st, err := s3store.New(t.Context(), s3store.Options{Bucket: "lake", Prefix: "sales/orders", Region: "eu-west-1",
		Endpoint: srv.URL, UsePathStyle: true})
	require.NoError(t, err)
	require.NoError(t, filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p) // p is under dir
		return st.Put(t.Context(), filepath.ToSlash(rel), data)
	}))

	vars := map[string]string{"CDC2DELTA_S3_ENDPOINT": srv.URL, "CDC2DELTA_S3_PATH_STYLE": "true", "AWS_REGION": "eu-west-1"}
	s3cli := func(args ...string) result {
		var out, errb bytes.Buffer
		code := runEnv(t.Context(), append([]string{"cdc2delta"}, args...), &env{stdout: &out, stderr: &errb,
			lookup: func(k string) (string, bool) { v, ok := vars[k]; return v, ok }})
		return result{code, out.String(), errb.String()}
	}
	const loc = "s3://lake/sales/orders"

	r := s3cli("describe", "--json", loc)
	require.Equal(t, exitOK, r.code, r.stderr)
	var d tableDescription
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &d))
	require.EqualValues(t, 2, d.Version)
	require.EqualValues(t, 4, *d.NumRows)

	r = s3cli("optimize", loc)
	require.Equal(t, exitOK, r.code, r.stderr)
	r = s3cli("restore", "--version", "1", loc)
	require.Equal(t, exitOK, r.code, r.stderr)
	r = s3cli("show", "--format", "csv", "--limit", "0", loc)
	require.Equal(t, exitOK, r.code, r.stderr)
	require.Equal(t, 6, len(bytes.Split(bytes.TrimSpace([]byte(r.stdout)), []byte("\n"))), "header and ids 1-5 of version 1:\n%s", r.stdout)
	r = s3cli("history", loc)
	require.Equal(t, exitOK, r.code, r.stderr)
	require.Contains(t, r.stdout, "RESTORE")
	require.Contains(t, r.stdout, "OPTIMIZE")
	r = s3cli("update", loc, "--set", "amount = amount + 1", "--where", "id <= 2")
	require.Equal(t, exitOK, r.code, r.stderr)
	require.Contains(t, r.stdout, "updated 2 rows")
	r = s3cli("delete", loc, "--where", "id = 5")
	require.Equal(t, exitOK, r.code, r.stderr)
	require.Contains(t, r.stdout, "deleted 1 row")
	r = s3cli("show", "--format", "csv", "--limit", "0", loc)
	require.Equal(t, exitOK, r.code, r.stderr)
	require.Equal(t, 5, len(bytes.Split(bytes.TrimSpace([]byte(r.stdout)), []byte("\n"))), "header and ids 1-4:\n%s", r.stdout)
	r = s3cli("checkpoint", loc)
	require.Equal(t, exitOK, r.code, r.stderr)
	require.Contains(t, r.stdout, "version 6")
	r = s3cli("vacuum", "--dry-run", loc)
	require.Equal(t, exitOK, r.code, r.stderr)
	require.Contains(t, r.stdout, "would delete 0 files")

	// The flag overrides the environment; an unreachable endpoint is a runtime failure.
	r = s3cli("describe", "--s3-endpoint", "http://127.0.0.1:1", loc)
	require.Equal(t, exitFailure, r.code)
}

// TestS3NoRegion: an s3:// table with no region anywhere names the ways to give one,
// through the binary (the flag and the variable) and for `run` (the config field).
func TestS3NoRegion(t *testing.T) {
	home := t.TempDir()
	var environ []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "AWS_") && !strings.HasPrefix(kv, "CDC2DELTA_S3_") && !strings.HasPrefix(kv, "HOME=") {
			environ = append(environ, kv)
		}
	}
	environ = append(environ, "HOME="+home, "AWS_CONFIG_FILE="+filepath.Join(home, "none"),
		"AWS_SHARED_CREDENTIALS_FILE="+filepath.Join(home, "none"), "AWS_EC2_METADATA_DISABLED=true")
	cmd := exec.CommandContext(t.Context(), binary, "history", "s3://lake/sales/orders")
	cmd.Env = environ
	out, err := cmd.CombinedOutput()
	var ee *exec.ExitError
	require.ErrorAs(t, err, &ee, string(out))
	require.Equal(t, exitUsage, ee.ExitCode(), string(out))
	require.Equal(t, "cdc2delta history: opening s3://lake/sales/orders: no AWS region: pass --s3-region or set AWS_REGION "+
		"(in a config file: storage.s3.region)\n", string(out))

	t.Setenv("HOME", home)
	t.Setenv("AWS_CONFIG_FILE", filepath.Join(home, "none"))
	t.Setenv("AWS_REGION", "")
	t.Setenv("AWS_DEFAULT_REGION", "")
	_, err = storeOpener(config.Storage{})(t.Context(), "s3://lake/sales/orders")
	require.ErrorIs(t, err, s3store.ErrNoRegion)
	require.EqualError(t, err, "s3store: no AWS region: set storage.s3.region or AWS_REGION")
}
