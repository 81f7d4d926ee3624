package deltalog

import (
	"errors"
	"fmt"
	"strings"
)

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

// TornCommitError reports that the log's latest commit does not parse: cut short
// by a crash mid-write (where a store cannot make a name and its content appear
// at once) or damaged since. No later version builds on it, so without that file
// the table is whole at Version-1.
type TornCommitError struct {
	Version int64
	Err     *CorruptFileError
}

// Error implements error.
func (e *TornCommitError) Error() string {
	return fmt.Sprintf("deltalog: the latest commit, version %d, is torn: %v", e.Version, e.Err)
}

// Unwrap returns the *CorruptFileError.
func (e *TornCommitError) Unwrap() error { return e.Err }

func errString(err error) string {
	if err == nil {
		return "unknown cause"
	}
	return err.Error()
}

// AbsolutePathError reports a live data file whose add.path is absolute (see
// IsAbsolutePath). Delta allows such paths, SHALLOW CLONE writes them; deltalog reads
// them only in a table opened with ResolveAbsolutePaths, and never commits to such a
// table.
type AbsolutePathError struct {
	// Version is the table version being loaded; -1 when not known.
	Version int64
	// Path is add.path as stored.
	Path string
	// File is the log file (commit or checkpoint) of the add; "" when not known.
	File string
}

// Error says which file, where it was added, and what to do.
func (e *AbsolutePathError) Error() string {
	var b strings.Builder
	b.WriteString("deltalog: ")
	if e.Version >= 0 {
		fmt.Fprintf(&b, "version %d: ", e.Version)
	}
	fmt.Fprintf(&b, "data file %q has an absolute path", e.Path)
	if e.File != "" {
		fmt.Fprintf(&b, " (added in %s)", e.File)
	}
	b.WriteString("; " + AbsolutePathRemedy)
	return b.String()
}

// AbsolutePathRemedy says why a table with absolute data file paths is refused and
// what to do.
const AbsolutePathRemedy = "such a table (a SHALLOW CLONE, or files added by URI) is read but not written: " +
	"only tables whose data files are named relative to the table root are written. " +
	"A DEEP CLONE of the table that holds the files (cdc2delta clone --deep, or Spark's) copies it with relative paths"
