// Package keyrun writes and reads sorted runs: immutable files of keys in
// byte order, each with a fixed-width value, the building block of a key
// index kept on storage instead of in the heap (ADR 0034).
//
// A run is read through an io.ReaderAt. Opening one reads only its
// summaries: a bloom filter of its keys and a sparse index of the first key
// of each block, about 1.5 bytes a key. A lookup of a key the run holds then
// reads one block; one it does not hold usually reads none.
//
// Layout (integers little-endian unless varint):
//
//	run     = block* bloom index footer
//	block   = entry* crc32c(entries)[4]
//	entry   = uvarint(shared) uvarint(rest) key[shared:][rest] value[width]
//	bloom   = uint64 words of the filter's bits
//	index   = per block: uvarint(len(first key)) first key uvarint(block length)
//	footer  = width[4] probes[4] entries[8] blocks[8] bloomOff[8] bloomLen[8]
//	          indexOff[8] indexLen[8] crc32c(bloom, index)[4] crc32c(footer)[4] magic[8]
//
// shared counts the bytes a key has in common with the one before it in the
// block; a block's first key shares none, so a block decodes alone. Blocks
// follow each other from offset 0, so the index holds lengths only.
package keyrun
