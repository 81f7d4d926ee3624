package deltalog

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/RoaringBitmap/roaring/v2/roaring64"
)

// dvMagicPortable starts a "RoaringBitmapArray" in the portable format: the magic as a
// little-endian uint32, then the standard 64-bit portable Roaring serialization. Spark
// also reads a "native" variant (magic 1681511376) that kernel-rs rejects; we neither
// write nor read it.
const dvMagicPortable = 1681511377

var errDVBitmap = errors.New("deltalog: invalid deletion vector bitmap")

// encodeDVBitmap serializes bm as Spark does; for {0,9} the bytes are identical to
// Spark's (verified through the CRC of Spark's file in the tests).
func encodeDVBitmap(bm *roaring64.Bitmap) ([]byte, error) {
	var buf bytes.Buffer
	buf.Grow(4 + int(bm.GetSerializedSizeInBytes()))
	buf.Write(binary.LittleEndian.AppendUint32(nil, dvMagicPortable))
	if _, err := bm.WriteTo(&buf); err != nil {
		return nil, fmt.Errorf("serializing deletion vector: %w", err)
	}
	return buf.Bytes(), nil
}

// decodeDVBitmap parses a RoaringBitmapArray. It checks what the roaring library does
// not: the bucket count against the input size (the library allocates it up front),
// that the input is consumed exactly, and that buckets are sorted and well formed.
func decodeDVBitmap(data []byte) (*roaring64.Bitmap, error) {
	if len(data) < 12 {
		return nil, fmt.Errorf("%w: %d bytes is too short", errDVBitmap, len(data))
	}
	if magic := binary.LittleEndian.Uint32(data); magic != dvMagicPortable {
		return nil, fmt.Errorf("%w: magic %d, want %d (portable format)", errDVBitmap, magic, dvMagicPortable)
	}
	body := data[4:]
	// Each bucket needs at least a 4-byte key and an 8-byte 32-bit bitmap header.
	if buckets := binary.LittleEndian.Uint64(body); buckets > uint64(len(body)-8)/12 {
		return nil, fmt.Errorf("%w: %d buckets cannot fit in %d bytes", errDVBitmap, buckets, len(body))
	}
	bm := roaring64.New()
	r := bytes.NewReader(body)
	if _, err := bm.ReadFrom(r); err != nil {
		return nil, fmt.Errorf("%w: %v", errDVBitmap, err)
	}
	if r.Len() != 0 {
		return nil, fmt.Errorf("%w: %d trailing bytes", errDVBitmap, r.Len())
	}
	if err := bm.Validate(); err != nil {
		return nil, fmt.Errorf("%w: %v", errDVBitmap, err)
	}
	if !bm.IsEmpty() && bm.Maximum() > 1<<63-1 {
		return nil, fmt.Errorf("%w: row index %d above 2^63-1", errDVBitmap, bm.Maximum())
	}
	return bm, nil
}
