package merge

import (
	"encoding/binary"
	"math"

	"github.com/cdc2delta/cdc2delta/codecs"
	"github.com/cdc2delta/cdc2delta/internal/decimal128"
)

// The history key index keeps each key's newest version encoded in one
// string (about a fifth of the heap of the Go values): a flags byte,
// the file number and row it was read from, its positions, its commit
// times and its values, each with a type tag. A version with a value of
// another type is kept as it is (hIndex.wide), its slice holding only the
// flags, file and row.
const (
	encEnd           = 1 << iota // end position and time follow
	encNoStartAt                 // startAt is nil
	encNoEndAt                   // endAt is nil
	encNoLastAt                  // lastAt is nil
	encLastIsStart               // last == start (no last position)
	encLastAtIsStart             // lastAt == startAt (no lastAt)
	encWide                      // kept in hIndex.wide
)

// Value tags.
const (
	tagNil byte = iota
	tagString
	tagBytes
	tagNilBytes
	tagFalse
	tagTrue
	tagInt8
	tagInt16
	tagInt32
	tagInt64
	tagFloat32
	tagFloat64
	tagDecimal
)

func isWide(b string) bool { return len(b) > 0 && b[0]&encWide != 0 }

// wideVersion is the slice of a version kept in hIndex.wide.
func wideVersion(file uint32, row uint64) string {
	b := []byte{encWide}
	b = binary.AppendUvarint(b, uint64(file))
	return string(binary.AppendUvarint(b, row))
}

// encodeVersion appends v, read from file, to dst; false when a value has
// a type the encoding does not take (or v is dirty).
func encodeVersion(dst []byte, v *hVersion, file uint32) ([]byte, bool) {
	if v.dirty {
		return nil, false
	}
	startAt, okS := encTime(v.startAt)
	endAt, okE := encTime(v.endAt)
	lastAt, okL := encTime(v.lastAt)
	if !okS || !okE || !okL {
		return nil, false
	}
	var flags byte
	if v.end != nil {
		flags |= encEnd
	}
	if v.startAt == nil {
		flags |= encNoStartAt
	}
	if v.endAt == nil {
		flags |= encNoEndAt
	}
	if v.lastAt == nil {
		flags |= encNoLastAt
	}
	if v.last == v.start {
		flags |= encLastIsStart
	}
	if v.lastAt != nil && v.startAt != nil && lastAt == startAt {
		flags |= encLastAtIsStart
	}
	b := append(dst, flags)
	b = binary.AppendUvarint(b, uint64(file))
	b = binary.AppendUvarint(b, v.fromRow)
	b = appendPos(b, v.start)
	if flags&encLastIsStart == 0 {
		b = appendPos(b, v.last)
	}
	if v.end != nil {
		b = appendPos(b, *v.end)
	}
	if v.startAt != nil {
		b = binary.AppendVarint(b, startAt)
	}
	if v.endAt != nil {
		b = binary.AppendVarint(b, endAt)
	}
	if v.lastAt != nil && flags&encLastAtIsStart == 0 {
		b = binary.AppendVarint(b, lastAt)
	}
	b = binary.AppendUvarint(b, uint64(len(v.vals)))
	for _, val := range v.vals {
		var ok bool
		if b, ok = appendValue(b, val); !ok {
			return nil, false
		}
	}
	return b, true
}

// encTime is a version's commit time: nil or µs as int64.
func encTime(t any) (int64, bool) {
	switch x := t.(type) {
	case nil:
		return 0, true
	case int64:
		return x, true
	}
	return 0, false
}

func appendValue(b []byte, v any) ([]byte, bool) {
	switch x := v.(type) {
	case nil:
		return append(b, tagNil), true
	case string:
		b = binary.AppendUvarint(append(b, tagString), uint64(len(x)))
		return append(b, x...), true
	case []byte:
		if x == nil {
			return append(b, tagNilBytes), true
		}
		b = binary.AppendUvarint(append(b, tagBytes), uint64(len(x)))
		return append(b, x...), true
	case bool:
		if x {
			return append(b, tagTrue), true
		}
		return append(b, tagFalse), true
	case int8:
		return binary.AppendVarint(append(b, tagInt8), int64(x)), true
	case int16:
		return binary.AppendVarint(append(b, tagInt16), int64(x)), true
	case int32:
		return binary.AppendVarint(append(b, tagInt32), int64(x)), true
	case int64:
		return binary.AppendVarint(append(b, tagInt64), x), true
	case float32:
		return binary.LittleEndian.AppendUint32(append(b, tagFloat32), math.Float32bits(x)), true
	case float64:
		return binary.LittleEndian.AppendUint64(append(b, tagFloat64), math.Float64bits(x)), true
	case decimal128.Num:
		b = binary.AppendVarint(append(b, tagDecimal), x.Hi)
		return binary.AppendUvarint(b, x.Lo), true
	}
	return nil, false
}

// appendPos appends p: each LSN without its leading zero bytes, after
// their count of bytes, then the serial.
func appendPos(b []byte, p codecs.Position) []byte {
	b = appendLSN(b, p.Commit)
	b = appendLSN(b, p.Change)
	return binary.AppendVarint(b, p.Serial)
}

func appendLSN(b []byte, l codecs.LSN) []byte {
	i := 0
	for i < len(l) && l[i] == 0 {
		i++
	}
	return append(append(b, byte(len(l)-i)), l[i:]...)
}

// versionFrom is the file and row of an encoded version.
func versionFrom(b string) (file uint32, row uint64) {
	d := hDec{b: b[1:]}
	file = uint32(d.uvarint())
	return file, d.uvarint()
}

// versionStart is the start of an encoded version (not a wide one).
func versionStart(b string) codecs.Position {
	d := hDec{b: b[1:]}
	d.uvarint()
	d.uvarint()
	return d.pos()
}

// decodeVersion decodes encodeVersion's encoding (not a wide one); the
// caller sets fromFile from the file number.
func decodeVersion(b string, slab *hSlab) (*hVersion, uint32) {
	flags := b[0]
	d := hDec{b: b[1:]}
	file := uint32(d.uvarint())
	v := slab.version()
	v.fromRow = d.uvarint()
	v.start = d.pos()
	v.last = v.start
	if flags&encLastIsStart == 0 {
		v.last = d.pos()
	}
	if flags&encEnd != 0 {
		v.end = slab.position(d.pos())
	}
	if flags&encNoStartAt == 0 {
		v.startAt = d.varint()
	}
	if flags&encNoEndAt == 0 {
		v.endAt = d.varint()
	}
	switch {
	case flags&encNoLastAt != 0:
	case flags&encLastAtIsStart != 0:
		v.lastAt = v.startAt
	default:
		v.lastAt = d.varint()
	}
	if n := int(d.uvarint()); slab != nil {
		v.vals = slab.values(n)
	} else {
		v.vals = make([]any, n)
	}
	for i := range v.vals {
		v.vals[i] = d.value()
	}
	return v, file
}

// hDec reads an encoded version; the index wrote it, so it is well formed.
type hDec struct{ b string }

func (d *hDec) uvarint() uint64 {
	var x uint64
	for shift := 0; ; shift += 7 {
		c := d.b[0]
		d.b = d.b[1:]
		x |= uint64(c&0x7f) << shift
		if c < 0x80 {
			return x
		}
	}
}

func (d *hDec) varint() int64 {
	u := d.uvarint()
	x := int64(u >> 1)
	if u&1 != 0 {
		x = ^x
	}
	return x
}

func (d *hDec) bytes(n int) string {
	x := d.b[:n]
	d.b = d.b[n:]
	return x
}

func (d *hDec) lsn() codecs.LSN {
	var l codecs.LSN
	n := int(d.b[0])
	d.b = d.b[1:]
	copy(l[len(l)-n:], d.bytes(n))
	return l
}

func (d *hDec) pos() codecs.Position {
	var p codecs.Position
	p.Commit = d.lsn()
	p.Change = d.lsn()
	p.Serial = d.varint()
	return p
}

func (d *hDec) value() any {
	tag := d.b[0]
	d.b = d.b[1:]
	switch tag {
	case tagString:
		return d.bytes(int(d.uvarint()))
	case tagBytes:
		return []byte(d.bytes(int(d.uvarint())))
	case tagNilBytes:
		return []byte(nil)
	case tagFalse:
		return false
	case tagTrue:
		return true
	case tagInt8:
		return int8(d.varint())
	case tagInt16:
		return int16(d.varint())
	case tagInt32:
		return int32(d.varint())
	case tagInt64:
		return d.varint()
	case tagFloat32:
		return math.Float32frombits(binary.LittleEndian.Uint32([]byte(d.bytes(4))))
	case tagFloat64:
		return math.Float64frombits(binary.LittleEndian.Uint64([]byte(d.bytes(8))))
	case tagDecimal:
		hi := d.varint()
		return decimal128.Num{Hi: hi, Lo: d.uvarint()}
	}
	return nil
}
