package datafile

import (
	"errors"
	"fmt"
)

// Sentinel errors callers branch on.
var (
	// ErrNull: a nil value in a non-nullable column, array element or map key.
	ErrNull = errors.New("datafile: null in non-nullable column")
	// ErrValueType: a Go value whose type does not match the column's Delta type.
	ErrValueType = errors.New("datafile: wrong Go type for column")
	// ErrDecimalRange: a decimal with more digits than its precision.
	ErrDecimalRange = errors.New("datafile: decimal out of range")
	// ErrSchema: rows or options that do not match the table schema.
	ErrSchema = errors.New("datafile: schema mismatch")
)

// ValueError reports a value the writer cannot store: Row is its index in the rows
// passed to Write, Column its logical path.
type ValueError struct {
	Row    int
	Column string
	Err    error
}

// Error names the row and column.
func (e *ValueError) Error() string {
	return fmt.Sprintf("datafile: row %d, column %s: %v", e.Row, e.Column, e.Err)
}

// Unwrap returns the cause (ErrNull, ErrValueType, ErrDecimalRange, ...).
func (e *ValueError) Unwrap() error { return e.Err }
