package codecs

import (
	"encoding/json"
	"fmt"
	"unicode/utf8"
)

// jscan is a hand-written JSON scanner over one message: it validates as it
// goes (the grammar encoding/json accepts) and hands out tokens without
// building a tree, so a row image is read straight into its column slots.
type jscan struct {
	b []byte
	i int
}

// maxJSONDepth matches encoding/json's nesting limit.
const maxJSONDepth = 10000

// errAt is a syntax or type error at a byte offset; the callers add the
// JSON path on the way out (see jsonPathErr).
func (s *jscan) errAt(format string, args ...any) *JSONError {
	return &JSONError{Offset: s.i, Reason: fmt.Sprintf(format, args...)}
}

func (s *jscan) ws() {
	for s.i < len(s.b) {
		switch s.b[s.i] {
		case ' ', '\t', '\n', '\r':
			s.i++
		default:
			return
		}
	}
}

// peek returns the next non-space byte (0 at the end).
func (s *jscan) peek() byte {
	s.ws()
	if s.i < len(s.b) {
		return s.b[s.i]
	}
	return 0
}

func (s *jscan) expect(c byte) error {
	if s.peek() != c {
		if s.i >= len(s.b) {
			return s.errAt("unexpected end of input, want %q", c)
		}
		return s.errAt("unexpected %q, want %q", s.b[s.i], c)
	}
	s.i++
	return nil
}

// end checks that nothing but space follows the top-level value.
func (s *jscan) end() error {
	if s.peek() != 0 || s.i < len(s.b) {
		return s.errAt("unexpected %q after the top-level value", s.b[s.i])
	}
	return nil
}

// lit reads one of true, false, null.
func (s *jscan) lit(word string) error {
	if len(s.b)-s.i < len(word) || string(s.b[s.i:s.i+len(word)]) != word {
		return s.errAt("invalid literal, want %s", word)
	}
	s.i += len(word)
	return nil
}

// null consumes a null literal if one is next.
func (s *jscan) null() (bool, error) {
	if s.peek() != 'n' {
		return false, nil
	}
	return true, s.lit("null")
}

// rawString reads a string token and returns its bytes between the quotes,
// the token with its quotes, and whether the bytes need decoding (escapes
// or non-ASCII bytes).
func (s *jscan) rawString() (raw, tok []byte, plain bool, err error) {
	if err := s.expect('"'); err != nil {
		return nil, nil, false, err
	}
	start := s.i
	plain = true
	for s.i < len(s.b) {
		c := s.b[s.i]
		switch {
		case c == '"':
			raw = s.b[start:s.i]
			s.i++
			return raw, s.b[start-1 : s.i], plain, nil
		case c == '\\':
			plain = false
			s.i++
			if s.i >= len(s.b) {
				return nil, nil, false, s.errAt("unterminated string")
			}
			switch s.b[s.i] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				s.i++
			case 'u':
				if len(s.b)-s.i < 5 || !isHex4(s.b[s.i+1:s.i+5]) {
					return nil, nil, false, s.errAt("invalid \\u escape")
				}
				s.i += 5
			default:
				return nil, nil, false, s.errAt("invalid escape \\%c", s.b[s.i])
			}
		case c < 0x20:
			return nil, nil, false, s.errAt("control character %#x in string", c)
		default:
			if c >= utf8.RuneSelf {
				plain = false
			}
			s.i++
		}
	}
	return nil, nil, false, s.errAt("unterminated string")
}

func isHex4(b []byte) bool {
	for _, c := range b {
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F') {
			return false
		}
	}
	return true
}

// str reads a string value. Strings with escapes or non-ASCII bytes go
// through encoding/json, which also sets the rules for invalid UTF-8 and
// lone surrogates (replaced by U+FFFD).
func (s *jscan) str() (string, error) {
	raw, tok, plain, err := s.rawString()
	if err != nil {
		return "", err
	}
	if plain {
		return string(raw), nil
	}
	return unquote(tok)
}

func unquote(tok []byte) (string, error) {
	if utf8.Valid(tok) && !hasByte(tok, '\\') {
		return string(tok[1 : len(tok)-1]), nil
	}
	var out string
	if err := json.Unmarshal(tok, &out); err != nil {
		return "", &JSONError{Reason: err.Error()}
	}
	return out, nil
}

func hasByte(b []byte, c byte) bool {
	for _, x := range b {
		if x == c {
			return true
		}
	}
	return false
}

// number reads a number token, checked against JSON's grammar, and reports
// whether it is an integer (no fraction, no exponent).
func (s *jscan) number() (tok []byte, integer bool, err error) {
	s.ws()
	start := s.i
	if s.i < len(s.b) && s.b[s.i] == '-' {
		s.i++
	}
	switch {
	case s.i < len(s.b) && s.b[s.i] == '0':
		s.i++
	case s.i < len(s.b) && s.b[s.i] >= '1' && s.b[s.i] <= '9':
		s.digits()
	default:
		return nil, false, s.errAt("invalid number")
	}
	integer = true
	if s.i < len(s.b) && s.b[s.i] == '.' {
		s.i++
		if s.digits() == 0 {
			return nil, false, s.errAt("invalid number: no digit after the point")
		}
		integer = false
	}
	if s.i < len(s.b) && (s.b[s.i] == 'e' || s.b[s.i] == 'E') {
		s.i++
		if s.i < len(s.b) && (s.b[s.i] == '+' || s.b[s.i] == '-') {
			s.i++
		}
		if s.digits() == 0 {
			return nil, false, s.errAt("invalid number: no exponent digits")
		}
		integer = false
	}
	return s.b[start:s.i], integer, nil
}

func (s *jscan) digits() int {
	n := 0
	for s.i < len(s.b) && s.b[s.i] >= '0' && s.b[s.i] <= '9' {
		s.i++
		n++
	}
	return n
}

// skip reads over one value of any kind, validating it.
func (s *jscan) skip(depth int) error {
	if depth > maxJSONDepth {
		return s.errAt("nesting deeper than %d", maxJSONDepth)
	}
	switch s.peek() {
	case '{':
		return s.object(func(k []byte) error { return inKey(s.skip(depth+1), k) })
	case '[':
		return s.array(func(i int) error { return inIndex(s.skip(depth+1), i) })
	case '"':
		_, _, _, err := s.rawString()
		return err
	case 't':
		return s.lit("true")
	case 'f':
		return s.lit("false")
	case 'n':
		return s.lit("null")
	}
	_, _, err := s.number()
	return err
}

// object calls member for each member with its (decoded) key, positioned
// at the value, which member must consume.
func (s *jscan) object(member func(key []byte) error) error {
	if err := s.expect('{'); err != nil {
		return err
	}
	if s.peek() == '}' {
		s.i++
		return nil
	}
	for {
		raw, tok, plain, err := s.rawString()
		if err != nil {
			return err
		}
		key := raw
		if !plain {
			k, err := unquote(tok)
			if err != nil {
				return err
			}
			key = []byte(k)
		}
		if err := s.expect(':'); err != nil {
			return err
		}
		if err := member(key); err != nil {
			return err
		}
		switch s.peek() {
		case ',':
			s.i++
		case '}':
			s.i++
			return nil
		default:
			return s.errAt("want ',' or '}' in object")
		}
	}
}

// array calls elem for each element with its index.
func (s *jscan) array(elem func(i int) error) error {
	if err := s.expect('['); err != nil {
		return err
	}
	if s.peek() == ']' {
		s.i++
		return nil
	}
	for n := 0; ; n++ {
		if err := elem(n); err != nil {
			return err
		}
		switch s.peek() {
		case ',':
			s.i++
		case ']':
			s.i++
			return nil
		default:
			return s.errAt("want ',' or ']' in array")
		}
	}
}

// window skips one value and returns a scanner over just that value, with
// offsets still counted from the start of the message.
func (s *jscan) window() (jscan, error) {
	s.ws()
	start := s.i
	if err := s.skip(0); err != nil {
		return jscan{}, err
	}
	return jscan{b: s.b[:s.i], i: start}, nil
}
