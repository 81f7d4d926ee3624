package dbzgen

import (
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"strings"
)

// LSN is a SQL Server log sequence number: a 4-byte virtual log file
// sequence, a 4-byte block offset and a 2-byte slot. The zero LSN stands for
// "not set" (Debezium then writes null).
type LSN [10]byte

// MakeLSN builds an LSN from its three parts.
func MakeLSN(vlf, block uint32, slot uint16) LSN {
	var l LSN
	binary.BigEndian.PutUint32(l[0:4], vlf)
	binary.BigEndian.PutUint32(l[4:8], block)
	binary.BigEndian.PutUint16(l[8:10], slot)
	return l
}

// ParseLSN parses Debezium's text form, e.g. "0000002b:00000d98:0002".
func ParseLSN(s string) (LSN, error) {
	var l LSN
	parts := strings.Split(s, ":")
	if len(parts) != 3 || len(parts[0]) != 8 || len(parts[1]) != 8 || len(parts[2]) != 4 {
		return l, fmt.Errorf("dbzgen: LSN %q is not xxxxxxxx:xxxxxxxx:xxxx", s)
	}
	if _, err := hex.Decode(l[:], []byte(parts[0]+parts[1]+parts[2])); err != nil {
		return l, fmt.Errorf("dbzgen: LSN %q: %w", s, err)
	}
	return l, nil
}

// String renders the LSN as Debezium does: lower-case hex, 8:8:4 digits.
func (l LSN) String() string {
	h := hex.EncodeToString(l[:])
	return h[0:8] + ":" + h[8:16] + ":" + h[16:20]
}

// IsZero reports whether the LSN is unset.
func (l LSN) IsZero() bool { return l == LSN{} }

// Parts returns the virtual log file sequence, block offset and slot.
func (l LSN) Parts() (vlf, block uint32, slot uint16) {
	return binary.BigEndian.Uint32(l[0:4]), binary.BigEndian.Uint32(l[4:8]), binary.BigEndian.Uint16(l[8:10])
}
