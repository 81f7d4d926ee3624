package codecs

import (
	"encoding/base64"
	"math"
	"strconv"
	"strings"

	"github.com/cdc2delta/cdc2delta/internal/decimal128"
)

// value reads one value of schema n as the Go value goavro gives for the
// Avro type AvroConverter writes for n (int8/16/32 as int32, bytes and
// decimals as []byte, structs as maps, ...), the input convertRow and the
// source/transaction readers expect. The JSON forms are JsonConverter's
// (convertToJson): numbers, base64 strings for bytes, "NaN"/"Infinity"
// strings for non-finite floats, objects for structs and string-keyed maps.
func (s *jscan) value(n *jnode, depth int) (any, error) {
	if isNull, err := s.null(); isNull || err != nil {
		if err == nil && !n.optional {
			return nil, s.errAt("null for a required %s", n.typeName())
		}
		return nil, err
	}
	switch n.kind {
	case jBool:
		switch s.peek() {
		case 't':
			return true, s.lit("true")
		case 'f':
			return false, s.lit("false")
		}
		return nil, s.errAt("want a boolean")
	case jInt8, jInt16, jInt32:
		v, err := s.integer(32)
		return int32(v), err
	case jInt64:
		return s.integer(64)
	case jFloat32:
		f, err := s.float(32)
		return float32(f), err
	case jFloat64:
		return s.float(64)
	case jString:
		if s.peek() != '"' {
			return nil, s.errAt("want a string")
		}
		return s.str()
	case jBytes:
		return s.bytes()
	case jDecimal:
		if s.peek() == '"' {
			return s.bytes()
		}
		return s.decimal(n.scale)
	case jStruct:
		m := make(map[string]any, len(n.fields))
		err := s.object(func(k []byte) error {
			i, ok := n.byName[string(k)]
			if !ok {
				return inKey(s.skip(depth+1), k)
			}
			v, err := s.value(n.fields[i].node, depth+1)
			m[n.fields[i].name] = v
			return inKey(err, k)
		})
		if err == nil {
			err = s.required(n, func(i int) bool { return m[n.fields[i].name] == nil })
		}
		return m, err
	case jArray:
		var out []any
		err := s.array(func(i int) error {
			v, err := s.value(n.elem, depth+1)
			out = append(out, v)
			return inIndex(err, i)
		})
		return out, err
	case jAny:
		return s.untyped(depth)
	case jMap:
		if n.key.kind != jString {
			return nil, s.errAt("map with %s keys", n.key.typeName())
		}
		m := map[string]any{}
		err := s.object(func(k []byte) error {
			v, err := s.value(n.elem, depth+1)
			m[string(k)] = v
			return inKey(err, k)
		})
		return m, err
	}
	return nil, s.errAt("unknown connect type")
}

// untyped reads any value as encoding/json would into an interface, but
// with integers as int64 (the Go type goavro gives a long).
func (s *jscan) untyped(depth int) (any, error) {
	if depth > maxJSONDepth {
		return nil, s.errAt("nesting deeper than %d", maxJSONDepth)
	}
	switch s.peek() {
	case '{':
		m := map[string]any{}
		err := s.object(func(k []byte) error {
			v, err := s.untyped(depth + 1)
			m[string(k)] = v
			return inKey(err, k)
		})
		return m, err
	case '[':
		var a []any
		err := s.array(func(i int) error {
			v, err := s.untyped(depth + 1)
			a = append(a, v)
			return inIndex(err, i)
		})
		return a, err
	case '"':
		return s.str()
	case 't':
		return true, s.lit("true")
	case 'f':
		return false, s.lit("false")
	case 'n':
		return nil, s.lit("null")
	}
	tok, integer, err := s.number()
	if err != nil {
		return nil, err
	}
	if integer {
		if v, ok := parseInt(tok, 64); ok {
			return v, nil
		}
	}
	f, err := strconv.ParseFloat(string(tok), 64)
	if err != nil {
		return nil, s.errAt("%s does not fit float64", tok)
	}
	return f, nil
}

func (n *jnode) typeName() string {
	for name, k := range jkinds {
		if k == n.kind {
			return name
		}
	}
	return n.name
}

// row reads a struct of schema n into vals, one slot per field in schema
// order; absent optional fields stay nil.
func (s *jscan) row(n *jnode, vals []any) error {
	if s.peek() != '{' {
		return s.errAt("want an object for struct %s", n.name)
	}
	next := 0
	err := s.object(func(k []byte) error {
		i := next // JsonConverter writes fields in schema order
		if i >= len(n.fields) || n.fields[i].name != string(k) {
			var ok bool
			if i, ok = n.byName[string(k)]; !ok {
				if n.strict {
					return inKey(s.errAt("field is not declared"), k)
				}
				return inKey(s.skip(1), k)
			}
		}
		next = i + 1
		v, err := s.value(n.fields[i].node, 1)
		vals[i] = v
		return inKey(err, k)
	})
	if err != nil {
		return err
	}
	return s.required(n, func(i int) bool { return vals[i] == nil })
}

// required fails for a required field of struct n the object left out
// (JsonConverter reads an absent field as null, which it refuses).
func (s *jscan) required(n *jnode, absent func(i int) bool) error {
	for i, f := range n.fields {
		if !f.node.optional && absent(i) {
			return in(s.errAt("required field missing"), f.name)
		}
	}
	return nil
}

// integer reads an integer that fits in bits.
func (s *jscan) integer(bits int) (int64, error) {
	if c := s.peek(); c != '-' && (c < '0' || c > '9') {
		return 0, s.errAt("want an integer")
	}
	tok, integer, err := s.number()
	if err != nil {
		return 0, err
	}
	if !integer {
		return 0, s.errAt("%s is not an integer", tok)
	}
	v, ok := parseInt(tok, bits)
	if !ok {
		return 0, s.errAt("%s overflows int%d", tok, bits)
	}
	return v, nil
}

// parseInt parses a grammar-checked integer token without allocating.
func parseInt(tok []byte, bits int) (int64, bool) {
	neg := tok[0] == '-'
	if neg {
		tok = tok[1:]
	}
	limit := uint64(1) << (bits - 1) // magnitude of the minimum
	var u uint64
	for _, c := range tok {
		if u > limit/10+1 { // u*10+9 then cannot wrap
			return 0, false
		}
		u = u*10 + uint64(c-'0')
	}
	if neg && u > limit || !neg && u >= limit {
		return 0, false
	}
	if neg {
		return -int64(u), true // -limit wraps to itself: the minimum
	}
	return int64(u), true
}

func (s *jscan) float(bits int) (float64, error) {
	if s.peek() == '"' {
		// Jackson writes non-finite floats as strings.
		v, err := s.str()
		if err != nil {
			return 0, err
		}
		switch v {
		case "NaN":
			return math.NaN(), nil
		case "Infinity":
			return math.Inf(1), nil
		case "-Infinity":
			return math.Inf(-1), nil
		}
		return 0, s.errAt("string %q for a float", v)
	}
	tok, _, err := s.number()
	if err != nil {
		return 0, err
	}
	f, err := strconv.ParseFloat(string(tok), bits)
	if err != nil {
		return 0, s.errAt("%s does not fit float%d", tok, bits)
	}
	return f, nil
}

func (s *jscan) bytes() ([]byte, error) {
	if s.peek() != '"' {
		return nil, s.errAt("want a base64 string")
	}
	raw, tok, plain, err := s.rawString()
	if err != nil {
		return nil, err
	}
	if !plain {
		str, err := unquote(tok)
		if err != nil {
			return nil, err
		}
		raw = []byte(str)
	}
	out := make([]byte, base64.StdEncoding.DecodedLen(len(raw)))
	n, err := base64.StdEncoding.Decode(out, raw)
	if err != nil {
		return nil, s.errAt("bad base64: %v", err)
	}
	return out[:n], nil
}

// decimal reads a decimal.format=NUMERIC number as the two's-complement
// unscaled bytes the BASE64 format (and Avro) carry.
func (s *jscan) decimal(scale int) ([]byte, error) {
	tok, _, err := s.number()
	if err != nil {
		return nil, err
	}
	plain, ok := plainDecimal(string(tok))
	if !ok {
		return nil, s.errAt("decimal %s out of range", tok)
	}
	d, err := decimal128.Parse(plain, decimal128.MaxPrecision, scale)
	if err != nil {
		return nil, s.errAt("decimal %s does not fit scale %d and 38 digits", tok, scale)
	}
	return d.AppendBytes(nil, 16), nil
}

// plainDecimal rewrites a JSON number with an exponent ("1.5E+3") as plain
// decimal text ("1500"); false when the exponent is absurd for a decimal.
func plainDecimal(tok string) (string, bool) {
	i := strings.IndexAny(tok, "eE")
	if i < 0 {
		return tok, true
	}
	mant, neg := strings.CutPrefix(tok[:i], "-")
	if strings.Trim(mant, "0.") == "" {
		return "0", true // zero, whatever the exponent
	}
	exp, err := strconv.Atoi(tok[i+1:])
	if err != nil || exp > 80 || exp < -80 {
		return "", false
	}
	intPart, frac, _ := strings.Cut(mant, ".")
	digits := intPart + frac
	point := len(intPart) + exp // position of the point in digits
	switch {
	case point <= 0:
		digits = "0." + strings.Repeat("0", -point) + digits
	case point >= len(digits):
		digits += strings.Repeat("0", point-len(digits))
	default:
		digits = digits[:point] + "." + digits[point:]
	}
	if neg {
		digits = "-" + digits
	}
	return digits, true
}
