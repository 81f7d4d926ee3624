package keyrun

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"io"
	"slices"
	"sort"
)

// Run is an open run: its summaries in memory, its blocks read on demand.
// It is safe for concurrent use, as long as its io.ReaderAt is.
type Run struct {
	r       io.ReaderAt
	width   int
	entries int
	bloom   bloom
	// firsts holds each block's first key, at firstAt[i]:firstAt[i+1];
	// block i spans blockAt[i]:blockAt[i+1] of the run.
	firsts  []byte
	firstAt []uint32
	blockAt []int64
}

// Open reads a run's footer and summaries and checks their checksums.
func Open(r io.ReaderAt, size int64) (*Run, error) {
	if size < int64(footerSize) {
		return nil, &CorruptError{Part: "footer", Offset: 0, Reason: fmt.Sprintf("run of %d bytes is shorter than a footer", size)}
	}
	foot := make([]byte, footerSize)
	if _, err := r.ReadAt(foot, size-int64(footerSize)); err != nil {
		return nil, fmt.Errorf("keyrun: reading footer: %w", err)
	}
	footAt := size - int64(footerSize)
	bad := func(part string, at int64, format string, args ...any) error {
		return &CorruptError{Part: part, Offset: at, Reason: fmt.Sprintf(format, args...)}
	}
	if string(foot[footerSize-len(magic):]) != magic {
		return nil, bad("footer", footAt, "no run magic")
	}
	body := foot[:footerSize-len(magic)-4]
	if crc32.Checksum(body, castagnoli) != binary.LittleEndian.Uint32(foot[len(body):]) {
		return nil, bad("footer", footAt, "checksum mismatch")
	}
	width := binary.LittleEndian.Uint32(body)
	probes := binary.LittleEndian.Uint32(body[4:])
	u := func(i int) uint64 { return binary.LittleEndian.Uint64(body[8+8*i:]) }
	entries, blocks, bloomOff, bloomLen, indexOff, indexLen := u(0), u(1), u(2), u(3), u(4), u(5)
	sum := binary.LittleEndian.Uint32(body[8+8*6:])
	switch {
	case width > BlockSize || probes == 0 || probes > 30:
		return nil, bad("footer", footAt, "width %d or probes %d out of range", width, probes)
	case bloomLen%8 != 0 || bloomLen == 0 || bloomOff+bloomLen != indexOff || indexOff+indexLen != uint64(footAt) || bloomOff > uint64(footAt):
		return nil, bad("footer", footAt, "sections do not tile the run")
	case blocks > bloomOff || entries < blocks || entries > bloomOff:
		return nil, bad("footer", footAt, "%d entries in %d blocks do not fit %d bytes", entries, blocks, bloomOff)
	}
	summ := make([]byte, bloomLen+indexLen)
	if _, err := r.ReadAt(summ, int64(bloomOff)); err != nil {
		return nil, fmt.Errorf("keyrun: reading summaries: %w", err)
	}
	if crc32.Checksum(summ, castagnoli) != sum {
		return nil, bad("summaries", int64(bloomOff), "checksum mismatch")
	}
	run := &Run{r: r, width: int(width), entries: int(entries),
		bloom:   bloom{words: make([]uint64, bloomLen/8), probes: probes},
		firstAt: make([]uint32, 1, blocks+1), blockAt: make([]int64, 1, blocks+1)}
	for i := range run.bloom.words {
		run.bloom.words[i] = binary.LittleEndian.Uint64(summ[8*i:])
	}
	index := summ[bloomLen:]
	run.firsts = make([]byte, 0, len(index))
	for i := uint64(0); i < blocks; i++ {
		n, k := binary.Uvarint(index)
		if k <= 0 || n > uint64(len(index)-k) {
			return nil, bad("summaries", int64(indexOff), "index entry %d cut short", i)
		}
		key := index[k : k+int(n)]
		if i > 0 && bytes.Compare(key, run.first(int(i)-1)) <= 0 {
			return nil, bad("summaries", int64(indexOff), "block %d's first key is out of order", i)
		}
		run.firsts = append(run.firsts, key...)
		run.firstAt = append(run.firstAt, uint32(len(run.firsts)))
		index = index[k+int(n):]
		l, k := binary.Uvarint(index)
		if k <= 0 || l < 4 || l > bloomOff {
			return nil, bad("summaries", int64(indexOff), "block %d's length is out of range", i)
		}
		index = index[k:]
		run.blockAt = append(run.blockAt, run.blockAt[i]+int64(l))
	}
	if len(index) != 0 || run.blockAt[blocks] != int64(bloomOff) {
		return nil, bad("summaries", int64(indexOff), "blocks do not end where the bloom filter starts")
	}
	return run, nil
}

// Len is the number of keys in the run.
func (r *Run) Len() int { return r.entries }

// Width is the size of each value.
func (r *Run) Width() int { return r.width }

// Blocks is the number of blocks.
func (r *Run) Blocks() int { return len(r.blockAt) - 1 }

// SummaryBytes is the memory the open run holds: its bloom filter and
// sparse index.
func (r *Run) SummaryBytes() int {
	return 8*len(r.bloom.words) + len(r.firsts) + 4*len(r.firstAt) + 8*len(r.blockAt)
}

func (r *Run) first(i int) []byte { return r.firsts[r.firstAt[i]:r.firstAt[i+1]] }

// blockFor returns the only block that may hold key, or -1.
func (r *Run) blockFor(key []byte) int {
	// The first block whose first key is above key, less one.
	return sort.Search(r.Blocks(), func(i int) bool { return bytes.Compare(r.first(i), key) > 0 }) - 1
}

// readBlock reads block i into buf and checks it; it returns the entries.
func (r *Run) readBlock(i int, buf []byte) ([]byte, error) {
	at, n := r.blockAt[i], int(r.blockAt[i+1]-r.blockAt[i])
	buf = slices.Grow(buf[:0], n)[:n]
	if _, err := r.r.ReadAt(buf, at); err != nil {
		return nil, fmt.Errorf("keyrun: reading block %d: %w", i, err)
	}
	body := buf[:n-4]
	if crc32.Checksum(body, castagnoli) != binary.LittleEndian.Uint32(buf[n-4:]) {
		return nil, &CorruptError{Part: "block", Offset: at, Reason: fmt.Sprintf("block %d: checksum mismatch", i)}
	}
	return body, nil
}

// Get returns key's value, or ok=false when the run does not hold key.
func (r *Run) Get(key []byte) (value []byte, ok bool, err error) {
	err = r.Lookup([][]byte{key}, func(_ int, v []byte) { value, ok = bytes.Clone(v), true })
	return value, ok, err
}

// Lookup calls found(i, value) for each keys[i] the run holds, in order.
// keys must be sorted; each block is read at most once. value is valid only
// during the call.
func (r *Run) Lookup(keys [][]byte, found func(i int, value []byte)) error {
	var (
		buf []byte
		c   cursor
		cur = -1
	)
	for i, key := range keys {
		if !r.bloom.mayContain(hashKey(key)) {
			continue
		}
		b := r.blockFor(key)
		if b < 0 {
			continue
		}
		if b != cur {
			body, err := r.readBlock(b, buf)
			if err != nil {
				return err
			}
			buf, cur = body, b
			if c, err = newCursor(body, r.width, r.blockAt[b]); err != nil {
				return err
			}
		}
		for c.ok && bytes.Compare(c.key, key) < 0 {
			if err := c.next(); err != nil {
				return err
			}
		}
		if c.ok && bytes.Equal(c.key, key) {
			found(i, c.value)
		}
	}
	return nil
}
