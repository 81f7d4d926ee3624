package main

import (
	"errors"
	"strconv"
	"time"
)

// The flags below mean something when absent (the latest version, the table's own
// retention), so they record whether they were given instead of using a sentinel
// default: a sentinel makes a mistyped negative value silently mean "absent", and
// flag.PrintDefaults would show it as "(default -1)". Their zero value prints as "", so
// PrintDefaults shows no default and the usage text says what absence means.

// versionFlag is a table version.
type versionFlag struct {
	v   int64
	set bool
}

func (f *versionFlag) String() string {
	if f == nil || !f.set {
		return ""
	}
	return strconv.FormatInt(f.v, 10)
}

// Set parses a version. -1 is taken as absent: it was the documented default, so
// scripts may pass it to mean the latest version.
func (f *versionFlag) Set(s string) error {
	n, err := strconv.ParseInt(s, 10, 64)
	switch {
	case err != nil:
		return errors.New("not a table version: give a whole number, 0 or more")
	case n == -1:
		*f = versionFlag{}
	case n < 0:
		return errors.New("table versions start at 0; leave the flag out for the latest version")
	default:
		*f = versionFlag{v: n, set: true}
	}
	return nil
}

// durationFlag is a non-negative time.Duration.
type durationFlag struct {
	d   time.Duration
	set bool
}

func (f *durationFlag) String() string {
	if f == nil || !f.set {
		return ""
	}
	return f.d.String()
}

func (f *durationFlag) Set(s string) error {
	d, err := time.ParseDuration(s)
	switch {
	case err != nil:
		return errors.New("not a duration: use a number and a unit, e.g. 168h or 30m")
	case d < 0:
		return errors.New("must not be negative")
	}
	*f = durationFlag{d: d, set: true}
	return nil
}
