package codecs

import (
	"fmt"
	"strconv"
	"strings"
)

// JSONError reports a Kafka Connect JSON message that is malformed or does
// not match its schema: where (the JSON path of the bad value, e.g.
// "$.payload.after.qty", and the byte offset) and why. It wraps
// [ErrBadBody]; the enclosing [DecodeError] names the record.
type JSONError struct {
	// Path is the JSON path of the value that failed ("$" when the message
	// itself is not JSON).
	Path string
	// Offset is the byte offset in the key or value where reading stopped.
	Offset int
	Reason string
}

// Error names the path, the offset and the reason.
func (e *JSONError) Error() string {
	return fmt.Sprintf("codecs: json %s (byte %d): %s", e.path(), e.Offset, e.Reason)
}

// Unwrap returns ErrBadBody.
func (e *JSONError) Unwrap() error { return ErrBadBody }

func (e *JSONError) path() string {
	if e.Path == "" {
		return "$"
	}
	return e.Path
}

// in prefixes the error's path with one step (a member name or an index)
// as the error leaves that value: the success path builds no paths.
func in(err error, step string) error {
	if je, ok := err.(*JSONError); ok {
		if strings.HasPrefix(step, "[") {
			je.Path = step + je.Path
		} else {
			je.Path = "." + step + je.Path
		}
	}
	return err
}

// inKey is in for an object member; the key is copied only on failure.
func inKey(err error, k []byte) error {
	if err == nil {
		return nil
	}
	return in(err, string(k))
}

// inIndex is in for an array element.
func inIndex(err error, i int) error {
	if err == nil {
		return nil
	}
	return in(err, "["+strconv.Itoa(i)+"]")
}

// rooted finishes the path of a JSONError with "$".
func rooted(err error) error {
	if je, ok := err.(*JSONError); ok {
		je.Path = "$" + je.Path
	}
	return err
}
