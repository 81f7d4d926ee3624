package codecs

import (
	"encoding/binary"
	"fmt"
)

// headerLen is the Confluent wire header: magic byte plus 4-byte schema id.
const headerLen = 5

// SplitHeader parses the Confluent wire header of a non-empty key or value
// and returns the schema id and the Avro body that follows it. Empty input is
// not a header (callers treat an empty value as a tombstone before calling).
func SplitHeader(b []byte) (id int, body []byte, err error) {
	if len(b) < headerLen {
		return -1, nil, fmt.Errorf("%w: %d bytes, need at least %d", ErrBadHeader, len(b), headerLen)
	}
	if b[0] != 0 {
		return -1, nil, fmt.Errorf("%w: magic byte %#x, want 0", ErrBadHeader, b[0])
	}
	u := binary.BigEndian.Uint32(b[1:headerLen])
	// Registry ids are non-negative Java ints; a set sign bit is corruption.
	if u > 1<<31-1 {
		return -1, nil, fmt.Errorf("%w: schema id %d out of range", ErrBadHeader, u)
	}
	return int(u), b[headerLen:], nil
}

// AppendHeader appends the Confluent wire header for schema id to dst.
func AppendHeader(dst []byte, id int) []byte {
	return binary.BigEndian.AppendUint32(append(dst, 0), uint32(id))
}
