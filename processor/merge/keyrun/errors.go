package keyrun

import (
	"errors"
	"fmt"
)

// ErrCorrupt is what every *CorruptError unwraps to: the run must be
// rebuilt, as its bytes are not what its writer wrote.
var ErrCorrupt = errors.New("keyrun: corrupt run")

// ErrOrder reports a key added out of order to a Writer.
var ErrOrder = errors.New("keyrun: keys out of order")

// CorruptError names the part of a run that failed its check.
type CorruptError struct {
	// Part is "footer", "summaries" or "block".
	Part string
	// Offset is where the part starts in the run.
	Offset int64
	// Reason says what was wrong.
	Reason string
}

// Error implements error.
func (e *CorruptError) Error() string {
	return fmt.Sprintf("keyrun: corrupt %s at offset %d: %s", e.Part, e.Offset, e.Reason)
}

// Unwrap returns ErrCorrupt.
func (e *CorruptError) Unwrap() error { return ErrCorrupt }
