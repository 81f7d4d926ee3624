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
	version   int64
	timestamp string
}

func addTimeTravelFlags(fs *flag.FlagSet) *timeTravelFlags {
	tt := &timeTravelFlags{}
	fs.Int64Var(&tt.version, "version", -1, "read the table as of this version (default: latest)")
	fs.StringVar(&tt.timestamp, "timestamp", "", "read the table as of this time (RFC 3339, e.g. 2026-01-02T15:04:05Z, or a date 2026-01-02)")
	return tt
}

func (tt *timeTravelFlags) set() bool { return tt.version >= 0 || tt.timestamp != "" }

// parseTime accepts RFC 3339 with or without fractional seconds, "2006-01-02 15:04:05"
// (taken as UTC) and a bare date.
func parseTime(s string) (time.Time, error) {
	for _, layout := range []string{time.RFC3339Nano, "2006-01-02 15:04:05", "2006-01-02T15:04:05", "2006-01-02"} {
		if t, err := time.Parse(layout, s); err == nil {
			return t, nil
		}
	}
	return time.Time{}, usagef("--timestamp %q: use RFC 3339 (2026-01-02T15:04:05Z) or a date (2026-01-02)", s)
}

// snapshot loads the selected version.
func (tt *timeTravelFlags) snapshot(ctx context.Context, t *deltalog.Table, loc string) (*deltalog.Snapshot, error) {
	switch {
	case tt.version >= 0 && tt.timestamp != "":
		return nil, usagef("give --version or --timestamp, not both")
	case tt.version >= 0:
		s, err := t.SnapshotAt(ctx, tt.version)
		if err != nil {
			return nil, fmt.Errorf("reading %s at version %d: %w", loc, tt.version, err)
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
