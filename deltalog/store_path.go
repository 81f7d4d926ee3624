package deltalog

import (
	"errors"
	"fmt"
	"strings"
)

// ErrInvalidPath reports an object path a Store refuses: empty, absolute, or with empty,
// "." or ".." segments. Stores check paths so that a corrupt log entry can never make
// them read or write outside the table root.
var ErrInvalidPath = errors.New("deltalog: invalid object path")

// CheckPath returns an error matching ErrInvalidPath unless p is a clean, relative,
// slash-separated object path. Store implementations call it on every object path.
func CheckPath(p string) error {
	if p == "" {
		return fmt.Errorf("%w: empty", ErrInvalidPath)
	}
	if strings.ContainsRune(p, 0) {
		return fmt.Errorf("%w: %q has a NUL byte", ErrInvalidPath, p)
	}
	for seg := range strings.SplitSeq(p, "/") {
		switch seg {
		case "", ".", "..":
			return fmt.Errorf("%w: %q", ErrInvalidPath, p)
		}
	}
	return nil
}

// IsAbsolutePath reports whether an add, remove or cdc path is an absolute URI
// ("s3://bucket/t/part-0.parquet", "file:///t/part-0.parquet") or an absolute path
// ("/t/part-0.parquet") rather than a path relative to the table root. A relative URI
// reference cannot have a colon in its first segment (RFC 3986 §4.2), so a scheme-like
// prefix ending in ":" before any "/" means absolute.
func IsAbsolutePath(p string) bool {
	if strings.HasPrefix(p, "/") {
		return true
	}
	for i := 0; i < len(p); i++ {
		c := p[i]
		switch {
		case c == ':':
			return i > 0
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z':
		case i > 0 && ('0' <= c && c <= '9' || c == '+' || c == '-' || c == '.'):
		default:
			return false
		}
	}
	return false
}
