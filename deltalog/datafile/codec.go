package datafile

import (
	"fmt"
	"strings"
	"sync"

	"github.com/klauspost/compress/s2"
	kzstd "github.com/klauspost/compress/zstd"
	"github.com/parquet-go/parquet-go/compress"
	"github.com/parquet-go/parquet-go/compress/gzip"
	"github.com/parquet-go/parquet-go/compress/snappy"
	"github.com/parquet-go/parquet-go/compress/uncompressed"
	"github.com/parquet-go/parquet-go/compress/zstd"
	"github.com/parquet-go/parquet-go/format"
)

// propCodec is the table property naming the Parquet codec of new data files.
const propCodec = "delta.parquet.compression.codec"

// DefaultCodec is used when the table does not set delta.parquet.compression.codec;
// docs/adr/0012-parquet-data-files.md records why.
const DefaultCodec = "zstd"

// codec is a Parquet codec plus the file-name tag Spark uses for it.
type codec struct {
	compress.Codec
	tag string
	// concurrent says Encode may run on several pages at once (CopyLive
	// encodes columns in parallel).
	concurrent bool
}

// codecFor resolves a codec name as Spark spells them ("snappy", "zstd", "gzip",
// "uncompressed"/"none").
func codecFor(name string) (codec, error) {
	switch strings.ToLower(strings.TrimSpace(name)) {
	case "":
		return codecFor(DefaultCodec)
	case "zstd":
		return codec{&pageZstd{}, "zstd", true}, nil
	case "snappy":
		return codec{&fastSnappy{}, "snappy", true}, nil
	case "gzip":
		return codec{&gzip.Codec{Level: gzip.DefaultCompression}, "gz", false}, nil
	case "uncompressed", "none":
		return codec{&uncompressed.Codec{}, "", true}, nil
	}
	return codec{}, fmt.Errorf("%w: unsupported %s %q", ErrSchema, propCodec, name)
}

// fastSnappy writes standard Snappy blocks with s2's snappy-compatible fast encoder;
// parquet-go's own codec uses the "better" encoder, 2-3x slower for ~4% smaller pages.
type fastSnappy struct{ snappy.Codec }

func (*fastSnappy) String() string                            { return "SNAPPY" }
func (*fastSnappy) CompressionCodec() format.CompressionCodec { return format.Snappy }

func (*fastSnappy) Encode(dst, src []byte) ([]byte, error) {
	n := s2.MaxEncodedLen(len(src))
	if n < 0 {
		return nil, fmt.Errorf("datafile: page of %d bytes too large for snappy", len(src))
	}
	if cap(dst) < n {
		dst = make([]byte, n)
	}
	return s2.EncodeSnappy(dst[:n], src), nil
}

// pageZstd compresses pages at zstd's fastest level (same size as the default
// level on CDC rows at twice the speed) with a window of one page buffer.
// parquet-go's codec keeps klauspost's 8 MiB default window, so every new
// Writer (the sink makes one per batch and partition) allocated an 8 MiB
// history for pages of at most 1 MiB. Decoding is parquet-go's. Encoders come
// from zstdEncoders, one per page encoded at the same time (CopyLive encodes
// columns in parallel).
type pageZstd struct {
	zstd.Codec
}

// zstdEncoders holds idle page encoders for every Writer of the process. Each
// encoder owns a history of about 1.1 MiB; when every Writer made its own, a
// trickled table's commit (a new Writer rewriting its small tail) allocated
// and zeroed one per column encoded at once, the largest allocation of the
// 200-table trickle. It is a cache, not state: what it holds changes no
// output, and the GC may empty it.
var zstdEncoders sync.Pool

func (c *pageZstd) Encode(dst, src []byte) ([]byte, error) {
	enc, _ := zstdEncoders.Get().(*kzstd.Encoder)
	if enc == nil {
		var err error
		enc, err = kzstd.NewWriter(nil,
			kzstd.WithEncoderLevel(kzstd.SpeedFastest),
			kzstd.WithEncoderConcurrency(1),
			kzstd.WithWindowSize(pageBufferSize),
			kzstd.WithLowerEncoderMem(true),
			kzstd.WithZeroFrames(true),
			kzstd.WithEncoderCRC(false),
		)
		if err != nil {
			return nil, fmt.Errorf("datafile: zstd encoder: %w", err)
		}
	}
	out := enc.EncodeAll(src, dst[:0])
	zstdEncoders.Put(enc)
	return out, nil
}
