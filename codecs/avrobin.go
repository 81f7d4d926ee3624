package codecs

import (
	"errors"
	"fmt"
	"strings"
)

// Minimal Avro binary primitives for the envelope's framework fields
// (op, source block), the row decoders (rowdec.go) and skipping fields
// nobody reads. Readers accept exactly what goavro accepts so both decoding
// paths agree (see TestPlanMatchesGoavro, FuzzDecodeChange).

var errShort = errors.New("short buffer")

// readLong reads a zig-zag varint like goavro's longNativeFromBinary.
func readLong(b []byte) (int64, []byte, error) {
	var v uint64
	var shift uint
	for i := 0; i < len(b); i++ {
		c := b[i]
		v |= uint64(c&0x7f) << shift
		if c&0x80 == 0 {
			return int64(v>>1) ^ -int64(v&1), b[i+1:], nil
		}
		shift += 7
	}
	return 0, nil, errShort
}

// readInt reads a zig-zag varint truncated to 32 bits, as goavro does.
func readInt(b []byte) (int32, []byte, error) {
	var v int
	var shift uint
	for i := 0; i < len(b); i++ {
		c := b[i]
		v |= int(c&0x7f) << shift
		if c&0x80 == 0 {
			return int32(v>>1) ^ -int32(v&1), b[i+1:], nil
		}
		shift += 7
	}
	return 0, nil, errShort
}

// readBytes reads a length-prefixed byte string, aliasing b.
func readBytes(b []byte) ([]byte, []byte, error) {
	n, rest, err := readLong(b)
	if err != nil {
		return nil, nil, err
	}
	if n < 0 || n > int64(len(rest)) {
		return nil, nil, fmt.Errorf("bytes length %d with %d bytes left", n, len(rest))
	}
	return rest[:n], rest[n:], nil
}

// skipFn consumes one value of a type.
type skipFn func(b []byte) ([]byte, error)

// skipBuilder compiles skip functions from a parsed schema, resolving named
// references through names.
type skipBuilder struct {
	names map[string]map[string]any
	// named memoizes named types; the indirection lets recursive types
	// refer to themselves.
	named map[string]*skipFn
}

func (sb *skipBuilder) build(node any, ns string) (skipFn, error) {
	switch n := node.(type) {
	case string:
		if f := primitiveSkip(n); f != nil {
			return f, nil
		}
		full := n
		if !strings.Contains(n, ".") && ns != "" {
			full = ns + "." + n
		}
		def := sb.names[full]
		if def == nil {
			def = sb.names[n]
			full = n
		}
		if def == nil {
			return nil, fmt.Errorf("unknown type %q", n)
		}
		return sb.namedSkip(full, def, ns)
	case []any:
		branches := make([]skipFn, len(n))
		for i, b := range n {
			f, err := sb.build(b, ns)
			if err != nil {
				return nil, err
			}
			branches[i] = f
		}
		return func(b []byte) ([]byte, error) {
			i, rest, err := readLong(b)
			if err != nil {
				return nil, err
			}
			if i < 0 || i >= int64(len(branches)) {
				return nil, fmt.Errorf("union index %d of %d", i, len(branches))
			}
			return branches[i](rest)
		}, nil
	case map[string]any:
		t, _ := n["type"].(string)
		switch t {
		case "record", "enum", "fixed":
			name, _ := n["name"].(string)
			full := name
			if !strings.Contains(name, ".") {
				if s, ok := n["namespace"].(string); ok {
					ns = s
				}
				if ns != "" {
					full = ns + "." + name
				}
			}
			return sb.namedSkip(full, n, ns)
		case "array":
			item, err := sb.build(n["items"], ns)
			if err != nil {
				return nil, err
			}
			return blockSkip(item), nil
		case "map":
			val, err := sb.build(n["values"], ns)
			if err != nil {
				return nil, err
			}
			return blockSkip(func(b []byte) ([]byte, error) {
				_, rest, err := readBytes(b)
				if err != nil {
					return nil, err
				}
				return val(rest)
			}), nil
		}
		if n["type"] != nil {
			return sb.build(n["type"], ns)
		}
	}
	return nil, fmt.Errorf("unsupported schema node %T", node)
}

func (sb *skipBuilder) namedSkip(full string, def map[string]any, ns string) (skipFn, error) {
	if p, ok := sb.named[full]; ok {
		return func(b []byte) ([]byte, error) { return (*p)(b) }, nil
	}
	p := new(skipFn)
	sb.named[full] = p
	if i := strings.LastIndexByte(full, '.'); i >= 0 {
		ns = full[:i]
	}
	switch def["type"] {
	case "enum":
		*p = func(b []byte) ([]byte, error) { _, rest, err := readLong(b); return rest, err }
	case "fixed":
		size, ok := intProp(def["size"])
		if !ok || size < 0 {
			return nil, fmt.Errorf("fixed %s without size", full)
		}
		*p = func(b []byte) ([]byte, error) {
			if len(b) < size {
				return nil, errShort
			}
			return b[size:], nil
		}
	case "record":
		fields, _ := def["fields"].([]any)
		fs := make([]skipFn, len(fields))
		for i, f := range fields {
			fm, _ := f.(map[string]any)
			fn, err := sb.build(fm["type"], ns)
			if err != nil {
				return nil, err
			}
			fs[i] = fn
		}
		*p = func(b []byte) ([]byte, error) {
			var err error
			for _, f := range fs {
				if b, err = f(b); err != nil {
					return nil, err
				}
			}
			return b, nil
		}
	default:
		return nil, fmt.Errorf("named type %s of kind %v", full, def["type"])
	}
	return *p, nil
}

func primitiveSkip(name string) skipFn {
	switch name {
	case "null":
		return func(b []byte) ([]byte, error) { return b, nil }
	case "boolean":
		return func(b []byte) ([]byte, error) {
			if len(b) < 1 {
				return nil, errShort
			}
			if b[0] > 1 {
				return nil, fmt.Errorf("boolean byte %d", b[0])
			}
			return b[1:], nil
		}
	case "int":
		return func(b []byte) ([]byte, error) { _, rest, err := readInt(b); return rest, err }
	case "long":
		return func(b []byte) ([]byte, error) { _, rest, err := readLong(b); return rest, err }
	case "float":
		return fixedSkip(4)
	case "double":
		return fixedSkip(8)
	case "bytes", "string":
		return func(b []byte) ([]byte, error) { _, rest, err := readBytes(b); return rest, err }
	}
	return nil
}

func fixedSkip(n int) skipFn {
	return func(b []byte) ([]byte, error) {
		if len(b) < n {
			return nil, errShort
		}
		return b[n:], nil
	}
}

// blockSkip skips an Avro array or map: blocks of items until a zero count;
// a negative count is followed by the block's byte size.
func blockSkip(item skipFn) skipFn {
	return func(b []byte) ([]byte, error) {
		for {
			n, rest, err := readLong(b)
			if err != nil {
				return nil, err
			}
			b = rest
			if n == 0 {
				return b, nil
			}
			if n < 0 {
				size, rest, err := readLong(b)
				if err != nil {
					return nil, err
				}
				if size < 0 || size > int64(len(rest)) {
					return nil, fmt.Errorf("block size %d", size)
				}
				b = rest[size:]
				continue
			}
			for ; n > 0; n-- {
				if b, err = item(b); err != nil {
					return nil, err
				}
			}
		}
	}
}
