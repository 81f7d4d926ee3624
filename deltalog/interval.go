package deltalog

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// parseInterval parses a Delta/Spark interval property such as "interval 7 days",
// "interval 1 week 2 hours" or "168 hours". Months and years have no fixed length and are
// refused, as Delta does.
func parseInterval(s string) (time.Duration, error) {
	f := strings.Fields(strings.ToLower(strings.TrimSpace(s)))
	if len(f) > 0 && f[0] == "interval" {
		f = f[1:]
	}
	if len(f) == 0 || len(f)%2 != 0 {
		return 0, fmt.Errorf("deltalog: bad interval %q", s)
	}
	var total time.Duration
	for i := 0; i < len(f); i += 2 {
		n, err := strconv.ParseInt(f[i], 10, 64)
		if err != nil || n < 0 {
			return 0, fmt.Errorf("deltalog: bad interval %q", s)
		}
		unit, ok := intervalUnit(strings.TrimSuffix(f[i+1], "s"))
		if !ok {
			return 0, fmt.Errorf("deltalog: bad interval unit %q in %q", f[i+1], s)
		}
		if n > int64(1<<62)/int64(unit) {
			return 0, fmt.Errorf("deltalog: interval %q overflows", s)
		}
		total += time.Duration(n) * unit
	}
	return total, nil
}

func intervalUnit(u string) (time.Duration, bool) {
	switch u {
	case "nanosecond":
		return time.Nanosecond, true
	case "microsecond":
		return time.Microsecond, true
	case "millisecond":
		return time.Millisecond, true
	case "second":
		return time.Second, true
	case "minute":
		return time.Minute, true
	case "hour":
		return time.Hour, true
	case "day":
		return 24 * time.Hour, true
	case "week":
		return 7 * 24 * time.Hour, true
	}
	return 0, false
}

// durationProp reads an interval table property, falling back to def when it is unset or
// malformed (a malformed property must not make the table unreadable).
func durationProp(config map[string]string, key string, def time.Duration) time.Duration {
	v, ok := config[key]
	if !ok {
		return def
	}
	d, err := parseInterval(v)
	if err != nil {
		return def
	}
	return d
}

// Defaults of the retention properties.
const (
	defaultDeletedFileRetention = 7 * 24 * time.Hour
	defaultLogRetention         = 30 * 24 * time.Hour
	defaultCheckpointInterval   = 10
)
