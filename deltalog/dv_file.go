package deltalog

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"math"
	"sync"

	"github.com/RoaringBitmap/roaring/v2/roaring64"
	"github.com/google/uuid"
)

// dvFileVersion is the first byte of every deletion vector file.
const dvFileVersion = 1

var (
	errDVChecksum    = errors.New("deltalog: deletion vector checksum mismatch")
	errDVCardinality = errors.New("deltalog: deletion vector cardinality mismatch")
)

// ReadDeletionVector loads the rows a deletion vector marks deleted. For file-backed
// vectors it checks the file version, the record size against the descriptor, the
// CRC-32 and the cardinality; any mismatch or truncation is a *CorruptFileError naming
// the file. A missing file is a *CorruptFileError matching ErrNotExist. To read many
// vectors, use a DVReader: it fetches each file once.
func ReadDeletionVector(ctx context.Context, s Store, dv *DeletionVector) (*roaring64.Bitmap, error) {
	return NewDVReader(s).Read(ctx, dv)
}

// DVReader reads deletion vectors, fetching each deletion vector file once: a
// writer stores the vectors of one commit in one file, so a merge that
// updates 40 vectors would otherwise get the same object 40 times. It keeps
// the files it fetched until dropped; use one per batch or table load. Safe
// for concurrent use.
type DVReader struct {
	store Store
	mu    sync.Mutex
	files map[string]*dvFile
}

// dvFile is one fetched deletion vector file; ready closes when data or err is set.
type dvFile struct {
	ready chan struct{}
	data  []byte
	err   error
}

// NewDVReader returns a reader of s's deletion vectors.
func NewDVReader(s Store) *DVReader {
	return &DVReader{store: s, files: map[string]*dvFile{}}
}

// Read loads the rows dv marks deleted; see ReadDeletionVector.
func (r *DVReader) Read(ctx context.Context, dv *DeletionVector) (*roaring64.Bitmap, error) {
	if dv == nil {
		return nil, fmt.Errorf("%w: nil", ErrBadDeletionVector)
	}
	if dv.SizeInBytes < 0 || dv.Cardinality < 0 {
		return nil, fmt.Errorf("%w: negative size or cardinality", ErrBadDeletionVector)
	}
	switch dv.StorageType {
	case DVStorageInline:
		return readInlineDV(dv)
	case DVStorageUUID, DVStoragePath:
	default:
		return nil, fmt.Errorf("%w: unknown storage type %q", ErrBadDeletionVector, dv.StorageType)
	}
	p, err := dvPathInStore(r.store, dv)
	if err != nil {
		return nil, err
	}
	data, err := r.file(ctx, p)
	if err == nil {
		var bm *roaring64.Bitmap
		if bm, err = decodeDVRecord(data, dv); err == nil {
			return bm, nil
		}
	}
	return nil, &CorruptFileError{Path: p, Err: fmt.Errorf("reading deletion vector %s: %w", dv.UniqueID(), err)}
}

// file returns the bytes of the deletion vector file at p, fetching it on
// first use; concurrent callers wait for one fetch.
func (r *DVReader) file(ctx context.Context, p string) ([]byte, error) {
	r.mu.Lock()
	f, ok := r.files[p]
	if !ok {
		f = &dvFile{ready: make(chan struct{})}
		r.files[p] = f
	}
	r.mu.Unlock()
	if !ok {
		f.data, f.err = getAll(ctx, r.store, p)
		close(f.ready)
		if f.err != nil {
			// Failures are not kept: the next Read retries.
			r.mu.Lock()
			delete(r.files, p)
			r.mu.Unlock()
		}
	}
	select {
	case <-f.ready:
		return f.data, f.err
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

func getAll(ctx context.Context, s Store, p string) ([]byte, error) {
	rc, err := s.Get(ctx, p)
	if err != nil {
		return nil, err
	}
	defer rc.Close()
	return io.ReadAll(rc)
}

func readInlineDV(dv *DeletionVector) (*roaring64.Bitmap, error) {
	raw, err := z85Decode(dv.PathOrInlineDV)
	if err != nil {
		return nil, fmt.Errorf("%w: inline: %w", ErrBadDeletionVector, err)
	}
	// Z85 pads the bitmap to a multiple of 4 bytes; sizeInBytes says where it ends.
	if int(dv.SizeInBytes) > len(raw) {
		return nil, fmt.Errorf("%w: inline: sizeInBytes %d exceeds %d decoded bytes", ErrBadDeletionVector, dv.SizeInBytes, len(raw))
	}
	bm, err := decodeDVBitmap(raw[:dv.SizeInBytes])
	if err != nil {
		return nil, fmt.Errorf("%w: inline: %w", ErrBadDeletionVector, err)
	}
	if got := bm.GetCardinality(); got != uint64(dv.Cardinality) {
		return nil, fmt.Errorf("%w: inline: %w: descriptor says %d, bitmap has %d", ErrBadDeletionVector, errDVCardinality, dv.Cardinality, got)
	}
	return bm, nil
}

// decodeDVRecord decodes dv's record from the bytes of its file: version byte,
// then at dv's offset a big-endian size, the bitmap and its CRC-32.
func decodeDVRecord(file []byte, dv *DeletionVector) (*roaring64.Bitmap, error) {
	if len(file) == 0 {
		return nil, io.ErrUnexpectedEOF
	}
	if file[0] != dvFileVersion {
		return nil, fmt.Errorf("file format version %d, want %d", file[0], dvFileVersion)
	}
	// An absent offset means the first record, right after the version byte, as in
	// delta-kernel-rs (unwrap_or(1)); reading at 0 would always fail.
	offset := int64(1)
	if dv.Offset != nil {
		offset = int64(*dv.Offset)
	}
	if offset < 1 {
		return nil, fmt.Errorf("offset %d points into the file header", offset)
	}
	// Bounds are checked in int64 against the file: a corrupt descriptor must
	// neither overflow nor make us allocate.
	if offset+4 > int64(len(file)) {
		return nil, io.ErrUnexpectedEOF
	}
	if size := binary.BigEndian.Uint32(file[offset:]); size != uint32(dv.SizeInBytes) {
		return nil, fmt.Errorf("record at offset %d has %d bytes, descriptor says %d", offset, size, dv.SizeInBytes)
	}
	start := offset + 4
	end := start + int64(dv.SizeInBytes)
	if end+4 > int64(len(file)) {
		return nil, io.ErrUnexpectedEOF
	}
	data := file[start:end]
	if want, got := binary.BigEndian.Uint32(file[end:]), crc32.ChecksumIEEE(data); want != got {
		return nil, fmt.Errorf("%w: stored %#08x, computed %#08x", errDVChecksum, want, got)
	}
	bm, err := decodeDVBitmap(data)
	if err != nil {
		return nil, err
	}
	if got := bm.GetCardinality(); got != uint64(dv.Cardinality) {
		return nil, fmt.Errorf("%w: descriptor says %d, bitmap has %d", errDVCardinality, dv.Cardinality, got)
	}
	return bm, nil
}

// WriteDeletionVectors stores bitmaps in one new deletion vector file and returns their
// descriptors ("u" storage), in the order given. prefix is an optional directory under
// the table root (Spark uses a random two-character one to spread files over S3 key
// space); empty puts the file at the root. The file is written with PutIfAbsent, never
// replacing an existing one.
func WriteDeletionVectors(ctx context.Context, s Store, prefix string, bitmaps []*roaring64.Bitmap) ([]DeletionVector, error) {
	if len(bitmaps) == 0 {
		return nil, nil
	}
	if prefix != "" {
		if err := CheckPath(prefix); err != nil {
			return nil, fmt.Errorf("writing deletion vectors: prefix: %w", err)
		}
	}
	id := uuid.New()
	encoded, err := z85Encode(id[:])
	if err != nil {
		return nil, err
	}
	p := dvFileName(id)
	if prefix != "" {
		p = prefix + "/" + p
	}

	buf := []byte{dvFileVersion}
	dvs := make([]DeletionVector, len(bitmaps))
	for i, bm := range bitmaps {
		if bm == nil {
			return nil, fmt.Errorf("writing deletion vectors: bitmap %d is nil", i)
		}
		data, err := encodeDVBitmap(bm)
		if err != nil {
			return nil, err
		}
		offset := len(buf)
		if offset > math.MaxInt32 || len(data) > math.MaxInt32-offset-8 {
			return nil, fmt.Errorf("writing deletion vectors: file %s would exceed 2 GiB", p)
		}
		buf = binary.BigEndian.AppendUint32(buf, uint32(len(data)))
		buf = append(buf, data...)
		buf = binary.BigEndian.AppendUint32(buf, crc32.ChecksumIEEE(data))
		off32 := int32(offset)
		dvs[i] = DeletionVector{
			StorageType:    DVStorageUUID,
			PathOrInlineDV: prefix + encoded,
			Offset:         &off32,
			SizeInBytes:    int32(len(data)),
			Cardinality:    int64(bm.GetCardinality()),
		}
	}
	if err := s.PutIfAbsent(ctx, p, buf); err != nil {
		return nil, fmt.Errorf("writing deletion vector file %s: %w", p, err)
	}
	return dvs, nil
}
