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
