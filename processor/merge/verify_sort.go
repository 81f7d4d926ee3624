package merge

import (
	"bufio"
	"cmp"
	"container/heap"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
)

// sortedKey is one live row's key, as VerifyTable sorts them.
type sortedKey struct {
	key  string // cdctable.AppendKey encoding
	show string // the key's values, for messages
	file uint32 // index in the snapshot's files
	row  int64
}

func compareSortedKeys(a, b sortedKey) int {
	return cmp.Or(cmp.Compare(a.key, b.key), cmp.Compare(a.file, b.file), cmp.Compare(a.row, b.row))
}

// keySorter sorts keys in bounded memory: past budget bytes, the keys
// held are sorted into a spill file, and each merges the files.
type keySorter struct {
	dir    string
	budget int64
	held   []sortedKey
	bytes  int64
	spills []*os.File
}

func newKeySorter(tempDir string, budget int64) (*keySorter, error) {
	dir, err := os.MkdirTemp(tempDir, "cdc2delta-verify-")
	if err != nil {
		return nil, fmt.Errorf("key spill directory: %w", err)
	}
	return &keySorter{dir: dir, budget: budget}, nil
}

// sortedKeyOverhead is a held key's memory besides its strings.
const sortedKeyOverhead = 64

func (s *keySorter) add(ctx context.Context, k sortedKey) error {
	s.held = append(s.held, k)
	s.bytes += int64(len(k.key)+len(k.show)) + sortedKeyOverhead
	if s.bytes < s.budget {
		return nil
	}
	return s.spill(ctx)
}

// spill writes the held keys, sorted, to a new file.
func (s *keySorter) spill(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	slices.SortFunc(s.held, compareSortedKeys)
	f, err := os.CreateTemp(s.dir, "keys-")
	if err != nil {
		return fmt.Errorf("spilling keys: %w", err)
	}
	s.spills = append(s.spills, f)
	w := bufio.NewWriter(f)
	var buf []byte
	for _, k := range s.held {
		buf = binary.AppendUvarint(buf[:0], uint64(len(k.key)))
		buf = append(buf, k.key...)
		buf = binary.AppendUvarint(buf, uint64(len(k.show)))
		buf = append(buf, k.show...)
		buf = binary.AppendUvarint(buf, uint64(k.file))
		buf = binary.AppendUvarint(buf, uint64(k.row))
		if _, err := w.Write(buf); err != nil {
			return fmt.Errorf("spilling keys: %w", err)
		}
	}
	if err := w.Flush(); err != nil {
		return fmt.Errorf("spilling keys: %w", err)
	}
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return fmt.Errorf("spilling keys: %w", err)
	}
	s.held, s.bytes = s.held[:0], 0
	return nil
}

// each calls fn with every key added, in key order.
func (s *keySorter) each(ctx context.Context, fn func(sortedKey) error) error {
	slices.SortFunc(s.held, compareSortedKeys)
	h := &keyHeap{}
	readers := make([]*bufio.Reader, len(s.spills))
	for i, f := range s.spills {
		readers[i] = bufio.NewReader(f)
	}
	next := 0
	// Source len(readers) is the keys still held.
	src := func(i int) (sortedKey, bool, error) {
		if i == len(readers) {
			if next == len(s.held) {
				return sortedKey{}, false, nil
			}
			next++
			return s.held[next-1], true, nil
		}
		return readSortedKey(readers[i])
	}
	for i := range len(readers) + 1 {
		k, ok, err := src(i)
		if err != nil {
			return err
		}
		if ok {
			heap.Push(h, heapItem{k, i})
		}
	}
	for n := 0; h.Len() > 0; n++ {
		if n%4096 == 0 && ctx.Err() != nil {
			return ctx.Err()
		}
		it := (*h)[0]
		if err := fn(it.k); err != nil {
			return err
		}
		k, ok, err := src(it.src)
		if err != nil {
			return err
		}
		if ok {
			(*h)[0] = heapItem{k, it.src}
			heap.Fix(h, 0)
		} else {
			heap.Pop(h)
		}
	}
	return nil
}

func readSortedKey(r *bufio.Reader) (sortedKey, bool, error) {
	str := func() (string, error) {
		n, err := binary.ReadUvarint(r)
		if err != nil {
			return "", err
		}
		b := make([]byte, n)
		_, err = io.ReadFull(r, b)
		return string(b), err
	}
	key, err := str()
	if errors.Is(err, io.EOF) {
		return sortedKey{}, false, nil
	}
	var k sortedKey
	k.key = key
	var file, row uint64
	if err == nil {
		k.show, err = str()
	}
	if err == nil {
		file, err = binary.ReadUvarint(r)
	}
	if err == nil {
		row, err = binary.ReadUvarint(r)
	}
	if err != nil {
		return sortedKey{}, false, fmt.Errorf("reading spilled keys: %w", err)
	}
	k.file, k.row = uint32(file), int64(row)
	return k, true, nil
}

// close removes the spill files.
func (s *keySorter) close() {
	for _, f := range s.spills {
		f.Close()
	}
	os.RemoveAll(s.dir)
}

type heapItem struct {
	k   sortedKey
	src int
}

type keyHeap []heapItem

func (h keyHeap) Len() int           { return len(h) }
func (h keyHeap) Less(i, j int) bool { return compareSortedKeys(h[i].k, h[j].k) < 0 }
func (h keyHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *keyHeap) Push(x any)        { *h = append(*h, x.(heapItem)) }
func (h *keyHeap) Pop() any {
	old := *h
	it := old[len(old)-1]
	*h = old[:len(old)-1]
	return it
}
