package main

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/cdc2delta/cdc2delta/config"
	"github.com/cdc2delta/cdc2delta/deltalog/gcsstore"
)

// TestGCSStoreOpener: gs:// paths open a GCS store with the configured endpoint, and a
// bad one fails with the error naming the part of the URL that is wrong.
func TestGCSStoreOpener(t *testing.T) {
	open := storeOpener(config.Storage{GCS: config.GCS{Endpoint: "http://127.0.0.1:1"}})
	st, err := open(t.Context(), "gs://lake/sales/orders")
	require.NoError(t, err)
	require.IsType(t, &gcsstore.Store{}, st)
	require.Equal(t, "gs://lake/sales/orders", st.(*gcsstore.Store).Root())

	_, err = open(t.Context(), "gs://Lake/sales")
	require.ErrorIs(t, err, gcsstore.ErrBadURL)
	require.ErrorContains(t, err, `table URL "gs://Lake/sales": bucket: `)
}

// TestGCSURLProblems: run refuses a tables.path or control.path that the GCS store
// would refuse, before it starts.
func TestGCSURLProblems(t *testing.T) {
	c := config.Config{Tables: config.Tables{Path: "gs://lake/{table}?x=1"}, Control: config.Control{Path: "gs://a/ctl"}}
	got := storeURLProblems(c, nil)
	require.Len(t, got, 2, "%q", got)
	require.Contains(t, got[0], "control.path: ")
	require.Contains(t, got[0], "bucket: ")
	require.Contains(t, got[1], "tables.path: ")
	require.Contains(t, got[1], "query: ")
}

// TestGCSTableBadURL: a table command refuses a bad gs:// URL as a usage error naming
// the field.
func TestGCSTableBadURL(t *testing.T) {
	var out, errb bytes.Buffer
	code := runEnv(t.Context(), []string{"cdc2delta", "describe", "gs://lake:80/t"}, &env{stdout: &out, stderr: &errb,
		lookup: func(string) (string, bool) { return "", false }})
	require.Equal(t, exitUsage, code, errb.String())
	require.Contains(t, errb.String(), "bucket: ")
}
