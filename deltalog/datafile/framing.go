package datafile

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/encoding/thrift"
	"github.com/parquet-go/parquet-go/format"
)

// pageLimits bound what a page header may claim before parquet-go allocates for it.
type pageLimits struct {
	uncompressed int64 // bytes of one decompressed page
	values       int64 // values of one page
}

// Default page limits, far above what Spark (1 MiB pages) or delta-rs write.
const (
	maxPageBytes  = 256 << 20
	maxPageValues = 1 << 28
)

// checkFraming validates the magic bytes and the footer length before parquet-go sees
// the file: parquet-go allocates whatever footer length the file claims (up to 4 GiB).
func checkFraming(data []byte) error {
	const magic = "PAR1"
	if len(data) < 12 {
		return fmt.Errorf("%d bytes is too short for parquet", len(data))
	}
	if string(data[:4]) != magic || string(data[len(data)-4:]) != magic {
		return errors.New("missing PAR1 magic (truncated, encrypted or not parquet)")
	}
	footer := int64(binary.LittleEndian.Uint32(data[len(data)-8:]))
	if footer > int64(len(data)-12) {
		return fmt.Errorf("footer length %d exceeds file size %d", footer, len(data))
	}
	return nil
}

// checkPages walks the page headers of every column chunk and rejects sizes the file
// cannot hold, because parquet-go allocates a page's claimed size before reading it.
// It is lenient: a header it cannot decode ends the walk and parquet-go reports it.
func checkPages(data []byte, f *parquet.File, lim pageLimits) error {
	end := int64(len(data))
	for _, rg := range f.Metadata().RowGroups {
		for _, c := range rg.Columns {
			m := &c.MetaData
			start := m.DataPageOffset
			if d := m.DictionaryPageOffset; d > 0 && d < start {
				start = d
			}
			if start < 4 || start >= end {
				return fmt.Errorf("column chunk at offset %d outside the file", start)
			}
			if err := walkPages(data[start:], m.NumValues, lim); err != nil {
				return fmt.Errorf("column %v: %w", m.PathInSchema, err)
			}
		}
	}
	return nil
}

func walkPages(data []byte, numValues int64, lim pageLimits) error {
	var proto thrift.CompactProtocol
	r := bytes.NewReader(data)
	dec := thrift.NewDecoder(proto.NewReader(r))
	for seen := int64(0); seen < numValues; {
		var h format.PageHeader
		if err := dec.Decode(&h); err != nil {
			return nil
		}
		if h.CompressedPageSize < 0 || int64(h.CompressedPageSize) > int64(r.Len()) {
			return fmt.Errorf("page claims %d bytes, %d remain", h.CompressedPageSize, r.Len())
		}
		if int64(h.UncompressedPageSize) > lim.uncompressed {
			return fmt.Errorf("page claims %d uncompressed bytes", h.UncompressedPageSize)
		}
		n := int64(0)
		switch {
		case h.DataPageHeader.Valid:
			n = int64(h.DataPageHeader.V.NumValues)
		case h.DataPageHeaderV2.Valid:
			n = int64(h.DataPageHeaderV2.V.NumValues)
		case h.DictionaryPageHeader.Valid:
			if int64(h.DictionaryPageHeader.V.NumValues) > lim.values {
				return fmt.Errorf("dictionary page claims %d values", h.DictionaryPageHeader.V.NumValues)
			}
		}
		if n < 0 || n > lim.values {
			return fmt.Errorf("page claims %d values", n)
		}
		seen += n
		if _, err := r.Seek(int64(h.CompressedPageSize), 1); err != nil {
			return nil
		}
		if h.CompressedPageSize == 0 && n == 0 {
			return nil // no progress possible; let parquet-go judge the rest
		}
	}
	return nil
}
