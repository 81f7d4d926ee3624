package deltalog

import (
	"bytes"
	"crypto/md5"
	"encoding/hex"
	"encoding/json"
	"errors"
	"slices"
	"strconv"
	"strings"
)

// errLastCheckpointChecksum marks a _last_checkpoint whose checksum does not match it.
var errLastCheckpointChecksum = errors.New("deltalog: _last_checkpoint checksum mismatch")

// lastCheckpointChecksum computes the protocol's _last_checkpoint checksum of a JSON
// object: the MD5 of its canonical form. Every leaf becomes a `path=value` pair, the path
// being the quoted, percent-encoded object keys and bare array indexes joined by '+',
// string values quoted and percent-encoded, other values as their JSON text; empty
// objects and arrays contribute nothing; the top-level "checksum" key is left out; pairs
// are sorted bytewise and joined with ','. Checked against the spec's test vector and
// files Spark wrote.
func lastCheckpointChecksum(data []byte) (string, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var obj map[string]any
	if err := dec.Decode(&obj); err != nil {
		return "", err
	}
	delete(obj, "checksum")
	var pairs []string
	canonicalPairs("", obj, &pairs)
	slices.Sort(pairs)
	sum := md5.Sum([]byte(strings.Join(pairs, ",")))
	return hex.EncodeToString(sum[:]), nil
}

func canonicalPairs(path string, v any, out *[]string) {
	switch v := v.(type) {
	case map[string]any:
		for k, e := range v {
			p := `"` + percentEncodeUnreserved(k) + `"`
			if path != "" {
				p = path + "+" + p
			}
			canonicalPairs(p, e, out)
		}
	case []any:
		for i, e := range v {
			canonicalPairs(path+"+"+strconv.Itoa(i), e, out)
		}
	case string:
		*out = append(*out, path+`="`+percentEncodeUnreserved(v)+`"`)
	case json.Number:
		*out = append(*out, path+"="+v.String())
	case bool:
		*out = append(*out, path+"="+strconv.FormatBool(v))
	case nil:
		*out = append(*out, path+"=null")
	}
}

// percentEncodeUnreserved keeps A-Z a-z 0-9 - . _ ~ and encodes every other byte as %XX.
func percentEncodeUnreserved(s string) string {
	const hexDigits = "0123456789ABCDEF"
	var b strings.Builder
	b.Grow(len(s))
	for i := range len(s) {
		c := s[i]
		switch {
		case 'A' <= c && c <= 'Z', 'a' <= c && c <= 'z', '0' <= c && c <= '9', c == '-', c == '.', c == '_', c == '~':
			b.WriteByte(c)
		default:
			b.WriteByte('%')
			b.WriteByte(hexDigits[c>>4])
			b.WriteByte(hexDigits[c&0xF])
		}
	}
	return b.String()
}
