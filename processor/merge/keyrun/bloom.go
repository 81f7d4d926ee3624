package keyrun

import "github.com/cespare/xxhash/v2"

// bloom is a filter of a run's keys: probes bits per key out of len(words)*64,
// set by double hashing of the key's xxhash (stable across processes, unlike
// maphash, as the filter is stored).
type bloom struct {
	words  []uint64
	probes uint32
}

// bloomProbes is the number of probes for bitsPerKey, ln 2 times the ratio,
// which minimises false positives (about 0.8% at 10 bits a key).
func bloomProbes(bitsPerKey int) uint32 {
	return uint32(min(max(bitsPerKey*69/100, 1), 30))
}

func newBloom(keys, bitsPerKey int) bloom {
	bits := max(keys*bitsPerKey, 64)
	return bloom{words: make([]uint64, (bits+63)/64), probes: bloomProbes(bitsPerKey)}
}

func (b bloom) add(h uint64) {
	n := uint64(len(b.words)) * 64
	h1, h2 := h, h>>33|h<<31
	for range b.probes {
		i := h1 % n
		b.words[i/64] |= 1 << (i % 64)
		h1 += h2
	}
}

func (b bloom) mayContain(h uint64) bool {
	n := uint64(len(b.words)) * 64
	h1, h2 := h, h>>33|h<<31
	for range b.probes {
		i := h1 % n
		if b.words[i/64]&(1<<(i%64)) == 0 {
			return false
		}
		h1 += h2
	}
	return true
}

func hashKey(key []byte) uint64 { return xxhash.Sum64(key) }
