package codecs

import (
	"testing"
	"time"
)

// FuzzParseZoned holds parseZoned to time.Parse: whatever it accepts,
// time.Parse (RFC3339Nano, what Column.value uses) accepts as the same
// instant.
func FuzzParseZoned(f *testing.F) {
	for _, s := range []string{
		"2024-03-15T10:30:45.1234567+02:00", "2024-03-15T10:30:45Z", "2024-03-15T10:30:45-08:00",
		"0001-01-01T00:00:00Z", "0000-01-01T00:00:00Z", "0001-01-01T00:30:00+01:00", "9999-12-31T23:59:59.9999999-01:00",
		"2024-02-29T00:00:00Z", "2023-02-29T00:00:00Z", "2000-02-29T23:59:59.999999999999+23:59", "1900-02-29T00:00:00Z",
		"1969-12-31T23:59:59.9999995Z", "2024-03-15T10:30:45.+02:00", "2024-03-15t10:30:45Z", "2024-03-15T24:00:00Z",
		"2024-03-15T10:30:60Z", "2024-03-15T10:30:45+24:00", "2024-03-15T10:30:45,5Z", "2024-3-15T10:30:45Z",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		us, ok := parseZoned([]byte(s))
		if !ok {
			return
		}
		want, err := time.Parse(time.RFC3339Nano, s)
		if err != nil {
			t.Fatalf("parseZoned accepted %q, time.Parse: %v", s, err)
		}
		if us != want.UnixMicro() {
			t.Fatalf("%q: parseZoned %d µs, time.Parse %d", s, us, want.UnixMicro())
		}
	})
}

// TestParseZonedSeeds checks parseZoned accepts the common shapes (so the
// fast path is the one taken) and refuses what it must leave to time.Parse.
func TestParseZonedSeeds(t *testing.T) {
	for s, want := range map[string]bool{
		"2024-03-15T10:30:45.1234567+02:00": true, "2024-03-15T10:30:45Z": true, "2024-02-29T00:00:00Z": true,
		"2023-02-29T00:00:00Z": false, "2024-03-15T24:00:00Z": false, "2024-03-15t10:30:45Z": false, "2024-03-15T10:30:45,5Z": false,
	} {
		_, ok := parseZoned([]byte(s))
		if ok != want {
			t.Errorf("parseZoned(%q) ok %v, want %v", s, ok, want)
		}
	}
}
