package deltalog_test

import (
	"context"
	"encoding/binary"
	"errors"
	"hash/crc32"
	"os"
	"path/filepath"
	"testing"

	"github.com/RoaringBitmap/roaring/v2/roaring64"
	"github.com/stretchr/testify/require"

	"github.com/cdc2delta/cdc2delta/deltalog"
	"github.com/cdc2delta/cdc2delta/deltalog/localstore"
	"github.com/cdc2delta/cdc2delta/deltalog/memstore"
	"github.com/cdc2delta/cdc2delta/deltalog/storetest"
)

// sparkDVBitmap is the RoaringBitmapArray of rows {0, 9}, laid out by hand from the
// format description. sparkDVFileCRC is the CRC Spark stored for it, so a matching CRC
// shows these are Spark's bytes.
func sparkDVBitmap() []byte {
	le := binary.LittleEndian
	b := le.AppendUint32(nil, 1681511377) // magic "portable"
	b = le.AppendUint64(b, 1)             // one 32-bit bucket
	b = le.AppendUint32(b, 0)             // its high key
	b = le.AppendUint32(b, 12346)         // roaring cookie, no run containers
	b = le.AppendUint32(b, 1)             // one container
	b = le.AppendUint16(b, 0)             // container key
	b = le.AppendUint16(b, 1)             // cardinality - 1
	b = le.AppendUint32(b, 16)            // container offset
	b = le.AppendUint16(b, 0)
	return le.AppendUint16(b, 9)
}

const sparkDVFileCRC = 0x2a671846

// sparkDVFile is the 45-byte DV file Spark wrote for that bitmap.
func sparkDVFile() []byte {
	data := sparkDVBitmap()
	f := []byte{1}
	f = binary.BigEndian.AppendUint32(f, uint32(len(data)))
	f = append(f, data...)
	return binary.BigEndian.AppendUint32(f, crc32.ChecksumIEEE(data))
}

func int32p(v int32) *int32 { return &v }

func sparkDescriptor() *deltalog.DeletionVector {
	return &deltalog.DeletionVector{
		StorageType: "u", PathOrInlineDV: "WYbkwCTB$gH)J7t?$/sK",
		Offset: int32p(1), SizeInBytes: 36, Cardinality: 2,
	}
}

const sparkDVPath = "deletion_vector_b6a98cdd-7843-470d-8897-708cdffa38c5.bin"

func TestSparkDVFileBytes(t *testing.T) {
	data := sparkDVBitmap()
	require.Len(t, data, 36)
	require.Equal(t, uint32(sparkDVFileCRC), crc32.ChecksumIEEE(data))
	require.Len(t, sparkDVFile(), 45)
}

func TestRelativePath(t *testing.T) {
	tests := []struct {
		name, storage, id, want string
		wantErr                 error
	}{
		{"uuid vector", "u", "WYbkwCTB$gH)J7t?$/sK", sparkDVPath, nil},
		{"with prefix", "u", "ab^-aqEH.-t@S}K{vb[*k^", "ab/deletion_vector_d2c639aa-8816-431a-aaf6-d3fe2512ff61.bin", nil},
		{"kernel vector", "u", "vBn[lx{q8@P<9BNH/isA", "deletion_vector_61d16c75-6994-46b7-a15b-8b538852e50e.bin", nil},
		{"multibyte prefix", "u", "éWYbkwCTB$gH)J7t?$/sK", "é/" + sparkDVPath, nil},
		{"multibyte straddles id", "u", "éaaaaaaaaaaaaaaaaaaa", "", deltalog.ErrBadDeletionVector},
		{"too short", "u", "WYbkwCTB$gH)J7t?$/s", "", deltalog.ErrBadDeletionVector},
		{"not z85", "u", "WYbkwCTB$gH)J7t?$/s~", "", deltalog.ErrBadDeletionVector},
		{"overflow", "u", "#####CTB$gH)J7t?$/sK", "", deltalog.ErrBadDeletionVector},
		{"escaping prefix", "u", "..WYbkwCTB$gH)J7t?$/sK", "", deltalog.ErrBadDeletionVector},
		{"inline", "i", "WYbkwCTB$gH)J7t?$/sK", "", deltalog.ErrBadDeletionVector},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dv := &deltalog.DeletionVector{StorageType: tc.storage, PathOrInlineDV: tc.id}
			got, err := dv.RelativePath()
			if tc.wantErr != nil {
				require.ErrorIs(t, err, tc.wantErr)
				return
			}
			require.NoError(t, err)
			require.Equal(t, tc.want, got)
		})
	}
}

func TestAbsolutePath(t *testing.T) {
	got, err := sparkDescriptor().AbsolutePath("s3://bucket/tables/t/")
	require.NoError(t, err)
	require.Equal(t, "s3://bucket/tables/t/"+sparkDVPath, got)

	p := &deltalog.DeletionVector{StorageType: "p", PathOrInlineDV: "s3://other/x.bin"}
	got, err = p.AbsolutePath("s3://bucket/t")
	require.NoError(t, err)
	require.Equal(t, "s3://other/x.bin", got)

	_, err = (&deltalog.DeletionVector{StorageType: "i"}).AbsolutePath("/t")
	require.ErrorIs(t, err, deltalog.ErrBadDeletionVector)
}

func TestUniqueID(t *testing.T) {
	var none *deltalog.DeletionVector
	require.Empty(t, none.UniqueID())
	require.Equal(t, "uWYbkwCTB$gH)J7t?$/sK@1", sparkDescriptor().UniqueID())
	inline := &deltalog.DeletionVector{StorageType: "i", PathOrInlineDV: "abcde"}
	require.Equal(t, "iabcde", inline.UniqueID())
	noOffset := &deltalog.DeletionVector{StorageType: "p", PathOrInlineDV: "/x.bin"}
	require.Equal(t, "p/x.bin", noOffset.UniqueID())
}

func TestReadSparkDeletionVector(t *testing.T) {
	ctx := t.Context()
	s := memstore.New(memstore.Options{})
	require.NoError(t, s.Put(ctx, sparkDVPath, sparkDVFile()))
	bm, err := deltalog.ReadDeletionVector(ctx, s, sparkDescriptor())
	require.NoError(t, err)
	require.Equal(t, []uint64{0, 9}, bm.ToArray())
}

func TestReadWithoutOffset(t *testing.T) {
	ctx := t.Context()
	s := memstore.New(memstore.Options{})
	require.NoError(t, s.Put(ctx, sparkDVPath, sparkDVFile()))
	dv := sparkDescriptor()
	dv.Offset = nil
	bm, err := deltalog.ReadDeletionVector(ctx, s, dv)
	require.NoError(t, err, "an absent offset is the first record")
	require.Equal(t, []uint64{0, 9}, bm.ToArray())
}

func TestWriteMatchesSpark(t *testing.T) {
	ctx := t.Context()
	s := memstore.New(memstore.Options{})
	dvs, err := deltalog.WriteDeletionVectors(ctx, s, "", []*roaring64.Bitmap{roaring64.BitmapOf(0, 9)})
	require.NoError(t, err)
	require.Len(t, dvs, 1)
	dv := dvs[0]
	require.Equal(t, "u", dv.StorageType)
	require.Len(t, dv.PathOrInlineDV, 20)
	require.Equal(t, int32p(1), dv.Offset)
	require.EqualValues(t, 36, dv.SizeInBytes)
	require.EqualValues(t, 2, dv.Cardinality)

	p, err := dv.RelativePath()
	require.NoError(t, err)
	require.Regexp(t, `^deletion_vector_[0-9a-f-]{36}\.bin$`, p)
	got, err := storetest.Read(ctx, s, p)
	require.NoError(t, err)
	require.Equal(t, sparkDVFile(), got, "byte-identical to Spark's file")
}

func TestWriteReadMany(t *testing.T) {
	ctx := t.Context()
	s := memstore.New(memstore.Options{})
	dense := roaring64.New()
	dense.AddRange(1000, 200_000)
	dense.RunOptimize()
	sparse := roaring64.New()
	for i := uint64(0); i < 5000; i++ {
		sparse.Add(i * 7919)
	}
	bitmaps := []*roaring64.Bitmap{
		roaring64.BitmapOf(3),
		dense,
		sparse,
		roaring64.BitmapOf(1<<40+5, 1<<62, 7), // several 32-bit buckets
		roaring64.New(),
	}
	dvs, err := deltalog.WriteDeletionVectors(ctx, s, "ab", bitmaps)
	require.NoError(t, err)
	require.Len(t, dvs, len(bitmaps))

	paths, err := storetest.Paths(ctx, s, "", "")
	require.NoError(t, err)
	require.Len(t, paths, 1, "one file holds every vector")
	require.Regexp(t, `^ab/deletion_vector_[0-9a-f-]{36}\.bin$`, paths[0])

	prevEnd := int32(1)
	for i, dv := range dvs {
		p, err := dv.RelativePath()
		require.NoError(t, err)
		require.Equal(t, paths[0], p)
		require.Equal(t, prevEnd, *dv.Offset, "records are packed in order")
		prevEnd = *dv.Offset + 4 + dv.SizeInBytes + 4
		require.EqualValues(t, bitmaps[i].GetCardinality(), dv.Cardinality)

		got, err := deltalog.ReadDeletionVector(ctx, s, &dv)
		require.NoError(t, err, "vector %d", i)
		require.True(t, bitmaps[i].Equals(got), "vector %d", i)
	}
	_, err = deltalog.WriteDeletionVectors(ctx, s, "../up", bitmaps)
	require.ErrorIs(t, err, deltalog.ErrInvalidPath)
	_, err = deltalog.WriteDeletionVectors(ctx, s, "", []*roaring64.Bitmap{nil})
	require.Error(t, err)
}

func TestReadCorruptDeletionVector(t *testing.T) {
	flip := func(i int) func([]byte) []byte {
		return func(b []byte) []byte { b[i] ^= 0x10; return b }
	}
	tests := []struct {
		name    string
		file    func([]byte) []byte // nil: no file at all
		dv      func(*deltalog.DeletionVector)
		wantErr error
		wantMsg string
	}{
		{name: "missing file", wantErr: deltalog.ErrNotExist},
		{name: "bit flip in data", file: flip(20), wantMsg: "checksum"},
		{name: "bit flip in crc", file: flip(43), wantMsg: "checksum"},
		{name: "truncated", file: func(b []byte) []byte { return b[:30] }, wantMsg: "unexpected EOF"},
		{name: "empty file", file: func([]byte) []byte { return nil }, wantMsg: "unexpected EOF"},
		{name: "version", file: flip(0), wantMsg: "version"},
		{name: "size mismatch", file: func(b []byte) []byte { return b }, dv: func(d *deltalog.DeletionVector) { d.SizeInBytes = 35 }, wantMsg: "descriptor says 35"},
		{name: "cardinality mismatch", file: func(b []byte) []byte { return b }, dv: func(d *deltalog.DeletionVector) { d.Cardinality = 3 }, wantMsg: "cardinality"},
		{name: "offset past end", file: func(b []byte) []byte { return b }, dv: func(d *deltalog.DeletionVector) { d.Offset = int32p(400) }, wantMsg: "unexpected EOF"},
		{name: "offset zero", file: func(b []byte) []byte { return b }, dv: func(d *deltalog.DeletionVector) { d.Offset = int32p(0) }, wantMsg: "offset 0"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ctx := t.Context()
			s := memstore.New(memstore.Options{})
			if tc.file != nil {
				require.NoError(t, s.Put(ctx, sparkDVPath, tc.file(sparkDVFile())))
			}
			dv := sparkDescriptor()
			if tc.dv != nil {
				tc.dv(dv)
			}
			_, err := deltalog.ReadDeletionVector(ctx, s, dv)
			var cfe *deltalog.CorruptFileError
			require.ErrorAs(t, err, &cfe)
			require.Equal(t, sparkDVPath, cfe.Path, "the error names the file")
			if tc.wantErr != nil {
				require.ErrorIs(t, err, tc.wantErr)
			}
			require.ErrorContains(t, err, tc.wantMsg)
		})
	}
}

func TestReadBadDescriptor(t *testing.T) {
	ctx := t.Context()
	s := memstore.New(memstore.Options{})
	for _, dv := range []*deltalog.DeletionVector{
		nil,
		{StorageType: "x", PathOrInlineDV: "WYbkwCTB$gH)J7t?$/sK"},
		{StorageType: "u", PathOrInlineDV: "short"},
		{StorageType: "u", PathOrInlineDV: "WYbkwCTB$gH)J7t?$/sK", SizeInBytes: -1},
		{StorageType: "p", PathOrInlineDV: "/abs/x.bin"}, // memstore has no root
		{StorageType: "i", PathOrInlineDV: "!!!"},
	} {
		_, err := deltalog.ReadDeletionVector(ctx, s, dv)
		require.ErrorIs(t, err, deltalog.ErrBadDeletionVector, "%+v", dv)
	}
}

// TestReadAbsolutePathDV reads a "p" vector through a store that knows its root.
func TestReadAbsolutePathDV(t *testing.T) {
	ctx := t.Context()
	dir := filepath.Join(t.TempDir(), "my table")
	s, err := localstore.New(localstore.Options{Dir: dir})
	require.NoError(t, err)
	require.NoError(t, s.Put(ctx, "dv/x y.bin", sparkDVFile()))

	for _, p := range []string{
		"file://" + filepath.ToSlash(dir) + "/dv/x y.bin",
		"file:" + filepath.ToSlash(dir) + "/dv/x%20y.bin",
		filepath.ToSlash(dir) + "/dv/x y.bin",
	} {
		dv := sparkDescriptor()
		dv.StorageType, dv.PathOrInlineDV = "p", p
		bm, err := deltalog.ReadDeletionVector(ctx, s, dv)
		require.NoError(t, err, p)
		require.Equal(t, []uint64{0, 9}, bm.ToArray())
	}

	outside := filepath.Join(t.TempDir(), "x.bin")
	require.NoError(t, os.WriteFile(outside, sparkDVFile(), 0o644))
	dv := sparkDescriptor()
	dv.StorageType, dv.PathOrInlineDV = "p", "file://"+outside
	_, err = deltalog.ReadDeletionVector(ctx, s, dv)
	require.ErrorIs(t, err, deltalog.ErrBadDeletionVector)
}

func TestReadDeletionVectorCanceled(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	s := memstore.New(memstore.Options{})
	_, err := deltalog.ReadDeletionVector(ctx, s, sparkDescriptor())
	require.True(t, errors.Is(err, context.Canceled))
}
