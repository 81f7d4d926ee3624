package main

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
)

// checkOutput is what `bench_peers.py check` writes.
type checkOutput struct {
	Tables   map[string]tableCheck `json:"tables"`
	Versions map[string]string     `json:"versions,omitempty"`
}

// tableCheck is one table's row count, row-set checksum and read time.
type tableCheck struct {
	Rows        *int64   `json:"rows"`
	Checksum    *string  `json:"checksum"`
	ReadSeconds *float64 `json:"read_seconds"`
	Error       *string  `json:"error"`
}

// ErrTablesDiffer means the systems' final tables are not equal.
var ErrTablesDiffer = errors.New("cdc2bench: final tables differ")

// MismatchError names the systems whose tables differ and how.
type MismatchError struct {
	Workload string
	// Groups maps "rows/checksum" to the systems that produced it.
	Groups map[string][]string
	// Failed maps a system to why its table could not be checked.
	Failed   map[string]string
	Expected int
}

func (e *MismatchError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "workload %s: final tables differ (expected %d rows):", e.Workload, e.Expected)
	for _, k := range slices.Sorted(maps.Keys(e.Groups)) {
		fmt.Fprintf(&b, " [%s: %s]", strings.Join(e.Groups[k], "+"), k)
	}
	for _, k := range slices.Sorted(maps.Keys(e.Failed)) {
		fmt.Fprintf(&b, " [%s: %s]", k, e.Failed[k])
	}
	return b.String()
}

// Unwrap returns ErrTablesDiffer.
func (e *MismatchError) Unwrap() error { return ErrTablesDiffer }

// compareTables checks that every system in systems has a checked table,
// that they share one checksum and that their row count is the expected one.
func compareTables(workload string, out checkOutput, systems []string, expected int) error {
	e := &MismatchError{Workload: workload, Groups: map[string][]string{}, Failed: map[string]string{}, Expected: expected}
	for _, s := range systems {
		t, ok := out.Tables[s]
		switch {
		case !ok:
			e.Failed[s] = "not checked"
		case t.Error != nil && *t.Error != "":
			e.Failed[s] = *t.Error
		case t.Rows == nil || t.Checksum == nil:
			e.Failed[s] = "no rows or checksum"
		default:
			k := fmt.Sprintf("%d rows, checksum %s", *t.Rows, *t.Checksum)
			e.Groups[k] = append(e.Groups[k], s)
			if *t.Rows != int64(expected) {
				e.Failed[s] = fmt.Sprintf("%d rows, want %d", *t.Rows, expected)
			}
		}
	}
	if len(e.Groups) > 1 || len(e.Failed) > 0 {
		return e
	}
	return nil
}
