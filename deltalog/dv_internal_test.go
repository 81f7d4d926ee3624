package deltalog

import (
	"bytes"
	"context"
	"encoding/binary"
	"io"
	"iter"
	"testing"

	"github.com/RoaringBitmap/roaring/v2/roaring64"
	"github.com/google/uuid"
	"github.com/stretchr/testify/require"
)

func TestZ85(t *testing.T) {
	id := uuid.MustParse("b6a98cdd-7843-470d-8897-708cdffa38c5")
	tests := []struct {
		name string
		raw  []byte
		enc  string
	}{
		{"empty", nil, ""},
		{"zeromq vector", []byte{0x86, 0x4F, 0xD2, 0x6F, 0xB5, 0x59, 0xF7, 0x5B}, "HelloWorld"},
		{"delta uuid vector", id[:], "WYbkwCTB$gH)J7t?$/sK"},
		{"max", []byte{0xff, 0xff, 0xff, 0xff}, "%nSc0"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			enc, err := z85Encode(tc.raw)
			require.NoError(t, err)
			require.Equal(t, tc.enc, enc)
			raw, err := z85Decode(tc.enc)
			require.NoError(t, err)
			require.Equal(t, len(tc.raw), len(raw))
			require.True(t, bytes.Equal(tc.raw, raw))
		})
	}
	_, err := z85Encode([]byte{1, 2, 3})
	require.ErrorIs(t, err, errZ85)
	for _, bad := range []string{"abcd", "abcd~", "%nSc1", "#####"} {
		_, err := z85Decode(bad)
		require.ErrorIs(t, err, errZ85, bad)
	}
}

func TestInlineDV(t *testing.T) {
	for _, bm := range []*roaring64.Bitmap{roaring64.BitmapOf(0, 9), roaring64.BitmapOf(7), roaring64.BitmapOf(1<<33, 2)} {
		data, err := encodeDVBitmap(bm)
		require.NoError(t, err)
		padded := append(bytes.Clone(data), make([]byte, (4-len(data)%4)%4)...)
		enc, err := z85Encode(padded)
		require.NoError(t, err)
		dv := &DeletionVector{StorageType: DVStorageInline, PathOrInlineDV: enc,
			SizeInBytes: int32(len(data)), Cardinality: int64(bm.GetCardinality())}
		got, err := ReadDeletionVector(t.Context(), nil, dv)
		require.NoError(t, err, bm.String())
		require.True(t, bm.Equals(got))

		dv.Cardinality++
		_, err = ReadDeletionVector(t.Context(), nil, dv)
		require.ErrorIs(t, err, ErrBadDeletionVector)
		require.ErrorIs(t, err, errDVCardinality)
	}
}

// TestInlineDVKernelVector reads the inline vector of delta-kernel-rs's tests.
func TestInlineDVKernelVector(t *testing.T) {
	dv := &DeletionVector{StorageType: DVStorageInline, PathOrInlineDV: "^Bg9^0rr910000000000iXQKl0rr91000f55c8Xg0@@D72lkbi5=-{L",
		SizeInBytes: 44, Cardinality: 6}
	bm, err := ReadDeletionVector(t.Context(), nil, dv)
	require.NoError(t, err)
	require.Equal(t, []uint64{3, 4, 7, 11, 18, 29}, bm.ToArray())
}

func TestDecodeDVBitmapRejects(t *testing.T) {
	good, err := encodeDVBitmap(roaring64.BitmapOf(0, 9))
	require.NoError(t, err)
	le := binary.LittleEndian
	hugeBuckets := bytes.Clone(good)
	le.PutUint64(hugeBuckets[4:], 1<<60)
	native := bytes.Clone(good)
	le.PutUint32(native, 1681511376)
	twoBuckets := le.AppendUint32(nil, dvMagicPortable)
	twoBuckets = le.AppendUint64(twoBuckets, 2)
	one := good[12:] // key + 32-bit bitmap of bucket 0
	twoBuckets = append(append(twoBuckets, one...), one...)
	for name, data := range map[string][]byte{
		"short":         good[:8],
		"native magic":  native,
		"huge buckets":  hugeBuckets,
		"trailing":      append(bytes.Clone(good), 0),
		"truncated":     good[:len(good)-1],
		"unsorted keys": twoBuckets,
	} {
		_, err := decodeDVBitmap(data)
		require.ErrorIs(t, err, errDVBitmap, name)
	}
}

// oneFile is a Store holding a single object, for tests that cannot import memstore.
type oneFile struct {
	path string
	data []byte
}

func (o oneFile) Get(_ context.Context, p string) (io.ReadCloser, error) {
	if p != o.path {
		return nil, ErrNotExist
	}
	return io.NopCloser(bytes.NewReader(o.data)), nil
}
func (oneFile) Put(context.Context, string, []byte) error         { return ErrInvalidPath }
func (oneFile) PutIfAbsent(context.Context, string, []byte) error { return ErrInvalidPath }
func (oneFile) Delete(context.Context, string) error              { return ErrInvalidPath }
func (oneFile) List(context.Context, string, string) iter.Seq2[ObjectInfo, error] {
	return func(func(ObjectInfo, error) bool) {}
}

const fuzzMaxInput = 1 << 16

// FuzzDeletionVector feeds arbitrary bytes to every DV decoder: the bitmap format, Z85,
// the DV file framing and inline descriptors. None may panic, and whatever decodes must
// re-encode to something that decodes to the same value.
func FuzzDeletionVector(f *testing.F) {
	spark, err := encodeDVBitmap(roaring64.BitmapOf(0, 9))
	require.NoError(f, err)
	multi := roaring64.BitmapOf(1<<40, 3, 1<<33)
	multi.AddRange(100, 70_000)
	multi.RunOptimize()
	runs, err := encodeDVBitmap(multi)
	require.NoError(f, err)
	for _, seed := range [][]byte{spark, runs, dvFileOf(spark), dvFileOf(runs), []byte("WYbkwCTB$gH)J7t?$/sK"), nil} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) > fuzzMaxInput {
			return
		}
		if bm, err := decodeDVBitmap(data); err == nil {
			enc, err := encodeDVBitmap(bm)
			require.NoError(t, err)
			again, err := decodeDVBitmap(enc)
			require.NoError(t, err)
			require.True(t, bm.Equals(again))
		}
		if raw, err := z85Decode(string(data)); err == nil {
			enc, err := z85Encode(raw)
			require.NoError(t, err)
			require.Equal(t, string(data), enc)
		}
		dv := &DeletionVector{StorageType: DVStorageUUID, PathOrInlineDV: "WYbkwCTB$gH)J7t?$/sK", Offset: new(int32(1))}
		if len(data) >= 5 {
			dv.SizeInBytes = int32(binary.BigEndian.Uint32(data[1:5]) & 0x7fffffff)
			if end := 5 + int(dv.SizeInBytes); end <= len(data) {
				if bm, err := decodeDVBitmap(data[5:end]); err == nil {
					dv.Cardinality = int64(bm.GetCardinality())
				}
			}
		}
		s := oneFile{path: "deletion_vector_b6a98cdd-7843-470d-8897-708cdffa38c5.bin", data: data}
		if bm, err := ReadDeletionVector(t.Context(), s, dv); err == nil {
			require.EqualValues(t, dv.Cardinality, bm.GetCardinality())
		}
		inline := &DeletionVector{StorageType: DVStorageInline, PathOrInlineDV: string(data), SizeInBytes: int32(len(data) / 5 * 4)}
		_, _ = ReadDeletionVector(t.Context(), nil, inline) // only must not panic
	})
}

func dvFileOf(data []byte) []byte {
	f := []byte{dvFileVersion}
	f = binary.BigEndian.AppendUint32(f, uint32(len(data)))
	f = append(f, data...)
	return binary.BigEndian.AppendUint32(f, 0)
}

// BenchmarkDeletionVector measures DV serialization both ways.
//
//	go test ./deltalog -run '^$' -bench DeletionVector -count 6
func BenchmarkDeletionVector(b *testing.B) {
	shapes := []struct {
		name string
		bm   func() *roaring64.Bitmap
	}{
		{"rows=1k/sparse", func() *roaring64.Bitmap { return spread(1_000, 1_000) }},
		{"rows=100k/sparse", func() *roaring64.Bitmap { return spread(100_000, 37) }},
		{"rows=1M/range", func() *roaring64.Bitmap {
			bm := roaring64.New()
			bm.AddRange(0, 1_000_000)
			bm.RunOptimize()
			return bm
		}},
	}
	for _, sh := range shapes {
		bm := sh.bm()
		rows := float64(bm.GetCardinality())
		b.Run("encode/"+sh.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := encodeDVBitmap(bm); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(rows*float64(b.N)/b.Elapsed().Seconds(), "rows/s")
		})
		data, err := encodeDVBitmap(bm)
		if err != nil {
			b.Fatal(err)
		}
		b.Run("decode/"+sh.name, func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(data)))
			for b.Loop() {
				if _, err := decodeDVBitmap(data); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(rows*float64(b.N)/b.Elapsed().Seconds(), "rows/s")
		})
	}
}

func spread(n int, step uint64) *roaring64.Bitmap {
	bm := roaring64.New()
	for i := range uint64(n) {
		bm.Add(i * step)
	}
	return bm
}
