package deltatext

import (
	"errors"
	"fmt"
	"time"
)

// ErrRange reports a date or timestamp outside the years 0001 to 9999, which
// have no four-digit year and so no text form Delta readers accept.
var ErrRange = errors.New("deltatext: outside the years 0001-9999")

// Layouts. Stats keep milliseconds with an ISO "T"; partition values keep
// microseconds, a timestamp in ISO-8601 UTC (the form the protocol recommends),
// a timestamp_ntz with a space as Spark writes it.
const (
	statsTimestampLayout     = "2006-01-02T15:04:05.000Z"
	statsNTZLayout           = "2006-01-02T15:04:05.000"
	partitionTimestampLayout = "2006-01-02T15:04:05.000000Z"
	partitionNTZLayout       = "2006-01-02 15:04:05.000000"
)

// maxDays bounds a day count well outside the years 1..9999 so that the
// conversion to seconds cannot overflow.
const maxDays = 4_000_000

// Date formats a date stored as days since 1970-01-01 as "YYYY-MM-DD"; ok is
// false outside the years 0001 to 9999.
func Date(days int64) (s string, ok bool) {
	if days < -maxDays || days > maxDays {
		return "", false
	}
	t := time.Unix(days*86400, 0).UTC()
	if !inRange(t) {
		return "", false
	}
	return t.Format(time.DateOnly), true
}

// ParseDate parses "YYYY-MM-DD" into days since 1970-01-01.
func ParseDate(s string) (days int64, err error) {
	t, err := time.Parse(time.DateOnly, s)
	if err != nil {
		return 0, fmt.Errorf("deltatext: bad date %q: %w", s, err)
	}
	return t.Unix() / 86400, nil // midnight UTC: an exact multiple
}

// StatsTimestamp formats t, read in UTC, as a stats bound: milliseconds, the
// fraction truncated (earlier for instants before 1970 too), with "Z" unless ntz.
// ok is false outside the years 0001 to 9999.
func StatsTimestamp(t time.Time, ntz bool) (s string, ok bool) {
	t = t.UTC()
	if !inRange(t) {
		return "", false
	}
	if ntz {
		return t.Format(statsNTZLayout), true
	}
	return t.Format(statsTimestampLayout), true
}

// ParseStatsTimestamp parses a stats bound: ISO-8601 with a zone ("Z", or the
// offset of Spark's session time zone) for a timestamp, without one for a
// timestamp_ntz, read as UTC.
func ParseStatsTimestamp(s string, ntz bool) (time.Time, error) {
	layout := time.RFC3339Nano
	if ntz {
		layout = "2006-01-02T15:04:05.999999999"
	}
	t, err := time.Parse(layout, s)
	if err != nil {
		return time.Time{}, fmt.Errorf("deltatext: bad stats timestamp %q: %w", s, err)
	}
	return t, nil
}

// PartitionTimestamp formats t, read in UTC, as a partition value with
// microseconds: "2021-09-08T11:11:11.000000Z", or for timestamp_ntz
// "2021-09-08 11:11:11.000000". ok is false outside the years 0001 to 9999.
func PartitionTimestamp(t time.Time, ntz bool) (s string, ok bool) {
	t = t.UTC()
	if !inRange(t) {
		return "", false
	}
	if ntz {
		return t.Format(partitionNTZLayout), true
	}
	return t.Format(partitionTimestampLayout), true
}

// partitionTimestampLayouts are the forms readers must accept: ISO-8601 with a
// zone, and "YYYY-MM-DD HH:MM:SS[.f]" (Spark's and delta-rs's), read as UTC.
var partitionTimestampLayouts = [...]string{
	time.RFC3339Nano,
	"2006-01-02 15:04:05.999999999",
	"2006-01-02T15:04:05.999999999",
	"2006-01-02 15:04:05.999999999Z07:00",
}

// ParsePartitionTimestamp parses a timestamp or timestamp_ntz partition value in
// any of the forms the protocol allows; one without a zone is read as UTC.
func ParsePartitionTimestamp(s string) (time.Time, error) {
	for _, layout := range partitionTimestampLayouts {
		if t, err := time.Parse(layout, s); err == nil {
			return t, nil
		}
	}
	return time.Time{}, fmt.Errorf("deltatext: bad partition timestamp %q", s)
}

func inRange(t time.Time) bool {
	y := t.Year()
	return y >= 1 && y <= 9999
}
