package datafile

import (
	"context"
	"errors"
	"testing"

	"github.com/RoaringBitmap/roaring/v2/roaring64"
	"github.com/stretchr/testify/require"

	"github.com/cdc2delta/cdc2delta/deltalog"
	"github.com/cdc2delta/cdc2delta/deltalog/memstore"
)

// TestReadAbsoluteURIThroughResolvingStore reads a data file and its deletion vector
// named by absolute URI, as a shallow clone names its source's files: the path is
// percent-decoded to find the object, and the "p" deletion vector hides its row.
func TestReadAbsoluteURIThroughResolvingStore(t *testing.T) {
	ctx := t.Context()
	schema := &deltalog.StructType{Fields: []deltalog.StructField{field("id", deltalog.TypeLong, false)}}
	src := newStore()
	w, err := NewWriter(Options{Schema: schema})
	require.NoError(t, err)
	adds, err := w.Write(ctx, src, [][]any{{int64(1)}, {int64(2)}, {int64(3)}})
	require.NoError(t, err)
	require.Len(t, adds, 1)
	data := getObject(t, src, adds[0].Path)
	require.NoError(t, src.Put(ctx, "t/a b%.parquet", data))
	dvs, err := deltalog.WriteDeletionVectors(ctx, src, "t", []*roaring64.Bitmap{roaring64.BitmapOf(1)})
	require.NoError(t, err)
	dvRel, err := dvs[0].RelativePath()
	require.NoError(t, err)

	var opened []string
	open := func(_ context.Context, root string) (deltalog.Store, error) {
		opened = append(opened, root)
		if root != "s3://src" {
			return nil, errors.New("no such bucket")
		}
		return src, nil
	}
	tbl, err := deltalog.Open(ctx, memstore.New(memstore.Options{}), deltalog.ResolveAbsolutePaths(open))
	require.NoError(t, err)
	store := tbl.Store()
	require.True(t, deltalog.ResolvesAbsolutePaths(store))

	add := adds[0]
	add.Path = "s3://src/t/a%20b%25.parquet"
	dv := dvs[0]
	dv.StorageType, dv.PathOrInlineDV = deltalog.DVStoragePath, "s3://src/"+dvRel
	add.DeletionVector = &dv
	rows, err := Read(ctx, store, &add, schema, ReadOptions{})
	require.NoError(t, err)
	require.Equal(t, [][]any{{int64(1)}, {int64(3)}}, rows)
	rows, err = Read(ctx, store, &add, schema, ReadOptions{})
	require.NoError(t, err)
	require.Len(t, rows, 2)
	require.Equal(t, []string{"s3://src"}, opened, "one store per bucket, opened once")

	// A store that does not resolve absolute URIs refuses them, as before.
	_, err = Read(ctx, src, &add, schema, ReadOptions{})
	var abs *deltalog.AbsolutePathError
	require.ErrorAs(t, err, &abs)

	// Another bucket: the opener's error, named.
	other := add
	other.DeletionVector = nil
	other.Path = "s3://elsewhere/t/x.parquet"
	_, err = Read(ctx, store, &other, schema, ReadOptions{})
	require.ErrorContains(t, err, "opening the store at s3://elsewhere: no such bucket")

	// The table's store never writes or deletes another table's files.
	require.ErrorIs(t, store.Put(ctx, "s3://src/t/x.parquet", data), deltalog.ErrForeignPath)
	require.ErrorIs(t, store.PutIfAbsent(ctx, "file:/t/x.parquet", data), deltalog.ErrForeignPath)
	require.ErrorIs(t, store.Delete(ctx, "s3://src/t/a%20b%25.parquet"), deltalog.ErrForeignPath)
	require.Len(t, getObject(t, src, "t/a b%.parquet"), len(data))
}

func getObject(t *testing.T, s deltalog.Store, p string) []byte {
	t.Helper()
	rc, err := s.Get(t.Context(), p)
	require.NoError(t, err)
	defer rc.Close()
	b := make([]byte, 0, 1024)
	buf := make([]byte, 4096)
	for {
		n, err := rc.Read(buf)
		b = append(b, buf[:n]...)
		if err != nil {
			break
		}
	}
	return b
}
