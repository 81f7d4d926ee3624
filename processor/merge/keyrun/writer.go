package keyrun

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"io"
)

// BlockSize is the size a block grows to before the next one starts; a
// single entry larger than it gets a block of its own.
const BlockSize = 4096

const (
	magic      = "C2DKRUN1"
	footerSize = 4 + 4 + 8*6 + 4 + 4 + len(magic)
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// Writer writes one run. Keys must come in strictly increasing byte order
// and every value must be Width bytes.
type Writer struct {
	w     *bufio.Writer
	width int
	bloom bloom

	block      []byte // the current block's entries
	blockFirst []byte // its first key
	prev       []byte // the last key added
	index      []byte
	off        int64 // bytes written so far
	entries    uint64
	blocks     uint64
	err        error
}

// NewWriter returns a writer of a run of values of width bytes onto w. keys
// is how many keys the run will hold, which sizes the bloom filter at
// bitsPerKey bits a key (10 gives about 0.8% false positives); a run that
// ends up larger only has a fuller filter.
func NewWriter(w io.Writer, width, keys, bitsPerKey int) *Writer {
	return &Writer{w: bufio.NewWriterSize(w, 64<<10), width: width, bloom: newBloom(keys, bitsPerKey),
		block: make([]byte, 0, BlockSize)}
}

// Add appends key with its value.
func (w *Writer) Add(key, value []byte) error {
	if w.err != nil {
		return w.err
	}
	if len(value) != w.width {
		return fmt.Errorf("keyrun: value of %d bytes, the run's width is %d", len(value), w.width)
	}
	if w.entries > 0 && bytes.Compare(key, w.prev) <= 0 {
		return fmt.Errorf("%w: %q after %q", ErrOrder, key, w.prev)
	}
	shared := 0
	if len(w.block) > 0 {
		shared = commonPrefix(w.prev, key)
		if len(w.block)+entrySize(shared, len(key), w.width)+4 > BlockSize {
			if err := w.flushBlock(); err != nil {
				return err
			}
			shared = 0
		}
	}
	if len(w.block) == 0 {
		w.blockFirst = append(w.blockFirst[:0], key...)
	}
	w.block = binary.AppendUvarint(w.block, uint64(shared))
	w.block = binary.AppendUvarint(w.block, uint64(len(key)-shared))
	w.block = append(append(w.block, key[shared:]...), value...)
	w.prev = append(w.prev[:0], key...)
	w.bloom.add(hashKey(key))
	w.entries++
	return nil
}

func entrySize(shared, n, width int) int {
	return uvarintLen(uint64(shared)) + uvarintLen(uint64(n-shared)) + n - shared + width
}

func uvarintLen(v uint64) int {
	n := 1
	for ; v >= 0x80; v >>= 7 {
		n++
	}
	return n
}

func commonPrefix(a, b []byte) int {
	n := min(len(a), len(b))
	for i := range n {
		if a[i] != b[i] {
			return i
		}
	}
	return n
}

func (w *Writer) flushBlock() error {
	w.block = binary.LittleEndian.AppendUint32(w.block, crc32.Checksum(w.block, castagnoli))
	w.index = binary.AppendUvarint(w.index, uint64(len(w.blockFirst)))
	w.index = append(w.index, w.blockFirst...)
	w.index = binary.AppendUvarint(w.index, uint64(len(w.block)))
	w.write(w.block)
	w.block = w.block[:0]
	w.blocks++
	return w.err
}

func (w *Writer) write(b []byte) {
	if w.err != nil {
		return
	}
	n, err := w.w.Write(b)
	w.off += int64(n)
	if err != nil {
		w.err = fmt.Errorf("keyrun: writing run: %w", err)
	}
}

// Close writes the last block, the summaries and the footer, and flushes.
// It does not close the io.Writer.
func (w *Writer) Close() error {
	if w.err != nil {
		return w.err
	}
	if len(w.block) > 0 {
		if err := w.flushBlock(); err != nil {
			return err
		}
	}
	bloomOff := w.off
	words := make([]byte, 0, 8*len(w.bloom.words))
	for _, x := range w.bloom.words {
		words = binary.LittleEndian.AppendUint64(words, x)
	}
	w.write(words)
	indexOff := w.off
	w.write(w.index)
	sum := crc32.Update(crc32.Checksum(words, castagnoli), castagnoli, w.index)

	f := make([]byte, 0, footerSize)
	f = binary.LittleEndian.AppendUint32(f, uint32(w.width))
	f = binary.LittleEndian.AppendUint32(f, w.bloom.probes)
	for _, v := range []uint64{w.entries, w.blocks, uint64(bloomOff), uint64(len(words)), uint64(indexOff), uint64(len(w.index))} {
		f = binary.LittleEndian.AppendUint64(f, v)
	}
	f = binary.LittleEndian.AppendUint32(f, sum)
	f = binary.LittleEndian.AppendUint32(f, crc32.Checksum(f, castagnoli))
	w.write(append(f, magic...))
	if w.err != nil {
		return w.err
	}
	if err := w.w.Flush(); err != nil {
		w.err = fmt.Errorf("keyrun: writing run: %w", err)
	}
	return w.err
}
