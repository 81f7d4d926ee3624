package deltalog_test

import (
	"sync"
	"testing"

	"github.com/RoaringBitmap/roaring/v2/roaring64"
	"github.com/stretchr/testify/require"

	"github.com/cdc2delta/cdc2delta/deltalog"
	"github.com/cdc2delta/cdc2delta/deltalog/faultstore"
	"github.com/cdc2delta/cdc2delta/deltalog/memstore"
)

// TestDVReaderFetchesEachFileOnce reads 40 vectors of one file, from 8
// goroutines, and checks every bitmap and that the file was fetched once.
func TestDVReaderFetchesEachFileOnce(t *testing.T) {
	ctx := t.Context()
	s := faultstore.Wrap(memstore.New(memstore.Options{}))
	var bitmaps []*roaring64.Bitmap
	for i := range 40 {
		bm := roaring64.New()
		for r := range uint64(i + 1) {
			bm.Add(r*uint64(i+7) + uint64(i))
		}
		bitmaps = append(bitmaps, bm)
	}
	dvs, err := deltalog.WriteDeletionVectors(ctx, s, "", bitmaps)
	require.NoError(t, err)
	// A failed fetch is not kept: the reader retries it.
	in := s.Inject(faultstore.Fault{Ops: faultstore.OpGet, Nth: 1})
	r := deltalog.NewDVReader(s)
	_, err = r.Read(ctx, &dvs[0])
	require.ErrorIs(t, err, faultstore.ErrInjected)
	in.Remove()

	gets := s.Calls(faultstore.OpGet)
	var wg sync.WaitGroup
	got := make([]*roaring64.Bitmap, len(dvs))
	errs := make([]error, len(dvs))
	for g := range 8 {
		wg.Go(func() {
			for i := g; i < len(dvs); i += 8 {
				got[i], errs[i] = r.Read(ctx, &dvs[i])
			}
		})
	}
	wg.Wait()
	for i := range dvs {
		require.NoError(t, errs[i], "vector %d", i)
		require.True(t, bitmaps[i].Equals(got[i]), "vector %d", i)
	}
	require.Equal(t, 1, s.Calls(faultstore.OpGet)-gets, "one Get for the file")

	// A descriptor pointing past the file is corrupt, not a panic.
	bad := dvs[39]
	off := *bad.Offset + 1000
	bad.Offset = &off
	_, err = r.Read(ctx, &bad)
	var corrupt *deltalog.CorruptFileError
	require.ErrorAs(t, err, &corrupt)
}
