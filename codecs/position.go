package codecs

import (
	"bytes"
	"cmp"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"strconv"
	"strings"
)

// LSN is a SQL Server log sequence number: 10 bytes, ordered as unsigned
// big-endian bytes. The zero LSN stands for "absent" and sorts first, which
// is exactly the order Debezium's null change_lsn needs.
type LSN [10]byte

// lsnTextLen is len("0000002b:00000d98:0002").
const lsnTextLen = 22

// ParseLSN parses Debezium's rendering of an LSN: 8, 8 and 4 hex digits
// separated by colons, e.g. "0000002b:00000d98:0002". Upper-case digits are
// accepted.
func ParseLSN(s string) (LSN, error) { return parseLSN(s) }

func parseLSN[T string | []byte](s T) (LSN, error) {
	var l LSN
	if len(s) != lsnTextLen || s[8] != ':' || s[17] != ':' {
		return l, fmt.Errorf("%w: malformed LSN %q", ErrBadEnvelope, s)
	}
	var digits [20]byte
	copy(digits[0:8], s[0:8])
	copy(digits[8:16], s[9:17])
	copy(digits[16:20], s[18:22])
	if _, err := hex.Decode(l[:], digits[:]); err != nil {
		return LSN{}, fmt.Errorf("%w: malformed LSN %q", ErrBadEnvelope, s)
	}
	return l, nil
}

// IsZero reports whether l is absent.
func (l LSN) IsZero() bool { return l == LSN{} }

// Compare orders LSNs as SQL Server does (unsigned byte-wise).
func (l LSN) Compare(o LSN) int { return bytes.Compare(l[:], o[:]) }

// String renders l as Debezium does ("0000002b:00000d98:0002"), or "" when
// absent.
func (l LSN) String() string {
	if l.IsZero() {
		return ""
	}
	return string(l.appendText(make([]byte, 0, 22)))
}

// appendText appends [LSN.String]'s rendering of l to dst.
func (l LSN) appendText(dst []byte) []byte {
	if l.IsZero() {
		return dst
	}
	dst = append(hex.AppendEncode(dst, l[0:4]), ':')
	dst = append(hex.AppendEncode(dst, l[4:8]), ':')
	return hex.AppendEncode(dst, l[8:10])
}

// Position orders the change events of one table: the transaction's commit
// LSN, then the change LSN inside it, then Debezium's event serial number.
// Absent parts are zero and sort first, so snapshot events (change LSN and
// serial absent) order before the streaming events of their commit LSN.
// Events with equal positions are duplicates of one change, except when
// direct query mode splits one change (see the Debezium brief §2.4): callers
// break remaining ties by Kafka offset.
type Position struct {
	Commit LSN
	Change LSN
	// Serial is source.event_serial_no; 0 when absent (Debezium counts from 1).
	Serial int64
}

// Compare returns -1, 0 or +1 as p orders before, with or after o.
func (p Position) Compare(o Position) int {
	if c := p.Commit.Compare(o.Commit); c != 0 {
		return c
	}
	if c := p.Change.Compare(o.Change); c != 0 {
		return c
	}
	return cmp.Compare(p.Serial, o.Serial)
}

// PositionLen is the length of [Position.AppendBinary]'s encoding.
const PositionLen = 28

// AppendBinary appends a 28-byte encoding of p whose byte-wise order equals
// [Position.Compare]'s, suitable for a binary column with min/max statistics.
func (p Position) AppendBinary(dst []byte) []byte {
	dst = append(dst, p.Commit[:]...)
	dst = append(dst, p.Change[:]...)
	return binary.BigEndian.AppendUint64(dst, uint64(p.Serial))
}

// PositionFromBinary decodes [Position.AppendBinary]'s encoding.
func PositionFromBinary(b []byte) (Position, error) {
	var p Position
	if len(b) != PositionLen {
		return p, fmt.Errorf("decoding position: %d bytes, want %d", len(b), PositionLen)
	}
	copy(p.Commit[:], b[:10])
	copy(p.Change[:], b[10:20])
	p.Serial = int64(binary.BigEndian.Uint64(b[20:]))
	if p.Serial < 0 {
		return Position{}, fmt.Errorf("decoding position: negative serial %d", p.Serial)
	}
	return p, nil
}

// String renders p in its source's notation: SQL Server's
// "commit/change/serial" with absent parts empty (e.g.
// "0000002b:00000e10:0005/0000002b:00000e10:0003/1"), PostgreSQL's
// "postgres:<last committed LSN>@<LSN>" (e.g. "postgres:0/194E7D8@0/194E878",
// the first part empty for a snapshot) and MySQL's
// "mysql:<binlog file number>:<position>:<serial>".
func (p Position) String() string {
	switch p.Source() {
	case SourcePostgres:
		return "postgres:" + p.CommitText() + "@" + p.ChangeText()
	case SourceMySQL:
		return "mysql:" + p.CommitText() + ":" + p.ChangeText() + ":" + strconv.FormatInt(p.Serial, 10)
	}
	s := ""
	if p.Serial != 0 {
		s = strconv.FormatInt(p.Serial, 10)
	}
	return p.Commit.String() + "/" + p.Change.String() + "/" + s
}

// ParsePosition parses [Position.String]'s rendering.
func ParsePosition(s string) (Position, error) {
	if rest, ok := strings.CutPrefix(s, "postgres:"); ok {
		return parsePostgresText(s, rest)
	}
	if rest, ok := strings.CutPrefix(s, "mysql:"); ok {
		return parseMySQLText(s, rest)
	}
	var p Position
	parts := strings.Split(s, "/")
	if len(parts) != 3 {
		return p, fmt.Errorf("parsing position %q: want commit/change/serial", s)
	}
	var err error
	if parts[0] != "" {
		if p.Commit, err = ParseLSN(parts[0]); err != nil {
			return Position{}, fmt.Errorf("parsing position %q: %w", s, err)
		}
	}
	if parts[1] != "" {
		if p.Change, err = ParseLSN(parts[1]); err != nil {
			return Position{}, fmt.Errorf("parsing position %q: %w", s, err)
		}
	}
	if parts[2] != "" {
		if p.Serial, err = strconv.ParseInt(parts[2], 10, 64); err != nil || p.Serial < 0 {
			return Position{}, fmt.Errorf("parsing position %q: bad serial", s)
		}
	}
	return p, nil
}

func parsePostgresText(s, rest string) (Position, error) {
	commit, change, ok := strings.Cut(rest, "@")
	if !ok {
		return Position{}, fmt.Errorf("parsing position %q: want postgres:<last committed LSN>@<LSN>", s)
	}
	var last uint64
	if commit != "" {
		v, err := parsePgLSN(commit)
		if err != nil {
			return Position{}, fmt.Errorf("parsing position %q: %w", s, err)
		}
		last = v
	}
	lsn, err := parsePgLSN(change)
	if err != nil {
		return Position{}, fmt.Errorf("parsing position %q: %w", s, err)
	}
	return Position{Commit: taggedUint(tagPostgres, last), Change: taggedUint(0, lsn)}, nil
}

func parsePgLSN(s string) (uint64, error) {
	hi, lo, ok := strings.Cut(s, "/")
	h, err1 := strconv.ParseUint(hi, 16, 32)
	l, err2 := strconv.ParseUint(lo, 16, 32)
	if !ok || err1 != nil || err2 != nil {
		return 0, fmt.Errorf("malformed PostgreSQL LSN %q", s)
	}
	return h<<32 | l, nil
}

func parseMySQLText(s, rest string) (Position, error) {
	parts := strings.Split(rest, ":")
	if len(parts) != 3 {
		return Position{}, fmt.Errorf("parsing position %q: want mysql:<file number>:<position>:<serial>", s)
	}
	var n [3]uint64
	for i, part := range parts {
		var err error
		if n[i], err = strconv.ParseUint(part, 10, 63); err != nil {
			return Position{}, fmt.Errorf("parsing position %q: %w", s, err)
		}
	}
	return Position{Commit: taggedUint(tagMySQL, n[0]), Change: taggedUint(0, n[1]), Serial: int64(n[2])}, nil
}

// PositionHexLen is the length of [Position.Hex]'s rendering.
const PositionHexLen = 2 * PositionLen

// Hex renders p as 56 lower-case hex digits whose text order equals
// [Position.Compare]'s, for a string column compared as text.
func (p Position) Hex() string {
	var bin [PositionLen]byte
	var text [PositionHexLen]byte
	hex.Encode(text[:], p.AppendBinary(bin[:0]))
	return string(text[:]) // the one allocation
}

// AppendHex appends [Position.Hex]'s rendering of p to dst.
func (p Position) AppendHex(dst []byte) []byte {
	var bin [PositionLen]byte
	return hex.AppendEncode(dst, p.AppendBinary(bin[:0]))
}

// PositionFromHex decodes [Position.Hex]'s rendering.
func PositionFromHex(s string) (Position, error) { return positionFromHex(s) }

// PositionFromHexBytes is PositionFromHex of the hex form's bytes, for
// callers that hold them (a Parquet column) and need no string of them.
func PositionFromHexBytes(b []byte) (Position, error) { return positionFromHex(b) }

func positionFromHex[T string | []byte](s T) (Position, error) {
	if len(s) != PositionHexLen {
		return Position{}, fmt.Errorf("decoding position %q: %d hex digits, want %d", s, len(s), PositionHexLen)
	}
	var buf [PositionLen]byte
	if _, err := hex.Decode(buf[:], []byte(s)); err != nil {
		return Position{}, fmt.Errorf("decoding position %q: %w", s, err)
	}
	return PositionFromBinary(buf[:])
}
