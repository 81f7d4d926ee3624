package sqlexpr

import (
	"strings"
	"unicode/utf8"
)

type tokKind uint8

const (
	tkEOF    tokKind = iota
	tkIdent          // a bare identifier or keyword; text is as written
	tkQuoted         // a backquoted identifier; text is unquoted
	tkNumber         // text as written, suffix included
	tkString         // text is the unescaped value
	tkBinary         // X'..': text is the hex digits
	tkOp             // an operator or punctuation; text is it
)

type token struct {
	kind tokKind
	text string
	pos  int
}

// is reports whether the token is the keyword kw (case-insensitive bare word).
func (t token) is(kw string) bool { return t.kind == tkIdent && strings.EqualFold(t.text, kw) }

// lex splits src into tokens. Adjacent string literals are one literal, as in Spark
// ('it”s' is "its"; write 'it\'s' for the quote).
func lex(src string) ([]token, error) {
	var out []token
	i := 0
	for i < len(src) {
		c := src[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f':
			i++
		case c == '-' && strings.HasPrefix(src[i:], "--"):
			for i < len(src) && src[i] != '\n' {
				i++
			}
		case c == '/' && strings.HasPrefix(src[i:], "/*"):
			end := strings.Index(src[i+2:], "*/")
			if end < 0 {
				return nil, errAt(ErrSyntax, i, "unterminated comment")
			}
			i += end + 4
		case (c == 'x' || c == 'X') && i+1 < len(src) && src[i+1] == '\'':
			s, n, err := lexString(src, i+1)
			if err != nil {
				return nil, err
			}
			out = append(out, token{tkBinary, s, i})
			i = n
		case isIdentStart(c):
			j := i + 1
			for j < len(src) && isIdentPart(src[j]) {
				j++
			}
			out = append(out, token{tkIdent, src[i:j], i})
			i = j
		case c >= '0' && c <= '9' || c == '.' && i+1 < len(src) && src[i+1] >= '0' && src[i+1] <= '9':
			j := lexNumber(src, i)
			if j < len(src) && isIdentPart(src[j]) {
				return nil, errAt(ErrSyntax, i, "malformed number %q", src[i:j+1])
			}
			out = append(out, token{tkNumber, src[i:j], i})
			i = j
		case c == '`':
			var b strings.Builder
			j := i + 1
			for {
				if j >= len(src) {
					return nil, errAt(ErrSyntax, i, "unterminated `quoted` name")
				}
				if src[j] == '`' {
					if j+1 < len(src) && src[j+1] == '`' {
						b.WriteByte('`')
						j += 2
						continue
					}
					break
				}
				b.WriteByte(src[j])
				j++
			}
			if b.Len() == 0 {
				return nil, errAt(ErrSyntax, i, "empty `quoted` name")
			}
			out = append(out, token{tkQuoted, b.String(), i})
			i = j + 1
		case c == '\'' || c == '"':
			s, n, err := lexString(src, i)
			if err != nil {
				return nil, err
			}
			if len(out) > 0 && out[len(out)-1].kind == tkString && out[len(out)-1].pos >= 0 {
				out[len(out)-1].text += s
			} else {
				out = append(out, token{tkString, s, i})
			}
			i = n
		default:
			op := ""
			for _, o := range []string{"<=>", "<>", "!=", "<=", ">=", "==", "||", "=", "<", ">", "+", "-", "*", "/", "%", "(", ")", ","} {
				if strings.HasPrefix(src[i:], o) {
					op = o
					break
				}
			}
			if op == "" {
				r, _ := utf8.DecodeRuneInString(src[i:])
				if strings.ContainsRune("&|^~!", r) {
					return nil, errAt(ErrUnsupported, i, "operator %q is not supported", string(r))
				}
				return nil, errAt(ErrSyntax, i, "unexpected character %q", r)
			}
			out = append(out, token{tkOp, op, i})
			i += len(op)
		}
	}
	return append(out, token{tkEOF, "", len(src)}), nil
}

func isIdentStart(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '_'
}

func isIdentPart(c byte) bool { return isIdentStart(c) || c >= '0' && c <= '9' }

// lexNumber returns the end of the number starting at i: digits, a fraction, an
// exponent and one of Spark's suffixes (L, S, Y, D, F, BD).
func lexNumber(src string, i int) int {
	digits := func(j int) int {
		for j < len(src) && src[j] >= '0' && src[j] <= '9' {
			j++
		}
		return j
	}
	j := digits(i)
	if j < len(src) && src[j] == '.' {
		j = digits(j + 1)
	}
	if j < len(src) && (src[j] == 'e' || src[j] == 'E') {
		k := j + 1
		if k < len(src) && (src[k] == '+' || src[k] == '-') {
			k++
		}
		if k < len(src) && src[k] >= '0' && src[k] <= '9' {
			j = digits(k)
		}
	}
	switch {
	case j+1 < len(src) && strings.EqualFold(src[j:j+2], "bd") && (j+2 == len(src) || !isIdentPart(src[j+2])):
		j += 2
	case j < len(src) && strings.ContainsRune("lLsSyYdDfF", rune(src[j])) && (j+1 == len(src) || !isIdentPart(src[j+1])):
		j++
	}
	return j
}

// lexString reads the quoted string starting at src[i] (its quote) with Spark's
// backslash escapes and returns its value and the index after the closing quote.
func lexString(src string, i int) (string, int, error) {
	q := src[i]
	var b strings.Builder
	j := i + 1
	for {
		if j >= len(src) {
			return "", 0, errAt(ErrSyntax, i, "unterminated string")
		}
		c := src[j]
		if c == q {
			return b.String(), j + 1, nil
		}
		if c != '\\' {
			b.WriteByte(c)
			j++
			continue
		}
		if j+1 >= len(src) {
			return "", 0, errAt(ErrSyntax, i, "unterminated string")
		}
		e := src[j+1]
		j += 2
		switch e {
		case '0':
			b.WriteByte(0)
		case 'b':
			b.WriteByte('\b')
		case 'n':
			b.WriteByte('\n')
		case 'r':
			b.WriteByte('\r')
		case 't':
			b.WriteByte('\t')
		case 'Z':
			b.WriteByte(0x1a)
		case '%', '_':
			// Spark keeps the backslash of \% and \_, for LIKE patterns.
			b.WriteByte('\\')
			b.WriteByte(e)
		case 'u':
			if j+4 > len(src) {
				return "", 0, errAt(ErrSyntax, j-2, "bad \\u escape")
			}
			var r rune
			for _, h := range src[j : j+4] {
				d := hexVal(byte(h))
				if d < 0 {
					return "", 0, errAt(ErrSyntax, j-2, "bad \\u escape")
				}
				r = r<<4 | rune(d)
			}
			b.WriteRune(r)
			j += 4
		default:
			b.WriteByte(e)
		}
	}
}

func hexVal(c byte) int {
	switch {
	case c >= '0' && c <= '9':
		return int(c - '0')
	case c >= 'a' && c <= 'f':
		return int(c-'a') + 10
	case c >= 'A' && c <= 'F':
		return int(c-'A') + 10
	}
	return -1
}
