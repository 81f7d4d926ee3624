package datafile

import (
	"bytes"
	"context"
	"io"
	"math/big"
	"net/url"
	"testing"

	"github.com/parquet-go/parquet-go"
	"github.com/stretchr/testify/require"

	"github.com/cdc2delta/cdc2delta/deltalog"
	"github.com/cdc2delta/cdc2delta/deltalog/memstore"
	"github.com/cdc2delta/cdc2delta/internal/decimal128"
)

func newStore() *memstore.Store { return memstore.New(memstore.Options{}) }

func field(name string, t deltalog.Type, nullable bool) deltalog.StructField {
	return deltalog.StructField{Name: name, Type: t, Nullable: nullable, Metadata: map[string]any{}}
}

// openFile opens the data file of add as a parquet-go file, for schema inspection.
func openFile(t *testing.T, s deltalog.Store, add deltalog.Add) *parquet.File {
	t.Helper()
	key, err := url.PathUnescape(add.Path)
	require.NoError(t, err)
	rc, err := s.Get(context.Background(), key)
	require.NoError(t, err)
	defer rc.Close()
	data, err := io.ReadAll(rc)
	require.NoError(t, err)
	require.Equal(t, int64(len(data)), add.Size)
	f, err := parquet.OpenFile(bytes.NewReader(data), int64(len(data)))
	require.NoError(t, err)
	return f
}

func mustBig(t *testing.T, s string) decimal128.Num {
	t.Helper()
	b, ok := new(big.Int).SetString(s, 10)
	require.True(t, ok)
	d, ok := decimal128.FromBig(b)
	require.True(t, ok)
	return d
}

// writeRead writes rows with opts and reads every add back, concatenating rows.
func writeRead(t *testing.T, opts Options, rows [][]any) ([]deltalog.Add, [][]any, *memstore.Store) {
	t.Helper()
	s := newStore()
	w, err := NewWriter(opts)
	require.NoError(t, err)
	adds, err := w.Write(t.Context(), s, rows)
	require.NoError(t, err)
	var got [][]any
	for i := range adds {
		r, err := Read(t.Context(), s, &adds[i], opts.Schema, ReadOptions{Properties: opts.Properties, PartitionColumns: opts.PartitionColumns})
		require.NoError(t, err)
		got = append(got, r...)
	}
	return adds, got, s
}
