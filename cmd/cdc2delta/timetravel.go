package main

import (
	"context"
	"flag"
	"fmt"
	"time"

	"github.com/cdc2delta/cdc2delta/deltalog"
)

// timeTravelFlags select a table version: --version N or --timestamp T (or the latest).
type timeTravelFlags struct {
	version   versionFlag
	timestamp string
}

// addTimeTravelFlags declares --version and --timestamp for commands that read a version.
func addTimeTravelFlags(fs *flag.FlagSet) *timeTravelFlags {
	return declareTimeTravel(fs, "read the table as of version `N` (default: the latest)",
		"read the table as of this `time` (RFC 3339, e.g. 2026-01-02T15:04:05Z, or a date 2026-01-02)")
}

// addRestoreTargetFlags declares --version and --timestamp for restore, which goes to
// that version rather than reading it.
func addRestoreTargetFlags(fs *flag.FlagSet) *timeTravelFlags {
	return declareTimeTravel(fs, "restore the table to version `N`",
		"restore the table to the latest version committed at or before this `time` (RFC 3339, e.g. 2026-01-02T15:04:05Z, or a date 2026-01-02)")
}

func declareTimeTravel(fs *flag.FlagSet, versionUsage, timestampUsage string) *timeTravelFlags {
	tt := &timeTravelFlags{}
	fs.Var(&tt.version, "version", versionUsage)
	fs.StringVar(&tt.timestamp, "timestamp", "", timestampUsage)
	return tt
}

func (tt *timeTravelFlags) set() bool { return tt.version.set || tt.timestamp != "" }

// parseTime accepts RFC 3339 with or without fractional seconds, the same with a
// space for the T (as history prints times), "2006-01-02 15:04:05" (taken as UTC) and
// a bare date.
func parseTime(s string) (time.Time, error) {
	for _, layout := range []string{time.RFC3339Nano, "2006-01-02 15:04:05Z07:00", "2006-01-02 15:04:05", "2006-01-02T15:04:05", "2006-01-02"} {
		if t, err := time.Parse(layout, s); err == nil {
			return t, nil
		}
	}
	return time.Time{}, usagef("--timestamp %q: use RFC 3339 (2026-01-02T15:04:05Z) or a date (2026-01-02)", s)
}

// snapshot loads the selected version.
func (tt *timeTravelFlags) snapshot(ctx context.Context, t *deltalog.Table, loc string) (*deltalog.Snapshot, error) {
	switch {
	case tt.version.set && tt.timestamp != "":
		return nil, usagef("give --version or --timestamp, not both")
	case tt.version.set:
		s, err := t.SnapshotAt(ctx, tt.version.v)
		if err != nil {
			return nil, fmt.Errorf("reading %s at version %d: %w", loc, tt.version.v, err)
		}
		return s, nil
	case tt.timestamp != "":
		ts, err := parseTime(tt.timestamp)
		if err != nil {
			return nil, err
		}
		s, err := t.SnapshotAtTime(ctx, ts)
		if err != nil {
			return nil, fmt.Errorf("reading %s at %s: %w", loc, ts.Format(time.RFC3339Nano), err)
		}
		return s, nil
	}
	return latest(ctx, t, loc)
}
