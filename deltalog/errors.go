package deltalog

import "errors"

// Sentinel errors callers branch on.
var (
	// ErrNotExist: the object, table or version does not exist.
	ErrNotExist = errors.New("deltalog: does not exist")
	// ErrExist: PutIfAbsent found an object already there (a commit version was taken).
	ErrExist = errors.New("deltalog: already exists")
	// ErrUnavailable: the store could not serve the call for a reason that
	// waiting may cure (a network failure, a timeout, throttling, a 5xx
	// answer). Stores wrap it around such errors; anything a store returns
	// without it is to be treated as permanent.
	ErrUnavailable = errors.New("deltalog: storage temporarily unavailable")
)

// CorruptFileError reports a log, checkpoint or data file that is missing, truncated or
// unparseable. Path is relative to the table root.
type CorruptFileError struct {
	Path string
	Err  error
}

// Error implements error.
func (e *CorruptFileError) Error() string {
	return "deltalog: corrupt file " + e.Path + ": " + errString(e.Err)
}

// Unwrap returns the underlying cause.
func (e *CorruptFileError) Unwrap() error { return e.Err }

func errString(err error) string {
	if err == nil {
		return "unknown cause"
	}
	return err.Error()
}
