package merge

import (
	"encoding/binary"
	"hash/maphash"
	"iter"

	"github.com/cdc2delta/cdc2delta/codecs"
)

// keyTable maps keys (cdctable.AppendKey encodings) to rowLoc like a
// map[string]rowLoc, in less than half the memory and with no pointers in its
// big arrays, so the garbage collector does not scan them (ADR 0023).
//
// slots is a linear-probing table of uint32: 0 is empty, otherwise the low
// bits hold a record number + 1 and the bits above them (the table is a
// power of two) hold hash bits, a tag that rules out most other keys without
// reading their records. Records are fixed-size and kept in pages, so
// growing never copies them; a key of up to inlineKeyMax bytes is stored in
// its record, a longer one in the arena. Deleting shifts later slots back (no
// tombstones), puts the record on a free list and leaves arena garbage,
// compacted once it outweighs the live keys.
type keyTable struct {
	seed  maphash.Seed
	slots []uint32
	mask  uint32 // len(slots)-1
	pages [][]keyRecord
	nrec  uint32 // records in pages, live or free
	free  uint32 // first free record + 1; 0: none
	live  int
	arena keyArena
	// compactions counts arena compactions (tests check they happen).
	compactions int
}

const (
	// recordPageBits sizes record pages: 1024 records of 48 bytes.
	recordPageBits = 10
	recordPage     = 1 << recordPageBits
	// minSlots is the size of an empty table.
	minSlots = 8
)

// newKeyTable returns an empty table with its own hash seed.
func newKeyTable() *keyTable {
	return &keyTable{seed: maphash.MakeSeed(), slots: make([]uint32, minSlots), mask: minSlots - 1}
}

// len returns the number of keys.
func (t *keyTable) len() int { return t.live }

// rec returns record r.
func (t *keyTable) rec(r uint32) *keyRecord {
	return &t.pages[r>>recordPageBits][r&(recordPage-1)]
}

// keyOf returns the key of a live record, without copying it.
func (t *keyTable) keyOf(rec *keyRecord) []byte {
	if n := rec.key[0]; n <= inlineKeyMax {
		return rec.key[1 : 1+n]
	}
	ref, n := rec.arenaRef()
	return t.arena.get(ref, n)
}

// hashOf returns the hash of record r's key.
func (t *keyTable) hashOf(r uint32) uint64 {
	return maphash.Bytes(t.seed, t.keyOf(t.rec(r)))
}

// tag returns the hash bits a slot keeps above the record number.
func (t *keyTable) tag(h uint64) uint32 { return uint32(h>>32) &^ t.mask }

// find returns the slot and record of key (hash h), or ok=false and the
// empty slot that ended the search.
func (t *keyTable) find(key string, h uint64) (slot, r uint32, ok bool) {
	tag := t.tag(h)
	for i := uint32(h) & t.mask; ; i = (i + 1) & t.mask {
		s := t.slots[i]
		if s == 0 {
			return i, 0, false
		}
		// Comparing string(bytes) with a string does not allocate.
		if s&^t.mask == tag && string(t.keyOf(t.rec(s&t.mask-1))) == key {
			return i, s&t.mask - 1, true
		}
	}
}

// get returns the location of key.
func (t *keyTable) get(key string) (rowLoc, bool) {
	_, r, ok := t.find(key, maphash.String(t.seed, key))
	if !ok {
		return rowLoc{}, false
	}
	return t.rec(r).loc(), true
}

// put sets the location of key.
func (t *keyTable) put(key string, loc rowLoc) {
	rec, _ := t.entry(key)
	rec.setLoc(loc)
}

// entry returns the record of key, adding one when the key is absent (its
// location then unset, for the caller to set before the next call). The
// record stays where it is until the key is deleted: records never move.
func (t *keyTable) entry(key string) (rec *keyRecord, found bool) {
	h := maphash.String(t.seed, key)
	slot, r, ok := t.find(key, h)
	if ok {
		return t.rec(r), true
	}
	if t.free == 0 && uint64(t.nrec)+1 > maxRecords(len(t.slots)) {
		t.resize(len(t.slots) * 2)
		slot, _, _ = t.find(key, h)
	}
	r = t.newRecord(key)
	t.slots[slot] = t.tag(h) | (r + 1)
	t.live++
	return t.rec(r), false
}

// delete removes key if present.
func (t *keyTable) delete(key string) {
	if slot, r, ok := t.find(key, maphash.String(t.seed, key)); ok {
		t.remove(slot, r)
	}
}

// deleteFunc removes the keys whose location del reports true, and returns
// how many it removed.
func (t *keyTable) deleteFunc(del func(rowLoc) bool) int {
	n := 0
	// Records keep their numbers when others are freed, so walking them by
	// number while deleting visits each live one once.
	for r := range t.nrec {
		rec := t.rec(r)
		if rec.isFree() || !del(rec.loc()) {
			continue
		}
		if slot, ok := t.slotOf(r); ok {
			t.remove(slot, r)
			n++
		}
	}
	return n
}

// updateFunc replaces the location of every key by what fn returns for it, or
// removes the key when fn returns false.
func (t *keyTable) updateFunc(fn func(rowLoc) (rowLoc, bool)) {
	for r := range t.nrec {
		rec := t.rec(r)
		if rec.isFree() {
			continue
		}
		loc, keep := fn(rec.loc())
		if keep {
			rec.setLoc(loc)
			continue
		}
		if slot, ok := t.slotOf(r); ok {
			t.remove(slot, r)
		}
	}
}

// slotOf returns the slot of live record r.
func (t *keyTable) slotOf(r uint32) (uint32, bool) {
	for i := uint32(t.hashOf(r)) & t.mask; t.slots[i] != 0; i = (i + 1) & t.mask {
		if t.slots[i]&t.mask == r+1 {
			return i, true
		}
	}
	return 0, false
}

// all yields every key and its location, in no particular order. The key
// strings are copies; all is for tests and diagnostics, not the hot path.
func (t *keyTable) all() iter.Seq2[string, rowLoc] {
	return func(yield func(string, rowLoc) bool) {
		for r := range t.nrec {
			rec := t.rec(r)
			if !rec.isFree() && !yield(string(t.keyOf(rec)), rec.loc()) {
				return
			}
		}
	}
}

// reserve sizes the slots for n keys, so that adding them does not rehash.
func (t *keyTable) reserve(n int) {
	size := len(t.slots)
	for maxRecords(size) < uint64(n) && uint64(size) < 1<<32 {
		size *= 2
	}
	if size > len(t.slots) {
		t.resize(size)
	}
}

// bytes returns the memory the table holds.
func (t *keyTable) bytes() int {
	n := cap(t.slots)*4 + cap(t.pages)*24 + cap(t.arena.pages)*24
	for _, p := range t.pages {
		n += cap(p) * keyRecordSize
	}
	for _, p := range t.arena.pages {
		n += cap(p)
	}
	return n
}

// maxRecords is how many records size slots serve: a load of at most 0.8
// keeps linear probing short, and some slot always empty.
func maxRecords(size int) uint64 { return uint64(size) * 4 / 5 }

// resize rehashes the records into size slots (a power of two).
func (t *keyTable) resize(size int) {
	t.slots = make([]uint32, size)
	t.mask = uint32(size - 1)
	for r := range t.nrec {
		if t.rec(r).isFree() {
			continue
		}
		h := t.hashOf(r)
		i := uint32(h) & t.mask
		for t.slots[i] != 0 {
			i = (i + 1) & t.mask
		}
		t.slots[i] = t.tag(h) | (r + 1)
	}
}

// newRecord takes a free record, or a new one, and stores key in it.
func (t *keyTable) newRecord(key string) uint32 {
	var r uint32
	if t.free != 0 {
		r = t.free - 1
		t.free = t.rec(r).file
	} else {
		r = t.nrec
		last := len(t.pages) - 1
		if last < 0 || len(t.pages[last]) == recordPage {
			// The first page grows as needed, so that small tables stay small.
			c := recordPage
			if last < 0 {
				c = minSlots
			}
			t.pages = append(t.pages, make([]keyRecord, 0, c))
			last++
		}
		t.pages[last] = append(t.pages[last], keyRecord{})
		t.nrec++
	}
	rec := t.rec(r)
	if len(key) <= inlineKeyMax {
		rec.key = [12]byte{byte(len(key))}
		copy(rec.key[1:], key)
	} else {
		rec.setArenaRef(arenaAdd(&t.arena, key), len(key))
	}
	return r
}

// remove empties slot and frees its record r.
func (t *keyTable) remove(slot, r uint32) {
	// Backward shift: move each later slot of the probe run into the hole
	// unless its home lies cyclically in (hole, slot].
	i := slot
	for j := (i + 1) & t.mask; t.slots[j] != 0; j = (j + 1) & t.mask {
		s := t.slots[j]
		home := uint32(t.hashOf(s&t.mask-1)) & t.mask
		if (j-home)&t.mask >= (j-i)&t.mask {
			t.slots[i] = s
			i = j
		}
	}
	t.slots[i] = 0
	rec := t.rec(r)
	if rec.key[0] == arenaKeyMark {
		_, n := rec.arenaRef()
		t.arena.garbage += n
	}
	*rec = keyRecord{key: [12]byte{freeKeyMark}, file: t.free}
	t.free = r + 1
	t.live--
	// Compacting costs a pass over the records: waiting for garbage of at
	// least one byte per live key keeps it amortised O(key length) per delete.
	if g := t.arena.garbage; g >= arenaPage && g >= t.live && 2*g >= t.arena.used {
		t.compactArena()
	}
}

// compactArena copies the live keys to a new arena.
func (t *keyTable) compactArena() {
	var a keyArena
	for r := range t.nrec {
		rec := t.rec(r)
		if rec.key[0] != arenaKeyMark {
			continue
		}
		key := t.keyOf(rec)
		rec.setArenaRef(arenaAdd(&a, key), len(key))
	}
	t.arena = a
	t.compactions++
}

const (
	// inlineKeyMax is the longest key a record holds itself: a single
	// integer key encodes to 9 bytes.
	inlineKeyMax = 11
	// arenaKeyMark and freeKeyMark in key[0] mean a key in the arena and a
	// free record.
	arenaKeyMark = 0xff
	freeKeyMark  = 0xfe
	// keyRecordSize is the size of keyRecord (checked by a test).
	keyRecordSize = 48
)

// keyRecord is one key and its location, with no pointers. key is either
// [length, key bytes...] for an inline key, or [arenaKeyMark, 7-byte arena
// reference, 4-byte length] (little-endian); a free record has freeKeyMark
// and the next free record + 1 in file.
type keyRecord struct {
	key    [12]byte
	file   uint32
	row    uint32
	commit codecs.LSN
	change codecs.LSN
	// serial is Position.Serial in two halves, keeping the record 4-aligned
	// (an int64 after the LSNs would add 4 bytes of padding).
	serial [2]uint32
}

func (rec *keyRecord) isFree() bool { return rec.key[0] == freeKeyMark }

func (rec *keyRecord) arenaRef() (ref uint64, n int) {
	return binary.LittleEndian.Uint64(rec.key[:8]) >> 8, int(binary.LittleEndian.Uint32(rec.key[8:]))
}

// setArenaRef makes rec's key the n bytes at ref. Keys come from Kafka
// records, far below the 4 GiB a length holds.
func (rec *keyRecord) setArenaRef(ref uint64, n int) {
	binary.LittleEndian.PutUint64(rec.key[:8], ref<<8|arenaKeyMark)
	binary.LittleEndian.PutUint32(rec.key[8:], uint32(n))
}

func (rec *keyRecord) loc() rowLoc {
	return rowLoc{file: rec.file, row: rec.row, pos: codecs.Position{
		Commit: rec.commit, Change: rec.change, Serial: int64(uint64(rec.serial[1])<<32 | uint64(rec.serial[0])),
	}}
}

func (rec *keyRecord) setLoc(l rowLoc) {
	rec.file, rec.row, rec.commit, rec.change = l.file, l.row, l.pos.Commit, l.pos.Change
	rec.serial = [2]uint32{uint32(l.pos.Serial), uint32(uint64(l.pos.Serial) >> 32)}
}

// arenaPage is the size of an arena page; offsets in a page fit 16 bits.
const arenaPage = 1 << 16

// keyArena holds long keys in pages, so growing never copies it. A
// reference is page<<16 | offset; a key longer than a page gets a page of
// its own.
type keyArena struct {
	pages   [][]byte
	used    int // bytes stored
	garbage int // bytes of deleted keys
}

// arenaAdd copies key into a and returns its reference.
func arenaAdd[K string | []byte](a *keyArena, key K) uint64 {
	last := len(a.pages) - 1
	if last < 0 || len(a.pages[last])+len(key) > arenaPage {
		// The first page grows as needed, so that small tables stay small.
		c := max(len(key), arenaPage)
		if last < 0 {
			c = len(key)
		}
		a.pages = append(a.pages, make([]byte, 0, c))
		last++
	}
	off := len(a.pages[last])
	a.pages[last] = append(a.pages[last], key...)
	a.used += len(key)
	return uint64(last)<<16 | uint64(off)
}

func (a *keyArena) get(ref uint64, n int) []byte {
	off := int(ref & (arenaPage - 1))
	return a.pages[ref>>16][off : off+n]
}
